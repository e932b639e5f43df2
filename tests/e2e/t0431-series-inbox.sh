#!/usr/bin/env bash
# check: parallel
# End to end: the inbox watcher.  The test builds a public-inbox-like
# archive (one commit per message, the message in the file `m`) and the
# daemon watches it over file://.  History before the watcher started
# triggers nothing; then a threaded `git format-patch --cover-letter
# --thread -v2` series arrives in two polls with a review reply between
# its patches, next to a single patch whose subject matches no keyword
# of the inbox.  A later "[PATCH v3 2/3]" answering its 2/3 is a v3
# series of the other two v2 patches around it.  The series is applied on the inbox's tree and branch,
# its tip triggered against its base for the job that names the inbox,
# and the watcher remembers the last archive commit it read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

. "$(dirname "$0")/lib_inbox.sh"
inbox_fixture

# The cover letter and patch 1, then a reply, the typo patch, 2 and 3.
set -- "$PW_TMP"/out/*.patch
add_msg "$1"
add_msg "$2"
mid=$(g "$INBOX" rev-parse HEAD)
wait_until 30 seen_is "$mid" || fail first_half_read "$(sql "SELECT * FROM inbox_state")"
[ "$(sql "SELECT count(*) FROM series")" = 0 ] && pass incomplete_waits ||
    fail incomplete_waits "$(sql "SELECT * FROM series")"
{
	printf 'From: Rev Iewer <r@x>\nSubject: Re: [PATCH v2 1/3] mm: memcg: first\n'
	printf 'Message-Id: <reply@x>\n'
	grep -m1 '^Message-Id:' "$2" | sed 's/^Message-Id:/In-Reply-To:/'
	printf '\n> diff --git a/mm/a.c b/mm/a.c\nLooks good.\n'
} >"$PW_TMP/reply.msg"
add_msg "$PW_TMP/reply.msg"
add_msg "$PW_TMP"/typo/*.patch
add_msg "$3"
add_msg "$4"
head=$(g "$INBOX" rev-parse HEAD)
applied() { [ "$(sql "SELECT state FROM series")" = applied ]; }
if wait_until 30 applied; then
	pass series_applied
else
	fail series_applied "$(sql "SELECT * FROM series")"; show_logs; finish
fi
wait_until 30 seen_is "$head" && pass last_commit_kept ||
    fail last_commit_kept "$(sql "SELECT * FROM inbox_state")"
[ "$(sql "SELECT inbox || ' ' || version || ' ' || total || ' ' || base_sha FROM series")" = "lm 2 3 $c1" ] &&
    pass series_fields || fail series_fields "$(sql "SELECT * FROM series")"
subjects=$(sql "SELECT group_concat(subject, '|') FROM (SELECT subject FROM series_patches ORDER BY seq) AS o")
[ "$subjects" = "mm: memcg: first|README: second|mm: memcg: third" ] &&
    pass patch_rows || fail patch_rows "$subjects"
tip=$(sql "SELECT c.sha FROM series s JOIN commits c ON c.id = s.commit_id")
MIRROR=$PW_DIR/git/app.git
[ "$(git --git-dir "$MIRROR" rev-parse "$tip^{tree}")" = "$(g "$SRC" rev-parse "$c4^{tree}")" ] &&
    pass tree_identical || fail tree_identical "tip $tip"
pair=$(sql "SELECT bc.sha || ' ' || cc.sha FROM pairs p JOIN jobs b ON b.id = p.base_job_id
    JOIN jobs c ON c.id = p.cand_job_id JOIN commits bc ON bc.id = b.commit_id
    JOIN commits cc ON cc.id = c.commit_id")
[ "$pair" = "$c1 $tip" ] && pass tip_triggered || fail tip_triggered "pairs: $pair"
# The typo patch matched no keyword: no series.
[ "$(sql "SELECT count(*) FROM series")" = 1 ] && pass subjects_filter ||
    fail subjects_filter "$(sql "SELECT id, title FROM series")"
code=$(http GET "/api/v1/series")
[ "$code" = 200 ] && [ "$(jfield series.0.inbox <"$PW_TMP/body")" = lm ] &&
    pass api_lists_it || fail api_lists_it "$code"

# A partial reroll: "[PATCH v3 2/3]" answering the v2 series' 2/3 is a
# v3 series of v2's 1/3 and 3/3 around it, as b4 reads it.
g "$SRC" checkout -q -b v3 "$c2"
echo 'second, better' >>"$SRC/README"
g "$SRC" commit -qam "README: second, better"
g "$SRC" checkout -q master
p2id=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$3")
g "$SRC" format-patch -q -1 --stdout --in-reply-to="$p2id" v3 |
    sed 's|^Subject: \[PATCH\]|Subject: [PATCH v3 2/3]|' >"$PW_TMP/v3-2.patch"
add_msg "$PW_TMP/v3-2.patch"
rerolled() { [ "$(sql "SELECT state FROM series WHERE version = 3")" = applied ]; }
subjects=
wait_until 30 rerolled &&
    subjects=$(sql "SELECT group_concat(subject, '|') FROM (SELECT p.subject FROM series_patches p JOIN series s ON s.id = p.series_id WHERE s.version = 3 ORDER BY p.seq) AS o")
[ "$subjects" = "mm: memcg: first|README: second, better|mm: memcg: third" ] &&
    [ "$(sql "SELECT total || ' ' || base_sha FROM series WHERE version = 3")" = "3 $c1" ] &&
    pass partial_reroll || fail partial_reroll "$subjects $(sql "SELECT id, version, state, error FROM series") $(grep "inbox lm" "$PW_DIR/daemon.log" | tail -2)"

# Bad mail in the archive is skipped with a reason; the patch after it,
# tagged for the fixes branch, goes there (its base: that branch's tip).
wait_tip fixes "$f1" || fail fixes_seen "$(cat "$PW_TMP/trees.json")"
printf 'no header block at all, just text\n' >"$INBOX/m"
g "$INBOX" add m
g "$INBOX" commit -qm "not a mail"
add_msg "$PW_TMP"/fix/*.patch
fixed() { [ "$(sql "SELECT state FROM series WHERE branch_tag IS NOT NULL")" = applied ]; }
wait_until 30 fixed && pass tagged_series_applied ||
    { fail tagged_series_applied "$(sql "SELECT id, state, error, branch, branch_tag FROM series")"; show_logs; }
[ "$(sql "SELECT branch || ' ' || branch_tag || ' ' || base_sha || ' ' || title FROM series WHERE branch_tag IS NOT NULL")" = "fixes app/for-7.0-fixes $f1 mm: memcg: the fix" ] &&
    pass routed_by_tag || fail routed_by_tag "$(sql "SELECT * FROM series")"
grep -q "inbox lm: message [0-9a-f]*: .*no header block" "$PW_DIR/daemon.log" &&
    grep -q 'on app/fixes, tag app/for-7.0-fixes' "$PW_DIR/daemon.log" &&
    pass bad_mail_skipped || fail bad_mail_skipped "$(grep 'inbox lm' "$PW_DIR/daemon.log" | tail -5)"
code=$(http GET "/series/$(sql "SELECT id FROM series WHERE branch_tag IS NOT NULL")")
grep -q '<th>subject tag</th><td class="mono">app/for-7.0-fixes</td>' "$PW_TMP/body" &&
    pass tag_on_page || fail tag_on_page "$code"
stop_pid "$PW_DAEMON_PID"
finish
