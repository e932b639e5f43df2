#!/usr/bin/env bash
# Bisection through a commit that fails to build and a flaky one.  The
# push's commit 32 (the first midpoint) breaks the build: the runner
# fails its jobs, the step is skipped as `git bisect skip` does and its
# neighbour is measured instead.  That neighbour, commit 31, is flaky:
# every third run of its program is 3x slower (a counter file next to
# the program), so its spread is wide although its median stays at the
# good level: its class is good (told apart from the bad end) or, after
# one more measurement, inconclusive and set aside, never bad.  The
# culprit (commit 46, 2.5x slower) is found and verified all the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_bisect.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }

SRC=$PW_TMP/app
bisect_repo "$SRC"
cp "$SRC/prog.c" "$PW_TMP/prog.c.orig"
bisect_setup || { fail setup "see log"; show_logs; finish; }

filler "$SRC" 30
# Commit 31: flaky.  Every third run (counted in PROG.count) loops 3x.
python3 - "$SRC/prog.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("#include <time.h>\n", "#include <time.h>\n#include <stdlib.h>\n")
s = s.replace("main(void)\n{\n", """main(int argc, char **argv)
{
	char path[4096];
	unsigned long n = LOOPS, count = 0;
	FILE *f;

	(void)argc;
	snprintf(path, sizeof(path), "%s.count", argv[0]);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%lu", &count) != 1)
			count = 0;
		fclose(f);
	}
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%lu\\n", count + 1);
		fclose(f);
	}
	if ((count + 1) % 3 == 0)
		n *= 3;
""")
# The same loop as before, then the rest of a slow run's loops.
s = s.replace("\tclock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);",
    "\tfor (i = LOOPS; i < n; i++)\n\t\tx += i;\n"
    "\tclock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);")
open(p, "w").write(s)
PY
g "$SRC" commit -qam "prog: flaky, every third run is slow"
flaky=$(g "$SRC" rev-parse HEAD)
# Commit 32: does not build.
echo '#error "broken on purpose"' >>"$SRC/prog.c"
g "$SRC" commit -qam "prog: broken build"
broken=$(g "$SRC" rev-parse HEAD)
cp "$PW_TMP/prog.c.orig" "$SRC/prog.c"
g "$SRC" commit -qam "prog: the loop again"
filler "$SRC" 12
culprit=$(loops "$SRC" 100000000 "prog: 2.5x the loop")
filler "$SRC" 18
tip=$(g "$SRC" rev-parse HEAD)
[ "$(g "$SRC" rev-list --count "$c0..$tip")" = 64 ] || fail range_64 "not 64 commits"
publish "$SRC"
t0=$SECONDS

state=$(bisect_wait 400)
[ "$state" = done ] && pass bisection_done || { fail bisection_done "$state"; bisect_dump; show_logs; }
[ "$(bfield "b['culprit']")" = "$culprit" ] && pass culprit_found ||
    { fail culprit_found "want $culprit"; bisect_dump; }
cls=$(sql "SELECT group_concat(class) FROM bisect_steps WHERE sha = '$broken'")
note=$(sql "SELECT note FROM bisect_steps WHERE sha = '$broken' LIMIT 1")
[ "$cls" = skip ] && case $note in *build*) true ;; *) false ;; esac &&
    pass broken_build_skipped || fail broken_build_skipped "$cls: $note"
[ "$(sql "SELECT count(*) FROM jobs WHERE state = 'failed' AND error LIKE '%build%'")" -ge 1 ] &&
    pass broken_build_failed_its_job || fail broken_build_failed_its_job "$(sql "SELECT id, state, error FROM jobs WHERE state <> 'success'")"
fcls=$(sql "SELECT group_concat(class) FROM bisect_steps WHERE sha = '$flaky'")
case $fcls in
good|inconclusive,good|inconclusive,inconclusive|inconclusive) pass "flaky_step_never_bad ($fcls)" ;;
"") fail flaky_step_never_bad "the flaky commit was not measured" ;;
*) fail flaky_step_never_bad "$fcls; its jobs' runs (job role: idx:time_ms): $(sql "SELECT j.id || ' ' || j.role || ': ' || group_concat(r.idx || ':' || printf('%.0f', m.value), ' ') FROM jobs j JOIN commits c ON c.id = j.commit_id JOIN runs r ON r.job_id = j.id JOIN metrics m ON m.run_id = r.id AND m.name = 'time_ms' WHERE c.sha = '$flaky' GROUP BY j.id ORDER BY j.id" | tr '\n' ';')" ;;
esac
bisect_check_verified revert
case "$(bfield "b['reason']")" in
*"1 skipped"*) pass reason_counts_the_skip ;;
*) fail reason_counts_the_skip "$(bfield "b['reason']")" ;;
esac
echo "# flaky commit: $fcls; $(sql "SELECT group_concat(note, ' | ') FROM bisect_steps WHERE sha = '$flaky'")"
echo "# figures: $(sql "SELECT count(*) FROM bisect_steps WHERE kind = 'step'") steps, $((SECONDS - t0)) s from the push to the verified culprit"
finish
