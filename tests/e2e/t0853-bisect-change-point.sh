#!/usr/bin/env bash
# Bisection from a history change point.  A tip-only trigger with
# `baseline: parent` measures each push's tip against its own parent, so
# no pair spans a push and no regression row can be bisected; the
# branch's history (one point per tip) shows the change.  Eleven pushes,
# each measured before the next: five of one filler commit, then one of
# eight commits whose fifth makes the program 10x slower (its tip and
# the tip's parent are both slow: that pair is unchanged), then five more
# of one commit.  The history's change point spans the eight commits of
# the sixth push; the daemon bisects it on its own (`bisect.auto`), from
# the last point before the change to the change point's commit, and
# names the culprit, verified against its parent.  The API, the CLI, the
# page and the report mail and webhook say where it started from.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"
. "$(dirname "$0")/lib_alerts.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

ALERTS=0
alert_servers_start
case $? in
0) ALERTS=1; BISECT_EXTRA_YAML=$ALERTS_YAML ;;
1) echo "SKIP bisect_cp_alerts: python3-aiosmtpd is not installed (make deps)" ;;
*) fail alert_servers "$ALERTS_ERR"; finish ;;
esac

SRC=$PW_TMP/app
bisect_repo "$SRC"
# A 10x step from a short loop (10,000,000: about 3.4 ms of CPU here):
# a history point is the candidate's median alone, and a spell of a slow
# vCPU (docs/HOST.md, "Uneven CPUs") moves whole points by up to 2.8x.
# With a 4x step a make check read the fast program at 35 ms and the
# slow one at 50 ms, and found no change point.
loops "$SRC" 10000000 "prog: a short loop" >/dev/null
publish "$SRC"
BISECT_BASELINE=parent
bisect_setup || { fail setup "see log"; show_logs; finish; }

analysed() {
	[ "$(sql "SELECT count(*) FROM pairs WHERE analysed = 1 AND bisect_id IS NULL AND canary = 0")" -ge "$1" ]
}
# One push, measured before the next (a push while the last one is
# still queued would supersede it: tip only).
push() {
	publish "$SRC"
	wait_until 60 analysed "$1" || { fail "push_$1_measured" "$(sql 'SELECT id, analysed FROM pairs')"; show_logs; finish; }
}
t0=$SECONDS
for i in 1 2 3 4 5; do
	filler "$SRC" 1
	push "$i"
done
good=$(g "$SRC" rev-parse HEAD)
filler "$SRC" 4
culprit=$(loops "$SRC" 100000000 "prog: 10x the loop")
filler "$SRC" 3
bad=$(g "$SRC" rev-parse HEAD)
[ "$(g "$SRC" rev-list --count "$good..$bad")" = 8 ] || fail range_8 "not 8 commits"
push 6
for i in 7 8 9 10 11; do
	filler "$SRC" 1
	push "$i"
done
t1=$SECONDS

started() { [ "$(sql 'SELECT count(*) FROM bisections')" -ge 1 ]; }
# Under load (other suites at once) the detector may want more points
# after the change than five: two more pushes, then it must be there.
if ! wait_until 30 started; then
	echo "# no change point after 11 points: two more pushes"
	for i in 12 13; do
		filler "$SRC" 1
		push "$i"
	done
fi
# For a FAIL line (the CI output keeps FAIL lines, one line each): every
# pair with its two commits (short shas), both medians, verdict and run
# counts, every history point, every change point.
cp_brief() {
	echo "change points: $(sql "SELECT id || ' seq ' || seq || ' [' || lo_seq || ',' || hi_seq || '] ' || direction || ' ' || printf('%.1f', change_pct) FROM change_points" | tr '\n' ';')"
	echo "points: $(sql "SELECT series_id || '/' || seq || ' pair ' || pair_id || ' ' || printf('%.1f', value) FROM history_points ORDER BY series_id, seq" | tr '\n' ';')"
	echo "pairs: $(sql "SELECT p.id || ' ' || substr(cb.sha, 1, 7) || '..' || substr(cc.sha, 1, 7) || ' ' || coalesce(printf('%.1f', c.base_median), '-') || '/' || coalesce(printf('%.1f', c.cand_median), '-') || ' ' || coalesce(c.verdict, '-') || ' n=' || jb.runs || '/' || jc.runs FROM pairs p JOIN jobs jb ON jb.id = p.base_job_id JOIN jobs jc ON jc.id = p.cand_job_id LEFT JOIN commits cb ON cb.id = jb.commit_id LEFT JOIN commits cc ON cc.id = jc.commit_id LEFT JOIN comparisons c ON c.pair_id = p.id AND c.metric = 'time_ms' ORDER BY p.id" | tr '\n' ';')"
	echo "commits: good ${good:0:7} culprit ${culprit:0:7} bad ${bad:0:7}"
}
wait_until 60 started &&
    pass bisection_started_from_change_point ||
    { fail bisection_started_from_change_point "$(cp_brief | tr '\n' ' ')"; show_logs; finish; }
