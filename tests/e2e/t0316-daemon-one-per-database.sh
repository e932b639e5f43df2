#!/usr/bin/env bash
# check: parallel
# (Two daemons on one database of the test's own; no runner.)
# One perfwatchd a SQLite database: a second daemon on the same file
# (another port) stops at start with a one-line error that names the
# first (the pid in DATABASE.lock), before it listens.  When the first
# dies by SIGKILL its lock goes with the process and the second starts.
# A PostgreSQL database takes several daemons (t0318): the second
# starts and serves beside the first.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d" r1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
FIRST=$PW_DAEMON_PID
sed 's/^listen: .*/listen: 127.0.0.1:0/' "$PW_DIR/daemon.yaml" >"$PW_TMP/d2.yaml"
if [ -n "${PW_TEST_PG:-}" ]; then
	spawn "$PW_TMP/d2.log" "$PW_BIN/perfwatchd" -c "$PW_TMP/d2.yaml" \
	    --port-file "$PW_TMP/port2"
	if wait_for 20 test -s "$PW_TMP/port2"; then
		check first_still_serves [ "$(http GET /api/v1/jobs)" = 200 ]
		PW_URL=http://127.0.0.1:$(cat "$PW_TMP/port2")
		check second_daemon_serves [ "$(http GET /api/v1/jobs)" = 200 ]
	else
		fail second_daemon_serves "$(cat "$PW_TMP/d2.log")"
	fi
	finish
fi
timeout 20 "$PW_BIN/perfwatchd" -c "$PW_TMP/d2.yaml" \
    --port-file "$PW_TMP/port2" >"$PW_TMP/d2.log" 2>&1
rc=$?
who="is held by another process (pid $FIRST)"
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
