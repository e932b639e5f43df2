#!/usr/bin/env bash
# make check-pg: a write transaction that loses to another is run again
# whole, never answered 500 -- every write of the store, not only the
# claim and the uploads.  The daemon's sessions give up on a lock after
# 200 ms (lock_timeout in its conninfo); psql holds the row a request
# must change (SELECT ... FOR UPDATE in an open transaction) until the
# daemon's statement has failed at least once with SQLSTATE 55P03 (the
# failed statement is in the daemon's log, PW_PG_TRACE), then commits.
# The request is answered 2xx and its change is in the database: a
# runner's register (its hosts row), an admin's cancel (the job's row)
# and an admin's submit, whose transaction the route opens itself
# (store/tx.h; the counts of jobs it moves: psql holds their table).
. "$(dirname "$0")/lib.sh"

if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_write_retry: make check-pg runs it"
	finish
fi
export PW_PG_TRACE=1
pg_lock_daemon "$PW_TMP/d" 200 || { fail start "daemon did not start"; finish; }
[ "$(http POST /api/v1/runners/register "$R1" '{"name":"r1"}')" = 200 ] &&
    [ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] &&
    pass setup || { fail setup "$(cat "$PW_TMP/body")"; finish; }
job=$(sql "SELECT min(id) FROM jobs")

# hold SQL: psql runs SQL in a transaction it keeps open until release.
hold() {
	rm -f "$PW_TMP/fifo" "$PW_TMP/locked"
	mkfifo "$PW_TMP/fifo"
	PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" -X -q \
	    "$PW_DB" <"$PW_TMP/fifo" >>"$PW_TMP/lock.log" 2>&1 &
	LOCKER=$!
	exec 3>"$PW_TMP/fifo"
	printf 'BEGIN;\n%s;\n\\! touch %s/locked\n' "$1" "$PW_TMP" >&3
	wait_for 20 test -e "$PW_TMP/locked"
}
release() {
	printf 'COMMIT;\n' >&3
	exec 3>&-
	wait "$LOCKER"
}
# timeouts_of TEXT: the daemon's statements containing TEXT that failed
# with a lock timeout (PW_PG_TRACE: the error, then the statement).
timeouts_of() {
	grep -A1 '\[55P03\]' "$PW_DIR/daemon.log" | grep -c "^PGSQL .*$1"
}
# bg_http NAME METHOD PATH TOKEN BODY: the request in the background,
# its status into $PW_TMP/NAME.code.
bg_http() {
	curl -s -o "$PW_TMP/$1.body" -w '%{http_code}' -X "$2" --max-time 60 \
	    -H "Authorization: Bearer $(cat "$4")" \
	    -H 'Content-Type: application/json' --data-binary "$5" \
	    "$PW_URL$3" >"$PW_TMP/$1.code" &
	BG=$!
}

timed_out() { [ "$(timeouts_of "$WANT")" -gt "$N0" ]; }

# try NAME SQL_TO_HOLD STATEMENT_TEXT METHOD PATH TOKEN BODY
try() {
	local name=$1 n0
	n0=$(timeouts_of "$3")
	hold "$2" || { fail "${name}_lock_held" "$(cat "$PW_TMP/lock.log")"; return; }
	bg_http "$name" "$4" "$5" "$6" "$7"
	WANT=$3 N0=$n0
	wait_for 20 timed_out
	local seen=$?
	release
	wait "$BG"
	if [ $seen = 0 ] && [[ "$(cat "$PW_TMP/$name.code")" == 20[01] ]]; then
		pass "${name}_retried_after_lock_timeout"
	else
		fail "${name}_retried_after_lock_timeout" "timeouts $n0 -> $(timeouts_of "$3"), HTTP $(cat "$PW_TMP/$name.code"): $(cat "$PW_TMP/$name.body")"
	fi
}

try register "SELECT 1 FROM hosts WHERE name = 'r1' FOR UPDATE" \
    "INSERT INTO hosts" POST /api/v1/runners/register "$R1" '{"name":"r1"}'
[ "$(jfield host_id <"$PW_TMP/register.body")" = "$(sql "SELECT id FROM hosts WHERE name = 'r1'")" ] &&
    pass register_reply_names_the_host || fail register_reply_names_the_host "$(cat "$PW_TMP/register.body")"

try cancel "SELECT 1 FROM jobs WHERE id = $job FOR UPDATE" \
    "UPDATE jobs SET state = 'cancelled'" POST "/api/v1/jobs/$job/cancel" "$ADM" '{}'
[ "$(sql "SELECT state FROM jobs WHERE id = $job")" = cancelled ] &&
    pass job_cancelled || fail job_cancelled "state $(sql "SELECT state FROM jobs WHERE id = $job")"

jobs0=$(sql "SELECT count(*) FROM jobs")
try submit "LOCK TABLE count_shards IN SHARE MODE" \
    "INSERT INTO jobs" POST /api/v1/submit "$ADM" '{"job":"vd"}'
[ "$(sql "SELECT count(*) FROM jobs")" = $((jobs0 + 2)) ] &&
    [ "$(jfield pairs.0.candidate_job <"$PW_TMP/submit.body")" = "$(sql "SELECT max(id) FROM jobs")" ] &&
    pass submit_stored_once || fail submit_stored_once "jobs $jobs0 -> $(sql "SELECT count(*) FROM jobs"): $(cat "$PW_TMP/submit.body")"
finish
