#!/usr/bin/env bash
# check: parallel
# The benchmarks' own tools (make bench-web, issue 17) on a small
# database, so a store change that breaks them fails here and not at the
# next benchmark: web_gen writes 300 pairs the way the daemon does (30
# with the real verdict), read_bench reads every tenth job's
# /api/v1/jobs/{id} and the first history page by stage, and both refuse
# what they cannot read with an error naming it.  Timings are printed,
# not judged (a sanitizer build under make check).
. "$(dirname "$0")/lib.sh"

T=${OUT:-build}/san/tests/bench
[ -x "$T/web_gen" ] && [ -x "$T/read_bench" ] ||
    { fail tools_built "$T/web_gen, $T/read_bench: make check-build"; finish; }
DB=$PW_TMP/w.db

"$T/web_gen" "$DB" 0 300 3 30 >"$PW_TMP/gen.out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q '^pairs 300 runs 1800 quick 270 final 30 ' "$PW_TMP/gen.out" &&
    pass web_gen_writes || fail web_gen_writes "rc $rc: $(cat "$PW_TMP/gen.out")"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM runs')" = 1800 ] &&
    [ "$(sqlite3 "$DB" 'SELECT count(*) FROM pairs WHERE analysed = 1')" = 300 ] &&
    pass web_gen_rows_stored || fail web_gen_rows_stored "$(sqlite3 "$DB" 'SELECT count(*) FROM runs; SELECT count(*) FROM pairs')"

"$T/read_bench" job "$DB" 1 >"$PW_TMP/job.out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q '^jobs 600, 60 reads a stage$' "$PW_TMP/job.out" &&
    grep -Eq '^\+ reply bytes +[0-9.]+ us/job \([1-9][0-9]* bytes/job\)$' "$PW_TMP/job.out" &&
    pass read_bench_job || fail read_bench_job "rc $rc: $(cat "$PW_TMP/job.out")"
sed 's/^/# /' "$PW_TMP/job.out"

"$T/read_bench" history "$DB" 1 2 >"$PW_TMP/hist.out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -Eq '^history pages [12] \([1-9][0-9]* points\), 1 rounds$' "$PW_TMP/hist.out" &&
    grep -Eq '^HTML page +[0-9.]+ us/page \([1-9][0-9]* bytes/page\)$' "$PW_TMP/hist.out" &&
    pass read_bench_history || fail read_bench_history "rc $rc: $(cat "$PW_TMP/hist.out")"
sed 's/^/# /' "$PW_TMP/hist.out"

# A database with no history (a fresh store): an error, not a figure.
"$T/web_gen" "$PW_TMP/empty.db" 0 0 >/dev/null 2>&1
"$T/read_bench" history "$PW_TMP/empty.db" 1 >"$PW_TMP/none.out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'no history of kv x=1 ops on epyc-1' "$PW_TMP/none.out" &&
    pass read_bench_no_history_error || fail read_bench_no_history_error "rc $rc: $(cat "$PW_TMP/none.out")"
"$T/read_bench" history /nonexistent/dir/x.db >"$PW_TMP/bad.out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q '/nonexistent/dir/x.db' "$PW_TMP/bad.out" &&
    pass read_bench_bad_path_named || fail read_bench_bad_path_named "rc $rc: $(cat "$PW_TMP/bad.out")"
"$T/read_bench" >"$PW_TMP/usage.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q '^usage: read_bench job DB' "$PW_TMP/usage.out" &&
    pass read_bench_usage || fail read_bench_usage "rc $rc: $(cat "$PW_TMP/usage.out")"
finish
