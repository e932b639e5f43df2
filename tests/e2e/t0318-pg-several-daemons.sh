#!/usr/bin/env bash
# Several perfwatchd on one PostgreSQL database (make check-pg; on
# SQLite only the refusal of --role web runs).  Daemons A and B share a
# database, each with mirrors of its own, and worker leases of 3 s
# (scheduler.worker_lease).  Both serve the API; A, started first, holds
# every worker's lease (worker_leases, /metrics perfwatch_worker_held)
# and B none, and only A's watcher fetches the tree (its mirror is made,
# B's never).  A job pair queued through A is claimed through B, and no
# job goes to two of the concurrent claims through both.  A claim parked
# on B returns the job of a pair queued through A within a few seconds,
# not at the end of its wait: B polls the store's generation.  A page B
# has cached (a hit in its /metrics) shows a job queued through A before
# the cache's 1 s time to live is up.  A daemon of role web serves GETs,
# answers a claim and a register 503 naming its role, and holds no
# lease.  Then A is killed with SIGKILL: within the lease and a second
# (4 s; 6 allowed on a loaded machine) B holds every lease, and B's
# watcher makes its mirror.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_git.sh"

daemon_config "$PW_TMP/a" r1 r2 r3 r4 r5
if [ -z "${PW_TEST_PG:-}" ]; then
	timeout 20 "$PW_BIN/perfwatchd" --role web -c "$PW_TMP/a/daemon.yaml" \
	    >"$PW_TMP/web.log" 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
	    grep -q -- "--role web needs a PostgreSQL database" "$PW_TMP/web.log" &&
	    pass role_web_refused_on_sqlite ||
	    fail role_web_refused_on_sqlite "exit $rc: $(cat "$PW_TMP/web.log")"
	echo "SKIP several_daemons_one_database: make check-pg runs it"
	finish
fi

SRC=$PW_TMP/src
src_init "$SRC"
tree_yaml t1 "file://$SRC" master
cat >>"$PW_TMP/a/daemon.yaml" <<'EOF'
scheduler:
  worker_lease: 3s
EOF
pg_vd_job "$PW_TMP/a"
mkdir -p "$PW_TMP/b" "$PW_TMP/w"
sed "s|^mirrors: .*|mirrors: $PW_TMP/b/git|" "$PW_TMP/a/daemon.yaml" >"$PW_TMP/b/daemon.yaml"
sed "s|^mirrors: .*|mirrors: $PW_TMP/w/git|" "$PW_TMP/a/daemon.yaml" >"$PW_TMP/w/daemon.yaml"
# B serves on one thread: one reply cache (web/cache.h: one a thread).
printf 'http:\n  threads: 1\n' >>"$PW_TMP/b/daemon.yaml"

start_daemon "$PW_TMP/a" || { fail a_starts "see log"; finish; }
A_PID=$PW_DAEMON_PID
A_URL=$PW_URL
ADM=$(token_of admin)
# A takes the leases at start; B comes once they are A's.
wait_for 20 grep -q "leases: bisect taken by this perfwatchd" "$PW_TMP/a/daemon.log" ||
    fail a_takes_leases "$(grep leases "$PW_TMP/a/daemon.log")"

# start_other DIR [ARGS...]: another daemon on the database; its pid in
# $OTHER_PID, its URL in $OTHER_URL.
start_other() {
	local dir=$1
	shift
	spawn "$dir/daemon.log" "$PW_BIN/perfwatchd" -v "$@" -c "$dir/daemon.yaml" \
	    --port-file "$dir/port"
	OTHER_PID=$!
	wait_for 20 test -s "$dir/port" || return 1
	OTHER_URL=http://127.0.0.1:$(cat "$dir/port")
}
start_other "$PW_TMP/b" || { fail b_starts "$(cat "$PW_TMP/b/daemon.log")"; finish; }
B_PID=$OTHER_PID
B_URL=$OTHER_URL

