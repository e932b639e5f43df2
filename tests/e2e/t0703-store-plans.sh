#!/usr/bin/env bash
# check: parallel
# Issue 17: no statement of the store scans a table that grows with runs,
# commits, regressions, alerts or bisections.  Each statement of
# store/*.c (preprocessed: the macros expanded), each call's and each
# entry of a table of statements chosen at run time, is planned by SQLite
# against a database the daemon made (tests/lint/store_plans.py).  At
# fce6f66 it named seven (the alert gauges, an alert report's bisection,
# the auto-bisect pass's change points, a patch's series, a series'
# former version, the ranges bisected before): each read its whole table
# per call.  What it cannot see: a walk of an index range whose other
# filters pass few rows (a rare branch of a history page); the scan
# budgets bound those, and the store's step-count tests check them.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

daemon_config "$PW_TMP/d"
start_daemon "$PW_TMP/d" || exit 1
stop_pid "$PW_DAEMON_PID"
check "the daemon made its database" test -s "$PW_DB"

mkdir -p "$PW_TMP/pp"
ok=1
for f in "$top"/store/*.c; do
	# PostgreSQL's backend and schema: SQLite plans none of it.
	case $f in *_pg.c) continue ;; esac
	if ! ${CC:-cc} -E -I"$top" "$f" -o "$PW_TMP/pp/$(basename "$f")" \
	    2>"$PW_TMP/cc.err"; then
		ok=0
		sed 's/^/#   /' "$PW_TMP/cc.err"
	fi
done
check "store/*.c preprocess" test "$ok" = 1

python3 "$top/tests/lint/store_plans.py" "$PW_DB" "$PW_TMP"/pp/*.c \
    >"$PW_TMP/plans" 2>&1
rc=$?
sed 's/^/#   /' "$PW_TMP/plans"
check "every store statement plans, none scans a growing table" \
    test "$rc" = 0
check "the statements were found (more than 280, the tables' too)" \
    test "$(sed -n 's/^# \([0-9]*\) statements planned.*/\1/p' \
    "$PW_TMP/plans")" -gt 280

# The check itself, on a statement in a file of its own: the plan
# check's exit code into $rc, its output into $PW_TMP/one.
plan_one() {
	printf '# 1 "store/fake.c"\nx = store_i_stmt(s, "%s");\n' \
	    "$1" >"$PW_TMP/one.c"
	python3 "$top/tests/lint/store_plans.py" "$PW_DB" "$PW_TMP/one.c" \
	    >"$PW_TMP/one" 2>&1
	rc=$?
}
plan_one "SELECT id FROM runs WHERE status = ?1"
check "a scan of runs is refused (exit 1)" test "$rc" = 1
check "and named by file:line" grep -q '^store/fake.c:1: SCAN runs' \
    "$PW_TMP/one"
plan_one "SELECT nosuch FROM runs"
check "a statement that does not plan is an error (exit 2)" test "$rc" = 2
# A table of statements chosen at run time (a list's rows by its
# filters' shape) is planned too, entry by entry; a *_pg table is
# PostgreSQL's, not planned here.
printf '%s\n' '# 1 "store/fake.c"' \
    'static const char *const rows[2] = { "SELECT id FROM runs"' \
    '    " WHERE id = ?1", "SELECT id FROM runs WHERE status = ?1", ((void *)0) };' \
    'static const char *const rows_pg[1] = { "SELECT nosuch FROM runs" };' \
    >"$PW_TMP/one.c"
python3 "$top/tests/lint/store_plans.py" "$PW_DB" "$PW_TMP/one.c" \
    >"$PW_TMP/one" 2>&1
rc=$?
check "a table's scanning entry is refused, its line named" \
    grep -q '^store/fake.c:2: SCAN runs' "$PW_TMP/one"
check "both of the table's entries planned, not the _pg table's" \
    grep -q '^# 2 statements planned, 1 scan' "$PW_TMP/one"
finish
