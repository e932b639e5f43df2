#!/usr/bin/env bash
# check: parallel
# docs/DEPLOY.md's backup, taken while the daemon runs and writes:
# `sqlite3 DB ".backup FILE"` (SQLite's online backup API) while 40
# submits go in.  The copy passes SQLite's integrity check, holds every
# job acknowledged before the backup began, and a daemon started on it
# serves them.  A daemon refuses a database newer than itself (an
# upgrade undone by the binary alone) and names both schema versions.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d"
cat >"$PW_DIR/jobs/kv.yaml" <<'YAML'
name: kv
parser: keyvalue
command: [sh, -c, 'echo ops=1']
metrics:
  ops: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
for i in $(seq 1 20); do http POST /api/v1/submit "$PW_ADMIN" '{"job":"kv"}' >/dev/null; done
before=$(sql "SELECT count(*) FROM jobs")
# More submits while the backup runs.
(for i in $(seq 1 20); do http POST /api/v1/submit "$PW_ADMIN" '{"job":"kv"}' >/dev/null; done) &
writer=$!
sqlite3 "$PW_DB" ".backup '$PW_TMP/backup.db'" && pass backup_taken ||
    fail backup_taken "sqlite3 .backup failed"
wait "$writer"
[ "$(sqlite3 "$PW_TMP/backup.db" 'PRAGMA integrity_check')" = ok ] &&
    pass backup_integrity_ok || fail backup_integrity_ok "$(sqlite3 "$PW_TMP/backup.db" 'PRAGMA integrity_check' | head -3)"
n=$(sqlite3 "$PW_TMP/backup.db" "SELECT count(*) FROM jobs")
[ "$n" -ge "$before" ] && pass backup_holds_the_acknowledged_jobs ||
    fail backup_holds_the_acknowledged_jobs "$n jobs, $before before it began"
stop_pid "$PW_DAEMON_PID"

# Restore: a daemon on the copy serves its jobs.
mkdir -p "$PW_TMP/r"
cp -r "$PW_DIR/jobs" "$PW_DIR/tokens" "$PW_DIR/admin.token" "$PW_TMP/r/"
sed "s|$PW_DIR|$PW_TMP/r|g" "$PW_DIR/daemon.yaml" >"$PW_TMP/r/daemon.yaml"
cp "$PW_TMP/backup.db" "$PW_TMP/r/pw.db"
start_daemon "$PW_TMP/r" || { fail restored_daemon_starts "see log"; finish; }
http GET "/api/v1/jobs?limit=200" >/dev/null
got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["jobs"]))' "$PW_TMP/body")
[ "$got" = "$n" ] && pass restored_daemon_serves_the_jobs ||
    fail restored_daemon_serves_the_jobs "$got of $n"
stop_pid "$PW_DAEMON_PID"

# A database from a newer perfwatchd: refused, both versions named.
v=$(sqlite3 "$PW_TMP/r/pw.db" 'PRAGMA user_version')
sqlite3 "$PW_TMP/r/pw.db" "PRAGMA user_version = $((v + 1))"
if out=$(timeout 20 "$PW_BIN/perfwatchd" -c "$PW_TMP/r/daemon.yaml" 2>&1); then
	fail newer_schema_refused "started: $out"
else
	check newer_schema_refused grep -qF "database schema version $((v + 1)) is newer than this perfwatchd ($v)" <<<"$out"
fi
finish
