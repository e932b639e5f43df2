#!/usr/bin/env bash
# make check-crash: kill -9 the daemon at random moments under
# the fleet's load, KILLS times (default 10), and check after each
# restart and at the end that nothing acknowledged was lost:
#   - PRAGMA integrity_check is ok after every kill;
#   - every upload the daemon acknowledged (api_load --crash writes each
#     one down) is stored, exactly once, with all its metrics;
#   - no run is stored half (a run without its metrics);
#   - no pair or job was lost or made twice: the submitted pairs, each
#     with its two jobs, and no job runs on a lease that outlived the
#     restarts (the stale leases expire and the jobs are requeued);
#   - no lease is lost while its runner lives (an upload answered 409,
#     a heartbeat answered cancel), and no job is claimed twice: a
#     claim whose answer was lost with the killed daemon is sent again
#     with its claim id, and gets the job the dead daemon leased for it
#     back as the same attempt (the jobs handed back to the same claim
#     id are printed, and the attempts they took beyond their claims
#     must be 0);
#   - every job whose finish was acknowledged was finished once (one
#     acknowledgement, state success, all its runs stored), and no job
#     is a success without all its runs;
#   - `perfwatch store check` finds the store consistent (and, once a
#     pair's queue count is put off by one, broken).
# With PW_TEST_PG (make check-pg's server, tests/lib_pg.sh; t0368) two
# daemons A and B share one PostgreSQL database with worker leases of
# 3 s, and the runners are spread over both and fail over from one to
# the other (api_load given both ports).  Each kill takes one of them at
# random (the first, the holder of the worker leases); while it is dead
# the other must hold every worker lease (worker_leases and its GET
# /metrics perfwatch_worker_held) and the verdicts must go on; then the
# dead one is started again.
# Alerts are not configured here: their at-most-once delivery across a
# kill is checked by t0352/t0801's restarts, not under this load.
# Uses the optimised build (make all), or PERFWATCH_BIN's.
#   tests/bench/crash_bench.sh [RUNNERS] [KILLS] [METRICS]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
export PERFWATCH_BIN=${PERFWATCH_BIN:-$PWD/$OUT/rel/bin}
api_load=${API_LOAD:-$PWD/$OUT/rel/bench/api_load}
. tests/e2e/lib.sh
runners=${1:-200}
kills=${2:-10}
metrics=${3:-5}
job_runs=${RUNS:-10}
pg=
[ -n "${PW_TEST_PG:-}" ] && pg=1
[ -x "$api_load" ] || { echo "FAIL no $api_load (make $OUT/rel/bench/api_load)"; exit 1; }
names=()
for ((i = 1; i <= runners; i++)); do names+=("r$i"); done
D=$PW_TMP/d
daemon_config "$D" "${names[@]}"
# Fixed ports, so the runners find the daemons again after a restart.
read -r port port_b < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
sed -i "s/^listen: .*/listen: 127.0.0.1:$port/" "$D/daemon.yaml"
cat >>"$D/daemon.yaml" <<EOF2
http:
  threads: 4
  max_connections: 1024
  per_ip: 1024
scheduler:
  lease: 15s
EOF2
[ -n "$pg" ] && echo "  worker_lease: 3s" >>"$D/daemon.yaml"
vals=$(seq -s, 1 256)
cat >"$D/jobs/fleet.yaml" <<EOF2
name: fleet
parser: keyvalue
command: [echo, "x=1"]
matrix:
  k: [$vals]
runs: $job_runs
max_runs: $job_runs
# One claim uploads all of a job's runs, as the simulated runners do
# (they do not take rounds or pair claims): rounds of their own would
# hand back a job whose runs are stored.
rounds: 1
EOF2
start_daemon "$D" || exit 1
A_PID=$PW_DAEMON_PID
# B: the same daemon, its own port and mirrors, on A's database.
B=$PW_TMP/b
mkdir -p "$B"
sed -e "s/^listen: .*/listen: 127.0.0.1:$port_b/" \
    -e "s|^mirrors: .*|mirrors: $B/git|" "$D/daemon.yaml" >"$B/daemon.yaml"
