#!/usr/bin/env bash
# check: parallel
# (Two daemons on one database of the test's own; no runner.)
# One perfwatchd a database, on either backend: a second daemon on the
# same database (another port) stops at start with a one-line error that
# names the first (SQLite: the pid in DATABASE.lock; PostgreSQL: the
# application name "perfwatchd pid N" of the connection that holds the
# advisory lock on the instance id), before it listens.  When the first
# dies by SIGKILL its lock goes with it (the file lock with the process,
# the advisory lock with its connection) and the second starts.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d" r1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
FIRST=$PW_DAEMON_PID
sed 's/^listen: .*/listen: 127.0.0.1:0/' "$PW_DIR/daemon.yaml" >"$PW_TMP/d2.yaml"
timeout 20 "$PW_BIN/perfwatchd" -c "$PW_TMP/d2.yaml" \
    --port-file "$PW_TMP/port2" >"$PW_TMP/d2.log" 2>&1
rc=$?
if [ -n "${PW_TEST_PG:-}" ]; then
	who="perfwatchd pid $FIRST, from a local socket (server pid [0-9]*) holds its lock"
else
	who="is held by another process (pid $FIRST)"
fi
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ ! -s "$PW_TMP/port2" ] &&
    grep -q "another perfwatchd runs on it" "$PW_TMP/d2.log" &&
    grep -q "$who" "$PW_TMP/d2.log"; then
	pass second_daemon_refused
else
	fail second_daemon_refused "exit $rc, port $(cat "$PW_TMP/port2" 2>/dev/null): $(cat "$PW_TMP/d2.log")"
fi
check first_still_serves [ "$(http GET /api/v1/jobs)" = 200 ]

stop_pid "$FIRST" KILL
spawn "$PW_TMP/d2.log" "$PW_BIN/perfwatchd" -c "$PW_TMP/d2.yaml" \
    --port-file "$PW_TMP/port2"
SECOND=$!
if wait_for 20 test -s "$PW_TMP/port2"; then
	PW_URL=http://127.0.0.1:$(cat "$PW_TMP/port2")
	check second_starts_after_kill9 [ "$(http GET /api/v1/jobs)" = 200 ]
else
	fail second_starts_after_kill9 "$(cat "$PW_TMP/d2.log")"
fi
stop_pid "$SECOND"
finish
