#!/usr/bin/env bash
# check: parallel
# Work from mail is bounded per inbox before anything is applied: with
# series_per_sender_day: 2, a sender's third series of the day is
# recorded 'refused' (not applied, nothing queued) while another
# sender's series is taken; with max_queued_jobs: 3, a series that
# arrives while 3 jobs of the inbox's series wait (no runner here) is
# refused too.  The series page shows each refusal with the limit's key.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_inbox.sh"

SRC=$PW_TMP/app
src_init "$SRC"
c1=$(g "$SRC" rev-parse HEAD)
# mkpatch N NAME EMAIL: a one-patch series from NAME <EMAIL> on c1,
# touching its own file; its mail in $PW_TMP/pN/.
mkpatch() {
	g "$SRC" checkout -q -b "s$1" "$c1"
	GIT_AUTHOR_NAME=$2 GIT_AUTHOR_EMAIL=$3 commit "$SRC" "f$1.c" "f$1: change $1" >/dev/null
	g "$SRC" format-patch -q --thread -o "$PW_TMP/p$1" -1
	g "$SRC" checkout -q master
}
mkpatch 1 "Flo Od" flood@example.org
mkpatch 2 "Flo Od" flood@example.org
mkpatch 3 "Someone Else" FLOOD@Example.org
mkpatch 4 "Other Sender" other@example.org
mkpatch 5 "Third Sender" third@example.org

inbox_archive

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
inbox_yaml "series_per_sender_day: 2" "max_queued_jobs: 3"
inbox_job
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "tree not seen"; show_logs; finish; }
wait_until 30 seen_is "$(g "$INBOX" rev-parse HEAD)" ||
    { fail inbox_first_sight "$(sql "SELECT * FROM inbox_state")"; show_logs; finish; }

# send N: one series into the archive; its state once the daemon read it.
send() {
	add_msg "$PW_TMP"/p$1/*.patch
	wait_until 30 seen_is "$(g "$INBOX" rev-parse HEAD)" ||
	    { fail "read_$1" "$(sql "SELECT * FROM inbox_state")"; show_logs; finish; }
	wait_until 30 eval '[ -n "$(sql "SELECT state FROM series WHERE title = '"'f$1: change $1'"' AND state NOT IN ('"'new'"', '"'applying'"')")" ]'
	sql "SELECT state FROM series WHERE title = 'f$1: change $1'"
}
queued() { sql "SELECT count(*) FROM jobs WHERE state = 'queued'"; }

s1=$(send 1); s2=$(send 2); q2=$(queued)
[ "$s1 $s2" = "applied applied" ] && pass two_series_taken ||
    fail two_series_taken "$s1 $s2; $(sql "SELECT id, state, error FROM series")"
# The third from the same address (another name, other case): refused.
s3=$(send 3)
err3=$(sql "SELECT error FROM series WHERE title = 'f3: change 3'")
if [ "$s3" = refused ] &&
    grep -qF "refused: FLOOD@Example.org sent 2 series to inbox lm in the last day (inboxes[].series_per_sender_day: 2)" <<<"$err3"; then
	pass third_from_sender_refused
else
	fail third_from_sender_refused "$s3: $err3"
fi
[ "$(queued)" = "$q2" ] &&
    [ -z "$(sql "SELECT commit_id FROM series WHERE title = 'f3: change 3' AND commit_id IS NOT NULL")" ] &&
    pass refused_nothing_applied_or_queued ||
    fail refused_nothing_applied_or_queued "queued $q2 -> $(queued); $(sql "SELECT * FROM series")"
s4=$(send 4)
[ "$s4" = applied ] && pass other_sender_taken || fail other_sender_taken "$s4"
# Three candidate jobs of the inbox's series wait now: the next is refused.
n=$(sql "SELECT count(*) FROM jobs j JOIN series s ON s.commit_id = j.commit_id WHERE j.state = 'queued'")
s5=$(send 5)
err5=$(sql "SELECT error FROM series WHERE title = 'f5: change 5'")
if [ "$n" = 3 ] && [ "$s5" = refused ] &&
    grep -qF "refused: 3 jobs of inbox lm's series are queued (inboxes[].max_queued_jobs: 3)" <<<"$err5"; then
	pass queue_full_refused
else
	fail queue_full_refused "$n queued, $s5: $err5"
fi
id3=$(sql "SELECT id FROM series WHERE title = 'f3: change 3'")
curl -s "$PW_URL/series/$id3" >"$PW_TMP/page.html"
grep -qF "series refused: refused: FLOOD@Example.org sent 2 series" "$PW_TMP/page.html" &&
    grep -qF "series_per_sender_day: 2" "$PW_TMP/page.html" &&
    pass refusal_on_series_page || fail refusal_on_series_page "$(grep -i refused "$PW_TMP/page.html" | head -3)"
stop_pid "$PW_DAEMON_PID"
finish