# The history lists the change point with the id to start from by hand
# (looked at at once: change points are recomputed as verdicts arrive,
# and a noisy one may come and go).
code=$(http GET '/api/v1/history?job=slowprog&metric=time_ms&tree=app&branch=master')
cpid=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["change_points"]; print(r[0]["id"] if r else "")' "$PW_TMP/body" 2>/dev/null)
[ "$code" = 200 ] && [ -n "$cpid" ] && [ "$cpid" = "$(sql "SELECT change_point_id FROM bisections WHERE id = 1")" ] &&
    pass history_change_point_id || fail history_change_point_id "$code $cpid $(head -c 300 "$PW_TMP/body")"
# By hand while it runs: that range is being bisected.
if [ -n "$cpid" ] && [ "$(sql "SELECT state FROM bisections WHERE id = 1")" != done ]; then
	pw_admin bisect start --change-point "$cpid" >"$PW_TMP/start.txt" 2>&1
	if grep -q "HTTP 404" "$PW_TMP/start.txt"; then
		echo "SKIP cli_same_range_running_409: the change point was recomputed away meanwhile"
	else
		grep -q "HTTP 409" "$PW_TMP/start.txt" && grep -q "being bisected already (bisection 1)" "$PW_TMP/start.txt" &&
		    pass cli_same_range_running_409 || fail cli_same_range_running_409 "$(cat "$PW_TMP/start.txt")"
	fi
else
	echo "SKIP cli_same_range_running_409: bisection 1 ended first"
fi
t2=$SECONDS
state=$(bisect_wait 400)
t3=$SECONDS
[ "$state" = done ] && pass bisection_done || { fail bisection_done "$state"; bisect_dump; }
[ "$(bfield "b['origin']")" = change-point ] && [ "$(bfield "b['regression']")" = None ] &&
    [ "$(bfield "b['change_point']['sha']")" = "$bad" ] &&
    [ "$(bfield "b['change_point']['branch']")" = master ] &&
    pass api_origin_change_point || fail api_origin_change_point "$(cat "$PW_TMP/bisect.json")"
# The ends: the last point before the change and the change point's own.
[ "$(bfield "b['good']")" = "$good" ] && [ "$(bfield "b['bad']")" = "$bad" ] &&
    pass ends_are_the_points_around_the_change ||
    fail ends_are_the_points_around_the_change "$(bfield "b['good'], b['bad']") want $good $bad"
[ "$(bfield "b['culprit']")" = "$culprit" ] && pass culprit_found ||
    { fail culprit_found "want $culprit"; bisect_dump; }
bisect_check_verified
nsteps=$(sql "SELECT count(*) FROM bisect_steps WHERE kind = 'step'")
[ "$nsteps" -ge 2 ] && [ "$nsteps" -le 6 ] && pass "steps_about_log2_8 ($nsteps)" ||
    fail steps_about_log2_8 "$nsteps steps"
# Only one bisection of that change, though its change points were
# recomputed as the later points arrived.
[ "$(sql "SELECT count(*) FROM bisections")" = 1 ] && pass one_bisection_per_change ||
    fail one_bisection_per_change "$(sql 'SELECT id, good_sha, bad_sha, change_point_id FROM bisections')"

