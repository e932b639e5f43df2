#!/usr/bin/env bash
# make check-pg: the PostgreSQL server restarts under a running daemon.
# The test stops and starts a server of its own (tests/lib_pg.sh), not
# the suite's, which other tests use meanwhile.  While the server is
# down the API answers 503 with the database's error, reads and writes
# alike, and the daemon stays up; once it is back the daemon connects
# again by itself (logged once each way) and every request works again:
# a pair submitted (its BEGIN, on a connection the server closed, is
# sent again over a new one), its job claimed by a runner.  The daemon
# holds every worker's lease again (worker_leases) within seconds.
#
# A claim that loses to another transaction is run again whole: the
# daemon's sessions give up on a lock after 30 ms (lock_timeout in its
# conninfo), and psql holds the jobs table for 150 ms as a claim comes;
# the claim's first tries fail with SQLSTATE 55P03 (logged by
# PW_PG_TRACE), a later one succeeds and the runner gets its job.
. "$(dirname "$0")/lib.sh"

if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_server_restart: make check-pg runs it"
	finish
fi
# The server runs as another user: it must reach its directory.
chmod 0755 "$PW_TMP"
pg_start "$PW_TMP/own" || { fail own_server "did not start"; finish; }
trap 'pg_stop; pw_cleanup' EXIT

D=$PW_TMP/d
pg_lock_daemon "$D" 30 || { fail start "daemon did not start"; finish; }
[ "$(http POST /api/v1/runners/register "$R1" '{"name":"r1"}')" = 200 ] &&
    [ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] &&
    [ "$(http GET /api/v1/jobs)" = 200 ] && pass before_restart ||
    fail before_restart "$(cat "$PW_TMP/body")"

pg_stop
codes=
for i in 1 2 3; do
	codes="$codes $(http GET "/api/v1/jobs?limit=$i")"
	codes="$codes $(http POST /api/v1/submit "$ADM" '{"job":"vd"}')"
	sleep 0.3
done
[ "$codes" = " 503 503 503 503 503 503" ] && pass outage_answers_503 ||
    fail outage_answers_503 "$codes: $(cat "$PW_TMP/body")"
kill -0 "$PW_DAEMON_PID" 2>/dev/null && pass daemon_survives_outage ||
    fail daemon_survives_outage "$(tail -5 "$D/daemon.log")"

pg_resume || { fail server_back "did not start again"; finish; }
back() { [ "$(http GET /api/v1/jobs)" = 200 ]; }
wait_for 15 back && pass reads_after_restart ||
    fail reads_after_restart "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] &&
    pass writes_after_restart || fail writes_after_restart "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":1}')" = 200 ] &&
    [ "$(jfield job.id <"$PW_TMP/body")" = 1 ] &&
    pass claim_after_restart || fail claim_after_restart "$(cat "$PW_TMP/body")"

cat >"$PW_TMP/lock.sql" <<EOF2
BEGIN;
LOCK TABLE jobs IN EXCLUSIVE MODE;
\\! touch $PW_TMP/locked
SELECT pg_sleep(0.15);
COMMIT;
EOF2
PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" -X -q \
    -f "$PW_TMP/lock.sql" "$PW_DB" >"$PW_TMP/lock.log" 2>&1 &
LOCKER=$!
# Polled closely: the claim must come while the lock is held.
for ((i = 0; i < 1000; i++)); do
	[ -e "$PW_TMP/locked" ] && break
	sleep 0.01
done
code=$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":1}')
wait "$LOCKER"
[ "$code" = 200 ] && grep -q "55P03" "$D/daemon.log" &&
    pass claim_retried_after_lock_timeout ||
    fail claim_retried_after_lock_timeout "$code $(cat "$PW_TMP/body"): $(grep -c 55P03 "$D/daemon.log") lock timeouts"

held() {
	[ "$(sql "SELECT count(*) FROM worker_leases WHERE holder LIKE
	    'perfwatchd pid $PW_DAEMON_PID on %' AND expires_ms >
	    (extract(epoch FROM clock_timestamp()) * 1000)::bigint")" = 6 ]
}
wait_for 15 held && pass leases_held_again ||
    fail leases_held_again "$(sql "SELECT * FROM worker_leases")"
grep -q "connection lost" "$D/daemon.log" &&
    grep -q "connected again" "$D/daemon.log" && pass loss_and_return_logged ||
    fail loss_and_return_logged "$(grep -i postgresql "$D/daemon.log" | head -5)"
finish
