#!/usr/bin/env bash
# check: parallel
# A small mail, a huge tree: patches are applied under caps on what they
# write (docs/API.md, "Series").  One upload holds three series:
#   - a good one, applied;
#   - one whose 2nd patch is a binary literal of 256 MiB of zeros (a
#     mail of 350 KB): refused before anything inflates it, the error
#     naming the patch, the file and the cap;
#   - one whose patch is a binary delta of 2 KB that would make an
#     existing file 80 MiB: it passes the declared-size check, so it
#     reaches git am, whose file-size limit refuses it.
# A small binary patch still applies (through git am), the series
# applied before the upload is untouched, the daemon's memory stays
# small and nothing is left in the scratch directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

# The tree: notes.txt of ten lines, the base of the delta below.  git
# am's scratch worktrees go to $PW_TMP/tmpd, checked empty at the end.
SRC=$PW_TMP/app
export TMPDIR=$PW_TMP/tmpd
mkdir -p "$TMPDIR"
src_init "$SRC"
seq -f 'note %g' 1 10 >"$SRC/notes.txt"
g "$SRC" add notes.txt && g "$SRC" commit -qm "notes"
notes_sha=$(g "$SRC" rev-parse HEAD:notes.txt)
daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$(g "$SRC" rev-parse HEAD)" ||
    { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }

post() {
	curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $(cat "$PW_ADMIN")" --data-binary "@$1" \
	    "$PW_URL/api/v1/series"
}
state_of() { sql "SELECT state FROM series WHERE id = $1"; }
error_of() { sql "SELECT error FROM series WHERE id = $1"; }
settled() { case $(state_of "$1") in applied|failed|incomplete) return 0;; esac; return 1; }
id_of() { sql "SELECT id FROM series WHERE message_id = '$1'"; }

# The mails: python writes git's binary patch format itself (base85
# lines, zlib data), with full index lines, as git format-patch would.
python3 - "$PW_TMP" "$notes_sha" <<'PY'
import base64, hashlib, sys, zlib
tmp, notes_sha = sys.argv[1], sys.argv[2]
notes = b"".join(b"note %d\n" % i for i in range(1, 11))

def b85_lines(data):
    out = []
    for i in range(0, len(data), 52):
        chunk = data[i:i + 52]
        n = len(chunk)
        c = chr(ord("A") + n - 1) if n <= 26 else chr(ord("a") + n - 27)
        out.append(c + base64.b85encode(chunk, pad=True).decode())
    return "\n".join(out)

def blob_sha(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

def mail(mid, subject, body, irt=None):
    h = ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
         "From: Eve <eve@example.org>\nDate: Mon, 2 Dec 2024 10:00:00 +0000\n"
         "Subject: %s\nMessage-Id: <%s>\n" % (subject, mid))
    if irt:
        h += "In-Reply-To: <%s>\nReferences: <%s>\n" % (irt, irt)
    return h + "\n---\n" + body + "\n"

def text_patch(name, line):
    return ("diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..%s\n"
            "--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+%s\n"
            % (name, name, blob_sha((line + "\n").encode())[:7], name, line))

def literal_patch(name, data):
    z = zlib.compress(data, 9)
    return ("diff --git a/%s b/%s\nnew file mode 100644\nindex %s..%s\n"
            "GIT binary patch\nliteral %d\n%s\n\nliteral 0\nHcmV?d00001\n"
            % (name, name, "0" * 40, blob_sha(data), len(data), b85_lines(z)))

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)

# A delta from notes.txt: the whole file copied again and again.
copies = (80 * 1024 * 1024) // len(notes) + 1
target = notes * copies
delta = varint(len(notes)) + varint(len(target)) + bytes([0x90, len(notes)]) * copies
dz = zlib.compress(delta, 9)
delta_patch = ("diff --git a/notes.txt b/notes.txt\nindex %s..%s 100644\n"
               "GIT binary patch\ndelta %d\n%s\n\nliteral %d\n%s\n\n"
               % (notes_sha, blob_sha(target), len(delta), b85_lines(dz),
                  len(notes), b85_lines(zlib.compress(notes, 9))))

good = mail("good-1@x", "[PATCH] add good.txt", text_patch("good.txt", "good"))
huge = (mail("huge-0@x", "[PATCH 0/2] huge series", "cover", None) +
        mail("huge-1@x", "[PATCH 1/2] add ok.txt", text_patch("ok.txt", "ok"), "huge-0@x") +
        mail("huge-2@x", "[PATCH 2/2] add zeros.bin",
             literal_patch("zeros.bin", b"\0" * (256 * 1024 * 1024)), "huge-0@x"))
