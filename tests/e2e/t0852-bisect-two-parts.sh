#!/usr/bin/env bash
# A regression in two parts: commit 21 of the push makes the program
# 2.5x slower, commit 41 another 2.5x (6.25x in all).  The bisection must
# not guess.  What it does (docs/BISECT.md): a step between both ends
# (worse than the good end and better than the bad end, both clear
# verdicts) counts as bad, so the search finds the first commit that
# crosses from the good end, commit 21, and its reason says the
# regression has more than one part.  Its parent check shows the
# regression; its revert does not apply on the bad tip (commit 41
# changed the same line), which the result says instead of a recovery.
# If noise leaves steps inconclusive the bisection may end inconclusive
# instead, with a range that must hold commit 21.  Why 2.5x parts: this
# VM's CPU time per run has two modes 1.7x apart, about the size of the
# 1.6x parts this test had; in one run a commit that was most likely
# between them (-39% and -48% against the bad end: between reads -37.5%,
# good -61%) read "unstable -11.6%" and "+10.8%" against the good end,
# was called good twice, and the range missed commit 21.
#
# Then by hand: the admin route's bad input (404, 400, 409), a second
# bisection cancelled with its jobs, and a third whose host is gone (the
# runner stopped, bisect.host_timeout 10s): it ends inconclusive, "lost
# its host", never a guess.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

SRC=$PW_TMP/app
BISECT_JOB_YAML="  host_timeout: 10s"
bisect_repo "$SRC"
bisect_setup || { fail setup "see log"; show_logs; finish; }

filler "$SRC" 20
first=$(loops "$SRC" 100000000 "prog: 2.5x the loop")
filler "$SRC" 19
second=$(loops "$SRC" 250000000 "prog: another 2.5x")
filler "$SRC" 23
tip=$(g "$SRC" rev-parse HEAD)
[ "$(g "$SRC" rev-list --count "$c0..$tip")" = 64 ] || fail range_64 "not 64 commits"
publish "$SRC"

state=$(bisect_wait 400)
case $state in
done)
	[ "$(bfield "b['culprit']")" = "$first" ] && pass first_crossing_found ||
	    { fail first_crossing_found "want $first: $(bisect_steps_brief)"; bisect_dump; }
	case "$(bfield "b['reason']")" in
	*"more than one part"*) pass reason_says_partial ;;
	*) fail reason_says_partial "$(bfield "b['reason']")" ;;
	esac
	bisect_check_verified
	case "$(bfield "b['verify_revert']")" in
	"not measured"*"does not apply cleanly"*) pass revert_conflict_reported ;;
	*) fail revert_conflict_reported "$(bfield "b['verify_revert']")" ;;
	esac
	;;
inconclusive)
	lo=$(bfield "b['lo']")
	hi=$(bfield "b['hi']")
	[ -z "$(bfield "b['culprit']")" ] || [ "$(bfield "b['culprit']")" = None ] &&
	    g "$SRC" merge-base --is-ancestor "$lo" "$first^" &&
	    g "$SRC" merge-base --is-ancestor "$first" "$hi" &&
	    pass "inconclusive_range_holds_the_first ($(bfield "b['reason']"))" ||
	    { fail inconclusive_range_holds_the_first "$lo..$hi: $(bisect_steps_brief)"; bisect_dump; }
	;;
*) fail bisection_ended "$state"; bisect_dump; show_logs ;;
esac
[ "$(bfield "b['culprit']")" != "$second" ] && pass never_the_second ||
    fail never_the_second "$second"
echo "# two parts: $state; $(bfield "b['reason']")"
echo "# steps: $(bisect_steps_brief)"

# By hand.
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"regression": 99}')
[ "$code" = 404 ] && grep -q "field 'regression'" "$PW_TMP/body" && pass api_unknown_regression_404 ||
    fail api_unknown_regression_404 "$code $(cat "$PW_TMP/body")"
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"regression": "1"}')
c2=$(http POST /api/v1/bisect "$PW_ADMIN" '{"regression": 1, "x": 1}')
c3=$(http POST /api/v1/bisect - '{"regression": 1}')
[ "$code" = 400 ] && [ "$c2" = 400 ] && [ "$c3" = 401 ] && pass api_bad_input ||
    fail api_bad_input "$code $c2 $c3"
# The bisect thread may have taken it up before the CLI reads it back.
pw_admin bisect start --regression 1 >"$PW_TMP/start.txt" 2>&1
grep -qE "^state: *(queued|running)" "$PW_TMP/start.txt" && grep -q "^bisection: *2" "$PW_TMP/start.txt" &&
    pass cli_start_manual || fail cli_start_manual "$(cat "$PW_TMP/start.txt")"
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"regression": 1}')
[ "$code" = 409 ] && grep -q "bisected already (bisection 2)" "$PW_TMP/body" &&
    pass api_second_live_409 || fail api_second_live_409 "$code $(cat "$PW_TMP/body")"
# Its first step is scheduled within a tick or two; then cancelled.
has_jobs() { [ "$(sql "SELECT count(*) FROM pairs WHERE bisect_id = 2")" -ge 2 ]; }
wait_until 20 has_jobs
pw_admin bisect cancel 2 >"$PW_TMP/cancel.txt" 2>&1
[ "$(sql "SELECT state FROM bisections WHERE id = 2")" = cancelled ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running') AND id IN (SELECT base_job_id FROM pairs WHERE bisect_id = 2 UNION SELECT cand_job_id FROM pairs WHERE bisect_id = 2)")" = 0 ] &&
    [ "$(sql "SELECT started_by FROM bisections WHERE id = 2")" = manual ] &&
    pass cancel_stops_its_jobs || fail cancel_stops_its_jobs "$(cat "$PW_TMP/cancel.txt")"
# The host goes away: the third bisection ends inconclusive.
stop_pid "$RUNNER_PID"
code=$(http POST /api/v1/bisect "$PW_ADMIN" '{"regression": 1}')
[ "$code" = 201 ] || fail third_start "$code $(cat "$PW_TMP/body")"
lost() { [ "$(sql "SELECT state FROM bisections WHERE id = 3")" = inconclusive ]; }
if wait_until 40 lost; then
	r3=$(sql "SELECT reason FROM bisections WHERE id = 3")
	case $r3 in
	*"lost its host"*) pass lost_host_inconclusive ;;
	*) fail lost_host_inconclusive "$r3" ;;
	esac
	[ -z "$(sql "SELECT culprit_sha FROM bisections WHERE id = 3")" ] && pass lost_host_names_no_culprit ||
	    fail lost_host_names_no_culprit "culprit set"
else
	fail lost_host_inconclusive "$(sql "SELECT state, reason FROM bisections WHERE id = 3")"
fi
finish
