#!/usr/bin/env bash
# make demo's script, as `DEMO_ONCE=1 make demo` runs it, on the sanitizer
# build: a real daemon and runner watch the demo's git tree (14 commits on
# a model of the memcg per-cpu charge stock) and run a tcp_rr memcg-tax
# pair; exit 0 only when the verdicts are the expected ones.  Checked here
# as well, from its output: the fix is an improvement, the no-op commit
# unchanged, the mailed revert of the fix a regression, the change point
# at the fix, the memcg tax shown, run progress shown, and nothing it
# started left running.
. "$(dirname "$0")/lib.sh"

out=$PW_TMP/demo.out
if DEMO_ONCE=1 DEMO_PORT=0 DEMO_DIR=$PW_TMP/demo PERFWATCH_BIN=$PW_BIN \
    timeout 420 scripts/demo.sh >"$out" 2>&1; then
	pass demo-exits-0
else
	fail demo-exits-0 "$(tail -n 30 "$out")"
fi
grep -qE 'improvement <- the fix$' "$out" && pass demo-fix-is-an-improvement ||
	fail demo-fix-is-an-improvement "$(grep -- '<- the fix' "$out")"
grep -qE 'unchanged <- no-op$' "$out" && pass demo-noop-is-unchanged ||
	fail demo-noop-is-unchanged "$(grep -- '<- no-op' "$out")"
grep -qE 'regression <- the mailed revert$' "$out" &&
	pass demo-mailed-revert-is-a-regression ||
	fail demo-mailed-revert-is-a-regression "$(grep -- 'mailed revert' "$out")"
fix=$(git -C "$PW_TMP/demo/src" log --format='%h' --abbrev=12 -1 \
    --grep='trim the per-cpu charge stock' 2>/dev/null)
[ -n "$fix" ] && grep -qE "^  at $fix .*improvement" "$out" &&
	pass demo-change-point-at-the-fix ||
	fail demo-change-point-at-the-fix "fix '$fix': $(sed -n '/change points/,/memcg tax/p' "$out")"
grep -qE 'memcg_tax\.throughput +base +[0-9.]+ +cand +[0-9.]+' "$out" &&
	pass demo-shows-the-memcg-tax ||
	fail demo-shows-the-memcg-tax "$(sed -n '/memcg tax/,/look here/p' "$out")"
grep -qE '^  job +[0-9]+ +demo-stock +candidate +run [0-9]+/5$' "$out" &&
	pass demo-shows-progress || fail demo-shows-progress "no run i/N line"
grep -q '/commit/[0-9a-f]\{40\}' "$out" && pass demo-says-where-to-look ||
	fail demo-says-where-to-look "no commit link"
# Everything it started is gone: no daemon or runner of this demo left.
sleep 0.5
if pgrep -f "$PW_TMP/demo/" >/dev/null; then
	fail demo-stops-everything "$(pgrep -af "$PW_TMP/demo/")"
else
	pass demo-stops-everything
fi
finish