# keep_log FILE: a daemon's log, kept before a restart overwrites it.
keep_log() { [ -f "$1" ] && cat "$1" >>"$PW_TMP/daemons.log"; }
: >"$PW_TMP/daemons.log"
start_b() {
	keep_log "$B/daemon.log"
	rm -f "$B/port"
	spawn "$B/daemon.log" "$PW_BIN/perfwatchd" -v -c "$B/daemon.yaml" \
	    --port-file "$B/port"
	B_PID=$!
	wait_for 20 test -s "$B/port"
}
# held_by PID: the worker leases PID's daemon holds by the database.
held_by() {
	sql "SELECT count(*) FROM worker_leases WHERE holder LIKE
	    'perfwatchd pid $1 on %' AND expires_ms >
	    (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
}
# workers_held PORT: the perfwatch_worker_held samples of 1 in its
# /metrics.
workers_held() {
	curl -s --max-time 10 "http://127.0.0.1:$1/metrics" |
	    grep -c '^perfwatch_worker_held{worker="[a-z]*"} 1$'
}
# holds_all PID PORT: that daemon holds every worker lease, by the
# database and by its /metrics.
holds_all() {
	local n
	n=$(sql "SELECT count(*) FROM worker_leases")
	[ "$n" -gt 0 ] && [ "$(held_by "$1")" = "$n" ] &&
	    [ "$(workers_held "$2")" = "$n" ]
}
verdicts() { sql "SELECT count(*) FROM comparisons"; }
if [ -n "$pg" ]; then
	# A takes the leases first; B comes once they are all A's.
	wait_for 20 holds_all "$A_PID" "$port" ||
	    { echo "FAIL A never held the worker leases: $(sql "SELECT * FROM worker_leases")"; exit 1; }
	start_b || { echo "FAIL B did not start: $(tail -n 5 "$B/daemon.log")"; exit 1; }
fi
# 48 submits: 245,760 uploads, more than the fleet makes in the time,
# so every kill lands under load (16 ran dry before the seventh kill
# once the claim got cheaper, store v25).
submits=${SUBMITS:-48}
for ((i = 0; i < submits; i++)); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"fleet"}')" = 201 ] ||
		{ echo "FAIL submit: $(cat "$PW_TMP/body")"; exit 1; }
done
want_pairs=$(sql "SELECT count(*) FROM pairs")
echo "queued: $want_pairs pairs, $(sql "SELECT count(*) FROM jobs") jobs of $job_runs runs${pg:+ on PostgreSQL, daemons A (port $port) and B (port $port_b)}"
acks=$PW_TMP/acks
mkdir -p "$acks"
# The load goes on until the last kill's daemon is back (ACKDIR/stop),
# SECONDS only a bound: kills that wait for a takeover take longer than
# their pauses, and a fleet that stopped first would leave its jobs'
# leases to run out while the daemons live.
secs=$((kills * 40 + 60))
ports=$port
[ -n "$pg" ] && ports=$port,$port_b
"$api_load" --fleet --crash "$acks" "$ports" "$D" "$runners" \
    "$secs" "$metrics" >"$PW_TMP/load.out" 2>&1 &
