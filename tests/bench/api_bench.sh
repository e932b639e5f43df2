#!/usr/bin/env bash
# make bench-api: run uploads per second over loopback (8 clients, 20
# metrics per run), claim/heartbeat p99 under that load, and the daemon's
# RSS after 100,000 stored runs.  Uses the optimised build.
#   tests/bench/api_bench.sh [TOTAL_RUNS] [CLIENTS] [METRICS]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
export PERFWATCH_BIN=$PWD/$OUT/rel/bin
. tests/e2e/lib.sh
total=${1:-100000}
clients=${2:-8}
metrics=${3:-20}
runners=()
for ((i = 1; i <= clients + 1; i++)); do runners+=("r$i"); done
D=$PW_TMP/d
daemon_config "$D" "${runners[@]}"
cat >"$D/jobs/bench.yaml" <<EOF2
name: bench
parser: keyvalue
command: [echo, "x=1"]
runs: 100
max_runs: 1000
EOF2
start_daemon "$D" || exit 1
pairs=$((total / 2000 + clients + 2))
for ((i = 0; i < pairs; i++)); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"bench"}')" = 201 ] ||
		{ echo "submit failed: $(cat "$PW_TMP/body")"; exit 1; }
done
cpu() {	# user+system clock ticks of a pid
	awk '{print $14 + $15}' "/proc/$1/stat"
}
c0=$(cpu "$PW_DAEMON_PID")
"$OUT/rel/bench/api_load" "$PW_PORT" "$D" "$clients" "$total" "$metrics" || exit 1
c1=$(cpu "$PW_DAEMON_PID")
hz=$(getconf CLK_TCK)
echo "daemon CPU: $(( (c1 - c0) * 1000 / hz )) ms for $total uploads" \
    "= $(( (c1 - c0) * 1000000 / hz / total )) us per upload" \
    "(machine load average: $(cut -d' ' -f1 /proc/loadavg))"
echo "stored runs: $(sql 'SELECT count(*) FROM runs'), metrics: $(sql 'SELECT count(*) FROM metrics')"
echo "daemon RSS after the runs: $(awk '/VmRSS/ {print $2, $3}' /proc/$PW_DAEMON_PID/status)" \
    "(peak $(awk '/VmHWM/ {print $2, $3}' /proc/$PW_DAEMON_PID/status))"
echo "database size: $(du -h "$PW_DB" | cut -f1) (+ WAL $(du -h "$PW_DB-wal" 2>/dev/null | cut -f1))"
stop_pid "$PW_DAEMON_PID"
