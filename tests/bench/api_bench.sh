#!/usr/bin/env bash
# make bench-api: run uploads per second over loopback (8 clients, 20
# metrics per run), claim/heartbeat p50/p99 under that load, uploads per
# runner, the store's write-lock wait/hold by writer and the upload batch
# sizes (from GET /metrics), and the daemon's CPU and RSS after 100,000
# stored runs.  Uses the optimised build.
#   tests/bench/api_bench.sh [TOTAL_RUNS] [CLIENTS] [METRICS]
#
# With REF_BIN=DIR (make bench-api REF=main builds one), the reference
# perfwatchd in DIR runs too, alternating ref new ref new ... (ROUNDS
# pairs, default 2) so that slow drift of a shared machine falls on both
# sides (NOISE.md); the same load tool drives both.  The end prints each
# side's median and the load average before every run.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
NEW_BIN=$PWD/$OUT/rel/bin
export PERFWATCH_BIN=$NEW_BIN
. tests/e2e/lib.sh
total=${1:-100000}
clients=${2:-8}
metrics=${3:-20}
rounds=${ROUNDS:-2}
LOAD=$PWD/$OUT/rel/bench/api_load
runners=()
for ((i = 1; i <= clients + 1; i++)); do runners+=("r$i"); done

cpu() {	# user+system clock ticks of a pid
	awk '{print $14 + $15}' "/proc/$1/stat"
}

# The write-lock lines of /metrics as "writer n wait_s hold_s wait_max
# hold_max", one per writer that wrote; nothing from a daemon without them.
lock_table() {
	awk '
	/^perfwatch_store_write/ || /^perfwatch_store_writes_total/ {
		match($0, /writer="[a-z_]*"/)
		w = substr($0, RSTART + 8, RLENGTH - 9)
		split($1, k, "{")
		v[w, k[1]] = $2
		seen[w] = 1
	}
	/^perfwatch_upload_batch/ { b[$1] = $2 }
	END {
		for (w in seen) {
			n = v[w, "perfwatch_store_writes_total"]
			if (n == 0) continue
			printf "  %-16s %8d writes  wait %8.3f s (max %7.2f ms)" \
			    "  hold %8.3f s (mean %6.3f ms, max %7.2f ms)\n", w, n, \
			    v[w, "perfwatch_store_write_wait_seconds_total"],
			    v[w, "perfwatch_store_write_wait_max_seconds"] * 1000,
			    v[w, "perfwatch_store_write_hold_seconds_total"],
			    v[w, "perfwatch_store_write_hold_seconds_total"] * 1000 / n,
			    v[w, "perfwatch_store_write_hold_max_seconds"] * 1000 | "sort"
		}
		close("sort")
		if (b["perfwatch_upload_batches_total"] > 0)
			printf "  upload batches: %d for %d uploads = %.2f per " \
			    "batch, largest %d, failed %d\n",
			    b["perfwatch_upload_batches_total"],
			    b["perfwatch_upload_batch_uploads_total"],
			    b["perfwatch_upload_batch_uploads_total"] / b["perfwatch_upload_batches_total"],
			    b["perfwatch_upload_batch_max"],
			    b["perfwatch_upload_batches_failed_total"]
	}'
}