load=$!
PW_PIDS+=("$load")
bad=0
restart_ms=()
takeover_ms=()
holder_kills=0
for ((k = 1; k <= kills; k++)); do
	sleep "$((RANDOM % 4 + 1)).$((RANDOM % 10))"
	n=$(sql "SELECT count(*) FROM runs")
	busy=$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
	if [ -z "$pg" ]; then
		kill -9 "$PW_DAEMON_PID"
		wait "$PW_DAEMON_PID" 2>/dev/null
		keep_log "$D/daemon.log"
		ic=$(sqlite3 "$PW_DB" 'PRAGMA integrity_check' 2>&1)
		if [ "$ic" != ok ]; then
			echo "FAIL kill $k: integrity_check: $ic"
			bad=1
		fi
		t0=$(date +%s%N)
		start_daemon "$D" >/dev/null || { echo "FAIL kill $k: the daemon did not restart"; bad=1; break; }
		restart_ms+=($((($(date +%s%N) - t0) / 1000000)))
		echo "kill $k: at $n stored runs, $busy jobs queued or running; integrity $ic; listening again after ${restart_ms[-1]} ms"
	else
		# The first kill takes the lease holder, the others either.
		if [ "$(held_by "$A_PID")" -gt 0 ]; then holder=A; else holder=B; fi
		victim=$holder
		if [ "$k" -gt 1 ] && [ $((RANDOM % 2)) = 0 ]; then
			victim=A
			[ "$holder" = A ] && victim=B
		fi
		[ "$victim" = "$holder" ] && holder_kills=$((holder_kills + 1))
		if [ "$victim" = A ]; then
			dead=$A_PID surv=$B_PID surv_port=$port_b
		else
			dead=$B_PID surv=$A_PID surv_port=$port
		fi
		v0=$(verdicts)
		kill -9 "$dead"
		wait "$dead" 2>/dev/null
		t0=$(date +%s%N)
		if wait_for 15 holds_all "$surv" "$surv_port"; then
			takeover_ms+=($((($(date +%s%N) - t0) / 1000000)))
		else
			takeover_ms+=(never)
			echo "FAIL kill $k: the survivor never held every worker: $(sql "SELECT name, holder FROM worker_leases")"
			bad=1
		fi
		moved() { [ "$(verdicts)" -gt "$v0" ]; }
		if ! wait_for 15 moved; then
			echo "FAIL kill $k: no verdict in 15 s with daemon $victim dead ($v0 comparisons)"
			bad=1
		fi
		v1=$(verdicts)
		t0=$(date +%s%N)
		if [ "$victim" = A ]; then
			keep_log "$D/daemon.log"
			start_daemon "$D" >/dev/null || { echo "FAIL kill $k: A did not restart"; bad=1; break; }
			A_PID=$PW_DAEMON_PID
		else
			start_b || { echo "FAIL kill $k: B did not restart"; bad=1; break; }
		fi
		restart_ms+=($((($(date +%s%N) - t0) / 1000000)))
		what="did not hold the workers"
		[ "$victim" = "$holder" ] && what="held the workers"
		echo "kill $k: daemon $victim ($what) at $n stored runs, $busy jobs queued or running; the other held every worker lease after ${takeover_ms[-1]} ms; comparisons $v0 -> $v1 while it was dead; listening again after ${restart_ms[-1]} ms"
	fi
	if [ "$busy" = 0 ]; then
		echo "FAIL kill $k: no job was left to run: the daemon was idle, not under load (raise SUBMITS)"
		bad=1
	fi
done
touch "$acks/stop"
wait "$load"
lrc=$?
cat "$PW_TMP/load.out"
[ $lrc -eq 0 ] || { echo "FAIL the load generator exited $lrc"; bad=1; }
stop_pid "$PW_DAEMON_PID"
[ -n "$pg" ] && stop_pid "$B_PID"
keep_log "$D/daemon.log"
[ -n "$pg" ] && keep_log "$B/daemon.log"

if [ -z "$pg" ]; then
	ic=$(sqlite3 "$PW_DB" 'PRAGMA integrity_check' 2>&1)
	[ "$ic" = ok ] || { echo "FAIL final integrity_check: $ic"; bad=1; }
