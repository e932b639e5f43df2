#!/usr/bin/env python3
"""
Every statement of the store, read from the preprocessed store/*.c
(the macros expanded), planned by SQLite against a database the daemon
made: a statement that scans a table which grows with runs, commits,
regressions, alerts or bisections (SCAN t, not SEARCH t USING ...) is
named by file:line with its plan.  Small tables (hosts, trees, counts,
queues a pass empties) may be scanned.

  store_plans.py DB PREPROCESSED.c...     (each made with cc -E)

Exit 0 when none, 1 when any, 2 when a statement does not plan.
"""
import re
import sqlite3
import sys

SMALL = {"hosts", "trees", "counts", "instance", "series_queue",
         "alert_due", "inbox_state", "inbox_pending", "tree_branches"}
# Scans that stop early, by a piece of their statement: why.
BOUNDED = {
    "FROM jobs j LEFT JOIN jobs b ON b.id":
        "the overview's newest candidate jobs: id order, LIMIT rows",
    "FROM series ORDER BY id DESC LIMIT":
        "the newest series for their time to report: LIMIT rows",
    "FROM mail_skipped ORDER BY id DESC LIMIT":
        "the newest patch mail in no series, for the series page: LIMIT "
        "rows",
    "FROM artifacts a WHERE NOT EXISTS":
        "eviction: least recently used first, stopping when there is "
        "room; the artifacts are bounded by builds.max_size",
}
# store_i_ids_rows and store_i_ids_lists take an IN list's statement
# (store/store_int.h: STORE_I_IDS, 64 parameters).
CALL = re.compile(
    r'store_i_(?:stmt|cached|ids_rows|ids_lists)\(\s*\w+\s*,\s*'
    r'(?:[\w\s+]+,\s*)?((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LINE = re.compile(r'^# (\d+) "([^"]+)"', re.M)
# A table of statements, one chosen at run time (a list's rows by the
# shape of its filters, a page's by what drives it): "static const char
# *const name[N] = { "..." "...", ..., NULL };" after cc -E.  Its SQL
# entries are planned as the calls' are; a table named *_pg is
# PostgreSQL's own.
TABLE = re.compile(
    r'static\s+const\s+char\s*\*\s*const\s+(\w+)\s*\[[^\]]*\]\s*=\s*\{')
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
SQL_START = re.compile(r'\s*(?:SELECT|WITH|INSERT|UPDATE|DELETE)\b', re.I)


def entries(src, pos):
    """The entries of the initializer at pos (after its "{"): (position,
    its string literals) of each, up to the "}" that ends it."""
    start, lits = pos, []
    while pos < len(src):
        c = src[pos]
        if c == '"':
            m = STRING.match(src, pos)
            lits.append(m.group(0))
            pos = m.end()
            continue
        if c in ",}":
            if lits:
                yield start, " ".join(lits)
            if c == "}":
                return
            start, lits = pos + 1, []
        pos += 1


def statements(src):
    """(position, SQL) of each statement of src: the store_i_* calls'
    and the SQL entries of its statement tables."""
    for m in CALL.finditer(src):
        yield m.start(), m.group(1)
    for t in TABLE.finditer(src):
        if t.group(1).endswith("_pg"):
            continue
        for pos, lits in entries(src, t.end()):
            text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lits))
            if SQL_START.match(text):
                yield pos, lits


def origin(src, pos):
    """The file:line of pos in cc -E output, from its line markers."""
    last = None
    for m in LINE.finditer(src, 0, pos):
        last = m
    if last is None:
        return "?", 0
    line = int(last.group(1)) + src.count("\n", last.end() + 1, pos)
    return last.group(2), line


def plan(db, sql):
    for n in range(0, 70):
        try:
            return db.execute("EXPLAIN QUERY PLAN " + sql,
                              [None] * n).fetchall()
        except sqlite3.ProgrammingError:
            continue
    raise sqlite3.OperationalError("no binding count fits")


def main():
    db = sqlite3.connect(sys.argv[1])
    partial = {n for n, q in db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
        " AND sql IS NOT NULL") if " WHERE " in q.upper()}
    bad = planned = 0
    for path in sys.argv[2:]:
        src = open(path).read()
        for pos, lits in statements(src):
            sql = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lits))
            sql = sql.encode().decode("unicode_escape")
            where = "%s:%d" % origin(src, pos)
            if " LATERAL " in sql:
                continue  # PostgreSQL's own (db_backend DB_PG)
            try:
                rows = plan(db, sql)
            except sqlite3.Error as e:
                print("%s: does not plan: %s: %.120s" % (where, e, sql))
                return 2
            planned += 1
            for r in rows:
                s = re.match(r"SCAN (\w+)(?: AS (\w+))?", r[3])
                if s is None:
                    continue
                # the table's name: "SCAN alias" names the alias
                name = s.group(1)
                table = re.search(r"(?:FROM|JOIN|,)\s+(\w+)\s+(?:AS\s+)?%s\b"
                                  % name, sql)
                tname = table.group(1) if table else name
                if tname in SMALL or name in SMALL:
                    continue
                if any(k in sql for k in BOUNDED):
                    continue
                # a common table expression is the statement's own
                # rows, planned (and checked) where it is defined
                ctes = re.findall(r"(?:\bWITH|,)\s*(\w+)\s+AS\s*\(", sql)
                # a subquery in FROM, by its alias ("(SELECT ...) AS w",
                # which PostgreSQL requires): planned as a subquery
                subs = re.findall(r"\)\s+AS\s+(\w+)", sql)
                if name in ctes or name in subs or \
                        name in ("CONSTANT", "n", "me", "js") or \
                        r[3].startswith("SCAN (subquery") or \
                        "VIRTUAL TABLE" in r[3]:
                    continue
                # a walk of a partial index reads the rows it keeps
                ix = re.search(r"USING (?:COVERING )?INDEX (\w+)", r[3])
                if ix and ix.group(1) in partial:
                    continue
                bad += 1
                print("%s: %s :: %.200s" % (where, r[3], sql))
    print("# %d statements planned, %d scan a growing table"
          % (planned, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
