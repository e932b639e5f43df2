#!/usr/bin/env bash
# check: parallel
# Bad series input is refused with a reason, and nothing else is
# disturbed: a patch writing to ../ paths, a body over the cap, a broken
# message in the middle of an mbox, "../" in the query, and header
# injection through RFC 2047 encoded CR/LF in From and Subject (on a
# patch that also needs the git am --3way fallback, whose mail text
# perfwatch writes itself).  After each, the series recorded so far and
# the queue are as they were, and a good series still applies.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/app
src_init "$SRC"
seq -f 'note %g' 1 10 >"$SRC/notes.txt"
g "$SRC" add notes.txt
g "$SRC" commit -qm "notes"
c1=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
mkdir -p "$PW_TMP/tmpd"
export TMPDIR=$PW_TMP/tmpd
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }

post() {	# post FILE [QUERY]: status; reply in $PW_TMP/body
	curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $(cat "$PW_ADMIN")" --data-binary "@$1" \
	    "$PW_URL/api/v1/series${2:-}"
}
state_of() { sql "SELECT state FROM series WHERE id = $1"; }
settled() { case $(state_of "$1") in applied|failed|incomplete) return 0;; esac; return 1; }
snapshot() { sql "SELECT id, state, coalesce(commit_id, '') FROM series ORDER BY id; SELECT count(*) FROM series_queue"; }

# 1. A patch that writes outside the tree.
cat >"$PW_TMP/dotdot.mbox" <<'MAIL'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Eve <eve@example.org>
Date: Mon, 2 Dec 2024 10:00:00 +0000
Subject: [PATCH] escape the tree
Message-Id: <dotdot@x>

---
diff --git a/../outside.txt b/../outside.txt
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/../outside.txt
@@ -0,0 +1 @@
+owned
MAIL
code=$(post "$PW_TMP/dotdot.mbox")
id=$(jfield series.0 <"$PW_TMP/body")
[ "$code" = 202 ] && wait_until 30 settled "$id"
err=$(sql "SELECT error FROM series WHERE id = $id")
[ "$(state_of "$id")" = failed ] && [ -n "$err" ] &&
    [ ! -e "$PW_DIR/git/outside.txt" ] && [ ! -e "$PW_DIR/outside.txt" ] &&
    [ -z "$(find "$PW_TMP" -name outside.txt)" ] &&
    pass dotdot_refused || fail dotdot_refused "$code state $(state_of "$id"): $err"
echo "# ../ patch: $err"
before=$(snapshot)

# 2. A body over the 8 MiB cap: 413, nothing recorded.
{
	sed -n '1,6p' "$PW_TMP/dotdot.mbox"
	head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' 'a' | fold -w 70
} >"$PW_TMP/huge.mbox"
code=$(post "$PW_TMP/huge.mbox")
[ "$code" = 413 ] && [ "$(snapshot)" = "$before" ] && pass huge_refused ||
    fail huge_refused "$code $(head -c 300 "$PW_TMP/body")"

# 3. A broken message in the middle: 400 naming its line, nothing kept.
g "$SRC" checkout -qb topic
sed -i 's/^note 5$/note five/' "$SRC/notes.txt"
g "$SRC" commit -qam "notes: spell out five"
g "$SRC" format-patch -q -o "$PW_TMP/good" -1
g "$SRC" checkout -q master
{
	cat "$PW_TMP"/good/*.patch
	printf 'From x Mon Sep 17 00:00:00 2001\nthis line is not a header\n\nbody\n'
} >"$PW_TMP/broken.mbox"
lines=$(wc -l <"$PW_TMP"/good/*.patch)
code=$(post "$PW_TMP/broken.mbox")
[ "$code" = 400 ] && grep -q "mbox line $((lines + 2))" "$PW_TMP/body" &&
    [ "$(snapshot)" = "$before" ] && pass broken_refused ||
    fail broken_refused "$code $(cat "$PW_TMP/body") (want line $((lines + 2)))"

# 4. "../" in the query.
code=$(post "$PW_TMP/good/"*.patch "?tree=../app")
[ "$code" = 400 ] && grep -q "unknown tree" "$PW_TMP/body" || fail dotdot_tree "$code $(cat "$PW_TMP/body")"
code2=$(post "$PW_TMP/good/"*.patch "?tree=app&branch=../../etc")
[ "$code" = 400 ] && [ "$code2" = 400 ] && grep -q "not a branch name" "$PW_TMP/body" &&
    [ "$(snapshot)" = "$before" ] && pass dotdot_query ||
    fail dotdot_query "$code2 $(cat "$PW_TMP/body")"

# 5. Header injection, on a patch only git am --3way applies (master
#    got three lines on top since it was written).
sed -i '1i top 1\ntop 2\ntop 3' "$SRC/notes.txt"
g "$SRC" commit -qam "notes: three lines on top"
c2=$(g "$SRC" rev-parse HEAD)
wait_tip master "$c2" 30 || fail tip_moved "$(cat "$PW_TMP/trees.json")"
sed -e 's/^From: .*/From: =?utf-8?q?Eve=0D=0AFrom:_Mallory_<mal@x>?= <eve@example.org>/' \
    -e 's/^Subject: .*/Subject: [PATCH] =?utf-8?q?notes:_five=0D=0AX-Injected:_yes?=/' \
    "$PW_TMP"/good/*.patch >"$PW_TMP/inject.mbox"
code=$(post "$PW_TMP/inject.mbox")
id=$(jfield series.0 <"$PW_TMP/body")
[ "$code" = 202 ] && wait_until 60 settled "$id"
tip=$(sql "SELECT c.sha FROM series s JOIN commits c ON c.id = s.commit_id WHERE s.id = $id")
MIRROR=$PW_DIR/git/app.git
hdr=$(git --git-dir "$MIRROR" cat-file commit "$tip" 2>&1 | sed '/^$/q')
nhdr=$(printf '%s\n' "$hdr" | grep -c .)
ae=$(git --git-dir "$MIRROR" log -1 --format=%ae "$tip" 2>&1)
[ "$(state_of "$id")" = applied ] && [ "$nhdr" = 4 ] &&
    [ "$ae" = eve@example.org ] &&
    ! printf '%s\n' "$hdr" | grep -qi 'injected\|^author Mallory' &&
    [ "$(git --git-dir "$MIRROR" log -1 --format=%cn "$tip")" = perfwatch ] &&
    [ -n "$(sql "SELECT fallback FROM series WHERE id = $id")" ] &&
    pass header_injection_inert ||
    fail header_injection_inert "state $(state_of "$id") $(sql "SELECT error FROM series WHERE id = $id"): $hdr"
http GET "/api/v1/series/$id" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass api_strings_one_line || fail api_strings_one_line "$(head -c 800 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["series"]
for k in ("title", "author"):
    assert "\n" not in s[k] and "\r" not in s[k], (k, s[k])
for p in j["patches"]:
    assert "\n" not in p["subject"] and "\n" not in p["author"], p
PY
code=$(http GET "/series/$id")
[ "$code" = 200 ] && ! grep -q '<from' "$PW_TMP/body" && pass page_renders ||
    fail page_renders "$code"
# Nothing was left behind in the scratch directory.
[ -z "$(ls "$PW_TMP/tmpd" | grep '^perfwatch-am')" ] &&
    [ "$(git --git-dir "$MIRROR" worktree list | wc -l)" = 1 ] &&
    pass no_scratch_left || fail no_scratch_left "$(ls "$PW_TMP/tmpd")"
stop_pid "$PW_DAEMON_PID"
finish