fi
cat "$acks"/*.acks >"$PW_TMP/acks.txt"
cat "$acks"/*.done >"$PW_TMP/done.txt"
cat "$acks"/*.lost >"$PW_TMP/lost.txt"
cat "$acks"/*.left >"$PW_TMP/left.txt"
# A claim whose answer was lost with a killed daemon ("cut") after the
# daemon leased it a job is sent again with the same claim id, and the
# job comes back to it (the daemon logs "handed back ... on its repeated
# claim") as the same attempt.  An attempt a claim was never told of
# shows as a job's highest attempt answered beyond the claims answered
# for it: the extra attempts of the jobs answered after a cut, which
# must be none (each cost one when the job came back as a further
# attempt).  rehanded.txt: those jobs.
for f in "$acks"/*.claims; do
	awk '$1 == "cut" { cut = 1; next } { if (cut) print $1; cut = 0 }' "$f"
done | sort -u >"$PW_TMP/after_cut.txt"
cat "$acks"/*.claims | awk '$1 != "cut" {
	n[$1]++; if ($2 > max[$1]) max[$1] = $2 }
	END { for (j in n) print j, max[j] - n[j] }' | sort >"$PW_TMP/attempts.txt"
join "$PW_TMP/after_cut.txt" "$PW_TMP/attempts.txt" |
    awk '$2 > 0 { print $1 }' >"$PW_TMP/rehanded.txt"
extra_attempts=$(join "$PW_TMP/after_cut.txt" "$PW_TMP/attempts.txt" |
    awk '{ s += $2 } END { print s + 0 }')
handed_back=$(grep -c 'handed back to r[0-9]* on its repeated claim' "$PW_TMP/daemons.log")
cut_claims=$(cat "$acks"/*.claims | grep -c '^cut$')
nack=$(wc -l <"$PW_TMP/acks.txt")
ndone=$(wc -l <"$PW_TMP/done.txt")
# Each finish acknowledged once; each upload too (below: a retry is
# acknowledged once), and stored: the job's run at that index.
dup_done=$(sort "$PW_TMP/done.txt" | uniq -d | wc -l)
if [ -n "$pg" ]; then
	import="CREATE TEMP TABLE acks (job BIGINT, idx BIGINT);
CREATE TEMP TABLE done (job BIGINT);
CREATE TEMP TABLE rehanded (job BIGINT);
CREATE TEMP TABLE left_running (job BIGINT);
\\copy acks FROM '$PW_TMP/acks.txt' WITH (DELIMITER ' ')
\\copy done FROM '$PW_TMP/done.txt'
\\copy rehanded FROM '$PW_TMP/rehanded.txt'
\\copy left_running FROM '$PW_TMP/left.txt'"
	run_sql() {
		PGOPTIONS='-c client_min_messages=warning' \
		    "$(pg_bindir)/psql" -X -A -t -q -v ON_ERROR_STOP=1 "$PW_DB"
	}
else
	import="CREATE TEMP TABLE acks (job INTEGER, idx INTEGER);
CREATE TEMP TABLE done (job INTEGER);
CREATE TEMP TABLE rehanded (job INTEGER);
CREATE TEMP TABLE left_running (job INTEGER);
.mode csv
.separator \" \"
.import $PW_TMP/acks.txt acks
.import $PW_TMP/done.txt done
.import $PW_TMP/rehanded.txt rehanded
.import $PW_TMP/left.txt left_running
.mode list"
	run_sql() { sqlite3 "$PW_DB"; }
fi
run_sql <<SQL >"$PW_TMP/check.txt"
$import
-- Lost: acknowledged, not stored, and its job never went back to the
-- queue.  A job whose lease expired (its runner gone for longer than
-- scheduler.lease) is measured again from scratch, by design: both
-- sides of a pair come from one host; its old runs are counted apart.
-- Requeued: claimed again (attempts > 1), or back in the queue after a
-- claim.  Its runs may be uploaded (and acknowledged) once a lease.
CREATE TEMP TABLE requeued AS SELECT id FROM jobs
  WHERE attempts > 1 OR (state = 'queued' AND attempts > 0);
SELECT 'missing', count(*) FROM acks a
  WHERE a.job NOT IN (SELECT id FROM requeued) AND NOT EXISTS
  (SELECT 1 FROM runs r WHERE r.job_id = a.job AND r.idx = a.idx);
SELECT 'acked_twice', count(*) FROM (SELECT job, idx FROM acks
  WHERE job NOT IN (SELECT id FROM requeued)
  GROUP BY job, idx HAVING count(*) > 1) t;
SELECT 'requeued', count(*) FROM requeued;
-- Claimed again other than by its own runner after a lost answer, and
-- not left by the load's end: a lease that expired or went to another
-- runner while its runner lived.
SELECT 'requeued_live', count(*) FROM requeued
  WHERE id NOT IN (SELECT job FROM rehanded)
    AND id NOT IN (SELECT job FROM left_running);
SELECT 'half', count(*) FROM runs r
  WHERE (SELECT count(*) FROM metrics m WHERE m.run_id = r.id) <> $metrics;
SELECT 'twice', count(*) FROM (SELECT job_id, idx FROM runs GROUP BY job_id, idx HAVING count(*) > 1) t;
SELECT 'pairs', count(*) FROM pairs;
SELECT 'pairs_without_jobs', count(*) FROM pairs p
  WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE id = p.base_job_id)
     OR NOT EXISTS (SELECT 1 FROM jobs WHERE id = p.cand_job_id);
SELECT 'jobs_over_max', count(*) FROM jobs j
  WHERE (SELECT count(*) FROM runs WHERE job_id = j.id) > j.max_runs + 1;
-- Each pair's count of queued jobs (store v25 triggers), which the
-- claim reads instead of the jobs.
SELECT 'queue_counts_wrong', count(*) FROM pairs p WHERE p.queued <>
  (SELECT count(*) FROM jobs j WHERE j.pair_id = p.id AND j.state = 'queued');
-- A finish acknowledged: the job is done, with every run it wanted.
SELECT 'finished_not_success', count(*) FROM jobs j
  WHERE j.id IN (SELECT job FROM done) AND j.state <> 'success';
SELECT 'success_short', count(*) FROM jobs j WHERE j.state = 'success'
  AND (SELECT count(*) FROM runs r WHERE r.job_id = j.id) < j.runs;
SELECT 'finished', count(*) FROM jobs WHERE state = 'success';
SELECT 'stored', count(*) FROM runs;
SELECT 'verdicts', count(DISTINCT pair_id) FROM comparisons;
SQL
val() { awk -v k="$1" -F'|' '$1 == k {print $2}' "$PW_TMP/check.txt"; }
nlost=$(wc -l <"$PW_TMP/lost.txt")
echo "claims whose answer was lost with a daemon: $cut_claims; handed back to the same claim id: $handed_back, extra attempts: $extra_attempts"
echo "jobs claimed more than once: $(val requeued): $(wc -l <"$PW_TMP/rehanded.txt") after a claim answer lost with a daemon, $(val requeued_live) requeued while their runner lived; leases lost by a live runner: $nlost; jobs left running when the load stopped: $(wc -l <"$PW_TMP/left.txt")"
echo "acknowledged uploads: $nack; stored runs: $(val stored); finishes acknowledged: $ndone, jobs finished: $(val finished); pairs with a verdict: $(val verdicts); restarts: ${#restart_ms[@]} (ms to listen: ${restart_ms[*]})"
[ -n "$pg" ] && echo "kills of the lease holder: $holder_kills of $kills; ms until the survivor held every worker lease: ${takeover_ms[*]}"
verify() { # verify NAME OK-TEST-RESULT MESSAGE
	if [ "$2" = 0 ]; then
		echo "PASS $1"
	else
		echo "FAIL $1: $3"
		bad=1
	fi
}
[ "$nack" -gt 0 ]
verify uploads_acknowledged $? "no upload was acknowledged: nothing was checked"
[ "$ndone" -gt 0 ]
verify finishes_acknowledged $? "no finish was acknowledged: nothing was checked"
verify finished_once "$dup_done" "$dup_done jobs acknowledged finished twice"
verify lost_claim_answer_no_new_attempt "$extra_attempts" "$extra_attempts attempts no claim was told of, jobs $(head -5 "$PW_TMP/rehanded.txt" | tr '\n' ' ')"
[ "$nlost" = 0 ]
verify leases_kept_by_live_runners $? "$nlost leases lost by runners that lived (409 or cancel): $(head -5 "$PW_TMP/lost.txt" | tr '\n' ' ')"
for k in requeued_live missing acked_twice half twice pairs_without_jobs jobs_over_max queue_counts_wrong finished_not_success success_short; do
	v=$(val $k)
	verify "$k" "${v:-none}" "${v:-no answer}"
done
[ "$(val pairs)" = "$want_pairs" ]
verify pairs_kept $? "pairs: $(val pairs), submitted $want_pairs"
if "$PW_BIN/perfwatch" store check "$PW_DB" >"$PW_TMP/store_check.out" 2>&1; then
	echo "PASS store_check"
else
	verify store_check 1 "$(cat "$PW_TMP/store_check.out")"
fi
sed 's/^/# store check: /' "$PW_TMP/store_check.out"
# And it can fail: one pair's count of queued jobs put off by one.
sql "UPDATE pairs SET queued = queued + 1 WHERE id = (SELECT min(id) FROM pairs)" >/dev/null
if ! "$PW_BIN/perfwatch" store check "$PW_DB" >"$PW_TMP/store_check.out" 2>&1 &&
    grep -q '^pair_queue_counts *BROKEN' "$PW_TMP/store_check.out"; then
	echo "PASS store_check_finds_a_wrong_count"
else
	verify store_check_finds_a_wrong_count 1 "$(cat "$PW_TMP/store_check.out")"
fi
if [ $bad = 0 ]; then
	echo "check-crash: OK ($kills kills under $runners runners${pg:+, two daemons on PostgreSQL})"
else
	echo "check-crash: FAILED"
fi
exit $bad
