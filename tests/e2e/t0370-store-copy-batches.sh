#!/usr/bin/env bash
# check: parallel
# (No daemon: web_gen writes a store, `perfwatch store copy` moves it.)
# `perfwatch store copy` sends rows in statements of up to 1,000: a store
# of 2,400 runs (runs and metrics tables of several such statements and
# a shorter last one) is copied into PostgreSQL under make check-pg (else
# into a second SQLite file) and back into a new SQLite file, and every
# table of the copy back holds what the source holds, row for row
# (read with the sqlite3 command line, not by the copy's own checksum).
. "$(dirname "$0")/lib.sh"

GEN=$PW_BIN/../tests/bench/web_gen
[ -x "$GEN" ] || { fail web_gen_built "no $GEN (make check-build builds it)"; finish; }
SRC=$PW_TMP/src.db
# 120 pairs of 10 runs a side, the quick verdict for all (REAL 0).
if "$GEN" "$SRC" 0 120 10 0 >"$PW_TMP/gen.out" 2>"$PW_TMP/gen.err"; then
	pass store_generated
else
	fail store_generated "$(tail -5 "$PW_TMP/gen.err")"
	finish
fi
runs=$(sqlite3 "$SRC" 'SELECT count(*) FROM runs')
metrics=$(sqlite3 "$SRC" 'SELECT count(*) FROM metrics')
[ "$runs" -gt 2000 ] && [ $((runs % 1000)) -ne 0 ] && [ "$metrics" -gt 4000 ] &&
    pass batches_and_a_tail || fail batches_and_a_tail "runs $runs, metrics $metrics"

if [ -n "${PW_TEST_PG:-}" ]; then
	TO=$(pg_createdb "$(basename "$PW_TMP" | tr -c 'a-zA-Z0-9' _ | tr A-Z a-z)_to")
else
	echo "SKIP copy_to_postgresql: no server here (make check-pg copies into one)"
	TO=$PW_TMP/to.db
fi
if "$PW_BIN/perfwatch" store copy "$SRC" "$TO" >"$PW_TMP/copy.out" 2>&1 &&
    grep -q "^runs  *$runs rows" "$PW_TMP/copy.out" &&
    grep -q "^metrics  *$metrics rows" "$PW_TMP/copy.out"; then
	pass copied
else
	fail copied "$(tail -5 "$PW_TMP/copy.out")"
	finish
fi
BACK=$PW_TMP/back.db
if "$PW_BIN/perfwatch" store copy "$TO" "$BACK" >"$PW_TMP/back.out" 2>&1; then
	pass copied_back
else
	fail copied_back "$(tail -5 "$PW_TMP/back.out")"
	finish
fi

# Every table, its rows in the order of all their columns, on both.
differ=
for t in $(sqlite3 "$SRC" "SELECT name FROM sqlite_master WHERE type = 'table'
    AND name NOT LIKE 'sqlite_%' ORDER BY name"); do
	cols=$(sqlite3 "$SRC" "SELECT group_concat('"' || name || '"', ', ') FROM
	    pragma_table_info('$t') ORDER BY cid")
	q="SELECT $cols FROM \"$t\" ORDER BY $cols"
	sqlite3 -header "$SRC" "$q" >"$PW_TMP/a.txt"
	sqlite3 -header "$BACK" "$q" >"$PW_TMP/b.txt"
	cmp -s "$PW_TMP/a.txt" "$PW_TMP/b.txt" || differ="$differ $t"
done
[ -z "$differ" ] && pass same_rows_back || fail same_rows_back "tables:$differ"
finish
