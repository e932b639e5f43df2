#!/usr/bin/env bash
# Group commit of uploads (store/batch.h):
#  1. concurrent uploads from four runners, a bad one (a duplicate metric,
#     an index out of range) sent at the same moment as each runner's good
#     ones: the bad ones get a 400 naming the field, every good one a 201,
#     and each good run is stored once with its metrics, nothing of a bad
#     one;
#  2. a reply only after the commit: another process holds SQLite's write
#     lock (on PostgreSQL: the runs table) while four uploads come in; the daemon holds them (GET
#     /metrics: perfwatch_upload_pending), none is answered while
#     the lock is held, and a kill -9 then loses only unanswered uploads:
#     none of them is stored after the restart, and sent again each is
#     stored once.
# Also: the verdict worker thread runs 10 nice levels below the rest of
# the daemon (daemon/verdict.c).
. "$(dirname "$0")/lib.sh"

N=4
RUNS=6
daemon_config "$PW_TMP/d" r1 r2 r3 r4
cat >"$PW_DIR/jobs/b.yaml" <<YAML
name: b
parser: keyvalue
command: [echo, "ops=1"]
runs: $RUNS
max_runs: $RUNS
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# post TOKENFILE PATH BODY OUT: "status body" appended to OUT.
post() {
	local st
	st=$(curl -s -o "$4.body.$$.$RANDOM" -w '%{http_code}' --max-time 60 \
	    -X POST -H "Authorization: Bearer $(cat "$1")" \
	    -H 'Content-Type: application/json' --data-binary "$3" \
	    "$PW_URL$2")
	echo "$st" >>"$4"
}

metric() {	# NAME VALUE
	echo "{\"name\":\"$1\",\"value\":$2,\"better\":\"higher\"}"
}

