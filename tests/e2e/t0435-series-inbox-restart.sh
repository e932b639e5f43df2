#!/usr/bin/env bash
# check: parallel
# Patch mail waiting for the rest of its series survives a daemon
# restart (it is kept in the store, table inbox_pending): the cover
# letter and patch 1 of a 3-patch series are read, the daemon is stopped
# and started again, then patches 2 and 3 arrive; the series is applied
# whole, and its mail stays stored as taken.  After a second restart a
# partial reroll ("[PATCH v3 2/3]" answering v2's 2/3) takes the rest
# of its series from that mail.  Same
# archive set-up as t0431 (a public-inbox-like repository over file://).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

. "$(dirname "$0")/lib_inbox.sh"
inbox_fixture

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
# The series' mail stays stored, as taken: a restart does not wait for
# it again nor make the series again.
stop_pid "$PW_DAEMON_PID"
start_daemon "$PW_TMP/d" || { fail daemon_restarts_again "see log"; finish; }
wait_until 30 seen_is "$(g "$INBOX" rev-parse HEAD)"
check used_mail_kept [ "$(sql "SELECT count(*) FROM inbox_pending")" = 4 ]
sleep 2
! grep -q "patch mail(s) waiting for their series since before the restart" "$PW_DIR/daemon.log" &&
    [ "$(sql "SELECT count(*) FROM series")" = 1 ] &&
    pass taken_mail_not_waiting || fail taken_mail_not_waiting "$(grep waiting "$PW_DIR/daemon.log") $(sql "SELECT id, state FROM series")"

# A partial reroll after the restart: "[PATCH v3 2/3]" answering v2's
# 2/3 is a v3 series of v2's 1/3 and 3/3 with the new 2/3, as b4
# assembles one; the daemon took v2's mail before the restart.
p2_id=$(sed -n 's/^Message-ID: *<\(.*\)>$/\1/Ip' "$3")
g "$SRC" checkout -q -b v3 "$c2"
commit "$SRC" README "README: second, better" >/dev/null
g "$SRC" format-patch -q -1 --in-reply-to="<$p2_id>" -o "$PW_TMP/v3"
g "$SRC" checkout -q master
sed -i 's/^Subject: \[PATCH\]/Subject: [PATCH v3 2\/3]/' "$PW_TMP"/v3/0001-*.patch
add_msg "$PW_TMP"/v3/0001-*.patch
v3_applied() { [ "$(sql "SELECT state FROM series WHERE version = 3")" = applied ]; }
if wait_until 30 v3_applied; then
	pass reroll_after_restart
else
	fail reroll_after_restart "$(sql "SELECT id, version, state, error FROM series")"
	grep -i "no series\|v3" "$PW_DIR/daemon.log" | sed 's/^/#   /' | tail -5
fi
subjects=$(sql "SELECT group_concat(subject, '|') FROM (SELECT p.subject FROM series_patches p JOIN series s ON s.id = p.series_id WHERE s.version = 3 ORDER BY seq)")
[ "$subjects" = "mm: memcg: first|README: second, better|mm: memcg: third" ] &&
    pass reroll_patch_rows || fail reroll_patch_rows "$subjects"
stop_pid "$PW_DAEMON_PID"
finish
