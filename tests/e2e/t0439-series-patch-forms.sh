#!/usr/bin/env bash
# check: parallel
# Every patch form `git am` takes, checked against real `git am`: each
# mbox is posted to POST /api/v1/series and fed to `git am` in a clone
# of the same tree; the series must apply and its tip must have the
# tree git am made (and, where the form touches it, the same commit
# message body).  No runner, no job: nothing is measured.
#   quilt       "Index:" + "--- linux.orig/P" "+++ linux/P" (diff -u
#               output, no "diff --git"), a new file from /dev/null
#   diff_rN     `diff -ruN` of two directories: a new file as an epoch
#               time, no /dev/null
#   tags        [RFC PATCH net-next RESEND v3 1/2]-style tags and a
#               Subject folded over lines by format-patch
#   base64, qp  bodies in base64 and quoted-printable
#   crlf        a whole mbox in CRLF
#   from_lines  a message line "From the start ..." (no separator), and
#               the mboxrd form (">From ", git am --patch-format=mboxrd)
#   reroll      "[PATCH v2 2/3]" in reply to v1's 2/3: a v2 series of
#               v1's 1/3 and 3/3 with the new 2/3 (as b4 assembles it)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/app
src_init "$SRC"
mkdir -p "$SRC/lib"
printf 'one\ntwo\nthree\n' >"$SRC/lib/c.c"
g "$SRC" add -A
g "$SRC" commit -qm "more files"
c1=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }

