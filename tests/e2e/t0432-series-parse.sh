#!/usr/bin/env bash
# check: parallel
# `perfwatch series parse`, no daemon: how a thread is read.
#  1. A `git format-patch --cover-letter --thread -v2 --base=...` series
#     with the subject prefix "PATCH cgroup/for-7.0-fixes" (a branch tag
#     with a slash): every message's id, tags and role, the series'
#     title, version, count, base-commit and branch tag.
#  2. With --config/--inbox: the inbox's tags map sends it to tree
#     cgroup, branch for-7.0-fixes; an inbox without the tag keeps its
#     default; a subjects filter that matches nothing says so.
#  3. Patch 2 removed: the series is incomplete and names the missing
#     patch; a lone reply and a mail without PATCH say why they are ignored.
#  4. Bad input: a malformed mbox is refused naming its line.
#  5. The real cgroups archive (3,000 messages): its figures are printed,
#     and Tejun Heo's "[PATCHSET cgroup/for-5.5]" series is found whole
#     with its slash tag.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_git.sh"

PW=$PW_BIN/perfwatch
SRC=$PW_TMP/src
src_init "$SRC"
base=$(g "$SRC" rev-parse HEAD)
commit "$SRC" mm/a.c "mm: one" >/dev/null
commit "$SRC" mm/b.c "mm: two" >/dev/null
commit "$SRC" mm/c.c "mm: three" >/dev/null
g "$SRC" format-patch -q --cover-letter --thread -v2 --base="$base" \
    --subject-prefix="PATCH cgroup/for-7.0-fixes" -o "$PW_TMP/out" \
    "$base..master"