# Field 19 of /proc/PID/task/TID/stat is the thread's nice value: one
# thread (the verdict worker) 10 above the others (at most 19).  The
# worker lowers its own priority once it runs: on a loaded machine that
# can be after the daemon listens, so wait for it (up to 10 s).
base=$(sed 's/^.*) //' "/proc/$PW_DAEMON_PID/stat" | cut -d' ' -f17)
low=$((base + 10 > 19 ? 19 : base + 10))
read_nices() {
	nices=$(for t in /proc/$PW_DAEMON_PID/task/*/stat; do
		sed 's/^.*) //' "$t" | cut -d' ' -f17
	done | sort -n | uniq -c | tr -s ' ' | tr '\n' ';')
	echo "$nices" | tr ';' '\n' | grep -q " $low\$"
}
for _ in $(seq 50); do
	read_nices && break
	sleep 0.2
done
check "one_thread_at_nice_$low ($nices)" \
    test "$low" -ne "$base" -a "$(echo "$nices" | tr ';' '\n' | grep -c " $low\$")" -eq 1 -a \
    "$(echo "$nices" | tr ';' '\n' | grep " $low\$" | cut -d' ' -f2)" = 1

for _ in $(seq 1 $N); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"b"}')" = 201 ] ||
		fail submit "$(cat "$PW_TMP/body")"
done
jobs=()
for i in $(seq 1 $N); do
	http POST /api/v1/runners/register "$PW_TOKENS/r$i.token" \
	    "{\"name\":\"r$i\"}" >/dev/null
	http POST /api/v1/jobs/claim "$PW_TOKENS/r$i.token" '{"wait_s":2}' >/dev/null
	jobs+=("$(jfield job.id <"$PW_TMP/body")")
done
check "each_runner_claimed_a_job (${jobs[*]})" \
    test "$(printf '%s\n' "${jobs[@]}" | grep -c '^[0-9][0-9]*$')" -eq $N

# waitall: waits for the uploads in $bg (not for the daemon, which a bare
# wait would too).
waitall() {
	local p
	for p in "${bg[@]}"; do wait "$p"; done
	bg=()
}

# 1. All at once: per runner RUNS-1 good uploads (0..RUNS-2), one with a
# duplicate metric (index RUNS-1) and one beyond max_runs.
bg=()
for i in $(seq 1 $N); do
	job=${jobs[$((i - 1))]}
	tok=$PW_TOKENS/r$i.token
	for ((k = 0; k < RUNS - 1; k++)); do
		post "$tok" "/api/v1/jobs/$job/runs" \
		    "{\"index\":$k,\"status\":\"ok\",\"metrics\":[$(metric ops $((100 + k))),$(metric lat 5)]}" \
		    "$PW_TMP/good" &
		bg+=($!)
	done
	post "$tok" "/api/v1/jobs/$job/runs" \
	    "{\"index\":$((RUNS - 1)),\"status\":\"ok\",\"metrics\":[$(metric ops 1),$(metric ops 2)]}" \
	    "$PW_TMP/dup" &
	bg+=($!)
	post "$tok" "/api/v1/jobs/$job/runs" \
	    "{\"index\":$((RUNS + 3)),\"status\":\"ok\",\"metrics\":[$(metric ops 1)]}" \
	    "$PW_TMP/range" &
	bg+=($!)
done
waitall
check "good_uploads_201 ($(sort "$PW_TMP/good" | uniq -c | tr -s ' '))" \
    test "$(grep -c '^201$' "$PW_TMP/good")" -eq $((N * (RUNS - 1)))
check "duplicate_metric_400 ($(sort "$PW_TMP/dup" | uniq -c | tr -s ' '))" \
    test "$(grep -c '^400$' "$PW_TMP/dup")" -eq $N
check "index_out_of_range_400 ($(sort "$PW_TMP/range" | uniq -c | tr -s ' '))" \
    test "$(grep -c '^400$' "$PW_TMP/range")" -eq $N
check duplicate_error_names_the_field \
    grep -q "field 'metrics\[1\]': duplicate" "$PW_TMP"/dup.body.*
check range_error_names_the_field \
    grep -q "field 'index': $((RUNS + 3)) is outside" "$PW_TMP"/range.body.*
check "good_runs_stored_once_with_metrics" \
    test "$(sql "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM metrics m WHERE m.run_id = r.id) = 2")" -eq $((N * (RUNS - 1))) -a \
    "$(sql "SELECT count(*) FROM runs")" -eq $((N * (RUNS - 1)))
check nothing_of_the_bad_uploads \
    test "$(sql "SELECT count(*) FROM runs WHERE idx >= $((RUNS - 1))")" -eq 0

# 2. The write lock held by another process: uploads wait, unanswered.
lock_ready=$PW_TMP/locked
lock_go=$PW_TMP/unlock
if [ -n "${PW_TEST_PG:-}" ]; then
	# PostgreSQL: psql holds the runs table, which every upload
	# writes, until told (or 4 s) from a shell it waits in.
	cat >"$PW_TMP/lock.sql" <<SQL
BEGIN;
LOCK TABLE runs IN EXCLUSIVE MODE;
\\! touch $lock_ready; i=0; while [ ! -e $lock_go ] && [ \$i -lt 200 ]; do sleep 0.02; i=\$((i + 1)); done
ROLLBACK;
SQL
	PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" -X -q \
	    -f "$PW_TMP/lock.sql" "$PW_DB" >"$PW_TMP/lock.log" 2>&1 &
else
python3 - "$PW_DB" "$lock_ready" "$lock_go" <<'PY' &
import os, sqlite3, sys, time
db, ready, go = sys.argv[1:]
c = sqlite3.connect(db, isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(ready, "w").close()
t = time.time()
# At most 4 s: the daemon's busy timeout is 5 s.
while not os.path.exists(go) and time.time() - t < 4:
	time.sleep(0.02)
c.execute("ROLLBACK")
PY
fi
holder=$!
wait_for 10 test -e "$lock_ready" || fail lock_holder_started "no lock"
# last_runs OUT: each runner uploads index RUNS-1 of its job (still free:
# part 1 refused it), in the background (pids in bg).
last_runs() {
	local i
	for i in $(seq 1 $N); do
		post "$PW_TOKENS/r$i.token" "/api/v1/jobs/${jobs[$((i - 1))]}/runs" \
		    "{\"index\":$((RUNS - 1)),\"status\":\"ok\",\"metrics\":[$(metric ops 7)]}" \
		    "$1" &
		bg+=($!)
	done
}
last_runs "$PW_TMP/held"
pending() {
	curl -s --max-time 5 "$PW_URL/metrics" >"$PW_TMP/metrics"
	grep -q "^perfwatch_upload_pending $N\$" "$PW_TMP/metrics"
}
wait_for 3 pending
qrc=$?
check "uploads_wait_behind_the_lock ($(grep '^perfwatch_upload_\(pending\|queue\) ' "$PW_TMP/metrics" | tr '\n' ' '))" \
    test "$qrc" -eq 0
check "none_answered_before_its_commit ($(cat "$PW_TMP/held" 2>/dev/null | tr '\n' ' '))" \
    test ! -s "$PW_TMP/held"
stop_pid "$PW_DAEMON_PID" KILL
touch "$lock_go"
wait "$holder"
waitall
check "killed_uploads_got_no_2xx ($(sort "$PW_TMP/held" | uniq -c | tr -s ' '))" \
    test -z "$(grep '^2' "$PW_TMP/held")"
check unanswered_uploads_not_stored \
    test "$(sql "SELECT count(*) FROM runs WHERE idx = $((RUNS - 1))")" -eq 0
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
: >"$PW_TMP/resent"
last_runs "$PW_TMP/resent"
waitall
check "resent_uploads_201 ($(sort "$PW_TMP/resent" | uniq -c | tr -s ' '))" \
    test "$(grep -c '^201$' "$PW_TMP/resent")" -eq $N
check every_run_stored_once \
    test "$(sql "SELECT count(*) FROM (SELECT job_id FROM runs GROUP BY job_id HAVING count(*) = $RUNS AND count(DISTINCT idx) = $RUNS) AS j")" -eq $N
check batches_counted \
    sh -c "curl -s '$PW_URL/metrics' | grep -q '^perfwatch_upload_batch_uploads_total $N\$'"
stop_pid "$PW_DAEMON_PID"
check daemon_exits_cleanly test "$?" -eq 0
finish