post_mbox() {	# post_mbox FILE: the series ids, one a line
	curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $(cat "$PW_ADMIN")" \
	    -H 'Content-Type: application/mbox' --data-binary "@$1" \
	    "$PW_URL/api/v1/series?tree=app&branch=master" >"$PW_TMP/code"
	python3 -c 'import json,sys; [print(i) for i in json.load(open(sys.argv[1])).get("series", [])]' "$PW_TMP/body"
}
series_json() {	# series_json ID: waits until it is no longer waiting
	for _ in $(seq 300); do
		curl -s --max-time 10 "$PW_URL/api/v1/series/$1" >"$PW_TMP/s.json"
		case $(jfield series.state <"$PW_TMP/s.json") in
		waiting|applying) sleep 0.2 ;;
		*) return 0 ;;
		esac
	done
}
am_tree() {	# am_tree NAME MBOX [git am options]: tree of git am's HEAD
	local d=$PW_TMP/am-$1 mbox=$2
	shift 2
	rm -rf "$d"
	git clone -q --no-checkout "$SRC" "$d"
	g "$d" checkout -q "$c1"
	g "$d" am -q "$@" "$mbox" >"$d.log" 2>&1 || { echo "git-am-failed"; return; }
	g "$d" rev-parse 'HEAD^{tree}'
}
# check_form NAME MBOX [git am options]: the daemon's tip tree is git am's
check_form() {
	local name=$1 mbox=$2 want sid got
	shift 2
	want=$(am_tree "$name" "$mbox" "$@")
	sid=$(post_mbox "$mbox" | tail -1)
	if [ -z "$sid" ]; then
		fail "$name" "no series: $(cat "$PW_TMP/code") $(cat "$PW_TMP/body")"
		return
	fi
	series_json "$sid"
	got=$(jfield series.commit_sha <"$PW_TMP/s.json")
	got=$(git --git-dir="$PW_DIR/git/app.git" rev-parse "$got^{tree}" 2>/dev/null)
	if [ "$want" != git-am-failed ] && [ -n "$got" ] && [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "git am $want, perfwatch $got: $(cat "$PW_TMP/s.json")"
	fi
	LAST_SID=$sid
}
msg_hdr() {	# msg_hdr FROM SUBJECT ID [IN-REPLY-TO]
	printf 'From %s Mon Sep 17 00:00:00 2001\nFrom: Q Uilt <q@example.org>\n' "$3"
	printf 'Date: Tue, 1 Dec 2026 10:00:00 +0000\nMessage-Id: <%s@example.org>\n' "$3"
	[ -n "${4:-}" ] && printf 'In-Reply-To: <%s@example.org>\nReferences: <%s@example.org>\n' "$4" "$4"
	printf 'Subject: %s\n\n' "$2"
}

# quilt: Index lines, linux.orig/ and linux/ prefixes, a new file.
Q=$PW_TMP/q
mkdir -p "$Q/linux.orig" "$Q/linux"
cp -r "$SRC/mm" "$SRC/lib" "$Q/linux.orig/"
cp -r "$SRC/mm" "$SRC/lib" "$Q/linux/"
echo 'int b;' >>"$Q/linux/mm/a.c"
sed -i 's/two/TWO/' "$Q/linux/lib/c.c"
echo 'int fresh;' >"$Q/linux/mm/fresh.c"
{
	msg_hdr x "[PATCH] mm: a quilt patch" quilt1
	printf 'Sent by quilt, no --- line.\n\nSigned-off-by: Q Uilt <q@example.org>\n\n'
	for f in mm/a.c lib/c.c; do
		printf 'Index: linux/%s\n===================================================================\n' "$f"
		(cd "$Q" && diff -u "linux.orig/$f" "linux/$f")
	done
	printf 'Index: linux/mm/fresh.c\n===================================================================\n'
	printf -- '--- /dev/null\n+++ linux/mm/fresh.c\n@@ -0,0 +1 @@\n+int fresh;\n'
} >"$PW_TMP/quilt.mbox"
check_form quilt "$PW_TMP/quilt.mbox"
# The commit message stops at "Index:", as git am's does.
git --git-dir="$PW_DIR/git/app.git" log -1 --format=%b "$(jfield series.commit_sha <"$PW_TMP/s.json")" >"$PW_TMP/pw.msg"
g "$PW_TMP/am-quilt" log -1 --format=%b >"$PW_TMP/am.msg"
cmp -s "$PW_TMP/pw.msg" "$PW_TMP/am.msg" && pass quilt_message ||
    fail quilt_message "$(diff "$PW_TMP/am.msg" "$PW_TMP/pw.msg")"

# diff -ruN: the new file's old side is the epoch, not /dev/null.
echo 'int other;' >"$Q/linux/mm/other.c"
rm "$Q/linux/mm/fresh.c"
{
	msg_hdr x "[PATCH] mm: diff -ruN" ruN1
	printf 'Plain diff.\n---\n'
	(cd "$Q" && diff -ruN linux.orig linux)
} >"$PW_TMP/ruN.mbox"
if grep -q '^--- linux.orig/mm/other.c.*19[67]' "$PW_TMP/ruN.mbox" &&
    ! grep -q '^diff --git' "$PW_TMP/ruN.mbox"; then
	check_form diff_rN "$PW_TMP/ruN.mbox"
else
	fail diff_rN "diff -ruN wrote no epoch-dated new file"
fi

# Tags in any order and a Subject format-patch folds.
g "$SRC" checkout -qb topic
commit "$SRC" mm/a.c "mm: memcontrol: a title long enough that git format-patch has to fold the Subject header over two lines" >/dev/null
commit "$SRC" lib/c.c "lib: second" >/dev/null
g "$SRC" format-patch -q --thread -v3 --subject-prefix="RFC PATCH net-next RESEND" \
    -o "$PW_TMP/tags" "$c1..topic"
cat "$PW_TMP"/tags/*.patch >"$PW_TMP/tags.mbox"
grep -A1 '^Subject: ' "$PW_TMP/tags.mbox" | grep -q '^ ' &&
    grep -q '^Subject: \[RFC PATCH net-next RESEND v3 1/2\]' "$PW_TMP/tags.mbox" ||
    fail tags_fixture "$(grep -A1 '^Subject' "$PW_TMP/tags.mbox")"
check_form tags "$PW_TMP/tags.mbox"
[ "$(jfield series.version <"$PW_TMP/s.json")" = 3 ] &&
    [ "$(jfield patches.0.subject <"$PW_TMP/s.json")" = "mm: memcontrol: a title long enough that git format-patch has to fold the Subject header over two lines" ] &&
    pass tags_read || fail tags_read "$(cat "$PW_TMP/s.json")"

# base64 and quoted-printable bodies (a non-ASCII line makes QP encode).
g "$SRC" checkout -q -b enc "$c1"
printf 'caf\xc3\xa9 = ok\n' >>"$SRC/mm/a.c"
g "$SRC" commit -qam "mm: an accent"
# git format-patch writes 8bit; a mailer re-encodes the body.
reencode() {	# reencode base64|quoted-printable <MBOX
	python3 -c '
import base64, quopri, sys
raw = sys.stdin.buffer.read()
head, body = raw.split(b"\n\n", 1)
first, rest = head.split(b"\n", 1)
lines = [l for l in rest.split(b"\n") if not l.lower().startswith(b"content-transfer-encoding:")]
if sys.argv[1] == "base64":
    enc = base64.encodebytes(body)
else:
    enc = quopri.encodestring(body)
lines.append(b"Content-Transfer-Encoding: " + sys.argv[1].encode())
sys.stdout.buffer.write(first + b"\n" + b"\n".join(lines) + b"\n\n" + enc)
' "$1"
}
g "$SRC" format-patch -q -1 --stdout | reencode base64 >"$PW_TMP/b64.mbox"
g "$SRC" format-patch -q -1 --stdout --subject-prefix="PATCH qp" |
    reencode quoted-printable >"$PW_TMP/qp.mbox"
grep -q '^Content-Transfer-Encoding: base64' "$PW_TMP/b64.mbox" &&
    grep -q '=C3=A9' "$PW_TMP/qp.mbox" || fail enc_fixtures "not encoded"
check_form base64 "$PW_TMP/b64.mbox"
check_form qp "$PW_TMP/qp.mbox"

# A CRLF mbox (git am drops the CRs: am.keepcr is off).
g "$SRC" checkout -q -b crlf "$c1"
commit "$SRC" lib/c.c "lib: from a CRLF mailer" >/dev/null
g "$SRC" format-patch -q -1 --stdout | sed 's/$/\r/' >"$PW_TMP/crlf.mbox"
check_form crlf "$PW_TMP/crlf.mbox"

# "From " at the start of a message line; then the mboxrd form.
g "$SRC" checkout -q -b fromline "$c1"
echo 'int c;' >>"$SRC/mm/a.c"
g "$SRC" commit -qam "mm: from lines" -m "From the start this was wrong.
>From here on it is right."
g "$SRC" format-patch -q -1 --stdout >"$PW_TMP/from.mbox"
check_form from_lines "$PW_TMP/from.mbox"
git --git-dir="$PW_DIR/git/app.git" log -1 --format=%b "$(jfield series.commit_sha <"$PW_TMP/s.json")" >"$PW_TMP/pw.msg"
g "$PW_TMP/am-from_lines" log -1 --format=%b >"$PW_TMP/am.msg"
# The line that is no separator stays in the message; ">From " is read
# the mboxrd way (one '>' less, below), which git am does only when told.
[ "$(grep '^From the start' "$PW_TMP/pw.msg")" = "$(grep '^From the start' "$PW_TMP/am.msg")" ] &&
    grep -q '^From the start this was wrong.$' "$PW_TMP/pw.msg" &&
    pass from_lines_message || fail from_lines_message "$(diff "$PW_TMP/am.msg" "$PW_TMP/pw.msg")"
g "$SRC" format-patch -q -1 --stdout --pretty=mboxrd --subject-prefix="PATCH rd" >"$PW_TMP/rd.mbox"
grep -q '^>>From here' "$PW_TMP/rd.mbox" || fail mboxrd_fixture "no >>From line"
check_form mboxrd "$PW_TMP/rd.mbox" --patch-format=mboxrd
git --git-dir="$PW_DIR/git/app.git" log -1 --format=%b "$(jfield series.commit_sha <"$PW_TMP/s.json")" >"$PW_TMP/pw.msg"
g "$PW_TMP/am-mboxrd" log -1 --format=%b >"$PW_TMP/am.msg"
cmp -s "$PW_TMP/pw.msg" "$PW_TMP/am.msg" && pass mboxrd_message ||
    fail mboxrd_message "$(diff "$PW_TMP/am.msg" "$PW_TMP/pw.msg")"

# A partial reroll: v1 0/3..3/3, then v2 2/3 answering v1's 2/3.
g "$SRC" checkout -q -b v1 "$c1"
commit "$SRC" mm/a.c "mm: one" >/dev/null
commit "$SRC" lib/c.c "lib: two" >/dev/null
commit "$SRC" README "docs: three" >/dev/null
g "$SRC" format-patch -q --cover-letter --thread -o "$PW_TMP/v1" "$c1..v1"
p2id=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$PW_TMP"/v1/0002-*.patch)
g "$SRC" checkout -q -b v2 v1~2
echo 'int two_better;' >>"$SRC/lib/c.c"
g "$SRC" commit -qam "lib: two, better"
g "$SRC" format-patch -q -v2 --start-number 2 --in-reply-to="$p2id" \
    --subject-prefix=PATCH -1 --stdout |
    sed 's|^Subject: \[PATCH v2\]|Subject: [PATCH v2 2/3]|' >"$PW_TMP/v2-2.patch"
grep -q '^Subject: \[PATCH v2 2/3\]' "$PW_TMP/v2-2.patch" || fail reroll_fixture "$(grep Subject "$PW_TMP/v2-2.patch")"
cat "$PW_TMP"/v1/*.patch "$PW_TMP/v2-2.patch" >"$PW_TMP/reroll.mbox"
# What b4 would hand git am: v1's 1/3, the v2 2/3, v1's 3/3.
cat "$PW_TMP"/v1/0001-*.patch "$PW_TMP/v2-2.patch" "$PW_TMP"/v1/0003-*.patch >"$PW_TMP/b4.mbox"
want=$(am_tree reroll "$PW_TMP/b4.mbox")
post_mbox "$PW_TMP/reroll.mbox" >"$PW_TMP/ids"
ok=0
for sid in $(cat "$PW_TMP/ids"); do
	series_json "$sid"
	[ "$(jfield series.version <"$PW_TMP/s.json")" = 2 ] || continue
	got=$(git --git-dir="$PW_DIR/git/app.git" rev-parse "$(jfield series.commit_sha <"$PW_TMP/s.json")^{tree}" 2>/dev/null)
	[ "$want" != git-am-failed ] && [ "$got" = "$want" ] &&
	    [ "$(jfield series.state <"$PW_TMP/s.json")" = applied ] && ok=1
done
[ "$(wc -l <"$PW_TMP/ids")" = 2 ] && [ $ok = 1 ] && pass reroll ||
    fail reroll "ids $(cat "$PW_TMP/ids"), want $want: $(cat "$PW_TMP/s.json")"

finish
