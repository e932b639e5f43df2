#!/usr/bin/env bash
# make demo as its users see it, on the sanitizer build, and every page
# kind (overview, commit, series, pair, history, regressions, hosts, jobs)
# in headless Chromium on the data it made.  A real daemon and runner
# watch the demo's git tree (14 commits on a model of the memcg per-cpu
# charge stock), a mailed series reverts the fix, and a tcp_rr pair
# measures the memcg tax; the demo is left running as a user leaves it,
# then Ctrl-C (SIGINT) stops it and everything it started.  Checked from
# its output: the fix is an improvement, the no-op commit unchanged, the
# mailed revert of the fix a regression, the change point at the fix, the
# memcg tax shown, run progress shown, demo-stock's runs pinned to one
# CPU, the revert's report mailed to the local SMTP server under the
# patch mail (links on the daemon's real port) and posted to the webhook
# receiver with a valid signature.
# Each page kind is checked with axe-core as in t0710 (serious or
# critical violations fail; no axe-core, SKIP).
# Screenshots go to $OUT/screenshots/demo-*.png (kept by CI as artifacts;
# the README shows one).  DEMO_ONCE=1's exit status (0 only with the
# expected verdicts) is what make check-fresh checks.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$top/tests/e2e/browser

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

grep -qE 'improvement <- the fix$' "$out" && pass demo-fix-is-an-improvement ||
	fail demo-fix-is-an-improvement "$(grep -- '<- the fix' "$out")"
grep -qE 'unchanged <- no-op$' "$out" && pass demo-noop-is-unchanged ||
	fail demo-noop-is-unchanged "$(grep -A1 -- '<- no-op' "$out")"
grep -qE 'regression <- the mailed revert$' "$out" &&
	pass demo-mailed-revert-is-a-regression ||
	fail demo-mailed-revert-is-a-regression "$(grep -- 'mailed revert' "$out")"
fixh=$(git -C "$PW_TMP/demo/src" log --format='%h' --abbrev=12 -1 \
    --grep='trim the per-cpu charge stock' 2>/dev/null)
[ -n "$fixh" ] && [ "${fix#"$fixh"}" != "$fix" ] &&
    grep -qE "^  at $fixh .*improvement" "$out" &&
	pass demo-change-point-at-the-fix ||
	fail demo-change-point-at-the-fix "fix '$fixh' (link $fix): $(sed -n '/change points/,/memcg tax/p' "$out")"
grep -qE 'memcg_tax\.throughput +base +[0-9.]+ +cand +[0-9.]+' "$out" &&
	pass demo-shows-the-memcg-tax ||
	fail demo-shows-the-memcg-tax "$(sed -n '/memcg tax/,/look here/p' "$out")"
# The alerts: read from what the SMTP server and webhook receiver stored.
mid=$(sed -n 's/^Message-I[dD]: *<\(.*\)>.*/\1/p' "$PW_TMP/demo/revert.mbox" | head -n 1)
port=$(cat "$PW_TMP/demo/port" 2>/dev/null)
/usr/bin/python3 - "$PW_TMP/demo" "$mid" "$port" <<'PY' && pass demo-alerts-mailed-and-posted ||
import email, email.policy, glob, json, sys
d, mid, port = sys.argv[1:4]
assert mid and port, (mid, port)
mails = [email.message_from_bytes(open(p, "rb").read(), policy=email.policy.default)
         for p in glob.glob(d + "/mail/mail-*.eml")]
th = [m for m in mails if mid in str(m["In-Reply-To"])]
assert len(th) == 1, [str(m["Subject"]) for m in mails]
m = th[0]
assert str(m["Subject"]).startswith("Re: [PATCH"), m["Subject"]
body = m.get_content()
assert "regression of demo-stock.ns_per_op" in body, body[:400]
assert "http://127.0.0.1:%s/series/" % port in body, body[:800]
posts = [json.loads(l) for l in open(d + "/hooks/hooks.jsonl")]
assert posts and all(p["ok"] for p in posts), posts
assert any(json.loads(p["body"]).get("verdict") == "regression" and
           json.loads(p["body"]).get("series") for p in posts), posts
PY
	fail demo-alerts-mailed-and-posted "$(sed -n '/alerts: reports/,/memcg tax/p' "$out")"
grep -qE '^  job +[0-9]+ +demo-stock +candidate +run [0-9]+/5$' "$out" &&
	pass demo-shows-progress || fail demo-shows-progress "no run i/N line"
# demo-stock's runs are pinned to one CPU (host.cpus): every one of its
# jobs, and only those, logs the pin in the runner's log.
njobs=$(sqlite3 "$PW_TMP/demo/perfwatch.db" \
    "SELECT count(*) FROM jobs WHERE name = 'demo-stock'" 2>&1)
npin=$(grep -o 'job [0-9]*: host.cpus: benchmark on CPUs [0-9]*$' \
    "$PW_TMP/demo/runner.log" | sort -u | wc -l)
[ "$njobs" -gt 0 ] 2>/dev/null && [ "$npin" = "$njobs" ] &&
	pass demo-stock-runs-pinned ||
	fail demo-stock-runs-pinned "demo-stock jobs: $njobs, pinned: $npin"
grep -q '/commit/[0-9a-f]\{40\}' "$out" && pass demo-says-where-to-look ||
	fail demo-says-where-to-look "no commit link"

# pages: every page kind in headless Chromium, with screenshots.
pages() {
	if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
		fail browser_setup "chromium or node missing (make deps installs them)"
		return
	fi
	if { [ ! -d "$bdir/node_modules/playwright-core" ] ||
	    [ ! -d "$bdir/node_modules/axe-core" ]; }; then
		if ! (cd "$bdir" && npm ci --no-audit --no-fund >"$PW_TMP/npm.log" 2>&1); then
			fail browser_setup "npm ci failed: $(tail -3 "$PW_TMP/npm.log")"
			return
		fi
	fi

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
}
pages

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
