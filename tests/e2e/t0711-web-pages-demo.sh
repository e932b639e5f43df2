#!/usr/bin/env bash
# Every page kind (overview, commit, series, pair, history, regressions,
# hosts, jobs) in headless Chromium on data made by real runs: make demo's
# daemon and runner (14 commits, a mailed series, a tcp_rr memcg-tax pair),
# left running as a user leaves it; then Ctrl-C (SIGINT) stops it and
# everything it started.  Screenshots go to $OUT/screenshots/demo-*.png
# (kept by CI as artifacts; the README shows one).
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$top/tests/e2e/browser

if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
	fail browser_setup "chromium or node missing (make deps installs them)"
	finish
fi
if [ ! -d "$bdir/node_modules/playwright-core" ]; then
	if ! (cd "$bdir" && npm ci --no-audit --no-fund >"$PW_TMP/npm.log" 2>&1); then
		fail browser_setup "npm ci failed: $(tail -3 "$PW_TMP/npm.log")"
		finish
	fi
fi

out=$PW_TMP/demo.out
# setsid: the demo gets its own process group, as under a terminal, so
# that SIGINT reaches it the way Ctrl-C does.
DEMO_PORT=0 DEMO_DIR=$PW_TMP/demo PERFWATCH_BIN=$PW_BIN \
    setsid scripts/demo.sh >"$out" 2>&1 &
demo=$!
PW_PIDS+=("$demo")
running() { grep -q 'running; Ctrl-C stops' "$out"; }
if ! wait_for 420 running; then
	fail demo_running "$(tail -n 30 "$out")"
	finish
fi
pass demo_running
# The pages below read the demo's verdicts: when the demo did not get the
# expected ones (a loaded machine), say which, so the page failures that
# follow are explained.
if grep -q 'all verdicts as expected' "$out"; then
	pass demo_verdicts_as_expected
else
	fail demo_verdicts_as_expected "$(grep -E '^demo: expected|<- |^CHANGE|^  at ' "$out" | head -n 30)"
fi
PW_URL=$(awk '/^  dashboard:/ {print $2}' "$out" | sed 's|/$||')
fix=$(awk '/^  the fix:/ {print $3}' "$out" | sed 's|.*/commit/||')
noop=$(awk '/^  the no-op:/ {print $3}' "$out" | sed 's|.*/commit/||')
series=$(awk '/^  the series:/ {print $3}' "$out" | sed 's|.*/series/||')
pair=$(awk '/^  tcp_rr pair:/ {print $3}' "$out" | sed 's|.*/pair/||')
[ -n "$PW_URL" ] && [ -n "$fix" ] && [ -n "$noop" ] && [ -n "$series" ] &&
    [ -n "$pair" ] && pass demo_links ||
    { fail demo_links "$(sed -n '/look here/,$p' "$out")"; finish; }

shots=$top/${OUT:-build}/screenshots
mkdir -p "$shots" "$PW_TMP/chromium"
PW_URL=$PW_URL FIX=$fix NOOP=$noop SERIES=$series PAIR=$pair SHOTS=$shots \
    USER_DATA=$PW_TMP/chromium NODE_PATH=$bdir/node_modules \
    timeout 300 node "$bdir/pages.js" >"$PW_TMP/browser.log" 2>&1
rc=$?
cat "$PW_TMP/browser.log"
if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$PW_TMP/browser.log"; then
	fail browser "node exited $rc"
fi
grep -q '^FAIL' "$PW_TMP/browser.log" && PW_FAILED=1
if grep -q '^FAIL pages_history_change_point' "$PW_TMP/browser.log"; then
	# What the detector saw: the demo's own reading and the points.
	echo "# demo's change points: $(cat "$PW_TMP/demo/cp.txt" 2>/dev/null)"
	curl -fsS "$PW_URL/api/v1/history?job=demo-stock&metric=ns_per_op&tree=demo&branch=master" |
	    /usr/bin/python3 -c 'import json,sys; h=json.load(sys.stdin); print("# points:", [(p.get("commit","")[:8], p.get("median")) for p in h.get("points",[])]); print("# change_points:", h.get("change_points"))'
fi
n=$(ls "$shots"/demo-*.png 2>/dev/null | wc -l)
check browser_screenshots [ "$n" -ge 8 ]

# Ctrl-C: the demo stops, and with it the daemon and the runner.
kill -INT -- "-$demo" 2>/dev/null
for _ in $(seq 100); do
	kill -0 "$demo" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$demo" 2>/dev/null; then
	fail ctrl_c_stops_the_demo "still running"
else
	pass ctrl_c_stops_the_demo
fi
sleep 0.5
if pgrep -f "$PW_TMP/demo/" >/dev/null; then
	fail ctrl_c_stops_everything "$(pgrep -af "$PW_TMP/demo/")"
else
	pass ctrl_c_stops_everything
fi
finish
