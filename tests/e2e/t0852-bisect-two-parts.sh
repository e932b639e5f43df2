#!/usr/bin/env bash
# A regression in two parts: commit 21 of the push makes the program
# 1.6x slower, commit 41 another 1.6x (2.56x in all).  The bisection must
# not guess.  What it does (docs/BISECT.md): a step between both ends
# (worse than the good end and better than the bad end, both clear
# verdicts) counts as bad, so the search finds the first commit that
# crosses from the good end, commit 21, and its reason says the
# regression has more than one part.  Its parent check shows the
# regression; its revert does not apply on the bad tip (commit 41
# changed the same line), which the result says instead of a recovery.
# If noise leaves steps inconclusive the bisection may end inconclusive
# instead, with a range that must hold commit 21.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

SRC=$PW_TMP/app
bisect_repo "$SRC"
bisect_setup || { fail setup "see log"; show_logs; finish; }

filler "$SRC" 20
first=$(loops "$SRC" 64000000 "prog: 1.6x the loop")
filler "$SRC" 19
second=$(loops "$SRC" 102400000 "prog: another 1.6x")
filler "$SRC" 23
tip=$(g "$SRC" rev-parse HEAD)
[ "$(g "$SRC" rev-list --count "$c0..$tip")" = 64 ] || fail range_64 "not 64 commits"
publish "$SRC"

state=$(bisect_wait 170)
case $state in
done)
	[ "$(bfield "b['culprit']")" = "$first" ] && pass first_crossing_found ||
	    { fail first_crossing_found "want $first"; bisect_dump; }
	case "$(bfield "b['reason']")" in
	*"more than one part"*) pass reason_says_partial ;;
	*) fail reason_says_partial "$(bfield "b['reason']")" ;;
	esac
	case "$(bfield "b['verify_parent']")" in
	"shows the regression"*) pass verify_parent ;;
	*) fail verify_parent "$(bfield "b['verify_parent']")" ;;
	esac
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
	    { fail inconclusive_range_holds_the_first "$lo..$hi"; bisect_dump; }
	;;
*) fail bisection_ended "$state"; bisect_dump; show_logs ;;
esac
[ "$(bfield "b['culprit']")" != "$second" ] && pass never_the_second ||
    fail never_the_second "$second"
echo "# two parts: $state; $(bfield "b['reason']")"
finish
