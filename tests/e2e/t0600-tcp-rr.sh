#!/usr/bin/env bash
# perfwatch-tcp-rr end to end on 127.0.0.1: a server and clients for 2 s,
# the output read back by `perfwatch parse --tool neper`.
set -u
BIN=${PERFWATCH_BIN:-build/san/bin}
tmp=$(mktemp -d /tmp/t0600.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

# metric FILE NAME: the value of a metric in `perfwatch parse --json` output
metric() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
m = [x for x in d["metrics"] if x["name"] == sys.argv[2]]
print(m[0]["value"] if m else "missing")' "$1" "$2"
}

wait_port() {		# wait_port FILE -> prints the port
	local i
	for i in $(seq 1 100); do
		[ -s "$1" ] && { cat "$1"; return 0; }
		sleep 0.1
	done
	return 1
}

# 1. --once: server exits by itself after one client session.
"$BIN/perfwatch-tcp-rr" -H 127.0.0.1 -P 0 --port-file "$tmp/port1" --once \
    -T 2 >"$tmp/srv1.out" 2>"$tmp/srv1.err" &
srv=$!
pids+=("$srv")
if ! port=$(wait_port "$tmp/port1"); then
	fail once_server_starts "no port file: $(cat "$tmp/srv1.err")"
	exit 1
fi
grep -q "^port=$port\$" "$tmp/srv1.out" &&
    pass server_prints_chosen_port || fail server_prints_chosen_port "no port=$port line"
"$BIN/perfwatch-tcp-rr" -c -H 127.0.0.1 -P "$port" -F 8 -T 2 -l 2 \
    -Q 64 -R 256 -p 50,90,99,99.9 >"$tmp/cli1.out" 2>"$tmp/cli1.err"
rc=$?
[ $rc -eq 0 ] && pass client_runs || fail client_runs "exit $rc: $(cat "$tmp/cli1.err")"
for i in $(seq 1 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$srv" 2>/dev/null; then
	fail once_server_exits "still running 5 s after the client ended"
else
	wait "$srv"
	rc=$?
	[ $rc -eq 0 ] && pass once_server_exits || fail once_server_exits "exit $rc"
fi

if "$BIN/perfwatch" parse --tool neper "$tmp/cli1.out" --json >"$tmp/cli1.json" 2>"$tmp/parse.err"; then
	pass client_output_parses_as_neper
else
	fail client_output_parses_as_neper "$(cat "$tmp/parse.err")"
fi
tput=$(metric "$tmp/cli1.json" throughput)
n=$(metric "$tmp/cli1.json" num_transactions)
p50=$(metric "$tmp/cli1.json" latency_p50)
p999=$(metric "$tmp/cli1.json" latency_p99.9)
lmin=$(metric "$tmp/cli1.json" latency_min)
lmax=$(metric "$tmp/cli1.json" latency_max)
dur=$(metric "$tmp/cli1.json" duration)
if python3 -c "import sys
t,n,p50,p999,lmin,lmax,dur=map(float,sys.argv[1:])
ok = t > 0 and n > 0 and abs(t - n/dur) <= 0.01*t and lmin <= p50 <= p999 <= lmax and 1.9 < dur < 3
sys.exit(0 if ok else 1)" "$tput" "$n" "$p50" "$p999" "$lmin" "$lmax" "$dur" 2>/dev/null; then
	pass client_metrics_consistent
else
	fail client_metrics_consistent "throughput=$tput n=$n p50=$p50 p99.9=$p999 min=$lmin max=$lmax duration=$dur"
fi
unit=$(python3 -c 'import json,sys
print([m["unit"] for m in json.load(open(sys.argv[1]))["metrics"] if m["name"]=="latency_p99"][0])' "$tmp/cli1.json" 2>/dev/null)
[ "$unit" = us ] && pass latency_in_us || fail latency_in_us "unit '$unit'"
if "$BIN/perfwatch" parse --tool neper "$tmp/srv1.out" --json >"$tmp/srv1.json"; then
	sn=$(metric "$tmp/srv1.json" num_transactions)
	# The server also answered the requests in flight at the deadline.
	if python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if b <= a <= b + 8 else 1)" "$sn" "$n"; then
		pass server_counts_match_client
	else
		fail server_counts_match_client "server $sn, client $n"
	fi
else
	fail server_counts_match_client "server output does not parse"
fi

# 2. Two concurrent clients on one server, which stops on SIGTERM.
"$BIN/perfwatch-tcp-rr" -H 127.0.0.1 -P 0 --port-file "$tmp/port2" -T 2 \
    >"$tmp/srv2.out" 2>"$tmp/srv2.err" &
srv=$!
pids+=("$srv")
port=$(wait_port "$tmp/port2") || { fail sigterm_server_starts "no port"; exit 1; }
"$BIN/perfwatch-tcp-rr" -c -H 127.0.0.1 -P "$port" -F 3 -T 1 -l 1 >"$tmp/a.out" 2>&1 &
a=$!
"$BIN/perfwatch-tcp-rr" -c -H 127.0.0.1 -P "$port" -F 5 -T 2 -l 1 >"$tmp/b.out" 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
[ $ra -eq 0 ] && [ $rb -eq 0 ] && pass concurrent_clients ||
    fail concurrent_clients "exits $ra $rb: $(cat "$tmp/a.out" "$tmp/b.out" | tail -3)"
kill -0 "$srv" 2>/dev/null && pass server_survives_sessions ||
    fail server_survives_sessions "server exited without --once"
kill -TERM "$srv"
for i in $(seq 1 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$srv" 2>/dev/null; then
	fail sigterm_stops_server "still running 5 s after SIGTERM"
else
	wait "$srv"; rc=$?
	[ $rc -eq 0 ] && pass sigterm_stops_server || fail sigterm_stops_server "exit $rc: $(cat "$tmp/srv2.err")"
fi
"$BIN/perfwatch" parse --tool neper "$tmp/srv2.out" --json >"$tmp/srv2.json" 2>&1 &&
"$BIN/perfwatch" parse --tool neper "$tmp/a.out" --json >"$tmp/a.json" 2>&1 &&
"$BIN/perfwatch" parse --tool neper "$tmp/b.out" --json >"$tmp/b.json" 2>&1
if [ $? -eq 0 ] && python3 -c "import sys; s,a,b=map(float,sys.argv[1:]); sys.exit(0 if a+b <= s <= a+b+8 else 1)" \
    "$(metric "$tmp/srv2.json" num_transactions)" "$(metric "$tmp/a.json" num_transactions)" \
    "$(metric "$tmp/b.json" num_transactions)"; then
	pass server_total_is_sum_of_clients
else
	fail server_total_is_sum_of_clients "$(cat "$tmp/srv2.json" | head -c 300)"
fi

# 3. A client with no server: an error, no results.
"$BIN/perfwatch-tcp-rr" -c -H 127.0.0.1 -P "$port" -l 1 >"$tmp/c.out" 2>"$tmp/c.err"
rc=$?
if [ $rc -eq 1 ] && grep -q connect "$tmp/c.err" && ! grep -q throughput "$tmp/c.out"; then
	pass no_server_is_an_error
else
	fail no_server_is_an_error "exit $rc, stderr '$(cat "$tmp/c.err")'"
fi
"$BIN/perfwatch-tcp-rr" -c -F 0 >/dev/null 2>"$tmp/u.err"
[ $? -eq 2 ] && pass usage_error_exit_2 || fail usage_error_exit_2 "$(cat "$tmp/u.err")"
exit $((fails > 0))
