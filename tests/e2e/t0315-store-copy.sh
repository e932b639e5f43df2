#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: made-up uploads with 2x
# effects, as t0510.)
# `perfwatch store copy` moves an installation: a daemon on a SQLite file
# gets jobs, pairs, verdicts, a regression and its webhook alert through
# its API; stopped, its store is copied into PostgreSQL (under make
# check-pg; else into a second SQLite file) and a daemon started on the
# copy answers the same API routes byte for byte.  New rows there get
# ids past the copied ones (PostgreSQL's sequences moved).  The copy back
# into a new SQLite file answers the same again.  A second copy into the
# now full target, a source at another schema version and a missing
# source are refused with their reasons, and leave the target as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

D1=$PW_TMP/d1
daemon_config "$D1" r1
# The first daemon is on SQLite whatever the suite's backend.
sed -i "s|^database: .*|database: \"$D1/pw.db\"|" "$D1/daemon.yaml"
hook_start "$PW_TMP/hook" ok || { fail hook_server "no port"; finish; }
cat >>"$D1/daemon.yaml" <<EOF2
scheduler:
  lease: 1h
alerts:
  webhooks:
    - url: $HOOK_URL
      secret_file: $PW_TMP/hook/secret
  backoff: 1s
  poll: 1s
EOF2
cat >"$D1/jobs/vd.yaml" <<'EOF2'
name: vd
parser: keyvalue
command: [echo, "ops=1"]
runs: 5
max_runs: 5
rounds: 1
metrics:
  ops: {better: higher, min_effect: 5%}
  lat: {better: lower, min_effect: 5%}
