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
#     restarts (the stale leases expire and the jobs are requeued).
# Alerts are not configured here: their at-most-once delivery across a
# kill is checked by t0352/t0801's restarts, not under this load.
# Uses the optimised build (make all).
#   tests/bench/crash_bench.sh [RUNNERS] [KILLS] [METRICS]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
export PERFWATCH_BIN=$PWD/$OUT/rel/bin
. tests/e2e/lib.sh
runners=${1:-200}
kills=${2:-10}
metrics=${3:-5}
names=()
for ((i = 1; i <= runners; i++)); do names+=("r$i"); done
D=$PW_TMP/d
daemon_config "$D" "${names[@]}"
# A fixed port, so the runners find the daemon again after a restart.
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -i "s/^listen: .*/listen: 127.0.0.1:$port/" "$D/daemon.yaml"
cat >>"$D/daemon.yaml" <<EOF2
http:
  threads: 4
  max_connections: 1024
  per_ip: 1024
scheduler:
  lease: 15s
EOF2
vals=$(seq -s, 1 256)
cat >"$D/jobs/fleet.yaml" <<EOF2
name: fleet
parser: keyvalue
command: [echo, "x=1"]
matrix:
  k: [$vals]
runs: 10
max_runs: 10
# One claim uploads all of a job's runs, as the simulated runners do
# (they do not take rounds or pair claims): rounds of their own would
# hand back a job whose runs are stored.
rounds: 1
EOF2
start_daemon "$D" || exit 1
# 48 submits: 245,760 uploads, more than the fleet makes in the time,
# so every kill lands under load (16 ran dry before the seventh kill
# once the claim got cheaper, store v25).
submits=${SUBMITS:-48}
for ((i = 0; i < submits; i++)); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"fleet"}')" = 201 ] ||
		{ echo "submit failed: $(cat "$PW_TMP/body")"; exit 1; }
done
want_pairs=$(sql "SELECT count(*) FROM pairs")
echo "queued: $want_pairs pairs, $(sql "SELECT count(*) FROM jobs") jobs of 10 runs"
acks=$PW_TMP/acks
mkdir -p "$acks"
secs=$((kills * 5 + 15))
"$OUT/rel/bench/api_load" --fleet --crash "$acks" "$port" "$D" "$runners" \
    "$secs" "$metrics" >"$PW_TMP/load.out" 2>&1 &
load=$!
PW_PIDS+=("$load")
bad=0
restart_ms=()
for ((k = 1; k <= kills; k++)); do
	sleep "$((RANDOM % 4 + 1)).$((RANDOM % 10))"
	n=$(sql "SELECT count(*) FROM runs")
	busy=$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
	kill -9 "$PW_DAEMON_PID"
	wait "$PW_DAEMON_PID" 2>/dev/null
	ic=$(sqlite3 "$PW_DB" 'PRAGMA integrity_check' 2>&1)
	if [ "$ic" != ok ]; then
		echo "FAIL kill $k: integrity_check: $ic"
		bad=1
	fi
	t0=$(date +%s%N)
	start_daemon "$D" >/dev/null || { echo "FAIL kill $k: the daemon did not restart"; bad=1; break; }
	restart_ms+=($((($(date +%s%N) - t0) / 1000000)))
	echo "kill $k: at $n stored runs, $busy jobs queued or running; integrity $ic; listening again after ${restart_ms[-1]} ms"
	if [ "$busy" = 0 ]; then
		echo "FAIL kill $k: no job was left to run: the daemon was idle, not under load (raise SUBMITS)"
		bad=1
	fi
done
wait "$load"
lrc=$?
cat "$PW_TMP/load.out"
[ $lrc -eq 0 ] || { echo "FAIL the load generator exited $lrc"; bad=1; }
stop_pid "$PW_DAEMON_PID"

ic=$(sqlite3 "$PW_DB" 'PRAGMA integrity_check' 2>&1)
[ "$ic" = ok ] || { echo "FAIL final integrity_check: $ic"; bad=1; }
cat "$acks"/*.acks >"$PW_TMP/acks.txt"
nack=$(wc -l <"$PW_TMP/acks.txt")
# Each acknowledged upload once in the acks (a retry is acknowledged
# once), and stored: the job's run at that index.
dup=$(sort "$PW_TMP/acks.txt" | uniq -d | wc -l)
sqlite3 "$PW_DB" <<SQL >"$PW_TMP/check.txt"
CREATE TEMP TABLE acks (job INTEGER, idx INTEGER);
.mode csv
.separator " "
.import $PW_TMP/acks.txt acks
.mode list
-- Lost: acknowledged, not stored, and its job never went back to the
-- queue.  A job whose lease expired (its runner gone for longer than
-- scheduler.lease) is measured again from scratch, by design: both
-- sides of a pair come from one host; its old runs are counted apart.
SELECT 'missing', count(*) FROM acks a JOIN jobs j ON j.id = a.job
  WHERE j.attempts <= 1 AND NOT EXISTS
  (SELECT 1 FROM runs r WHERE r.job_id = a.job AND r.idx = a.idx);
SELECT 'requeued', count(*) FROM jobs WHERE attempts > 1;
SELECT 'half', count(*) FROM runs r
  WHERE (SELECT count(*) FROM metrics m WHERE m.run_id = r.id) <> $metrics;
SELECT 'twice', count(*) FROM (SELECT job_id, idx FROM runs GROUP BY job_id, idx HAVING count(*) > 1);
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
SELECT 'stored', count(*) FROM runs;
SQL
val() { awk -v k="$1" -F'|' '$1 == k {print $2}' "$PW_TMP/check.txt"; }
echo "acknowledged uploads: $nack; stored runs: $(val stored); jobs requeued after a lost lease: $(val requeued); restarts: ${#restart_ms[@]} (ms to listen: ${restart_ms[*]})"
[ "$nack" -gt 0 ] || { echo "FAIL no upload was acknowledged: nothing was checked"; bad=1; }
[ "$dup" = 0 ] || { echo "FAIL $dup acknowledgements twice"; bad=1; }
for k in missing half twice pairs_without_jobs jobs_over_max queue_counts_wrong; do
	[ "$(val $k)" = 0 ] || { echo "FAIL $k: $(val $k)"; bad=1; }
done
[ "$(val pairs)" = "$want_pairs" ] || { echo "FAIL pairs: $(val pairs), submitted $want_pairs"; bad=1; }
if [ $bad = 0 ]; then
	echo "check-crash: OK ($kills kills under $runners runners)"
else
	echo "check-crash: FAILED"
fi
exit $bad
