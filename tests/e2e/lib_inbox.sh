# A public-inbox archive for the mail tests, on top of lib.sh,
# lib_runner.sh and lib_git.sh:
#
#   . "$(dirname "$0")/lib_inbox.sh"
#
#   inbox_archive      makes the archive $INBOX ($PW_TMP/inbox, a git
#                      repository as public-inbox keeps one) holding one
#                      old message, history the daemon must not take up
#   add_msg FILE       one message (a `git format-patch` file), one
#                      archive commit
#   seen_is SHA        the inbox lm's last read commit is SHA
#   inbox_yaml [LINE...]  appends inbox lm (the archive $INBOX, poll 1s,
#                      tree app) to $PW_DIR/daemon.yaml, with more of its
#                      keys as LINEs ("branch: master")
#   inbox_job          writes job j (one run of `echo x=1`), triggered
#                      by inbox lm, into $PW_DIR/jobs
#   inbox_fixture      the set-up shared by t0431 and t0435: makes $SRC
#                      (a tree app: c1 on master; a 3-patch series
#                      c2..c4 on topic as `git format-patch --cover-letter
#                      --thread -v2` mail in $PW_TMP/out; a one-patch
#                      typo fix in $PW_TMP/typo; a branch fixes with a
#                      patch for it tagged [PATCH app/for-7.0-fixes] in
#                      $PW_TMP/fix), the archive, a daemon watching both
#                      (inbox lm, subjects [memcg], job j triggered by
#                      it) and waits for the first sight of the tree and
#                      the inbox (PASS inbox_first_sight,
#                      history_ignored)

add_msg() {
	# public-inbox stores the message without an mbox "From " line.
	sed '1{/^From [0-9a-f]* /d}' "$1" >"$INBOX/m"
	g "$INBOX" add m
	g "$INBOX" commit -qm "$(grep -m1 '^Subject:' "$1" | cut -c10-)"
}

seen_is() { [ "$(sql "SELECT last_commit FROM inbox_state WHERE name = 'lm'")" = "$1" ]; }

inbox_archive() {
	INBOX=$PW_TMP/inbox
	git -c init.defaultBranch=master init -q "$INBOX"
	printf 'From: a@x\nSubject: [PATCH] old history\nMessage-Id: <old@x>\n\n---\ndiff --git a/README b/README\n' >"$PW_TMP/old.msg"
	add_msg "$PW_TMP/old.msg"
}

inbox_yaml() {
	local l
	{
		printf 'inboxes:\n  - name: lm\n    url: file://%s\n' "$INBOX"
		printf '    poll: 1s\n    tree: app\n'
		for l in "$@"; do
			printf '    %s\n' "$l"
		done
	} >>"$PW_DIR/daemon.yaml"
}

inbox_job() {
	cat >"$PW_DIR/jobs/j.yaml" <<'YAML'
name: j
parser: keyvalue
command: [echo, "x=1"]
trigger:
  inboxes: [lm]
metrics:
  x: {better: higher}
runs: 1
YAML
}

inbox_fixture() {
	SRC=$PW_TMP/app
	src_init "$SRC"
	c1=$(g "$SRC" rev-parse HEAD)
	g "$SRC" checkout -qb topic
	c2=$(commit "$SRC" mm/a.c "mm: memcg: first")
	c3=$(commit "$SRC" README "README: second")
	c4=$(commit "$SRC" mm/b.c "mm: memcg: third")
	g "$SRC" format-patch -q --cover-letter --thread -v2 --base="$c1" \
	    -o "$PW_TMP/out" "$c1..topic"
	g "$SRC" checkout -q -b typo "$c1"
	commit "$SRC" README "docs: a typo" >/dev/null
	g "$SRC" format-patch -q --thread -o "$PW_TMP/typo" -1
	# A fixes branch, and a patch for it whose subject names it by a tag
	# with a slash: "[PATCH app/for-7.0-fixes]".
	g "$SRC" checkout -q -b fixes "$c1"
	f1=$(commit "$SRC" mm/fix.c "fixes: a first fix")
	commit "$SRC" mm/fix.c "mm: memcg: the fix" >/dev/null
	g "$SRC" format-patch -q --thread --subject-prefix="PATCH app/for-7.0-fixes" \
	    -o "$PW_TMP/fix" -1
	g "$SRC" reset -q --hard "$f1"
	g "$SRC" checkout -q master

	inbox_archive
	daemon_config "$PW_TMP/d" r1
	tree_yaml app "file://$SRC" "master, fixes"
	inbox_yaml "branch: master" "subjects: [memcg]" "tags:" \
	    "  app/for-7.0-fixes: {branch: fixes}"
	inbox_job
	start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
	wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
	old_head=$(g "$INBOX" rev-parse HEAD)
	wait_until 30 seen_is "$old_head" && pass inbox_first_sight ||
	    { fail inbox_first_sight "$(sql "SELECT * FROM inbox_state")"; show_logs; finish; }
	[ "$(sql "SELECT count(*) FROM series")" = 0 ] && pass history_ignored ||
	    fail history_ignored "$(sql "SELECT * FROM series")"
}