EOF2
SRC=$PW_TMP/src
src_init "$SRC"
c1=$(g "$SRC" rev-parse HEAD)
tree_yaml app "file://$SRC" master
start_daemon "$D1" || { fail start "daemon did not start"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
c2=$(commit "$SRC" mm/b.c second)
wait_tip master "$c2" || { fail second_sight "$(cat "$PW_TMP/trees.json")"; finish; }
R1=$(token_of r1)
ADM=$(token_of admin)
[ "$(http POST /api/v1/runners/register "$R1" \
    '{"name":"r1","inventory":{"cpu_model":"test"}}')" = 200 ] ||
	{ fail register "$(cat "$PW_TMP/body")"; finish; }

SMALL=(0 4 -3 6 -5)
up() {
	local job=$1 ops=$2 lat=$3 i o l
	for ((i = 0; i < 5; i++)); do
		o=$((ops * (1000 + SMALL[i]) / 1000))
		l=$((lat * (1000 + SMALL[(i + 2) % 5]) / 1000))
		[ "$(http POST "/api/v1/jobs/$job/runs" "$R1" \
		    "{\"index\":$i,\"status\":\"ok\",\"metrics\":[{\"name\":\"ops\",\"value\":$o,\"unit\":\"ops/s\",\"better\":\"higher\"},{\"name\":\"lat\",\"value\":$l.5,\"unit\":\"us\",\"better\":\"lower\"}]}")" = 201 ] ||
			return 1
	done
}
claim() {
	[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":2}')" = 200 ] &&
	    [ "$(jfield job.id <"$PW_TMP/body")" = "$1" ]
}
done_job() {
	[ "$(http POST "/api/v1/jobs/$1/finish" "$R1" '{"status":"success"}')" = 200 ]
}
# pair BASE_OPS BASE_LAT CAND_OPS CAND_LAT: prints the pair id; the
# sides are the tree's two commits (a regression on a commit is what
# alerts).
pair() {
	local p b c
	[ "$(http POST /api/v1/submit "$ADM" "{\"job\":\"vd\",\"base\":{\"tree\":\"app\",\"commit\":\"$c1\"},\"candidate\":{\"tree\":\"app\",\"commit\":\"$c2\"}}")" = 201 ] || return 1
	p=$(jfield pairs.0.pair_id <"$PW_TMP/body")
	b=$(jfield pairs.0.base_job <"$PW_TMP/body")
	c=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
	claim "$b" && up "$b" "$1" "$2" && done_job "$b" &&
	    claim "$c" && up "$c" "$3" "$4" && done_job "$c" || return 1
	echo "$p"
}
final() {
	http GET "/api/v1/pairs/$1" >/dev/null
	[ "$(jfield comparisons.1.final <"$PW_TMP/body")" = true ]
}
P1=$(pair 1000 100 500 200) || { fail pair1 "could not run pair 1"; finish; }
P2=$(pair 1000 100 2000 50) || { fail pair2 "could not run pair 2"; finish; }
wait_for 30 final "$P1" && wait_for 30 final "$P2" ||
	{ fail verdicts "no final verdicts"; finish; }
sent() {
	http GET '/api/v1/alerts?state=sent' >/dev/null
	grep -q '"kind": *"webhook"' "$PW_TMP/body"
}
wait_for 30 sent && pass filled_through_the_api ||
	fail filled_through_the_api "no alert sent: $(head -c 300 "$PW_TMP/body")"

ROUTES=(/api/v1/jobs "/api/v1/jobs?state=success&limit=2" /api/v1/pairs/$P1
    /api/v1/pairs/$P2 "/api/v1/comparisons?pair=$P1"
    "/api/v1/comparisons?pair=$P2" /api/v1/regressions /api/v1/alerts
    /api/v1/hosts "/api/v1/jobs/$((2 * P1))")
# answers NAME: each route's status and body into $PW_TMP/NAME.
answers() {
	local r
	: >"$PW_TMP/$1"
	for r in "${ROUTES[@]}"; do
		{
			echo "== $r $(http GET "$r")"
			cat "$PW_TMP/body"
			echo
		} >>"$PW_TMP/$1"
	done
}
answers sqlite
grep -q '"verdict": *"regression"' "$PW_TMP/sqlite" &&
    grep -q '"webhook"' "$PW_TMP/sqlite" || fail answers_hold_data "$(head -c 600 "$PW_TMP/sqlite")"
stop_pid "$PW_DAEMON_PID"

if [ -n "${PW_TEST_PG:-}" ]; then
	TO=$(pg_createdb "$(basename "$PW_TMP" | tr -c 'a-zA-Z0-9' _ | tr A-Z a-z)_copy")
	KIND=postgresql
else
	echo "SKIP copy_to_postgresql: no server here (make check-pg copies into one)"
	TO=$PW_TMP/copy.db
	KIND=sqlite
fi

# Refused: a source at another schema version, a missing source.
cp "$D1/pw.db" "$PW_TMP/old.db"
sqlite3 "$PW_TMP/old.db" "PRAGMA user_version = 33"
if "$PW_BIN/perfwatch" store copy "$PW_TMP/old.db" "$TO" 2>"$PW_TMP/err"; then
	fail old_version_refused "copied"
else
	grep -q "schema version 33, this perfwatch's is" "$PW_TMP/err" &&
	    pass old_version_refused || fail old_version_refused "$(cat "$PW_TMP/err")"
fi
"$PW_BIN/perfwatch" store copy "$PW_TMP/nothing.db" "$TO" 2>"$PW_TMP/err" &&
    fail missing_source_refused "copied" ||
    { grep -q "nothing.db (from): no such database file" "$PW_TMP/err" &&
	pass missing_source_refused || fail missing_source_refused "$(cat "$PW_TMP/err")"; }

if "$PW_BIN/perfwatch" store copy "$D1/pw.db" "$TO" >"$PW_TMP/copy.out" 2>&1; then
	grep -q "^copied [0-9]* rows of [0-9]* tables from $D1/pw.db" "$PW_TMP/copy.out" &&
	    grep -q '^pairs  *2 rows' "$PW_TMP/copy.out" && pass "copied_to_$KIND" ||
	    fail "copied_to_$KIND" "$(cat "$PW_TMP/copy.out")"
else
	fail "copied_to_$KIND" "$(cat "$PW_TMP/copy.out")"
	finish
fi
if "$PW_BIN/perfwatch" store copy "$D1/pw.db" "$TO" >"$PW_TMP/err" 2>&1; then
	fail second_copy_refused "copied twice"
else
	grep -q "(to) is not empty: table [a-z_]* has rows" "$PW_TMP/err" &&
	    pass second_copy_refused || fail second_copy_refused "$(cat "$PW_TMP/err")"
fi

# on DIR DATABASE: a daemon with D1's configuration on DATABASE.
on() {
	mkdir -p "$1"
	sed "s|^database: .*|database: \"$2\"|" "$D1/daemon.yaml" >"$1/daemon.yaml"
	cp -r "$D1/tokens" "$D1/admin.token" "$D1/jobs" "$1/"
	start_daemon "$1"
}
on "$PW_TMP/d2" "$TO" || { fail start_on_copy "daemon did not start"; finish; }
answers copy
if cmp -s "$PW_TMP/sqlite" "$PW_TMP/copy"; then
	pass "same_answers_on_$KIND"
else
	fail "same_answers_on_$KIND" "$(diff "$PW_TMP/sqlite" "$PW_TMP/copy" | head -20)"
fi
# New rows continue the ids.
[ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] &&
    [ "$(jfield pairs.0.pair_id <"$PW_TMP/body")" = $((P2 + 1)) ] &&
    [ "$(jfield pairs.0.base_job <"$PW_TMP/body")" = $((2 * P2 + 1)) ] &&
    pass ids_continue || fail ids_continue "$(cat "$PW_TMP/body")"
answers copy2
stop_pid "$PW_DAEMON_PID"

# And back into a new SQLite file.
if "$PW_BIN/perfwatch" store copy "$TO" "$PW_TMP/back.db" >"$PW_TMP/back.out" 2>&1; then
	on "$PW_TMP/d3" "$PW_TMP/back.db" || { fail start_on_back "daemon did not start"; finish; }
	answers back
	cmp -s "$PW_TMP/copy2" "$PW_TMP/back" && pass same_answers_copied_back ||
	    fail same_answers_copied_back "$(diff "$PW_TMP/copy2" "$PW_TMP/back" | head -20)"
	stop_pid "$PW_DAEMON_PID"
else
	fail copied_back "$(cat "$PW_TMP/back.out")"
fi
finish
