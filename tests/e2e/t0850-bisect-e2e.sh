#!/usr/bin/env bash
# Bisection end to end: a repository of 65 commits where commit 46 of the
# push makes the program 2.5x slower (CPU time).  The daemon watches it
# with a tip-only trigger (baseline: previous-tip): the push is one pair,
# tip against the previous tip, whose regression spans 64 commits and is
# bisected automatically by a real runner that builds each commit with
# `build: [make]` and times it.  The culprit is found, verified against
# its parent (the regression) and by its revert on the bad tip (the
# recovery), and shown by the API, the CLI and the regression's row.
# The steps' pairs make no regressions of their own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

SRC=$PW_TMP/app
bisect_repo "$SRC"
bisect_setup || { fail setup "see log"; show_logs; finish; }

filler "$SRC" 45
culprit=$(loops "$SRC" 100000000 "prog: 2.5x the loop")
filler "$SRC" 18
tip=$(g "$SRC" rev-parse HEAD)
publish "$SRC"
[ "$(g "$SRC" rev-list --count "$c0..$tip")" = 64 ] || fail range_64 "not 64 commits"
t0=$SECONDS

wait_until 120 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$PW_DB' \
    'SELECT count(*) FROM bisections')\" = 1 ]" &&
    pass bisection_started_automatically ||
    { fail bisection_started_automatically "$(sql "SELECT c.metric, c.verdict, c.change_pct FROM comparisons c")"; show_logs; finish; }
t1=$SECONDS
state=$(bisect_wait 170)
t2=$SECONDS
[ "$state" = done ] && pass bisection_done || { fail bisection_done "$state"; bisect_dump; show_logs; }
[ "$(bfield "b['culprit']")" = "$culprit" ] && pass culprit_found ||
    { fail culprit_found "want $culprit"; bisect_dump; }
nsteps=$(sql "SELECT count(*) FROM bisect_steps WHERE kind = 'step'")
[ "$nsteps" -ge 6 ] && [ "$nsteps" -le 8 ] && pass "steps_about_log2_64 ($nsteps)" ||
    fail steps_about_log2_64 "$nsteps steps"
case "$(bfield "b['verify_parent']")" in
"shows the regression"*) pass verify_parent ;;
*) fail verify_parent "$(bfield "b['verify_parent']")" ;;
esac
case "$(bfield "b['verify_revert']")" in
"shows the recovery"*) pass verify_revert ;;
*) fail verify_revert "$(bfield "b['verify_revert']")" ;;
esac
rev=$(bfield "b['revert_commit']")
[ -n "$rev" ] && git --git-dir="$PW_DIR/git/app.git" log -1 --format=%s "$rev" |
    grep -q '^Revert "prog: 2.5x the loop"' && pass revert_commit_in_mirror ||
    fail revert_commit_in_mirror "$rev"
[ "$(bfield "b['culprit_subject']")" = "prog: 2.5x the loop" ] && pass culprit_subject ||
    fail culprit_subject "$(bfield "b['culprit_subject']")"
# Every step's class follows from where it is: before the culprit good,
# from it on bad.
python3 - "$PW_TMP/bisect.json" "$SRC" "$culprit" <<'PY' && pass steps_classified || fail steps_classified "see above"
import json, subprocess, sys
b = json.load(open(sys.argv[1]))["bisection"]
src, culprit = sys.argv[2], sys.argv[3]
def before(sha):
    return subprocess.run(["git", "-C", src, "merge-base", "--is-ancestor", culprit, sha]).returncode != 0
ok = True
for s in b["steps"]:
    if s["kind"] != "step":
        continue
    want = "good" if before(s["sha"]) else "bad"
    if s["class"] != want:
        print("# step %s: %s, want %s (%s)" % (s["sha"][:12], s["class"], want, s["note"]))
        ok = False
sys.exit(0 if ok else 1)
PY
# The steps made no regression of their own: only the push's.
[ "$(sql "SELECT count(*) FROM regressions")" = 1 ] && pass steps_make_no_regressions ||
    fail steps_make_no_regressions "$(sql 'SELECT r.id, c.pair_id, c.verdict FROM regressions r JOIN comparisons c ON c.id = r.comparison_id')"
[ "$(sql "SELECT count(*) FROM history_points hp JOIN pairs p ON p.id = hp.pair_id WHERE p.bisect_id IS NOT NULL")" = 0 ] &&
    pass steps_make_no_history || fail steps_make_no_history "history points of bisect pairs"

# The CLI.
pw bisect show 1 >"$PW_TMP/show.txt" 2>&1
grep -q "culprit: *$culprit" "$PW_TMP/show.txt" && grep -q "^steps:" "$PW_TMP/show.txt" &&
    pass cli_show || fail cli_show "$(cat "$PW_TMP/show.txt")"
pw bisect cancel 1 >"$PW_TMP/cancel.txt" 2>&1
grep -q "admin token is needed" "$PW_TMP/cancel.txt" && pass cli_cancel_needs_admin ||
    fail cli_cancel_needs_admin "$(cat "$PW_TMP/cancel.txt")"
pw_admin bisect cancel 1 >"$PW_TMP/cancel.txt" 2>&1
grep -q "HTTP 409" "$PW_TMP/cancel.txt" && pass cli_cancel_ended_409 ||
    fail cli_cancel_ended_409 "$(cat "$PW_TMP/cancel.txt")"

echo "# figures: 64 commits, $nsteps steps; $((t1 - t0)) s to the confirmed regression, $((t2 - t1)) s of bisection and verification"
finish
