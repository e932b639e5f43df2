#!/usr/bin/env bash
# make bench-fleet: 200 simulated runners (one process, api_load --fleet)
# register, heartbeat every 5 s, claim and upload against one daemon for
# 60 s: uploads/s and the claim p99.  Uses the optimised build.
#   tests/bench/fleet_bench.sh [RUNNERS] [SECONDS] [METRICS]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
export PERFWATCH_BIN=$PWD/$OUT/rel/bin
. tests/e2e/lib.sh
runners=${1:-200}
secs=${2:-60}
metrics=${3:-5}
names=()
for ((i = 1; i <= runners; i++)); do names+=("r$i"); done
D=$PW_TMP/d
daemon_config "$D" "${names[@]}"
cat >>"$D/daemon.yaml" <<EOF2
http:
  threads: 4
  max_connections: 1024
  per_ip: 1024
EOF2
# One submit makes 256 pairs (one per matrix point) of 10 runs a side:
# 5,120 uploads.  Enough of them that the fleet cannot drain the queue
# in the time (16 did, in 40 s, and the uploads/s was the queue's size
# over the time, not the daemon's rate).
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
submits=${SUBMITS:-96}
for ((i = 0; i < submits; i++)); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"fleet"}')" = 201 ] ||
		{ echo "submit failed: $(cat "$PW_TMP/body")"; exit 1; }
done
echo "queued: $(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") jobs of 10 runs"
"$OUT/rel/bench/api_load" --fleet "$PW_PORT" "$D" "$runners" "$secs" "$metrics" || exit 1
echo "stored runs: $(sql 'SELECT count(*) FROM runs'), hosts: $(sql 'SELECT count(DISTINCT host_id) FROM runs')"
left=$(sql "SELECT count(*) FROM jobs WHERE state = 'queued'")
if [ "$left" = 0 ]; then
	echo "fleet: the queue ran dry before the end: uploads/s is a lower bound (SUBMITS=$submits; raise it)"
else
	echo "fleet: $left jobs still queued at the end (the rate is the daemon's)"
fi
echo "daemon RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$PW_DAEMON_PID/status)"
stop_pid "$PW_DAEMON_PID"
