#!/usr/bin/env bash
# check: parallel
# Patch mail waiting for the rest of its series survives a daemon
# restart (it is kept in the store, table inbox_pending): the cover
# letter and patch 1 of a 3-patch series are read, the daemon is stopped
# and started again, then patches 2 and 3 arrive; the series is applied
# whole, and the waiting mail leaves the store once it is used.  Same
# archive set-up as t0431 (a public-inbox-like repository over file://).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

. "$(dirname "$0")/lib_inbox.sh"

# The cover letter and patch 1; the daemon reads them and waits.
set -- "$PW_TMP"/out/*.patch
add_msg "$1"
add_msg "$2"
mid=$(g "$INBOX" rev-parse HEAD)
wait_until 30 seen_is "$mid" || fail first_half_read "$(sql "SELECT * FROM inbox_state")"
[ "$(sql "SELECT count(*) FROM series")" = 0 ] && pass incomplete_waits ||
    fail incomplete_waits "$(sql "SELECT * FROM series")"
check waiting_mail_stored [ "$(sql "SELECT count(*) FROM inbox_pending WHERE inbox = 'lm'")" = 2 ]

# A restart, then the rest of the series.
stop_pid "$PW_DAEMON_PID"
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
add_msg "$3"
add_msg "$4"
applied() { [ "$(sql "SELECT state FROM series")" = applied ]; }
if wait_until 30 applied; then
	pass series_applied_after_restart
else
	fail series_applied_after_restart "$(sql "SELECT * FROM series")"
	sed 's/^/#   /' "$PW_DIR/daemon.log" | tail -20
	finish
fi
subjects=$(sql "SELECT group_concat(subject, '|') FROM (SELECT subject FROM series_patches ORDER BY seq)")
[ "$subjects" = "mm: memcg: first|README: second|mm: memcg: third" ] &&
    pass patch_rows || fail patch_rows "$subjects"
grep -q "2 patch mail(s) waiting for their series since before the restart" "$PW_DIR/daemon.log" &&
    pass reloaded_logged || fail reloaded_logged "no such line in the log"
check used_mail_dropped [ "$(sql "SELECT count(*) FROM inbox_pending")" = 0 ]
stop_pid "$PW_DAEMON_PID"
finish