grow = mail("grow-1@x", "[PATCH] grow notes", delta_patch)
small = mail("small-1@x", "[PATCH] add small.bin", literal_patch("small.bin", bytes(range(256)) * 16))
open(tmp + "/first.mbox", "w").write(mail("first-1@x", "[PATCH] add first.txt", text_patch("first.txt", "first")))
open(tmp + "/upload.mbox", "w").write(good + huge + grow + small)
PY
ls -la "$PW_TMP/upload.mbox" | awk '{print "# upload of " $5 " bytes"}'

code=$(post "$PW_TMP/first.mbox")
first=$(jfield series.0 <"$PW_TMP/body")
[ "$code" = 202 ] && wait_until 30 settled "$first" && [ "$(state_of "$first")" = applied ] &&
    pass first_applied || fail first_applied "$code $(state_of "$first"): $(error_of "$first")"
first_tip=$(sql "SELECT commit_id FROM series WHERE id = $first")

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PW_DAEMON_PID/status"; }
rss0=$(rss_kb)
t0=$SECONDS
code=$(post "$PW_TMP/upload.mbox")
[ "$code" = 202 ] || fail upload "$code $(cat "$PW_TMP/body")"
all_settled() {
	local m
	for m in good-1@x huge-0@x grow-1@x small-1@x; do
		[ -n "$(id_of "$m")" ] && settled "$(id_of "$m")" || return 1
	done
}
wait_until 120 all_settled || { fail settled "$(sql 'SELECT id, message_id, state, error FROM series')"; show_logs; finish; }
took=$((SECONDS - t0))
rss1=$(rss_kb)
echo "# settled in $took s; daemon RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB"

[ "$(state_of "$(id_of good-1@x)")" = applied ] && pass good_series_applied ||
    fail good_series_applied "$(state_of "$(id_of good-1@x)"): $(error_of "$(id_of good-1@x)")"
huge=$(id_of huge-0@x)
err=$(error_of "$huge")
echo "# huge: $err"
[ "$(state_of "$huge")" = failed ] &&
    [[ $err == *'patch 2/2 "add zeros.bin"'* ]] &&
    [[ $err == *"binary file zeros.bin is 268435456 bytes, more than the 67108864 a patched file may have"* ]] &&
    pass huge_literal_refused_naming_patch_and_cap || fail huge_literal_refused_naming_patch_and_cap "$(state_of "$huge"): $err"
grow=$(id_of grow-1@x)
err=$(error_of "$grow")
echo "# grow: $err"
[ "$(state_of "$grow")" = failed ] && [[ $err == *'patch 1/1 "grow notes"'* ]] &&
    [[ $err == *"git am: "*"67108864"* ]] &&
    pass huge_delta_refused_by_git_am_limits || fail huge_delta_refused_by_git_am_limits "$(state_of "$grow"): $err"
small=$(id_of small-1@x)
[ "$(state_of "$small")" = applied ] && [ -n "$(sql "SELECT fallback FROM series WHERE id = $small")" ] &&
    pass small_binary_applies_with_git_am || fail small_binary_applies_with_git_am "$(state_of "$small"): $(error_of "$small")"
[ "$(state_of "$first")" = applied ] && [ "$(sql "SELECT commit_id FROM series WHERE id = $first")" = "$first_tip" ] &&
    pass earlier_series_kept || fail earlier_series_kept "$(state_of "$first")"
[ "$took" -lt 60 ] && pass refused_quickly || fail refused_quickly "$took s"
[ $(((rss1 - rss0) / 1024)) -lt 200 ] && pass daemon_memory_bounded ||
    fail daemon_memory_bounded "$((rss0 / 1024)) -> $((rss1 / 1024)) MiB"
MIRROR=$PW_DIR/git/app.git
[ -z "$(ls "$PW_TMP/tmpd" | grep '^perfwatch-am')" ] &&
    [ "$(git --git-dir "$MIRROR" worktree list | wc -l)" = 1 ] &&
    pass no_scratch_left || fail no_scratch_left "$(ls "$PW_TMP/tmpd")"
# No refused file is in any commit the mirror's refs reach.
big=$(git --git-dir "$MIRROR" rev-list --objects --all | cut -d' ' -f1 |
    git --git-dir "$MIRROR" cat-file --batch-check='%(objectsize)' | sort -n | tail -1)
[ "${big:-0}" -lt $((64 * 1024 * 1024)) ] && pass no_huge_object_kept || fail no_huge_object_kept "largest object $big bytes"
stop_pid "$PW_DAEMON_PID"
finish
