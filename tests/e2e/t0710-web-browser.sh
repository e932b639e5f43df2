#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: the daemon is filled through
# the runner API with made-up runs.)
# The dashboard in headless Chromium (Debian's, driven by playwright-core,
# JavaScript off): a real daemon filled through the runner API, every page
# loaded, verdicts and the chart checked, a click through to a pair and its
# history, login and a triage; then each page shot (logged in where it
# was) goes through axe-core: a serious or critical accessibility
# violation (contrast, labels, table headers) fails it, and without
# axe-core the check says SKIP.  Screenshots go to $OUT/screenshots.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/web_fill.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$top/tests/e2e/browser

# make deps installs chromium and node; missing them is a failure.
if [ ! -x /usr/bin/chromium ]; then
	fail browser_setup "/usr/bin/chromium missing (make deps installs it)"
	finish
fi
if ! command -v node >/dev/null; then
	fail browser_setup "node missing (make deps installs nodejs)"
	finish
fi
if { [ ! -d "$bdir/node_modules/playwright-core" ] ||
	    [ ! -d "$bdir/node_modules/axe-core" ]; }; then
	if ! (cd "$bdir" && npm ci --no-audit --no-fund >"$PW_TMP/npm.log" 2>&1); then
		fail browser_setup "npm ci failed: $(tail -3 "$PW_TMP/npm.log")"
		finish
	fi
fi

D=$PW_TMP/d
daemon_config "$D" r1
web_job_file "$D"
start_daemon "$D" || { fail start "daemon did not start"; finish; }
web_fill 3 1000 900 || { fail fill "could not fill the daemon"; finish; }
# The daemon's verdicts: one regression, pair 3's ops.
web_wait_verdicts 3 || { fail verdicts "no verdicts from the daemon"; finish; }

web_heartbeat
shots=$top/${OUT:-build}/screenshots
mkdir -p "$shots" "$PW_TMP/chromium"
PW_URL=$PW_URL PW_ADMIN=$(cat "$(token_of admin)") SHOTS=$shots \
    USER_DATA=$PW_TMP/chromium NODE_PATH=$bdir/node_modules \
    timeout 300 node "$bdir/dashboard.js" >"$PW_TMP/browser.log" 2>&1
rc=$?
cat "$PW_TMP/browser.log"
if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$PW_TMP/browser.log"; then
	fail browser "node exited $rc"
fi
grep -q '^FAIL' "$PW_TMP/browser.log" && PW_FAILED=1
st=$(sql "SELECT state FROM regressions WHERE id = 1")
check browser_triage_stored [ "$st" = acknowledged ]
n=$(ls "$shots"/*.png 2>/dev/null | wc -l)
check browser_screenshots [ "$n" -ge 6 ]
finish
