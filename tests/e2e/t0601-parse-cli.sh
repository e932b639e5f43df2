#!/usr/bin/env bash
# check: parallel
# `perfwatch parse` on the shared fixtures: table and JSON output, the
# JSON read back by the json parser, errors with exit 1.
set -u
BIN=${PERFWATCH_BIN:-build/san/bin}
FIX=${PERFWATCH_FIXTURES:-tests/fixtures}/bench
tmp=$(mktemp -d /tmp/t0601.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

out=$("$BIN/perfwatch" parse --tool fio "$FIX/fio.randread.json")
if echo "$out" | grep -Eq '^read_bw +114570\.5684 +MiB/s +higher$'; then
	pass table_output
else
	fail table_output "$out"
fi

for spec in neper:neper.tcp_rr.server.txt fio:fio.read.libaio.json \
    will-it-scale:will-it-scale.mmap2.txt netperf:netperf.udp_stream.lkp.txt; do
	tool=${spec%%:*} file=${spec#*:}
	if ! "$BIN/perfwatch" parse --tool "$tool" "$FIX/$file" --json >"$tmp/a.json"; then
		fail "json_$tool" "parse failed"
		continue
	fi
	"$BIN/perfwatch" parse --tool json "$tmp/a.json" --json >"$tmp/b.json"
	if cmp -s "$tmp/a.json" "$tmp/b.json" &&
	    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert len(d["metrics"]) > 0
for m in d["metrics"]:
    assert set(m) == {"name", "value", "unit", "better"}, m
    assert m["better"] in ("higher", "lower", "info")' "$tmp/a.json"; then
		pass "json_roundtrip_$tool"
	else
		fail "json_roundtrip_$tool" "$(diff "$tmp/a.json" "$tmp/b.json" | head -5)"
	fi
done

"$BIN/perfwatch" parse --tool will-it-scale \
    "$FIX/will-it-scale.context_switch1.assert-fail.txt" >"$tmp/o" 2>"$tmp/e"
rc=$?
if [ $rc -eq 1 ] && [ ! -s "$tmp/o" ] && grep -q 'will-it-scale: line 1: test failed' "$tmp/e"; then
	pass assertion_failure_exit_1
else
	fail assertion_failure_exit_1 "exit $rc: $(cat "$tmp/e")"
fi
head -c 2000 "$FIX/fio.randread.json" >"$tmp/trunc.json"
"$BIN/perfwatch" parse --tool fio "$tmp/trunc.json" --json >"$tmp/o" 2>"$tmp/e"
rc=$?
if [ $rc -eq 1 ] && [ ! -s "$tmp/o" ] && grep -Eq 'fio: line [0-9]+' "$tmp/e"; then
	pass truncated_fio_exit_1
else
	fail truncated_fio_exit_1 "exit $rc: $(cat "$tmp/e")"
fi
"$BIN/perfwatch" parse --tool fio "$tmp/missing" 2>"$tmp/e"
[ $? -eq 1 ] && pass missing_file_exit_1 || fail missing_file_exit_1 "$(cat "$tmp/e")"
"$BIN/perfwatch" parse --tool sysbench "$FIX/fio.randread.json" 2>"$tmp/e"
[ $? -eq 2 ] && pass unknown_tool_exit_2 || fail unknown_tool_exit_2 "$(cat "$tmp/e")"
"$BIN/perfwatch" parse "$FIX/fio.randread.json" 2>/dev/null
[ $? -eq 2 ] && pass no_tool_exit_2 || fail no_tool_exit_2 "accepted"
exit $((fails > 0))
