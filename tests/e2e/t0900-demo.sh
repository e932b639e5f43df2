#!/usr/bin/env bash
# make demo's script, as `DEMO_ONCE=1 make demo` runs it, on the sanitizer
# build: a real daemon, runner and fio pair; exit 0 only when all went well.
. "$(dirname "$0")/lib.sh"

out=$PW_TMP/demo.out
if DEMO_ONCE=1 DEMO_PORT=0 DEMO_DIR=$PW_TMP/demo PERFWATCH_BIN=$PW_BIN \
    timeout 300 scripts/demo.sh >"$out" 2>&1; then
	pass demo-exits-0
else
	fail demo-exits-0 "$(tail -n 30 "$out")"
fi
grep -q '^read_iops .*regression' "$out" && pass demo-finds-the-regression ||
	fail demo-finds-the-regression "$(grep read_iops "$out")"
grep -q '/pair/1' "$out" && pass demo-says-where-to-look ||
	fail demo-says-where-to-look "no pair link"
# Everything it started is gone: no daemon or runner of this demo left.
sleep 0.5
if pgrep -f "$PW_TMP/demo/" >/dev/null; then
	fail demo-stops-everything "$(pgrep -af "$PW_TMP/demo/")"
else
	pass demo-stops-everything
fi
finish
