#!/usr/bin/env bash
# make check-pg: a write transaction left open holds up no other writer
# but one that changes its very rows.  psql (as another daemon's writer
# would) stores a run of one job and cancels a queued job of another
# pair -- the changes every upload and claim make to the running counts
# -- and keeps its transaction open.  Meanwhile the daemon, whose
# sessions give up on a lock after 200 ms (lock_timeout), claims a job
# for another runner and stores that runner's upload: both answered
# 2xx while psql still holds its transaction, none of the daemon's
# statements failing on a lock (SQLSTATE 55P03 in its log,
# PW_PG_TRACE), both in the database.  With one counts row for the
# runs and one for the queued jobs, the claim and the upload waited on
# psql's row locks until it committed.  After psql commits, `perfwatch
# store check` finds the counts in step with the rows.
. "$(dirname "$0")/lib.sh"

if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_writers_apart: make check-pg runs it"
	finish
fi
export PW_PG_TRACE=1
D=$PW_TMP/d
daemon_config "$D" r1 r2
sed -i "s|^database: \"\(.*\)\"$|database: \"\1 options='-c lock_timeout=200'\"|" "$D/daemon.yaml"
pg_vd_job "$D"
start_daemon "$D" || { fail start "daemon did not start"; finish; }
R1=$(token_of r1) R2=$(token_of r2) ADM=$(token_of admin)
for r in r1 r2; do
	[ "$(http POST /api/v1/runners/register "$(token_of $r)" "{\"name\":\"$r\"}")" = 200 ] ||
	    { fail "register_$r" "$(cat "$PW_TMP/body")"; finish; }
done
for _ in 1 2 3; do
	[ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] ||
	    { fail submit "$(cat "$PW_TMP/body")"; finish; }
done
[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":1}')" = 200 ] ||
    { fail claim_r1 "$(cat "$PW_TMP/body")"; finish; }
j1=$(jfield job.id <"$PW_TMP/body")
h1=$(sql "SELECT id FROM hosts WHERE name = 'r1'")
# A queued job of the last pair: not the one r2 claims next.
jq=$(sql "SELECT max(id) FROM jobs WHERE state = 'queued'")
pass setup

# psql's transaction, open until release.
rm -f "$PW_TMP/fifo" "$PW_TMP/locked"
mkfifo "$PW_TMP/fifo"
PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" -X -q \
    -v ON_ERROR_STOP=1 "$PW_DB" <"$PW_TMP/fifo" >"$PW_TMP/psql.log" 2>&1 &
LOCKER=$!
exec 3>"$PW_TMP/fifo"
printf "BEGIN;\nINSERT INTO runs (job_id, idx, host_id, attempt, status, created) VALUES (%s, 0, %s, 1, 'ok', 1);\nUPDATE jobs SET state = 'cancelled' WHERE id = %s;\n\\\\! touch %s/locked\n" \
    "$j1" "$h1" "$jq" "$PW_TMP" >&3
if wait_for 20 test -e "$PW_TMP/locked"; then
	pass psql_holds_its_transaction
else
	fail psql_holds_its_transaction "$(cat "$PW_TMP/psql.log")"
fi
locks0=$(grep -c '\[55P03\]' "$D/daemon.log")

code=$(http POST /api/v1/jobs/claim "$R2" '{"wait_s":1}')
j2=$(jfield job.id <"$PW_TMP/body" 2>/dev/null)
if [ "$code" = 200 ] && [ -n "$j2" ] && [ "$j2" != "$j1" ] && [ "$j2" != "$jq" ]; then
	pass claim_beside_open_transaction
else
	fail claim_beside_open_transaction "HTTP $code: $(cat "$PW_TMP/body")"
fi
code=$(http POST "/api/v1/jobs/$j2/runs" "$R2" \
    '{"index":0,"status":"ok","metrics":[{"name":"ops","unit":"","better":"higher","value":7}]}')
if [[ "$code" == 20[01] ]]; then
	pass upload_beside_open_transaction
else
	fail upload_beside_open_transaction "HTTP $code: $(cat "$PW_TMP/body")"
fi
locks1=$(grep -c '\[55P03\]' "$D/daemon.log")
[ "$locks1" = "$locks0" ] && pass no_statement_waited_out_a_lock ||
    fail no_statement_waited_out_a_lock "$((locks1 - locks0)) lock timeouts: $(grep -A1 '\[55P03\]' "$D/daemon.log" | tail -4)"
[ "$(sql "SELECT state FROM jobs WHERE id = $j2")" = running ] &&
    [ "$(sql "SELECT count(*) FROM runs WHERE job_id = $j2")" = 1 ] &&
    pass stored_while_psql_held || fail stored_while_psql_held \
    "job $j2 $(sql "SELECT state FROM jobs WHERE id = $j2"), runs $(sql "SELECT count(*) FROM runs WHERE job_id = $j2")"

printf 'COMMIT;\n' >&3
exec 3>&-
wait "$LOCKER" && pass psql_committed || fail psql_committed "$(cat "$PW_TMP/psql.log")"
[ "$(sql "SELECT n FROM count_totals WHERE name = 'runs'")" = 2 ] &&
    [ "$(sql "SELECT n FROM count_totals WHERE name = 'jobs.cancelled'")" = 1 ] &&
    pass counts_add_up || fail counts_add_up "$(sql "SELECT name, n FROM count_totals")"
if "$PW_BIN/perfwatch" store check "$PW_DB" >"$PW_TMP/check.out" 2>&1; then
	pass store_check_consistent
else
	fail store_check_consistent "$(grep -v ' ok:' "$PW_TMP/check.out")"
fi
finish
