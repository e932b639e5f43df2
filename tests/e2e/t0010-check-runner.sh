#!/usr/bin/env bash
# check: parallel
# tests/run itself: the light tests run CHECK_JOBS at a time and the
# others alone, each FAIL and each death without one is counted, a SKIP
# is shown and not passed, a hang is killed and failed, and the last
# line is "N passed, N failed".
# Made-up unit tests in a scratch OUT; each leaves when it ran, so the
# overlap is read from what they wrote, not from the wall clock.
. "$(dirname "$0")/lib.sh"

F=$PW_TMP/out
mkdir -p "$F/san/tests"
unit() {		# unit NAME BODY: a shell script standing for a test binary
	printf '#!/bin/sh\n%s\n' "$2" >"$F/san/tests/$1"
	chmod +x "$F/san/tests/$1"
}
# Each light one waits until two are inside at once (or 2 s): the pool
# overlapping them is what ends the wait early.
span='mkdir -p "$D/in"; touch "$D/in/$(basename "$0")"; i=0
while [ "$(ls "$D/in" | wc -l)" -lt 2 ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
ls "$D/in" | wc -l >"$D/seen_$(basename "$0")"; sleep 0.3; rm -f "$D/in/$(basename "$0")"'
unit pwself_a_test "D=$PW_TMP; $span; echo 'PASS a1'; echo 'PASS a2'"
unit pwself_b_test "D=$PW_TMP; $span; echo 'PASS b1'; echo 'FAIL b2: boom'"
unit pwself_c_test "D=$PW_TMP; $span; echo 'PASS c1'; exit 3"
# An ALONE_UNITS name: never next to another one.
unit cgroup_test "D=$PW_TMP; ls \"\$D/in\" 2>/dev/null | wc -l >\"\$D/alone\"; echo 'SKIP c: no cgroups here'; echo 'PASS g'"

(cd "$(dirname "$0")/../.." && OUT=$F CHECK_JOBS=2 tests/run pwself_ cgroup_test) \
    >"$PW_TMP/run.out" 2>&1
rc=$?
last=$(tail -n 1 "$PW_TMP/run.out")
[ "$last" = "5 passed, 2 failed, 1 skipped" ] && pass last_line_counts ||
    fail last_line_counts "$last"
[ "$rc" -ne 0 ] && pass exit_nonzero_on_failure || fail exit_nonzero_on_failure "rc $rc"
grep -q 'FAIL pwself_c_test (exit 3 without a FAIL line)' "$PW_TMP/run.out" &&
    pass death_counts || fail death_counts "$(cat "$PW_TMP/run.out")"
grep -q '^    SKIP c: no cgroups here' "$PW_TMP/run.out" &&
    pass skip_shown || fail skip_shown "$(cat "$PW_TMP/run.out")"
seen=$(cat "$PW_TMP"/seen_pwself_* 2>/dev/null | sort -n | tail -n 1)
[ "${seen:-0}" -ge 2 ] && pass light_tests_overlap ||
    fail light_tests_overlap "at most ${seen:-0} inside at once"
[ "$(cat "$PW_TMP/alone" 2>/dev/null)" = 0 ] && pass alone_test_alone ||
    fail alone_test_alone "$(cat "$PW_TMP/alone" 2>/dev/null) others inside"
(cd "$(dirname "$0")/../.." && OUT=$F CHECK_JOBS=1 tests/run pwself_a pwself_b) \
    >"$PW_TMP/run1.out" 2>&1
seen=$(cat "$PW_TMP"/seen_pwself_a_test)
[ "$seen" = 1 ] && pass jobs_1_serial || fail jobs_1_serial "$seen inside at once"
# A test that hangs is killed after TEST_TIMEOUT and counted as failed,
# with what it passed before.
unit pwself_hang_test "echo 'PASS h1'; sleep 60"
t0=$SECONDS
(cd "$(dirname "$0")/../.." && OUT=$F TEST_TIMEOUT=2 tests/run pwself_hang) \
    >"$PW_TMP/runh.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ "$(tail -n 1 "$PW_TMP/runh.out")" = "1 passed, 1 failed" ] &&
    grep -q 'FAIL pwself_hang_test: timed out after 2 s' "$PW_TMP/runh.out" &&
    [ $((SECONDS - t0)) -lt 30 ] && pass hang_times_out ||
    fail hang_times_out "rc $rc, $((SECONDS - t0)) s: $(cat "$PW_TMP/runh.out")"
finish
