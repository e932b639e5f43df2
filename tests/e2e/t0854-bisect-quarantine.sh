#!/usr/bin/env bash
# A bisection on a host the canary quarantines (docs/HOST.md) names no
# culprit from it.  One push of 16 commits, the 11th 2.5x slower, is
# bisected (tip-only, baseline previous-tip) on runner r1, whose canary
# (an A/A pair of job `ref` every 2 s) runs between the steps.  Once the
# bisection has started, the host "drifts": ref's candidate side does
# 40% fewer ops, the canary finds it and quarantines the host.  The
# host then claims nothing but its canary: the waiting step is not
# measured, no step is classified from a measurement finished while the
# host was quarantined, and after bisect.host_timeout (10 s) the
# bisection ends inconclusive saying the host is quarantined.  After
# the operator clears the host (the drift gone), a bisection started
# by hand is measured and names the right culprit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

DRIFT=$PW_TMP/drift
bisect_pre_start() {
	sed -i 's/^    labels: \[test\]$/    labels: [test]\n    canary: {job: ref, every: 2s}/' "$PW_DIR/daemon.yaml"
	sed -i 's/^  max_inconclusive: 3$/  max_inconclusive: 3\n  host_timeout: 10s/' "$PW_DIR/jobs/slowprog.yaml"
	# The candidate side of a canary pair is slower while $DRIFT
	# exists (its role from the daemon's API, by the job id that ends
	# {workdir}).
	cat >"$PW_TMP/ref.py" <<PY
import json, os, sys, urllib.request
job = os.path.basename(sys.argv[1].rstrip("/"))
v = 100.0
if os.path.exists("$DRIFT"):
    url = open("$PW_TMP/url").read().strip() + "/api/v1/jobs/" + job
    if json.load(urllib.request.urlopen(url, timeout=10)).get("role") == "candidate":
        v *= 0.6
print("ops=%.1f" % v)
PY
	cat >"$PW_DIR/jobs/ref.yaml" <<YAML
name: ref
parser: keyvalue
command: [python3, "$PW_TMP/ref.py", "{workdir}"]
runs: 3
max_runs: 3
timeout: 30s
metrics:
  ops: {better: higher, min_effect: 5%}
YAML
}

SRC=$PW_TMP/app
bisect_repo "$SRC"
bisect_setup || { fail setup "see log"; show_logs; finish; }
echo "$PW_URL" >"$PW_TMP/url"

filler "$SRC" 10
culprit=$(loops "$SRC" 100000000 "prog: 2.5x the loop")
filler "$SRC" 5
publish "$SRC"

bisections() { sql "SELECT count(*) FROM bisections"; }
started() { [ "$(bisections)" -ge "$1" ]; }
wait_until 90 started 1 && pass bisection_started ||
    { fail bisection_started "$(sql "SELECT c.metric, c.verdict, c.change_pct FROM comparisons c")"; show_logs; finish; }
# The host drifts now; the canary notices.
touch "$DRIFT"
quarantined() { [ -n "$(sql "SELECT quarantined FROM hosts WHERE name = 'r1'")" ]; }
wait_until 60 quarantined && pass host_quarantined ||
    { fail host_quarantined "$(sql 'SELECT id, canary, analysed FROM pairs WHERE canary <> 0')"; show_logs; finish; }
qat=$(sql "SELECT quarantined_at FROM hosts WHERE name = 'r1'")
t0=$SECONDS
state=$(bisect_wait 60)
[ "$state" = inconclusive ] && pass bisection_inconclusive || { fail bisection_inconclusive "$state"; bisect_dump; }
case "$(bfield "b['reason']")" in
*"the host is quarantined: canary pair"*) pass reason_says_quarantined ;;
*) fail reason_says_quarantined "$(bfield "b['reason']")" ;;
esac
[ "$(bfield "b['culprit']")" = None ] && pass no_culprit || fail no_culprit "$(bfield "b['culprit']")"
# No class from a measurement finished while the host was quarantined:
# such a step is `suspect` (measured again), never good or bad.  Both
# times are whole seconds: a step classified in the quarantine's own
# second may have been classified before it (check-fresh saw one), so
# only the seconds after it count.
late=$(sql "SELECT count(*) FROM bisect_steps WHERE bisect_id = 1 AND class IN ('good', 'bad') AND updated > $qat")
[ "$late" = 0 ] && pass no_step_classified_while_quarantined ||
    { fail no_step_classified_while_quarantined "$late"; bisect_dump; }
nsus=$(sql "SELECT count(*) FROM bisect_steps WHERE bisect_id = 1 AND class = 'suspect'")
echo "# bisection 1: $(sql "SELECT count(*) FROM bisect_steps WHERE bisect_id = 1") step(s), $nsus suspect, ended $((SECONDS - t0)) s after the quarantine"

# The drift goes; the operator clears the host once a canary pair made
# after that was judged (one still in flight would quarantine it again).
rm -f "$DRIFT"
m=$(sql "SELECT coalesce(max(id), 0) FROM pairs WHERE canary <> 0")
settled() { [ "$(sql "SELECT count(*) FROM pairs WHERE canary = 2 AND id > $m")" -ge 1 ]; }
wait_until 60 settled || fail canary_settles "$(sql 'SELECT id, canary, analysed FROM pairs WHERE canary <> 0')"
hid=$(sql "SELECT id FROM hosts WHERE name = 'r1'")
code=$(http POST "/api/v1/hosts/$hid/clear" "$PW_ADMIN" '{}')
[ "$code" = 200 ] && pass host_cleared || fail host_cleared "$code $(cat "$PW_TMP/body")"
pw_admin bisect start --regression 1 >"$PW_TMP/start.txt" 2>&1
grep -q "^bisection: *2" "$PW_TMP/start.txt" && pass manual_restart || fail manual_restart "$(cat "$PW_TMP/start.txt")"
ended2() {
	case "$(sql "SELECT state FROM bisections WHERE id = 2")" in
	done|inconclusive|cancelled) return 0 ;;
	esac
	return 1
}
t1=$SECONDS
wait_until 150 ended2
[ "$(sql "SELECT state FROM bisections WHERE id = 2")" = done ] &&
    [ "$(sql "SELECT culprit_sha FROM bisections WHERE id = 2")" = "$culprit" ] &&
    pass cleared_host_bisected_to_culprit ||
    { fail cleared_host_bisected_to_culprit "$(sql "SELECT state, culprit_sha, reason FROM bisections WHERE id = 2") want $culprit"; bisect_dump; }
echo "# figures: 16 commits; after the clear $(sql "SELECT count(*) FROM bisect_steps WHERE bisect_id = 2 AND kind = 'step'") steps in $((SECONDS - t1)) s"
finish
