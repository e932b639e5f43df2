#!/usr/bin/env bash
# check: parallel
# Series mail is untrusted: patches naming .git/, absolute or
# ../ paths, a symlink pointing out of the tree, a write through a
# symlink (one the series made, one of the base tree), a huge hunk — and
# a ../ patch that would need the git am --3way fallback — are each
# refused before either applier runs, with the reason on the series'
# row and in the API; nothing is written outside the mirror (the test
# looks), the mirror's own files are untouched, and the series accepted
# before are still there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/app
src_init "$SRC"
seq -f 'note %g' 1 10 >"$SRC/notes.txt"
mkdir -p "$SRC/sub"
echo inside >"$SRC/sub/file"
ln -s .. "$SRC/up" # upstream's own symlink, pointing above the tree
g "$SRC" add -A
g "$SRC" commit -qm "notes, sub, up"
c1=$(g "$SRC" rev-parse HEAD)
# The good series, made now, applied first.
g "$SRC" checkout -qb topic
sed -i 's/^note 5$/note five/' "$SRC/notes.txt"
g "$SRC" commit -qam "notes: spell out five"
g "$SRC" format-patch -q -o "$PW_TMP/good" -1
g "$SRC" checkout -q master

OUTSIDE=$PW_TMP/outside
mkdir -p "$OUTSIDE"
daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
mkdir -p "$PW_TMP/tmpd"
export TMPDIR=$PW_TMP/tmpd
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
MIRROR=$PW_DIR/git/app.git

post() {
	curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $(cat "$PW_ADMIN")" --data-binary "@$1" \
	    "$PW_URL/api/v1/series"
}
state_of() { sql "SELECT state FROM series WHERE id = $1"; }
settled() { case $(state_of "$1") in applied|failed|incomplete) return 0;; esac; return 1; }
# upload NAME FILE: posts it, waits, sets $id, $st, $err (from the API).
upload() {
	local code
	code=$(post "$2")
	id=$(jfield series.0 <"$PW_TMP/body")
	st= err=
	if [ "$code" != 202 ] || ! wait_until 60 settled "$id"; then
		fail "$1" "upload $code: $(head -c 300 "$PW_TMP/body")"
		return 1
	fi
	http GET "/api/v1/series/$id" >/dev/null
	st=$(jfield series.state <"$PW_TMP/body")
	err=$(jfield series.error <"$PW_TMP/body")
	echo "# $1: $st: $err"
}
# refused NAME FILE WORD...: failed, and the error has every WORD.
refused() {
	local name=$1 file=$2 w
	shift 2
	upload "$name" "$file" || return
	[ "$st" = failed ] || { fail "$name" "state $st"; return; }
	for w in "$@"; do
		[[ $err == *"$w"* ]] || { fail "$name" "error lacks '$w': $err"; return; }
	done
	pass "$name"
}
# mail ID SUBJECT < DIFF: one patch message.
mail() {
	printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
	printf 'From: Eve <eve@example.org>\nDate: Mon, 2 Dec 2024 10:00:00 +0000\n'
	printf 'Subject: %s\nMessage-Id: <%s@x>\n' "$2" "$1"
	[ -n "${3:-}" ] && printf 'In-Reply-To: <%s@x>\n' "$3"
	printf '\nhostile\n---\n'
	cat
	printf '\n'
}

upload good "$PW_TMP/good/"*.patch && [ "$st" = applied ] && pass good_applied ||
    fail good_applied "$st $err"
good_id=$id
good_tip=$(sql "SELECT commit_id FROM series WHERE id = $good_id")
# The mirror's own files a .git/ patch would aim at (refs and FETCH_HEAD
# move with every fetch and series, by design).
mirror_sums() { md5sum "$MIRROR/config" "$MIRROR/HEAD"; ls -A "$MIRROR/hooks" 2>/dev/null; }
cfg_before=$(mirror_sums)

mail dotgit "[PATCH] write the mirror's config" >"$PW_TMP/p-dotgit.mbox" <<'EOF'
diff --git a/.git/config b/.git/config
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/.git/config
@@ -0,0 +1,2 @@
+[core]
+	hooksPath = /tmp
EOF
refused dotgit_refused "$PW_TMP/p-dotgit.mbox" '.git' 'component'

mail abs "[PATCH] an absolute path" >"$PW_TMP/p-abs.mbox" <<EOF
diff --git a/$OUTSIDE/pwevil-abs b/$OUTSIDE/pwevil-abs
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/$OUTSIDE/pwevil-abs
@@ -0,0 +1 @@
+owned
EOF
# ("a/" + "/tmp/...": the path is "/tmp/...", absolute.)
refused abs_refused "$PW_TMP/p-abs.mbox" 'absolute path'

mail dotdot "[PATCH] climb out" >"$PW_TMP/p-dotdot.mbox" <<'EOF'
diff --git a/sub/../../pwevil-dotdot b/sub/../../pwevil-dotdot
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/sub/../../pwevil-dotdot
@@ -0,0 +1 @@
+owned
EOF
refused dotdot_refused "$PW_TMP/p-dotdot.mbox" '".."'