cat "$PW_TMP"/out/*.patch >"$PW_TMP/s.mbox"

py() {	# py FILE EXPR: EXPR over j (the parsed JSON), printed
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

if "$PW" series parse --json "$PW_TMP/s.mbox" >"$PW_TMP/s.json" 2>"$PW_TMP/err"; then
	pass parse_runs
else
	fail parse_runs "$(cat "$PW_TMP/err")"
	finish
fi
got=$(py "$PW_TMP/s.json" '[(m["role"], m["tags"]["version"], m["tags"]["seq"], m["tags"]["total"], m["tags"]["branch"]) for m in j["messages"]]')
want="[('cover', 2, 0, 3, 'cgroup/for-7.0-fixes'), ('patch', 2, 1, 3, 'cgroup/for-7.0-fixes'), ('patch', 2, 2, 3, 'cgroup/for-7.0-fixes'), ('patch', 2, 3, 3, 'cgroup/for-7.0-fixes')]"
[ "$got" = "$want" ] && pass message_tags || fail message_tags "$got"
got=$(py "$PW_TMP/s.json" '(len(j["series"]), j["series"][0]["title"], j["series"][0]["version"], j["series"][0]["total"], j["series"][0]["complete"], j["series"][0]["base_commit"], j["series"][0]["branch_tag"], j["series"][0]["picked"], j["series"][0]["cover"]["line"])')
want="(1, '*** SUBJECT HERE ***', 2, 3, True, '$base', 'cgroup/for-7.0-fixes', True, 2)"
[ "$got" = "$want" ] && pass series_fields || fail series_fields "$got"
# Threading: each patch answers the cover letter by its Message-ID.
got=$(py "$PW_TMP/s.json" 'all(m["in_reply_to"] == j["messages"][0]["message_id"] for m in j["messages"][1:]) and j["messages"][0]["message_id"] is not None')
[ "$got" = True ] && pass threaded || fail threaded "$got"
"$PW" series parse "$PW_TMP/s.mbox" >"$PW_TMP/s.txt"
grep -q '^series 1: "\*\*\* SUBJECT HERE \*\*\*" v2 by Cy Committer <cy@example.org>, 3/3 patches$' "$PW_TMP/s.txt" &&
    grep -q "base-commit: $base; branch tag: cgroup/for-7.0-fixes" "$PW_TMP/s.txt" &&
    grep -q '^summary: 4 messages, 3 patch mails, 1 series (1 complete, 1 picked up), 3 patch mails in a series, 0 orphans$' "$PW_TMP/s.txt" &&
    pass text_output || fail text_output "$(cat "$PW_TMP/s.txt")"

# 2. The inbox's tags map.
cat >"$PW_TMP/d.yaml" <<YAML
listen: 127.0.0.1:0
database: $PW_TMP/db.sqlite
mirrors: $PW_TMP/git
trees:
  - {name: mm, url: $SRC, branches: [mm-new]}
  - {name: cgroup, url: $SRC, branches: [for-next, for-7.0-fixes]}
inboxes:
  - name: cgroups
    url: $SRC
    tree: mm
    tags:
      cgroup/for-7.0-fixes: {tree: cgroup, branch: for-7.0-fixes}
      mm-unstable: {branch: mm-new}
  - {name: plain, url: $SRC, tree: mm}
  - {name: picky, url: $SRC, tree: mm, subjects: [hugetlb]}
YAML
"$PW" series parse --json --config "$PW_TMP/d.yaml" --inbox cgroups \
    "$PW_TMP/s.mbox" >"$PW_TMP/r.json" 2>"$PW_TMP/err"
got=$(py "$PW_TMP/r.json" '(j["series"][0]["route"], j["series"][0]["picked"])')
want="({'branch': 'for-7.0-fixes', 'tag': 'cgroup/for-7.0-fixes', 'tree': 'cgroup'}, True)"
[ "$got" = "$want" ] && pass route_by_tag || fail route_by_tag "$got $(cat "$PW_TMP/err")"
"$PW" series parse --json --config "$PW_TMP/d.yaml" --inbox plain \
    "$PW_TMP/s.mbox" >"$PW_TMP/r.json"
got=$(py "$PW_TMP/r.json" 'j["series"][0]["route"]')
[ "$got" = "{'branch': 'mm-new', 'tag': None, 'tree': 'mm'}" ] &&
    pass route_default || fail route_default "$got"
"$PW" series parse --json --config "$PW_TMP/d.yaml" --inbox picky \
    "$PW_TMP/s.mbox" >"$PW_TMP/r.json"
got=$(py "$PW_TMP/r.json" '(j["series"][0]["picked"], j["series"][0]["reason"])')
[ "$got" = "(False, \"no subject contains one of inbox picky's subjects keywords\")" ] &&
    pass subjects_filter || fail subjects_filter "$got"
"$PW" series parse --config "$PW_TMP/d.yaml" --inbox nosuch "$PW_TMP/s.mbox" \
    >/dev/null 2>"$PW_TMP/err"
[ $? = 1 ] && grep -q "no inbox named 'nosuch'" "$PW_TMP/err" &&
    pass unknown_inbox || fail unknown_inbox "$(cat "$PW_TMP/err")"

# 3. Incomplete; ignored mail says why.
{
	cat "$PW_TMP"/out/v2-0000-*.patch "$PW_TMP"/out/v2-0001-*.patch \
	    "$PW_TMP"/out/v2-0003-*.patch
	printf 'From x Mon Sep 17 00:00:00 2001\nFrom: R <r@x>\nMessage-ID: <r1@x>\n'
	printf 'Subject: Re: [PATCH v2 1/3] mm: one\n\nLooks good.\n'
	printf 'From y Mon Sep 17 00:00:00 2001\nFrom: Q <q@x>\nMessage-ID: <q1@x>\n'
	printf 'Subject: memcg question\n\nWhy?\n'
} >"$PW_TMP/inc.mbox"
"$PW" series parse --json "$PW_TMP/inc.mbox" >"$PW_TMP/inc.json"
got=$(py "$PW_TMP/inc.json" '(j["series"][0]["complete"], j["series"][0]["missing"], j["series"][0]["picked"], j["series"][0]["reason"].split(":")[0], [m["reason"] for m in j["messages"][3:]])')
want="(False, [2], False, 'incomplete', ['a reply (Re:), never a patch', 'no PATCH tag in the subject'])"
[ "$got" = "$want" ] && pass incomplete_and_ignored || fail incomplete_and_ignored "$got"

# 4. Bad input.
printf 'From x Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\nSubject: ok\n\nbody\nFrom y Mon Sep 17 00:00:00 2001\nno header block here\n' >"$PW_TMP/bad.mbox"
"$PW" series parse "$PW_TMP/bad.mbox" >/dev/null 2>"$PW_TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "bad.mbox: mbox line 7" "$PW_TMP/err" &&
    pass bad_mbox_line || fail bad_mbox_line "rc $rc: $(cat "$PW_TMP/err")"
"$PW" series parse "$PW_TMP/none.mbox" >/dev/null 2>"$PW_TMP/err"
[ $? = 1 ] && grep -q "none.mbox" "$PW_TMP/err" && pass missing_file ||
    fail missing_file "$(cat "$PW_TMP/err")"
# A directory is no empty mbox: the read error, with the path.
mkdir -p "$PW_TMP/adir"
"$PW" series parse --json "$PW_TMP/adir" >"$PW_TMP/adir.out" 2>"$PW_TMP/err"
[ $? = 1 ] && grep -q "adir: Is a directory" "$PW_TMP/err" && [ ! -s "$PW_TMP/adir.out" ] &&
    pass directory_read_error || fail directory_read_error "$(cat "$PW_TMP/err" "$PW_TMP/adir.out")"
"$PW" series parse >/dev/null 2>&1
[ $? = 2 ] && pass usage || fail usage "no exit 2"

# 5. The real archive, as one mbox (mboxrd: "From " lines in bodies
#    get a '>').
BUNDLE=${PERFWATCH_FIXTURES:-tests/fixtures}/inbox/cgroups-2019.bundle
if [ ! -f "$BUNDLE" ]; then
	echo "SKIP real_archive: no $BUNDLE"
	finish
fi
git clone -q --bare "$BUNDLE" "$PW_TMP/inbox.git"
git -C "$PW_TMP/inbox.git" log --reverse --format=%H:m |
    git -C "$PW_TMP/inbox.git" cat-file --batch |
    python3 -c '
import re, sys
out = sys.stdout.buffer
inp = sys.stdin.buffer
while True:
    hdr = inp.readline()
    if not hdr:
        break
    size = int(hdr.split()[2])
    data = inp.read(size)
    inp.read(1)
    out.write(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n")
    out.write(re.sub(rb"(?m)^(>*From )", rb">\1", data))
    if not data.endswith(b"\n"):
        out.write(b"\n")
' >"$PW_TMP/archive.mbox"
if "$PW" series parse --json "$PW_TMP/archive.mbox" >"$PW_TMP/a.json" 2>"$PW_TMP/err"; then
	pass archive_parses
else
	fail archive_parses "$(cat "$PW_TMP/err")"
	finish
fi
echo "# archive: $(py "$PW_TMP/a.json" 'j["summary"]')"
got=$(py "$PW_TMP/a.json" '[(s["total"], s["found"], s["complete"], s["branch_tag"], s["cover"] is not None) for s in j["series"] if s["message_id"] == "20191104235944.3470866-1-tj@kernel.org"]')
[ "$got" = "[(10, 10, True, 'cgroup/for-5.5', True)]" ] &&
    pass archive_patchset_slash_tag || fail archive_patchset_slash_tag "$got"
# Every message is accounted for: in a series, or ignored with a reason;
# the summary agrees with the rows.
got=$(py "$PW_TMP/a.json" '(j["summary"]["messages"] == len(j["messages"]) == 3000, all((m["series"] is None) == (m["reason"] is not None) for m in j["messages"]), j["summary"]["in_series"] == sum(1 for m in j["messages"] if m["role"] == "patch"), j["summary"]["series"] == len(j["series"]))')
[ "$got" = "(True, True, True, True)" ] && pass archive_accounted ||
    fail archive_accounted "$got"
finish
