#!/usr/bin/env bash
# check: parallel
# The benchmarks' own tools (make bench-web) on a small
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

# web_report.sh judges the goals from a results file: made up here, with
# one route missing each goal, so a report that reads a wrong column or
# calls a goal met for every route fails.
cat >"$PW_TMP/res.txt" <<'EOF'
10 a 8000 10000 3 2 500 1 0 1000 40 10 100
10 b 9000 10000 12 2 500 1 0 3000 8 10 100
10 c 9000 10000 3 2 500 1 0 3000 8 10 100
10 d 9000 10000 3 2 500 1 0 3000 8 10 100
10 rss 20480 30720
20 a 8000 10000 3 2 500 1 0 1000 40 10 100
20 b 9000 10000 3 2 500 1 0 3000 8 10 100
20 c 9000 10000 3 2 2000 1 0 3000 8 10 400
20 d 9000 10000 3 2 500 1 0 3000 8 10 150
20 rss 71680 81920
EOF
tests/bench/web_report.sh "$PW_TMP/res.txt" "10 20" 1 >"$PW_TMP/report.out" 2>&1
rc=$?
sed 's/^/# /' "$PW_TMP/report.out"
has() {	# has N LINE: LINE is in the report N times
	[ "$(grep -c -xF -- "$2" "$PW_TMP/report.out")" = "$1" ] ||
	    echo "not $1 time(s): $2"
}
why=$( [ "$rc" = 0 ] || echo "rc $rc"
	has 1 '| a | 10 | 8000 | 10000 | 80 % | 3.00 | 2.00 | 10 | 1000 | 40 | 100 | 1 | 500 |'
	has 1 '| c | 100 % | 100 % | 400 % | 400 % (not the same page) |'
	has 1 '| d | 100 % | 100 % | 150 % | 100 % |'
	has 1 'slower at 20 runs than at 10 (same page, server CPU > 125 %): d 150 %'
	has 2 '  cached >= 25 % of nginx:           met'
	has 1 '  cached p99 <= 10 ms:               missed by b 12 ms'
	has 1 '  cached p99 <= 10 ms:               met'
	has 2 '  uncached >= 25 % of nginx:         missed by a 10 %'
	has 2 '  uncached p99 <= 10 ms:             missed by a 40 ms'
	has 1 '  RSS <= 64 MB:                      met (20.0 MB)'
	has 1 '  RSS <= 64 MB:                      missed (70.0 MB)'
	[ "$(grep -x '[0-9]* runs:' "$PW_TMP/report.out" | tr '\n' ' ')" = "10 runs: 20 runs: " ] ||
	    echo "scales out of order" )
[ -z "$why" ] && pass web_report_judges_the_goals ||
    fail web_report_judges_the_goals "$why"
# On PostgreSQL beside SQLite's figures (res.txt) and the reference
# rate of one read transaction: each route's cost and floor, and the
# misses whose floor is above 2 counted apart.
cat >"$PW_TMP/pg.txt" <<'EOF'
10 a 6000 10000 3 2 500 1 0 200 40 100 100
10 c 9000 10000 3 2 500 1 0 300 8 10 120
10 d 9000 10000 3 2 500 1 0 3000 8 10 30
10 rss 20480 30720
EOF
echo "10 1000" >"$PW_TMP/floor.txt"
tests/bench/web_report.sh "$PW_TMP/pg.txt" "10" 1 "$PW_TMP/res.txt" \
    "$PW_TMP/floor.txt" >"$PW_TMP/report.out" 2>&1
rc=$?
sed 's/^/# /' "$PW_TMP/report.out"
why=$( [ "$rc" = 0 ] || echo "rc $rc"
	has 1 '| a | 10 | 6000 | 10000 | 60 % | 8000 | 200 | 1000 | 100 | 100 | 5.00 | 2.00 |'
	has 1 '| c | 10 | 9000 | 10000 | 90 % | 9000 | 300 | 3000 | 120 | 100 | 10.00 | 4.00 |'
	has 1 '| d | 10 | 9000 | 10000 | 90 % | 9000 | 3000 | 3000 | 30 | 100 | 1.00 | 4.00 |'
	has 1 '  uncached <= 2x SQLite cost:                  missed by a 5.00x, c 10.00x'
	grep -q '^    of them with a floor above 2: *1 of 2 (one read transaction: 1000/s): c 4.00$' \
	    "$PW_TMP/report.out" || echo "no floor count" )
[ -z "$why" ] && pass web_report_pg_floor || fail web_report_pg_floor "$why"

tests/bench/web_report.sh "$PW_TMP/nosuch" "10" 0 >"$PW_TMP/report.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "cannot read $PW_TMP/nosuch" "$PW_TMP/report.out" &&
    pass web_report_refuses_no_results ||
    fail web_report_refuses_no_results "rc $rc: $(cat "$PW_TMP/report.out")"
finish