# A symlink to outside, then a write through it: refused at 1/2.
{
	mail esc0 "[PATCH 0/2] escape by symlink" </dev/null
	mail esc1 "[PATCH 1/2] add a link" esc0 <<EOF
diff --git a/esc b/esc
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/esc
@@ -0,0 +1 @@
+../../../../../../../../..$OUTSIDE
\ No newline at end of file
EOF
	mail esc2 "[PATCH 2/2] write through it" esc0 <<'EOF'
diff --git a/esc/pwevil-link b/esc/pwevil-link
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/esc/pwevil-link
@@ -0,0 +1 @@
+owned
EOF
} >"$PW_TMP/p-esc.mbox"
refused symlink_out_refused "$PW_TMP/p-esc.mbox" 'patch 1/2' 'point out of the tree'

# A link inside the tree is fine; writing through it is not (2/2).
lnk_id=$(printf sub | git hash-object --stdin | cut -c1-7)
{
	mail in0 "[PATCH 0/2] through a link" </dev/null
	mail in1 "[PATCH 1/2] add a link" in0 <<EOF
diff --git a/lnk b/lnk
new file mode 120000
index 0000000..$lnk_id
--- /dev/null
+++ b/lnk
@@ -0,0 +1 @@
+sub
\ No newline at end of file
EOF
	mail in2 "[PATCH 2/2] write through it" in0 <<'EOF'
diff --git a/lnk/pwevil-through b/lnk/pwevil-through
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/lnk/pwevil-through
@@ -0,0 +1 @@
+owned
EOF
} >"$PW_TMP/p-through.mbox"
refused symlink_through_refused "$PW_TMP/p-through.mbox" 'patch 2/2' 'through the symlink "lnk"'

# Through the base tree's own symlink (up -> ..).
mail base "[PATCH] through upstream's link" >"$PW_TMP/p-base.mbox" <<'EOF'
diff --git a/up/pwevil-base b/up/pwevil-base
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/up/pwevil-base
@@ -0,0 +1 @@
+owned
EOF
refused base_symlink_refused "$PW_TMP/p-base.mbox" 'through the symlink "up"'

# A hunk of 100,001 lines (the cap is 100,000).
{
	printf 'diff --git a/big.txt b/big.txt\nnew file mode 100644\n'
	printf 'index 0000000..3333333\n--- /dev/null\n+++ b/big.txt\n'
	printf '@@ -0,0 +1,100001 @@\n'
	seq -f '+%g' 1 100001
} | mail huge "[PATCH] a huge hunk" >"$PW_TMP/p-huge.mbox"
refused huge_hunk_refused "$PW_TMP/p-huge.mbox" 'hunk 1 of "big.txt"' '100001 new lines' '100000 allowed'

# A patch libgit2 cannot apply exactly (master moved under it), which
# would go to git am --3way, with a ../ file in it: refused by the same
# check, before either applier (no "git am" in the reason).
sed -i '1i top 1\ntop 2\ntop 3' "$SRC/notes.txt"
g "$SRC" commit -qam "notes: three lines on top"
c2=$(g "$SRC" rev-parse HEAD)
wait_tip master "$c2" 30 || fail tip_moved "$(cat "$PW_TMP/trees.json")"
{
	sed -n '/^diff --git/,$p' "$PW_TMP/good/"*.patch | sed '/^-- $/,$d'
	cat <<'EOF'
diff --git a/../pwevil-fallback b/../pwevil-fallback
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/../pwevil-fallback
@@ -0,0 +1 @@
+owned
EOF
} | mail fb "[PATCH] needs 3way, climbs out" >"$PW_TMP/p-fb.mbox"
refused fallback_refused "$PW_TMP/p-fb.mbox" '".."'
[[ $err != *"git am"* ]] && pass fallback_not_reached || fail fallback_not_reached "$err"
# ... and the same patch without the ../ file does go through git am.
{
	sed -n '/^diff --git/,$p' "$PW_TMP/good/"*.patch | sed '/^-- $/,$d'
} | mail fb2 "[PATCH] needs 3way" >"$PW_TMP/p-fb2.mbox"
upload fallback_control "$PW_TMP/p-fb2.mbox" &&
    [ "$st" = applied ] && [ -n "$(sql "SELECT fallback FROM series WHERE id = $id")" ] &&
    pass fallback_control || fail fallback_control "$st $err"

# Nothing outside the mirror: no pwevil-* file anywhere under the test's
# directory or /tmp, the link's target is still empty, the mirror's own
# files are as they were, and no scratch worktree is left.
found=$(find "$PW_TMP" /tmp -name 'pwevil*' 2>/dev/null | grep -v '\.mbox$')
[ -z "$found" ] && [ -z "$(ls -A "$OUTSIDE")" ] && pass nothing_outside ||
    fail nothing_outside "$found $(ls -A "$OUTSIDE")"
[ "$(mirror_sums)" = "$cfg_before" ] &&
    [ ! -e "$MIRROR/.git" ] && pass mirror_files_untouched || fail mirror_files_untouched "$(ls -la "$MIRROR")"
[ -z "$(ls "$PW_TMP/tmpd" | grep '^perfwatch-am')" ] && pass no_scratch_left ||
    fail no_scratch_left "$(ls "$PW_TMP/tmpd")"
# What was accepted before is still there.
[ "$(state_of "$good_id")" = applied ] &&
    [ "$(sql "SELECT commit_id FROM series WHERE id = $good_id")" = "$good_tip" ] &&
    pass good_kept || fail good_kept "$(state_of "$good_id")"
[ "$(http GET /healthz)" = 200 ] && pass still_serving || fail still_serving "$(cat "$PW_TMP/body")"
stop_pid "$PW_DAEMON_PID"
finish