# One run against the perfwatchd in $1 (label $2); the load tool's lines
# go to $PW_TMP/$2.N.out as well.
one_run() {
	local bin=$1 label=$2 n=$3 D pairs c0 c1 hz out
	D=$PW_TMP/d.$label.$n
	out=$PW_TMP/$label.$n.out
	PW_BIN=$bin
	daemon_config "$D" "${runners[@]}"
	cat >"$D/jobs/bench.yaml" <<EOF2
name: bench
parser: keyvalue
command: [echo, "x=1"]
runs: 100
max_runs: 1000
# One claim uploads all of a job's runs, as the simulated runners do
# (they do not take rounds or pair claims): rounds of their own would
# hand back a job whose runs are stored.
rounds: 1
EOF2
	start_daemon "$D" || return 1
	pairs=$((total / 2000 + clients + 2))
	for ((i = 0; i < pairs; i++)); do
		[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"bench"}')" = 201 ] ||
			{ echo "submit failed: $(cat "$PW_TMP/body")"; return 1; }
	done
	echo "== $label run $n ($bin): load average before it:" \
	    "$(cut -d' ' -f1-3 /proc/loadavg)"
	c0=$(cpu "$PW_DAEMON_PID")
	"$LOAD" "$PW_PORT" "$D" "$clients" "$total" "$metrics" | tee "$out" ||
		return 1
	c1=$(cpu "$PW_DAEMON_PID")
	hz=$(getconf CLK_TCK)
	echo "daemon CPU: $(( (c1 - c0) * 1000 / hz )) ms for $total uploads" \
	    "= $(( (c1 - c0) * 1000000 / hz / total )) us per upload" \
	    "(machine load average after: $(cut -d' ' -f1 /proc/loadavg))"
	echo "stored runs: $(sql 'SELECT count(*) FROM runs'), metrics: $(sql 'SELECT count(*) FROM metrics')"
	echo "daemon RSS after the runs: $(awk '/VmRSS/ {print $2, $3}' /proc/$PW_DAEMON_PID/status)" \
	    "(peak $(awk '/VmHWM/ {print $2, $3}' /proc/$PW_DAEMON_PID/status))"
	echo "database size: $(du -h "$PW_DB" | cut -f1) (+ WAL $(du -h "$PW_DB-wal" 2>/dev/null | cut -f1))"
	curl -s --max-time 10 "$PW_URL/metrics" >"$D/metrics" || true
	if grep -q '^perfwatch_store_writes_total' "$D/metrics"; then
		echo "store write lock, by writer (whole run, setup included):"
		lock_table <"$D/metrics"
	else
		echo "store write lock: unknown (this perfwatchd does not report it)"
	fi
	# KILL: a graceful stop waits for the verdict worker's pair in
	# progress, which takes long with 1,000-run sides; nothing is measured
	# after this point.
	stop_pid "$PW_DAEMON_PID" KILL
	rm -rf "$D"
}

# Median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "unknown"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# "uploads/s claim_p50 claim_p99 hb_p50 hb_p99 up_p99" of one output file.
figures() {
	awk '
	/^uploads: / { for (i = 1; i <= NF; i++) if ($i ~ /\/s$/) { sub(/\/s/, "", $i); sub(/^=/, "", $i); ups = $i } }
	/^upload latency/ { up99 = $7 }
	/^claim latency/ { c50 = $7; c99 = $9 }
	/^heartbeat latency/ { h50 = $7; h99 = $9 }
	END { print ups, c50, c99, h50, h99, up99 }' "$1"
}

summary() {
	local label=$1 col name
	for col in 1 2 3 4 5 6; do
		case $col in
		1) name="uploads/s" ;; 2) name="claim p50 ms" ;;
		3) name="claim p99 ms" ;; 4) name="heartbeat p50 ms" ;;
		5) name="heartbeat p99 ms" ;; 6) name="upload p99 ms" ;;
		esac
		printf "  %-18s %-8s median %-10s runs:" "$name" "$label" \
		    "$(for f in "$PW_TMP"/$label.*.out; do figures "$f"; done |
		        awk -v c=$col '{ print $c }' | median)"
		for f in "$PW_TMP"/$label.*.out; do
			printf " %s" "$(figures "$f" | awk -v c=$col '{ print $c }')"
		done
		echo
	done
}

if [ -n "${REF_BIN:-}" ]; then
	[ -x "$REF_BIN/perfwatchd" ] ||
		{ echo "api_bench: no perfwatchd in REF_BIN=$REF_BIN" >&2; exit 1; }
	for ((r = 1; r <= rounds; r++)); do
		one_run "$REF_BIN" ref "$r" || exit 1
		one_run "$NEW_BIN" new "$r" || exit 1
	done
	echo "== side by side ($rounds runs each, alternating ref new; ref = $REF_BIN)"
	summary ref
	summary new
else
	one_run "$NEW_BIN" new 1 || exit 1
fi
