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
#
# BACKEND=sqlite (the default: the above), pg or all: the store's
# backends side by side, CLIENTS runners (default 200) in all: "sqlite"
# one daemon on a SQLite file, "pg1" one daemon on PostgreSQL, "pg2" two
# daemons on one PostgreSQL database (the second with worker leases of
# its own to wait for, as a second host would run it), each driven by an
# api_load of its own with half the runners and half the uploads (its
# runners b1.. from api_load_b, the same load tool naming its runners
# b: one runner name on two daemons would be one host holding one job).
# BACKEND=pg runs pg1 and pg2, all the three; alternated in ROUNDS
# rounds (sqlite pg1 pg2 sqlite pg1 pg2) against drift.  The PostgreSQL
# server is the bench's own (tests/lib_pg.sh: initdb in the scratch
# directory, a Unix socket, never the system's cluster), each
# configuration on a new database with synchronous_commit on: a 2xx
# still means stored, as the WAL write is part of the commit (without
# fsync, as SQLite's synchronous=NORMAL does not sync a commit either).
# Each run prints the load average before it, and the daemons' and the
# server's CPU per upload after it.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
NEW_BIN=$PWD/$OUT/rel/bin
export PERFWATCH_BIN=$NEW_BIN
backend=${BACKEND:-sqlite}
case $backend in
sqlite) configs= ;;
pg) configs="pg1 pg2" ;;
all) configs="sqlite pg1 pg2" ;;
*) echo "api_bench: BACKEND=$backend: sqlite, pg or all" >&2; exit 2 ;;
esac
# lib.sh reads PW_TEST_PG when sourced: the bench sets it per run.
unset PW_TEST_PG
. tests/e2e/lib.sh
. tests/lib_pg.sh
total=${1:-100000}
clients=${2:-$([ -n "$configs" ] && echo 200 || echo 8)}
metrics=${3:-20}
rounds=${ROUNDS:-2}
LOAD=$PWD/$OUT/rel/bench/api_load
LOAD_B=$PWD/$OUT/rel/bench/api_load_b
runners=()
for ((i = 1; i <= clients + 1; i++)); do runners+=("r$i"); done
half=$((clients / 2))

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

# The daemon's configuration in DIR: every runner, the job "bench",
# every runner's connection taken at once.
bench_config() {
	daemon_config "$1" "${runners[@]}"
	cat >"$1/jobs/bench.yaml" <<EOF2
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
	# A runner of api_load uploads its job's runs without a heartbeat:
	# a lease that ran out under a slow store would requeue it.
	cat >>"$1/daemon.yaml" <<EOF2
http:
  max_connections: 1024
  per_ip: 1024
scheduler:
  lease: 1h
EOF2
}

# Enough pairs of "bench" queued for the load (through $PW_URL).
bench_submit() {
	local i pairs=$((total / 2000 + clients + 2))
	for ((i = 0; i < pairs; i++)); do
		[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"bench"}')" = 201 ] ||
			{ echo "submit failed: $(cat "$PW_TMP/body")"; return 1; }
	done
}

