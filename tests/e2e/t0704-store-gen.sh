#!/usr/bin/env bash
# check: parallel
# The store's generation (schema v32, daemon/store_gen.c), what the reply
# cache keys on: every table has three triggers that add one to
# store_gen.n (insert, update, delete); the update triggers of hosts and
# jobs name every column but what a heartbeat writes.  They are made from
# the schema at each open: a table or column added later, a trigger
# dropped, a stray gen_* trigger are all put right at the next start,
# and a start that finds them in place changes no schema.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
stop_pid "$PW_DAEMON_PID"

# Each table's three triggers: name, table, kind.
missing() {
	sql "SELECT t.name || '/' || k.kind FROM sqlite_schema t,
	  (SELECT 'i' AS kind UNION ALL SELECT 'u' UNION ALL SELECT 'd') k
	  WHERE t.type = 'table' AND t.name NOT LIKE 'sqlite%'
	  AND t.name <> 'store_gen' AND NOT EXISTS (SELECT 1 FROM sqlite_schema g
	  WHERE g.type = 'trigger' AND g.tbl_name = t.name
	  AND g.name = 'gen_' || t.name || '_' || k.kind
	  AND g.sql LIKE '%UPDATE store_gen SET n = n + 1%')"
}
ntables=$(sql "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
check "the schema has its tables ($ntables)" test "$ntables" -gt 25
check "every table has its three generation triggers ($(missing | tr '\n' ' '))" \
    test -z "$(missing)"
check "the store is at v32 or later" test "$(sql 'PRAGMA user_version')" -ge 32
upd() { sql "SELECT sql FROM sqlite_schema WHERE name = 'gen_$1_u'"; }
check "hosts' update trigger leaves last_seen out" \
    bash -c "grep -q '\"quarantined_at\"' <<<'$(upd hosts)' && ! grep -q last_seen <<<'$(upd hosts)'"
check "jobs' update trigger leaves the lease, progress and updated out" \
    bash -c "grep -q '\"state\"' <<<'$(upd jobs)' && ! grep -Eq 'lease_expires|progress|\"updated\"' <<<'$(upd jobs)'"

# A start that finds them in place changes no schema.
sv0=$(sql 'PRAGMA schema_version')
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
stop_pid "$PW_DAEMON_PID"
check "a second start changes no schema ($sv0 -> $(sql 'PRAGMA schema_version'))" \
    test "$(sql 'PRAGMA schema_version')" = "$sv0"

# What the triggers count, written straight to the file.
gen() { sql 'SELECT n FROM store_gen'; }
g0=$(gen)
sql "INSERT INTO hosts (name, labels, inventory, registered, last_seen)
     VALUES ('h1', '[]', '{}', 1, 1)"
g1=$(gen)
sql "UPDATE hosts SET last_seen = 99 WHERE name = 'h1'"
g2=$(gen)
sql "UPDATE hosts SET labels = '[\"x\"]' WHERE name = 'h1'"
g3=$(gen)
sql "DELETE FROM hosts WHERE name = 'h1'"
g4=$(gen)
check "insert, update and delete count, last_seen does not ($g0 $g1 $g2 $g3 $g4)" \
    test "$g1" = $((g0 + 1)) -a "$g2" = "$g1" -a "$g3" = $((g1 + 1)) -a "$g4" = $((g3 + 1))

# Put right at the next start: a dropped trigger, a new table, a new
# column of jobs, a stray trigger.
sql "DROP TRIGGER gen_runs_i;
     CREATE TABLE added (x INTEGER);
     ALTER TABLE jobs ADD COLUMN added_col INTEGER;
     CREATE TRIGGER gen_stray_i AFTER INSERT ON added BEGIN SELECT 1; END;"
check "broken: a table without its triggers" test -n "$(missing)"
start_daemon "$PW_TMP/d" || { fail daemon_restarts_again "see log"; finish; }
stop_pid "$PW_DAEMON_PID"
check "mended: every table has its three ($(missing | tr '\n' ' '))" test -z "$(missing)"
check "the new column is counted" grep -q '"added_col"' <<<"$(upd jobs)"
check "the stray trigger is gone" \
    test "$(sql "SELECT count(*) FROM sqlite_schema WHERE name = 'gen_stray_i'")" = 0
g0=$(gen)
sql "INSERT INTO added (x) VALUES (1)"
check "the new table counts ($g0 -> $(gen))" test "$(gen)" = $((g0 + 1))
finish