# The API's errors name the field.
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"change_point": 999999}')
[ "$code" = 404 ] && grep -q "change_point" "$PW_TMP/body" && pass api_unknown_change_point_404 ||
    fail api_unknown_change_point_404 "$code $(cat "$PW_TMP/body")"
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"change_point": 1, "regression": 1}')
[ "$code" = 400 ] && pass api_both_origins_400 || fail api_both_origins_400 "$code $(cat "$PW_TMP/body")"
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"change_point": "x"}')
[ "$code" = 400 ] && grep -q "field 'change_point'" "$PW_TMP/body" && pass api_change_point_type_400 ||
    fail api_change_point_type_400 "$code $(cat "$PW_TMP/body")"
# By hand once it ended: a new one (then cancelled), as the CLI shows it.
cpid=$(sql "SELECT id FROM change_points WHERE direction = 'regression' ORDER BY id LIMIT 1")
if [ -n "$cpid" ]; then
	pw_admin bisect start --change-point "$cpid" >"$PW_TMP/start.txt" 2>&1
	grep -q "origin: *change-point" "$PW_TMP/start.txt" && grep -q "at commit: *$bad" "$PW_TMP/start.txt" &&
	    pass cli_start_change_point || fail cli_start_change_point "$(cat "$PW_TMP/start.txt")"
	pw_admin bisect cancel 2 >/dev/null 2>&1
else
	echo "SKIP cli_start_change_point: the change point was recomputed away"
fi

# The page says where it started.
curl -s --max-time 10 "$PW_URL/bisect/1" >"$PW_TMP/bisect.html"
grep -q "bisected from the change point at <a class=\"mono\" href=\"/commit/$bad\">${bad:0:12}</a> on master history" "$PW_TMP/bisect.html" &&
    pass page_origin || fail page_origin "$(grep -o 'bisected from[^<]*' "$PW_TMP/bisect.html")"
if command -v tidy >/dev/null; then
	tidy -q -e "$PW_TMP/bisect.html" 2>"$PW_TMP/tidy.txt"
	! grep -q "Error:" "$PW_TMP/tidy.txt" && pass page_html_valid || fail page_html_valid "$(head -5 "$PW_TMP/tidy.txt")"
fi

# The report: no pair changed at the change point's commit, the ended
# bisection is news: "bisected from the change point at ... on master
# history" and "bisected to <sha12> <subject>".
if [ "$ALERTS" = 1 ]; then
	cp_mail() { grep -lq "bisected from the change point" "$PW_TMP/smtp"/mail-*.eml 2>/dev/null; }
	wait_until 40 cp_mail
	python3 - "$PW_TMP/smtp" "$PW_TMP/hook" "$culprit" "$bad" <<'PY' && pass alert_says_origin_and_culprit || { fail alert_says_origin_and_culprit "see above"; sql "SELECT id, kind, state, subject, last_error FROM alerts"; }
import email, email.policy, glob, json, sys
smtp, hook, culprit, bad = sys.argv[1:]
found = None
for p in glob.glob(smtp + "/mail-*.eml"):
    m = email.message_from_bytes(open(p, "rb").read(), policy=email.policy.default)
    body = m.get_content()
    if "bisected from the change point" in body:
        found = (m, body)
assert found, "no mail says where the bisection started"
m, body = found
want = "bisected from the change point at %s on master history" % bad[:12]
assert want in body, body[:3000]
assert "bisected to " + culprit[:12] + " prog: 10x the loop" in body, body[:3000]
# Its own report ("... history change point"), or a follow-up of the
# commit's when noise made that pair's verdict news already.
subj = str(m["Subject"])
assert bad[:12] in subj and ("history change point" in subj or subj.startswith("Re: ")), subj
hooks = [json.loads(json.loads(l)["body"]) for l in open(hook + "/hooks.jsonl")]
b = [h["bisect"] for h in hooks if h.get("bisect")]
assert b and b[-1]["origin"] == want and b[-1]["culprit"].startswith(culprit[:12]), b
PY
fi

echo "# figures: 11 pushes measured in $((t1 - t0)) s; the bisection started $((t2 - t1)) s after the last; 8 commits, $nsteps steps, $((t3 - t2)) s of bisection and verification"
finish