# One run against the perfwatchd in $1 (label $2); the load tool's lines
# go to $PW_TMP/$2.N.out as well.
one_run() {
	local bin=$1 label=$2 n=$3 D c0 c1 hz out
	D=$PW_TMP/d.$label.$n
	out=$PW_TMP/$label.$n.out
	PW_BIN=$bin
	bench_config "$D"
	start_daemon "$D" || return 1
	bench_submit || return 1
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

# user+system clock ticks of the bench's PostgreSQL server: the
# postmaster, the backends it reaped and those alive.
pg_cpu() {
	local pm c
	pm=$(head -n 1 "$PW_PG_DIR/data/postmaster.pid")
	awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat"
	for c in $(ps -o pid= --ppid "$pm"); do
		cpu "$c" 2>/dev/null
	done
}

# backend_run CONFIG N: run N of CONFIG (sqlite, pg1, pg2; above) with
# every runner, its lines in $PW_TMP/CONFIG.N.out (pg2: each load tool's
# in .a and .b, and there their sum: the uploads over the time both
# took, each latency the worse of the two).
backend_run() {
	local cfg=$1 n=$2 D B b out db t0 t1 c0 c1 s0 s1 hz bpid="" \
	    pa pb ra=0 rb=0 ld busy
	D=$PW_TMP/$cfg.$n
	B=$D/b
	out=$PW_TMP/$cfg.$n.out
	PW_BIN=$NEW_BIN
	if [ "$cfg" = sqlite ]; then
		unset PW_TEST_PG
	else
		PW_TEST_PG=$PG_CONNINFO
	fi
	bench_config "$D"
	if [ "$cfg" != sqlite ]; then
		db=$(sed -n 's/^database: ".*dbname=\([a-z0-9_]*\)"$/\1/p' "$D/daemon.yaml")
		PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" \
		    -X -q "$PW_TEST_PG" -c "ALTER DATABASE $db SET synchronous_commit = on" ||
		    return 1
	fi
	start_daemon "$D" || return 1
	if [ "$cfg" = pg2 ]; then
		# The second daemon: its own mirrors and runners b1.., the
		# same database and jobs.
		mkdir -p "$B/tokens"
		cp "$D/admin.token" "$B/admin.token"
		sed -e "s|^mirrors: .*|mirrors: $B/git|" -e '/^runners:/,/^http:/{/^http:/!d}' \
		    "$D/daemon.yaml" >"$B/daemon.yaml"
		{
			echo "runners:"
			for ((b = 1; b <= clients - half + 1; b++)); do
				head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
				    >"$B/tokens/b$b.token"
				printf '  - name: b%d\n    token_file: %s\n    labels: [test]\n' \
				    "$b" "$B/tokens/b$b.token"
			done
		} >>"$B/daemon.yaml"
		spawn "$B/daemon.log" "$NEW_BIN/perfwatchd" -c "$B/daemon.yaml" \
		    --port-file "$B/port"
		bpid=$!
		wait_for 20 test -s "$B/port" ||
			{ echo "the second daemon did not start:"; tail -5 "$B/daemon.log"; return 1; }
	fi
	bench_submit || return 1
	echo "== $cfg run $n: load average before it: $(cut -d' ' -f1-3 /proc/loadavg)"
	ld=$(cut -d' ' -f1 /proc/loadavg)
	c0=$(cpu "$PW_DAEMON_PID")
	[ -z "$bpid" ] || c0=$((c0 + $(cpu "$bpid")))
	s0=0
	[ "$cfg" = sqlite ] || s0=$(pg_cpu | awk '{n += $1} END {print n}')
	t0=$(date +%s.%N)
	if [ "$cfg" = pg2 ]; then
		"$LOAD" "$PW_PORT" "$D" "$half" "$((total / 2))" "$metrics" >"$out.a" 2>&1 &
		pa=$!
		"$LOAD_B" "$(cat "$B/port")" "$B" "$((clients - half))" \
		    "$((total - total / 2))" "$metrics" >"$out.b" 2>&1 &
		pb=$!
		wait "$pa" || ra=$?
		wait "$pb" || rb=$?
		t1=$(date +%s.%N)
		sed 's/^/  a: /' "$out.a"
		sed 's/^/  b: /' "$out.b"
		[ "$ra" = 0 ] && [ "$rb" = 0 ] || return 1
		awk -v t0="$t0" -v t1="$t1" -v total="$total" '
		function worse(k, v) { if (!(k in w) || v > w[k]) w[k] = v }
		/^upload latency/ { worse("u50", $5); worse("u99", $7) }
		/^claim latency/ { worse("c50", $7); worse("c99", $9) }
		/^heartbeat latency/ { worse("h50", $7); worse("h99", $9) }
		END {
			printf "uploads: %d in %.2f s =%.0f/s (two daemons, their load tools at once)\n",
			    total, t1 - t0, total / (t1 - t0)
			# Each latency of the worse daemon.
			printf "upload latency ms: p50 %s p99 %s\n", w["u50"], w["u99"]
			printf "claim latency ms under load: p50 %s p99 %s\n", w["c50"], w["c99"]
			printf "heartbeat latency ms under load: p50 %s p99 %s\n", w["h50"], w["h99"]
		}' "$out.a" "$out.b" | tee "$out"
	else
		"$LOAD" "$PW_PORT" "$D" "$clients" "$total" "$metrics" | tee "$out" ||
			return 1
		t1=$(date +%s.%N)
	fi
	c1=$(cpu "$PW_DAEMON_PID")
	[ -z "$bpid" ] || c1=$((c1 + $(cpu "$bpid")))
	s1=0
	[ "$cfg" = sqlite ] || s1=$(pg_cpu | awk '{n += $1} END {print n}')
	hz=$(getconf CLK_TCK)
	busy=$(awk -v a="$t0" -v b="$t1" -v c=$((c1 - c0 + s1 - s0)) -v hz="$hz" \
	    'BEGIN { printf "%.2f", c / hz / (b - a) }')
	echo "cpu: daemon(s) $(((c1 - c0) * 1000000 / hz / total)) us per upload," \
	    "PostgreSQL server $(((s1 - s0) * 1000000 / hz / total)) us per upload;" \
	    "$busy of $(nproc) CPUs busy with them" \
	    "(load average after: $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$out"
	echo "stored runs: $(sql 'SELECT count(*) FROM runs'), metrics: $(sql 'SELECT count(*) FROM metrics')"
	echo "load average before: $ld" >>"$out"
	[ -z "$bpid" ] || stop_pid "$bpid" KILL
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

# "uploads/s claim_p50 claim_p99 hb_p50 hb_p99 up_p99 up_p50 load
# service_us" of one output file; service_us is the daemons' and the
# PostgreSQL server's CPU an upload ("unknown" when the run had no cpu
# line).
figures() {
	awk '
	/^uploads: / { for (i = 1; i <= NF; i++) if ($i ~ /\/s$/) { sub(/\/s/, "", $i); sub(/^=/, "", $i); ups = $i } }
	/^upload latency/ { up50 = $5; up99 = $7 }
	/^claim latency/ { c50 = $7; c99 = $9 }
	/^heartbeat latency/ { h50 = $7; h99 = $9 }
	/^load average before: / { ld = $4 }
	/^cpu: daemon\(s\) / { svc = $3 + $9 }
	END { print ups, c50, c99, h50, h99, up99, up50, ld, svc == "" ? "unknown" : svc }' "$1"
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

# The median of column COL of CONFIG's runs.
col_median() {
	for f in "$PW_TMP"/$1.*.out; do figures "$f"; done |
	    awk -v c="$2" '{ print $c }' | median
}

if [ -n "$configs" ]; then
	for t in $configs; do
		if [ "$t" = pg2 ] && [ ! -x "$LOAD_B" ]; then
			echo "api_bench: $LOAD_B missing (make bench-api builds it)" >&2
			exit 1
		fi
	done
	case " $configs " in
	*" pg"*)
		pg_start "$PW_TMP" || exit 1
		PG_CONNINFO=$PW_TEST_PG
		trap 'set +e; pg_stop; pw_cleanup' EXIT
		;;
	esac
	for ((r = 1; r <= rounds; r++)); do
		for t in $configs; do
			backend_run "$t" "$r" || { echo "api_bench: $t run $r failed" >&2; exit 1; }
		done
	done
	echo "== side by side: $clients runners, $total uploads of $metrics metrics a run," \
	    "$rounds rounds alternating $configs (medians; each run's figures after the colon)"
	printf '  %-7s %10s %10s %10s %10s %10s %12s\n' config uploads/s \
	    "upload p50" "upload p99" "claim p50" "claim p99" "load before"
	for t in $configs; do
		printf '  %-7s %10s %10s %10s %10s %10s %12s :' "$t" \
		    "$(col_median "$t" 1)" "$(col_median "$t" 7)" "$(col_median "$t" 6)" \
		    "$(col_median "$t" 2)" "$(col_median "$t" 3)" "$(col_median "$t" 8)"
		for f in "$PW_TMP"/$t.*.out; do
			printf ' [%s]' "$(figures "$f" | awk '{ print $1 "/s up " $7 "/" $6 " claim " $2 "/" $3 " ms load " $8 }')"
		done
		echo
	done
	# What the machine allows each configuration: its CPUs over the
	# CPU an upload costs the daemons and the server together (the
	# load tools left out), the rate it would reach with nothing else
	# running here.
	echo "  ceiling: $(nproc) CPUs over the daemons' and the server's CPU an upload (medians)"
	for t in $configs; do
		awk -v t="$t" -v us="$(col_median "$t" 9)" -v n="$(nproc)" 'BEGIN {
			if (us + 0 <= 0) { printf "  %-7s unknown\n", t; exit }
			printf "  %-7s %d us an upload: at most %.0f uploads/s\n", t, us, n * 1e6 / us }'
	done
	case " $configs " in *" sqlite "*" pg2 "*)
		echo "  pg2 / sqlite uploads/s: $(awk -v a="$(col_median pg2 1)" \
		    -v b="$(col_median sqlite 1)" 'BEGIN {printf "%.2f", a / b}')" \
		    "(goal >= 1.5, with the upload p99 <= 20 ms)"
		# pg2's ceiling against the goal: below 1.5x SQLite's measured
		# rate, no schedule of this machine's CPUs reaches the goal.
		awk -v us="$(col_median pg2 9)" -v s="$(col_median sqlite 1)" -v n="$(nproc)" 'BEGIN {
			if (us + 0 <= 0 || s + 0 <= 0) { print "  pg2 ceiling / sqlite uploads/s: unknown"; exit }
			c = n * 1e6 / us / s
			w = "the goal fits the CPUs of this machine"
			if (c < 1.5) w = "below 1.5: the goal needs more CPUs than this machine has"
			printf "  pg2 ceiling / sqlite uploads/s: %.2f (%s)\n", c, w }' ;;
	esac
	exit 0
fi

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