# at URL METHOD PATH [TOKEN_FILE|-] [BODY]: http() against URL.
at() {
	local url=$1
	shift
	PW_URL=$url http "$@"
}
# req URL PATH TOKEN BODY OUT: a POST whose reply goes to OUT (for
# requests made at once), "CODE" in OUT.code.
req() {
	curl -s -o "$5" -w '%{http_code}' -X POST --max-time 60 \
	    -H "Authorization: Bearer $(cat "$3")" \
	    -H 'Content-Type: application/json' --data-binary "$4" \
	    "$1$2" >"$5.code"
}
# now_ms: the wall clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# held_by PID: how many leases PID's daemon holds by the database.
held_by() {
	sql "SELECT count(*) FROM worker_leases WHERE holder LIKE
	    'perfwatchd pid $1 on %' AND expires_ms >
	    (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
}
# workers_held URL: the perfwatch_worker_held samples of its /metrics
# that are 1.
workers_held() {
	at "$1" GET /metrics >/dev/null
	grep -c '^perfwatch_worker_held{worker="[a-z]*"} 1$' "$PW_TMP/body"
}

[ "$(at "$A_URL" GET /api/v1/jobs)" = 200 ] &&
    [ "$(at "$B_URL" GET /api/v1/jobs)" = 200 ] && pass both_serve_api ||
    fail both_serve_api "$(cat "$PW_TMP/body")"

# The workers run on A alone.
a_all() { [ "$(held_by "$A_PID")" = 6 ]; }
wait_for 10 a_all && [ "$(held_by "$B_PID")" = 0 ] &&
    [ "$(workers_held "$A_URL")" = 6 ] && [ "$(workers_held "$B_URL")" = 0 ] &&
    pass workers_on_one_daemon ||
    fail workers_on_one_daemon "A $(held_by "$A_PID"), B $(held_by "$B_PID"): $(sql "SELECT * FROM worker_leases")"
wait_for 5 grep -q "leases: watch is held by perfwatchd pid $A_PID on" "$PW_TMP/b/daemon.log" &&
    pass b_names_holder || fail b_names_holder "$(grep leases "$PW_TMP/b/daemon.log")"
# Three polls of the tree (poll 1s) later: A's mirror, never B's.
wait_for 20 grep -q "tree t1: mirror made" "$PW_TMP/a/daemon.log"
sleep 3
grep -q "tree t1: mirror made" "$PW_TMP/a/daemon.log" &&
    ! grep -q "tree t1" "$PW_TMP/b/daemon.log" &&
    [ -z "$(ls -A "$PW_TMP/b/git" 2>/dev/null)" ] &&
    pass watcher_fetches_once ||
    fail watcher_fetches_once "A: $(grep -c 'tree t1' "$PW_TMP/a/daemon.log"), B: $(grep 'tree t1' "$PW_TMP/b/daemon.log")"

# Queued through A, claimed through B; then claims through both at once
# never get one job twice.
for r in r1 r2 r3 r4 r5; do
	u=$A_URL
	[ "$r" = r1 ] || [ "$r" = r3 ] || [ "$r" = r5 ] && u=$B_URL
	[ "$(at "$u" POST /api/v1/runners/register "$(token_of $r)" "{\"name\":\"$r\"}")" = 200 ] ||
	    fail register "$r: $(cat "$PW_TMP/body")"
done
[ "$(at "$A_URL" POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] ||
    fail submit_a "$(cat "$PW_TMP/body")"
code=$(at "$B_URL" POST /api/v1/jobs/claim "$(token_of r1)" '{"wait_s":1}')
first=$(jfield job.id <"$PW_TMP/body")
[ "$code" = 200 ] && [ -n "$first" ] && pass claimed_through_b ||
    fail claimed_through_b "$code $(cat "$PW_TMP/body")"
req "$A_URL" /api/v1/jobs/claim "$(token_of r2)" '{"wait_s":1}' "$PW_TMP/c2" &
p2=$!
req "$B_URL" /api/v1/jobs/claim "$(token_of r3)" '{"wait_s":1}' "$PW_TMP/c3" &
p3=$!
req "$A_URL" /api/v1/jobs/claim "$(token_of r4)" '{"wait_s":1}' "$PW_TMP/c4" &
wait $! "$p2" "$p3"
ids=$first
for c in c2 c3 c4; do
	if [ "$(cat "$PW_TMP/$c.code")" = 200 ]; then
		ids="$ids $(jfield job.id <"$PW_TMP/$c")"
	fi
done
n=$(echo "$ids" | wc -w)
[ "$(echo "$ids" | tr ' ' '\n' | sort -u | wc -l)" = "$n" ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE state = 'running'")" = "$n" ] &&
    pass claimed_once || fail claimed_once "jobs $ids; $(sql "SELECT id, state, host_id FROM jobs")"

# A claim parked on B wakes for a pair queued through A.
req "$B_URL" /api/v1/jobs/claim "$(token_of r5)" '{"wait_s":20}' "$PW_TMP/c5" &
parked=$!
sleep 1
t0=$(now_ms)
at "$A_URL" POST /api/v1/submit "$ADM" '{"job":"vd"}' >/dev/null
new_jobs=" $(jfield pairs.0.base_job <"$PW_TMP/body") $(jfield pairs.0.candidate_job <"$PW_TMP/body") "
wait "$parked"
dt=$(($(now_ms) - t0))
[ "$(cat "$PW_TMP/c5.code")" = 200 ] && [ "$dt" -lt 5000 ] &&
    [[ "$new_jobs" == *" $(jfield job.id <"$PW_TMP/c5") "* ]] &&
    pass parked_claim_wakes || fail parked_claim_wakes "$(cat "$PW_TMP/c5.code") after $dt ms (new jobs$new_jobs): $(cat "$PW_TMP/c5")"

# A page B has cached shows a pair queued through A before the cache's
# time to live (1 s from B's render) is up: invalidated by the signal,
# which comes within a tick (0.5 s).  The reply cache is made a second
# after its render whatever happens, so a try that takes longer tells
# nothing: five tries, each timed from before B's render.
hits() {
	curl -s --max-time 60 "$B_URL/metrics" |
	    sed -n 's/^perfwatch_web_cache_hits_total \([0-9]*\)$/\1/p'
}
page() { curl -s --max-time 60 -o "$1" "$B_URL/api/v1/jobs?limit=50"; }
cache_ok=
for try in 1 2 3 4 5; do
	# The last try's entry ends: this one's first request renders.
	[ "$try" = 1 ] || sleep 1.1
	h0=$(hits)
	t0=$(now_ms)
	page "$PW_TMP/p1"
	page "$PW_TMP/p2"
	cmp -s "$PW_TMP/p1" "$PW_TMP/p2" && [ "$(hits)" = $((h0 + 1)) ] || continue
	at "$A_URL" POST /api/v1/submit "$ADM" '{"job":"vd"}' >/dev/null
	for ((i = 0; i < 50; i++)); do
		page "$PW_TMP/p3"
		cmp -s "$PW_TMP/p1" "$PW_TMP/p3" || break
		sleep 0.05
	done
	dt=$(($(now_ms) - t0))
	want=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
	[ "$(jfield jobs.0.id <"$PW_TMP/p3")" = "$want" ] ||
	    { cache_ok="job $want never shown"; break; }
	echo "# try $try: B's page showed the new job $dt ms after B rendered it"
	if [ "$dt" -lt 950 ]; then
		cache_ok=yes
		break
	fi
	cache_ok="$dt ms after its render, the cache's time to live"
done
[ "$cache_ok" = yes ] && pass cache_invalidated_across_daemons ||
    fail cache_invalidated_across_daemons "${cache_ok:-the page on B was never a cache hit}"

# A daemon of role web: reads, no writes, no workers.
start_other "$PW_TMP/w" --role web || { fail web_starts "$(cat "$PW_TMP/w/daemon.log")"; finish; }
W_URL=$OTHER_URL
W_PID=$OTHER_PID
[ "$(at "$W_URL" GET /api/v1/jobs)" = 200 ] && [ "$(at "$W_URL" GET /)" = 200 ] &&
    pass role_web_serves_reads || fail role_web_serves_reads "$(head -c 300 "$PW_TMP/body")"
code=$(at "$W_URL" POST /api/v1/jobs/claim "$(token_of r5)" '{"wait_s":1}')
[ "$code" = 503 ] && grep -q -- '--role web' "$PW_TMP/body" &&
    [ "$(at "$W_URL" POST /api/v1/runners/register "$(token_of r5)" '{"name":"r5"}')" = 503 ] &&
    pass role_web_refuses_writes || fail role_web_refuses_writes "$code $(cat "$PW_TMP/body")"
[ "$(workers_held "$W_URL")" = 0 ] && [ "$(held_by "$W_PID")" = 0 ] &&
    ! grep -q "leases:" "$PW_TMP/w/daemon.log" && pass role_web_runs_no_worker ||
    fail role_web_runs_no_worker "$(grep leases "$PW_TMP/w/daemon.log")"

# A dies: B takes every worker over.
t0=$(now_ms)
stop_pid "$A_PID" KILL
b_all() { [ "$(held_by "$B_PID")" = 6 ] && [ "$(workers_held "$B_URL")" = 6 ]; }
if wait_for 15 b_all; then
	dt=$(($(now_ms) - t0))
	[ "$dt" -le 6000 ] && pass takeover_after_kill9 ||
	    fail takeover_after_kill9 "B held every lease after $dt ms"
	echo "# B held every lease $dt ms after A's SIGKILL"
else
	fail takeover_after_kill9 "$(sql "SELECT * FROM worker_leases")"
fi
wait_for 15 grep -q "tree t1: mirror made" "$PW_TMP/b/daemon.log" &&
    pass watcher_taken_over || fail watcher_taken_over "$(grep -i 'tree\|lease' "$PW_TMP/b/daemon.log")"
[ "$(held_by "$W_PID")" = 0 ] && [ "$(at "$W_URL" GET /api/v1/jobs)" = 200 ] &&
    pass role_web_after_kill9 || fail role_web_after_kill9 "$(sql "SELECT * FROM worker_leases")"
finish
