#!/usr/bin/env bash
# Commands by reply: a one-patch series posted to a public-inbox archive
# the test writes (a git repository, one message a commit, in file m)
# halves a benchmark's score; a real runner measures it and the report
# is mailed to the SMTP test server under the patch.  Then replies to
# that report are posted to the archive, each answered by mail under it
# (In-Reply-To the reply's Message-ID):
#   - a stranger's "#perfwatch invalid": not allowed, nothing changes
#   - the author's unknown command next to a good one: the answer names
#     the bad line, nothing changes
#   - the author's "#perfwatch invalid": the regression is invalid, its
#     note says who; the same Message-ID again: no second answer
#   - a maintainer's "#perfwatch retest runs=3": the pair made again
#   - a maintainer's "#perfwatch bisect": a bisection started by mail
#   - a patch mail that joins no series: the log says why
#   - a reply to a mail that is no report of ours: ignored, no answer
#   - a maintainer's "#perfwatch retest hosts=L,L runs=2": the pair again
#     for hosts with those labels; a malformed one names its line
#   - the author's "#perfwatch test <url> <branch>": the branch's tip
#     measured by the runner against the report's base; a branch the
#     remote lacks and a URL it may not fetch from are refused
#   - every line read recorded once with its sender's address, the line,
#     when, and what it did (the pairs or series it made) or why not: in
#     GET /api/v1/series/{id} ("commands") and on the series page
#     ("Requests by mail"), a hostile line escaped
#   - patch mail in no series (the one answering lost mail, a diff
#     without a [PATCH] tag that real `git am` applies): why, in GET
#     /api/v1/series ("skipped") and on the series page
# Then the daemon again with no alerts: section (no mail to answer by)
# and the inbox's commands_from_anyone: a stranger's "expected" and
# "fixed-by" carried out and recorded, a retest in odd spacing recorded
# in canonical form beside its line, and a Message-ID posted again
# skipped (recorded once, nothing done again) with no answer to key on.
# Before the replies, the series' time to report (posted, seen, applied,
# runs, verdict, mailed) on its page, in GET /api/v1/series/{id}, as
# /metrics histograms, and summarised by GET /api/v1/latency, the series
# list page and
# `perfwatch series latency`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_alerts.sh"

alert_servers_or_skip alerts_commands
SMTP=$PW_TMP/smtp

# The benchmark prints the tree's value, with a little noise.
SRC=$PW_TMP/app
src_init "$SRC"
cat >"$SRC/bench.sh" <<'SH'
v=$(cat "$(dirname "$0")/value")
echo "score=$((v + $$ % 7))"
SH
echo 1000 >"$SRC/value"
g "$SRC" add -A
g "$SRC" commit -qm "bench: a score"
c1=$(g "$SRC" rev-parse HEAD)
g "$SRC" checkout -qb topic
echo 500 >"$SRC/value"
g "$SRC" commit -qam "memcg: halve the score"
g "$SRC" format-patch -q --thread -o "$PW_TMP/out" -1
g "$SRC" checkout -q master
patch_id=$(sed -n 's/^Message-ID: *<\(.*\)>$/\1/Ip' "$PW_TMP"/out/0001-*.patch)

INBOX=$PW_TMP/inbox
git -c init.defaultBranch=master init -q "$INBOX"
add_msg() {	# add_msg FILE: one message, one archive commit
	sed '1{/^From [0-9a-f]* /d}' "$1" >"$INBOX/m"
	g "$INBOX" add m
	g "$INBOX" commit -qm "$(grep -m1 '^Subject:' "$1" | cut -c10-)"
}
printf 'From: a@x\nSubject: hello\nMessage-Id: <old@x>\n\nhi\n' >"$PW_TMP/old.msg"
add_msg "$PW_TMP/old.msg"

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
maintainers: ["The Boss <boss@example.org>"]
public_url: https://perf.example.org
inboxes:
  - {name: lm, url: "file://$INBOX", poll: 1s, tree: app, branch: master,
     archive: "https://lore.example.org/lm"}
$ALERTS_YAML
YAML
score_job_yaml 5 8 "timeout: 30s"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
seen_is() { [ "$(sql "SELECT last_commit FROM inbox_state WHERE name = 'lm'")" = "$(g "$INBOX" rev-parse HEAD)" ]; }
wait_until 30 seen_is || { fail inbox_first_sight "$(sql "SELECT * FROM inbox_state")"; show_logs; finish; }
t_posted=$(date +%s)
add_msg "$PW_TMP"/out/0001-*.patch
runner_config r1
start_runner r1
has_mail() { ls "$SMTP"/mail-*.eml >/dev/null 2>&1; }
wait_until 120 has_mail && pass report_sent ||
    { fail report_sent "$(sql 'SELECT kind, state, last_error FROM alerts'); $(sql "SELECT metric, verdict FROM comparisons")"; show_logs; finish; }
report=$(/usr/bin/python3 - "$SMTP" "$patch_id" <<'PY'
import email, email.policy, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/mail-*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if m["In-Reply-To"] == "<%s>" % sys.argv[2]:
        print(m["Message-ID"].strip("<>"))
PY
)
[ -n "$report" ] && [ "$(sql "SELECT state FROM regressions")" = new ] &&
    pass report_under_patch || { fail report_under_patch "$(ls "$SMTP")"; finish; }
# Its tags: Closes: the report on the list's public archive (the
# inbox's archive:), Link: its dashboard page; "To reproduce" links the
# series on that archive too, not on a host the list may not use.
/usr/bin/python3 - "$SMTP" "$report" https://perf.example.org "$patch_id" <<'PY' && pass report_closes_link || fail report_closes_link "see above"
import email, email.policy, glob, sys
d, rid, url, pid = sys.argv[1:]
for f in sorted(glob.glob(d + "/mail-*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if m["Message-ID"] == "<%s>" % rid:
        b = m.get_content().replace("\r\n", "\n")
        want = "| Closes: https://lore.example.org/lm/%s/\n" % rid
        series = "  (the series: https://lore.example.org/lm/%s/)\n" % pid
        if want in b and "\n| Link: %s/commit/" % url in b and series in b:
            sys.exit(0)
        print("# no %r or Link: in:\n%s" % (want, b))
sys.exit(1)
PY

# Time to report: every stage known and in order on the series, under
# the goals (picked up within a poll interval (1 s) + 5 s of the archive
# commit; mailed within a minute of it for this instant benchmark), and
# the same figure as the summary's median and p90 (one series).
wait_until 10 eval '[ "$(sql "SELECT count(*) FROM alerts WHERE sent IS NOT NULL")" -ge 1 ]'
http GET /api/v1/series/1 >/dev/null
cp "$PW_TMP/body" "$PW_TMP/series.json"
http GET /api/v1/latency >/dev/null
cp "$PW_TMP/body" "$PW_TMP/latency.json"
/usr/bin/python3 - "$PW_TMP/series.json" "$PW_TMP/latency.json" "$t_posted" <<'PY' && pass latency_measured || fail latency_measured "$(cat "$PW_TMP/series.json" "$PW_TMP/latency.json")"
import json, sys
l = json.load(open(sys.argv[1]))["latency"]
summary = json.load(open(sys.argv[2]))
t0 = int(sys.argv[3])
ev = ["posted", "seen", "applied", "first_run", "last_run", "verdict", "mailed"]
assert all(isinstance(l[e], int) for e in ev), l
# In order; runs keep whole seconds (a start is its upload less its
# duration), so a run may read as started up to 1 s before its pair.
assert all(l[a] <= l[b] + 1 for a, b in zip(ev[1:], ev[2:])), l
assert l["seen"] - t0 <= 1 + 5, ("pickup", l["seen"] - t0)
assert l["mailed"] - t0 <= 60, ("to report", l["mailed"] - t0)
assert l["stages"]["total"] == max(0, l["mailed"] - l["posted"]), l
assert l["summary"].startswith("pickup ") and "total " in l["summary"], l
st = {s["stage"]: s for s in summary["stages"]}
assert summary["series"] == 1 and st["total"]["n"] == 1, summary
assert st["total"]["median_s"] == st["total"]["p90_s"] == l["stages"]["total"], summary
print("# time to report: %s (archive commit to mail %d s)" % (l["summary"], l["mailed"] - t0))
PY
curl -s "$PW_URL/series/1" | grep -q "<th>time to report</th><td class=\"latency\">pickup " &&
    "$PW_BIN/perfwatch" series latency --server "$PW_URL" | grep -q "^total *posted..mailed *1 " &&
    pass latency_views || fail latency_views "$("$PW_BIN/perfwatch" series latency --server "$PW_URL" 2>&1)"
# The same on /metrics: one series in each stage's histogram, its
# total under a minute (the goal above) and so in the 60 s bucket.
curl -s "$PW_URL/metrics" >"$PW_TMP/metrics.txt"
grep -q '^perfwatch_series_stage_seconds_count{stage="total"} 1$' "$PW_TMP/metrics.txt" &&
    grep -q '^perfwatch_series_stage_seconds_bucket{stage="total",le="60"} 1$' "$PW_TMP/metrics.txt" &&
    grep -q '^perfwatch_series_stage_seconds_bucket{stage="pickup",le="+Inf"} 1$' "$PW_TMP/metrics.txt" &&
    grep -q '^perfwatch_series_stage_seconds_count{stage="queue"} 1$' "$PW_TMP/metrics.txt" &&
    pass latency_metrics || fail latency_metrics "$(grep series_stage "$PW_TMP/metrics.txt")"
# The series list page shows the summary GET /api/v1/latency gives.
curl -s "$PW_URL/series" >"$PW_TMP/series.html"
total=$(/usr/bin/python3 -c 'import json, sys; print([s for s in json.load(open(sys.argv[1]))["stages"] if s["stage"] == "total"][0]["median_s"])' "$PW_TMP/latency.json")
grep -qF '<h2>Time to report</h2>' "$PW_TMP/series.html" &&
    grep -qE "<tr><th scope=\"row\">total</th><td>posted</td><td>mailed</td><td class=\"n\">1</td><td class=\"n\">$total s</td>" "$PW_TMP/series.html" &&
    pass latency_on_the_series_page || fail latency_on_the_series_page "total $total: $(grep -o '<table class="latency">.*' "$PW_TMP/series.html" | head -c 600)"

N=0
reply() {	# reply FROM PARENT BODY [MESSAGE-ID]: a reply in the archive
	N=$((N + 1))
	CMD_ID=${4:-cmd$N@example.org}
	printf 'From: %s\nSubject: Re: [PATCH] memcg: halve the score\nMessage-Id: <%s>\nIn-Reply-To: <%s>\nReferences: <%s> <%s>\nDate: Mon, 7 Dec 2026 01:00:00 +0000\n\n%b' \
	    "$1" "$CMD_ID" "$2" "$patch_id" "$2" "$3" >"$PW_TMP/reply$N.msg"
	add_msg "$PW_TMP/reply$N.msg"
}
answers() {	# answers ID: the answers mailed under ID, one body a line
	/usr/bin/python3 - "$SMTP" "$1" <<'PY'
import email, email.policy, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/mail-*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if m["In-Reply-To"] == "<%s>" % sys.argv[2]:
        print(m.get_content().replace("\r\n", "\n").replace("\n", "|"))
PY
}
answered() { [ -n "$(answers "$1")" ]; }
# refused CHECK FROM BODY PATTERN: a reply to the report answered with
# PATTERN, no pair made.
refused() {
	local pairs id
	pairs=$(sql "SELECT count(*) FROM pairs")
	reply "$2" "$report" "$3"
	id=$CMD_ID
	wait_until 30 answered "$id" && answers "$id" | grep -q "$4" &&
	    [ "$(sql "SELECT count(*) FROM pairs")" = "$pairs" ] &&
	    pass "$1" || fail "$1" "$(answers "$id")"
}

# A stranger: refused, nothing changes.
reply "Mallory <mallory@example.net>" "$report" 'Rubbish.\n\n#perfwatch invalid\n'
id1=$CMD_ID
wait_until 30 answered "$id1" && answers "$id1" | grep -q "Not done: mallory@example.net may not command" &&
    [ "$(sql "SELECT state FROM regressions")" = new ] &&
    pass stranger_refused || fail stranger_refused "$(answers "$id1") $(sql "SELECT state FROM regressions")"

# The author: a bad line next to a good one; the answer names line 3.
reply "Ann Author <ann@example.org>" "$report" 'Hm.\n\n#perfwatch frobnicate\n#perfwatch invalid\n'
id2=$CMD_ID
wait_until 30 answered "$id2" && answers "$id2" | grep -q "line 3: unknown command" &&
    answers "$id2" | grep -q "Nothing was done" &&
    [ "$(sql "SELECT state FROM regressions")" = new ] &&
    pass bad_line_named || fail bad_line_named "$(answers "$id2")"

# The author: invalid.  The answer is threaded under the command.
reply "Ann Author <ann@example.org>" "$report" 'Expected, the score is made up.\n\n#perfwatch invalid\n'
id3=$CMD_ID
wait_until 30 answered "$id3" && answers "$id3" | grep -q "done: 1 regression(s) of score marked invalid" &&
    [ "$(sql "SELECT state FROM regressions")" = invalid ] &&
    sql "SELECT note FROM regressions" | grep -q "by mail from ann@example.org" &&
    pass author_invalid || fail author_invalid "$(answers "$id3") $(sql "SELECT state, note FROM regressions")"
# The same Message-ID again (a resend): no second answer, no change.
sql "UPDATE regressions SET state = 'acknowledged'"
reply "Ann Author <ann@example.org>" "$report" '#perfwatch invalid\n' "$id3"
wait_until 30 seen_is
sleep 2
[ "$(answers "$id3" | wc -l)" = 1 ] && [ "$(sql "SELECT state FROM regressions")" = acknowledged ] &&
    pass once_per_message_id || fail once_per_message_id "$(answers "$id3" | wc -l) $(sql "SELECT state FROM regressions")"

# A maintainer: retest with 3 runs: one more pair of score.
pairs=$(sql "SELECT count(*) FROM pairs")
reply "The Boss <boss@example.org>" "$report" '#perfwatch retest runs=3\n'
id4=$CMD_ID
wait_until 30 answered "$id4" && answers "$id4" | grep -q "done: 1 pair(s) of score queued again" &&
    [ "$(sql "SELECT count(*) FROM pairs")" = $((pairs + 1)) ] &&
    [ "$(sql "SELECT runs FROM jobs ORDER BY id DESC LIMIT 1")" = 3 ] &&
    pass maintainer_retest || fail maintainer_retest "$(answers "$id4") $(sql "SELECT count(*) FROM pairs")"

# A maintainer's bisect: a bisection of the regression, started by mail.
reply "The Boss <boss@example.org>" "$report" '#perfwatch bisect\n'
id6=$CMD_ID
wait_until 30 answered "$id6" && answers "$id6" | grep -Eq "done: bisection [0-9]+ started" &&
    [ "$(sql "SELECT started_by FROM bisections")" = "mail boss@example.org" ] &&
    pass maintainer_bisect || fail maintainer_bisect "$(answers "$id6") $(sql "SELECT id, started_by FROM bisections")"

# A maintainer's retest on hosts with a label: the pair again, its jobs
# for those hosts only.  A malformed retest names its line.
reply "The Boss <boss@example.org>" "$report" '#perfwatch retest hosts=big,x86 runs=2\n'
id7=$CMD_ID
wait_until 30 answered "$id7" && answers "$id7" | grep -q 'done: 1 pair(s) of score queued again on hosts \["big","x86"\]' &&
    [ "$(sql "SELECT count(*) || ' ' || min(runs) || ' ' || max(runs) FROM jobs WHERE labels = '[\"big\",\"x86\"]'")" = "2 2 2" ] &&
    pass retest_on_hosts || fail retest_on_hosts "$(answers "$id7") $(sql "SELECT id, labels, runs FROM jobs")"
refused retest_bad_hosts_named "The Boss <boss@example.org>" \
    '#perfwatch retest hosts=big, runs=2\n' "line 1: retest takes runs=N"
id8=$CMD_ID
refused hostile_line_refused "Ann Author <ann@example.org>" \
    '#perfwatch retest runs=<script>x</script>\n' "line 1: retest takes runs=N"
idh=$CMD_ID
# The jobs no host can take go, so the runner is free for the test.
sql "UPDATE jobs SET state = 'cancelled' WHERE labels = '[\"big\",\"x86\"]'" >/dev/null

# The author's test of a branch with a fix, as syzbot's "#syz test": its
# tip measured against the report's base by the real runner, which
# fetches it from the URL; the score is back, so the verdict is
# unchanged where the series' patch regressed.
g "$SRC" checkout -qb fix topic
echo 1000 >"$SRC/value"
g "$SRC" commit -qam "memcg: the score back"
fix=$(g "$SRC" rev-parse HEAD)
g "$SRC" checkout -q master
reply "Ann Author <ann@example.org>" "$report" "Does this fix it?\n\n#perfwatch test file://$SRC fix\n"
id9=$CMD_ID
tested() {
	[ "$(sql "SELECT c.verdict FROM comparisons c JOIN pairs p ON p.id = c.pair_id
	    JOIN jobs j ON j.id = p.cand_job_id JOIN commits k ON k.id = j.commit_id
	    WHERE k.sha = '$fix' AND c.metric = 'score' AND c.final = 1")" = unchanged ]
}
wait_until 30 answered "$id9" && answers "$id9" | grep -q "done: ${fix:0:12} (fix of file://$SRC) queued for score against the report's base ${c1:0:12}, 1 pair(s)" &&
    sql "SELECT params FROM jobs j JOIN commits k ON k.id = j.commit_id WHERE k.sha = '$fix'" | grep -q "\"url\": *\"file://$SRC\"" &&
    pass test_branch_queued || fail test_branch_queued "$(answers "$id9") $(sql "SELECT j.id, k.sha FROM jobs j JOIN commits k ON k.id = j.commit_id ORDER BY j.id DESC LIMIT 2")"
wait_until 120 tested && pass test_branch_measured ||
    fail test_branch_measured "$(sql "SELECT p.id, c.metric, c.verdict, c.change_pct FROM comparisons c JOIN pairs p ON p.id = c.pair_id ORDER BY p.id DESC LIMIT 3") $(sql "SELECT id, state, last_error FROM jobs ORDER BY id DESC LIMIT 3")"
# A branch the remote does not have, a URL that is no watched tree nor
# a public one: each refused naming its line, nothing queued.
refused test_refused_branch "Ann Author <ann@example.org>" \
    "#perfwatch test file://$SRC nosuch\n" "line 1: .*has no branch nosuch"
id10=$CMD_ID
refused test_refused_url "Ann Author <ann@example.org>" \
    "#perfwatch test file:///etc master\n" "line 1: test fetches only from https://"
refused test_refused_address "Ann Author <ann@example.org>" \
    "#perfwatch test http://127.0.0.1:8080/x.git master\n" "line 1: test fetches only from https://"

# The author's test of a patch inline in the reply: applied on the
# series' base as a series of its own, measured by the runner (the
# score doubles: an improvement), and its report mailed under the reply.
# "#perfwatch test" with no patch, or beside another command: refused.
g "$SRC" checkout -qb double "$c1"
echo 2000 >"$SRC/value"
g "$SRC" commit -qam "memcg: double the score"
g "$SRC" format-patch -q -o "$PW_TMP/dbl" -1
g "$SRC" checkout -q master
refused test_inline_alone "Ann Author <ann@example.org>" '#perfwatch test\n#perfwatch invalid\n' \
    "line 1: test without a URL takes the patch inline in this mail"
{ printf 'Try this one instead.\n\n#perfwatch test\n\n'; sed '1,/^$/d' "$PW_TMP"/dbl/0001-*.patch; } >"$PW_TMP/dbl.body"
reply "Ann Author <ann@example.org>" "$report" "$(sed 's/\\/\\\\/g' "$PW_TMP/dbl.body")\n"
id12=$CMD_ID
wait_until 30 answered "$id12" && answers "$id12" | grep -Eq "done: the patch applied on ${c1:0:12} as series [0-9]+, 1 pair\(s\) queued" &&
    [ "$(sql "SELECT state FROM series WHERE message_id = '$id12'")" = applied ] &&
    pass test_inline_applied || fail test_inline_applied "$(answers "$id12") $(sql "SELECT id, message_id, state, error FROM series")"
inline_report() {
	/usr/bin/python3 - "$SMTP" "$id12" <<'PY'
import email, email.policy, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/mail-*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if m["In-Reply-To"] == "<%s>" % sys.argv[2] and m["X-Perfwatch-Event"] != "command":
        print(m["Subject"])
PY
}
reported() { inline_report | grep -q "score .*improvement"; }
wait_until 120 reported && pass test_inline_reported ||
    fail test_inline_reported "$(inline_report) $(sql "SELECT p.id, c.metric, c.verdict FROM comparisons c JOIN pairs p ON p.id = c.pair_id ORDER BY p.id DESC LIMIT 3")"

# A patch answering mail the archive does not have joins no series:
# the daemon's log says so, and why.
printf 'From: Ann Author <ann@example.org>\nSubject: [PATCH v3 2/4] memcg: lost\nMessage-Id: <lost2@example.org>\nIn-Reply-To: <gone@example.org>\n\n---\ndiff --git a/value b/value\n' >"$PW_TMP/lost.msg"
add_msg "$PW_TMP/lost.msg"
orphan_told() {
	grep -q 'patch mail <lost2@example.org> "\[PATCH v3 2/4\] memcg: lost" is in no series yet: it answers <gone@example.org>, which is not among the mail read' "$PW_TMP/d/daemon.log"
}
wait_until 30 orphan_told && pass orphan_reason_logged || fail orphan_reason_logged "$(grep -i 'lost2' "$PW_TMP/d/daemon.log")"

# A diff whose subject has no [PATCH] tag (format-patch -k): real git am
# applies it; perfwatch takes no series from it and says why.
g "$SRC" checkout -qb notag "$c1"
echo 1001 >"$SRC/value"
g "$SRC" commit -qam "memcg: a diff without a tag"
g "$SRC" format-patch -q -k --thread -o "$PW_TMP/notag" -1
g "$SRC" checkout -q master
notag_id=$(sed -n 's/^Message-ID: *<\(.*\)>$/\1/Ip' "$PW_TMP"/notag/0001-*.patch)
git clone -q "$SRC" "$PW_TMP/am-notag" && g "$PW_TMP/am-notag" checkout -q "$c1" &&
    g "$PW_TMP/am-notag" am -q -k "$PW_TMP"/notag/0001-*.patch &&
    [ "$(cat "$PW_TMP/am-notag/value")" = 1001 ] && ! grep -q '^Subject: \[' "$PW_TMP"/notag/0001-*.patch &&
    pass notag_git_am_applies || fail notag_git_am_applies "$(grep '^Subject' "$PW_TMP"/notag/0001-*.patch)"
add_msg "$PW_TMP"/notag/0001-*.patch

# A command in a reply to someone else's mail: no answer.
reply "Ann Author <ann@example.org>" "$patch_id" '#perfwatch invalid\n'
id5=$CMD_ID
wait_until 30 seen_is
sleep 2
! answered "$id5" && pass not_ours_ignored || fail not_ours_ignored "$(answers "$id5")"

# Every command line read, recorded once with who sent it (the mail's
# address), the line as parsed, when and what it did, in the series'
# JSON: the refusals with why (a stranger; an unknown command and the
# good line beside it; a malformed retest; a branch the remote lacks),
# the retests and the test with the pair each made, the inline test
# with its series; the resent Message-ID once; the reply to another
# mail not at all.
http GET /api/v1/series/1 >/dev/null
cp "$PW_TMP/body" "$PW_TMP/commands.json"
/usr/bin/python3 - "$PW_TMP/commands.json" "$id1" "$id2" "$id3" "$id4" "$id6" "$id7" "$id8" "$id9" "$id10" "$id12" "$id5" "$idh" <<'PY' >"$PW_TMP/commands.check" 2>&1 &&
import json, sys
cmds = json.load(open(sys.argv[1]))["commands"]
id1, id2, id3, id4, id6, id7, id8, id9, id10, id12, id5, idh = sys.argv[2:]
by = {}
for c in cmds:
    by.setdefault(c["message_id"], []).append(c)
def one(mid, **want):
    rows = by.get(mid, [])
    assert len(rows) == 1, (mid, rows)
    for k, v in want.items():
        assert rows[0][k] == v, (mid, k, rows[0][k], v)
    assert isinstance(rows[0]["at"], int) and rows[0]["at"] > 0, rows
    return rows[0]
r = one(id1, sender="mallory@example.net", command="invalid", line=3,
        outcome="refused", pairs=[])
assert "mallory@example.net may not command this report" in r["reason"], r
a, b = sorted(by[id2], key=lambda c: c["line"])
assert (a["command"], a["line"], a["outcome"]) == ("frobnicate", 3, "refused"), a
assert a["reason"].startswith("unknown command; known:"), a
assert (b["command"], b["line"], b["outcome"]) == ("invalid", 4, "refused"), b
assert "another line of the mail was refused" in b["reason"], b
r = one(id3, sender="ann@example.org", command="invalid", outcome="done")
assert "marked invalid" in r["reason"], r
r = one(id4, sender="boss@example.org", command="retest runs=3", outcome="done")
assert len(r["pairs"]) == 1 and "queued again" in r["reason"], r
r = one(id6, command="bisect", outcome="done")
assert r["reason"].startswith("bisection "), r
r = one(id7, command="retest hosts=big,x86 runs=2", outcome="done")
assert len(r["pairs"]) == 1 and r["pairs"] != by[id4][0]["pairs"], r
r = one(id8, command="retest hosts=big, runs=2", outcome="refused", pairs=[])
assert r["reason"].startswith("retest takes runs=N"), r
r = one(idh, command="retest runs=<script>x</script>", outcome="refused")
r = one(id9, sender="ann@example.org", outcome="done", job="score")
assert r["command"].startswith("test file://") and r["command"].endswith(" fix"), r
assert len(r["pairs"]) == 1, r
r = one(id10, outcome="refused", pairs=[])
assert "has no branch nosuch" in r["reason"], r
r = one(id12, command="test", outcome="done")
assert isinstance(r["series"], int) and r["series"] > 1, r
assert id5 not in by, by[id5]
print(json.dumps({"retest": by[id4][0]["pairs"][0], "series": by[id12][0]["series"],
                  "commit": by[id1][0]["commit"], "n": len(cmds)}))
PY
    pass commands_recorded || fail commands_recorded "$(cat "$PW_TMP/commands.check")"
retest_pair=$(sed -n 's/.*"retest": \([0-9]*\).*/\1/p' "$PW_TMP/commands.check")
inline_sid=$(sed -n 's/.*"series": \([0-9]*\).*/\1/p' "$PW_TMP/commands.check")
# The series page lists them under "Requests by mail": sender, command,
# when, outcome linking the pairs and series made; mail text escaped.
curl -s "$PW_URL/series/1" >"$PW_TMP/series1.html"
requests_shown() {
	grep -qF '<h2 id="requests">Requests by mail</h2>' "$PW_TMP/series1.html" &&
	grep -qF '<tr class="request"><td>mallory@example.net</td><td class="mono">#perfwatch invalid</td>' "$PW_TMP/series1.html" &&
	grep -qF '<b>refused</b>: mallory@example.net may not command this report' "$PW_TMP/series1.html" &&
	grep -qF '<td class="mono">#perfwatch frobnicate</td>' "$PW_TMP/series1.html" &&
	grep -qF '<b>refused</b>: unknown command; known:' "$PW_TMP/series1.html" &&
	grep -qF '<tr class="request"><td>boss@example.org</td><td class="mono">#perfwatch retest runs=3</td>' "$PW_TMP/series1.html" &&
	grep -qF "queued again; their verdict replaces this one (<a href=\"/pair/$retest_pair\">pair $retest_pair</a>)</td>" "$PW_TMP/series1.html" &&
	grep -qF "(<a href=\"/series/$inline_sid\">series $inline_sid</a>)</td>" "$PW_TMP/series1.html" &&
	grep -qF '#perfwatch retest runs=&lt;script&gt;x&lt;/script&gt;</td>' "$PW_TMP/series1.html" &&
	! grep -qF '<script>x</script>' "$PW_TMP/series1.html"
}
[ -n "$retest_pair" ] && [ -n "$inline_sid" ] && requests_shown && pass commands_on_series_page ||
    fail commands_on_series_page "pair $retest_pair series $inline_sid: $(grep -o '<h2 id="requests">.*' "$PW_TMP/series1.html" | head -c 3000)"
# The report's commit lists the same on its page and in its JSON.
report_sha=$(sed -n 's/.*"commit": "\([0-9a-f]*\)".*/\1/p' "$PW_TMP/commands.check")
ncmds=$(sed -n 's/.*"n": \([0-9]*\).*/\1/p' "$PW_TMP/commands.check")
http GET "/api/v1/commits/$report_sha" >/dev/null
[ -n "$report_sha" ] && [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["commands"]))' "$PW_TMP/body")" = "$ncmds" ] &&
    curl -s "$PW_URL/commit/$report_sha" | grep -qF '<tr class="request"><td>mallory@example.net</td><td class="mono">#perfwatch invalid</td>' &&
    pass commands_on_commit_page || fail commands_on_commit_page "commit $report_sha, $ncmds commands: $(head -c 600 "$PW_TMP/body")"

# Patch mail in no series, each with why, on the first page of GET
# /api/v1/series and on the series page (mail text escaped).
skipped_listed() {
	http GET /api/v1/series >/dev/null
	python3 - "$PW_TMP/body" "$notag_id" <<'PY'
import json, sys
sk = {k["message_id"]: k for k in json.load(open(sys.argv[1])).get("skipped", [])}
a, b = sk.get("lost2@example.org"), sk.get(sys.argv[2])
assert a and a["inbox"] == "lm" and a["subject"] == "[PATCH v3 2/4] memcg: lost", sk
assert a["reason"].startswith("it answers <gone@example.org>, which is not among the mail read"), a
assert b and b["reason"].startswith("it has a diff but its subject has no [PATCH] tag"), sk
assert isinstance(a["at"], int) and a["at"] > 0, a
PY
}
wait_until 30 skipped_listed && pass skipped_in_api || fail skipped_in_api "$(head -c 1500 "$PW_TMP/body")"
curl -s "$PW_URL/series" >"$PW_TMP/series-list.html"
grep -qF '<h2 id="skipped">Patch mail not taken</h2>' "$PW_TMP/series-list.html" &&
    grep -qF '<td class="mono">lost2@example.org</td>' "$PW_TMP/series-list.html" &&
    grep -qF 'it answers &lt;gone@example.org&gt;, which is not among the mail read' "$PW_TMP/series-list.html" &&
    grep -qF 'memcg: a diff without a tag' "$PW_TMP/series-list.html" &&
    pass skipped_on_series_page || fail skipped_on_series_page "$(grep -o '<h2 id="skipped">.*' "$PW_TMP/series-list.html" | head -c 1500)"

# The daemon again, with no way to answer by mail and commands from
# anyone on this inbox.
stop_pid "$PW_DAEMON_PID"
sed -i '/^alerts:/,$d' "$PW_DIR/daemon.yaml"
sed -i 's|archive: "https://lore.example.org/lm"}|archive: "https://lore.example.org/lm", commands_from_anyone: true}|' "$PW_DIR/daemon.yaml"
grep -q 'commands_from_anyone: true' "$PW_DIR/daemon.yaml" && ! grep -q '^alerts:' "$PW_DIR/daemon.yaml" ||
    fail restart_config "$(cat "$PW_DIR/daemon.yaml")"
nmail=$(ls "$SMTP" | grep -c '^mail-')
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
# Every regression new again, without a note: the report's (whose
# newest pairs the retests made) is the one the command below marks.
sql "UPDATE regressions SET state = 'new', note = NULL" >/dev/null
recorded() { [ "$(sql "SELECT count(*) FROM mail_commands WHERE message_id = '$1'")" -ge 1 ]; }
# A stranger, allowed here: expected, then fixed-by.
reply "Eve Stranger <eve@example.net>" "$report" 'Known.\n\n#perfwatch expected\n'
ide=$CMD_ID
wait_until 30 recorded "$ide"
reg=$(sql "SELECT min(id) FROM regressions WHERE note IS NOT NULL")
[ -n "$reg" ] && [ "$(sql "SELECT count(*) FROM regressions WHERE note IS NOT NULL")" = 1 ] && [ "$(sql "SELECT state FROM regressions WHERE id = $reg")" = acknowledged ] &&
    [ "$(sql "SELECT note FROM regressions WHERE id = $reg")" = "expected (by mail from eve@example.net)" ] &&
    [ "$(sql "SELECT outcome || ' ' || parsed FROM mail_commands WHERE message_id = '$ide'")" = "done expected" ] &&
    pass anyone_expected || fail anyone_expected "$(sql "SELECT id, state, note FROM regressions") $(sql "SELECT * FROM mail_commands WHERE message_id = '$ide'")"
reply "Eve Stranger <eve@example.net>" "$report" '#perfwatch fixed-by 0123abcd\n'
idf=$CMD_ID
wait_until 30 recorded "$idf" && [ "$(sql "SELECT state FROM regressions WHERE id = $reg")" = fixed ] &&
    [ "$(sql "SELECT note FROM regressions WHERE id = $reg")" = "fixed by 0123abcd (by mail from eve@example.net)" ] &&
    pass anyone_fixed_by || fail anyone_fixed_by "$(sql "SELECT state, note FROM regressions WHERE id = $reg") $(sql "SELECT * FROM mail_commands WHERE message_id = '$idf'")"
# Odd spacing and order: the line as written, the command as read.
pairs=$(sql "SELECT count(*) FROM pairs")
reply "The Boss <boss@example.org>" "$report" '#perfwatch retest  hosts=big,x86   runs=02\n'
idr=$CMD_ID
wait_until 30 recorded "$idr" && [ "$(sql "SELECT count(*) FROM pairs")" = $((pairs + 1)) ] &&
    [ "$(sql "SELECT command || '|' || parsed FROM mail_commands WHERE message_id = '$idr'")" = "retest  hosts=big,x86   runs=02|retest runs=2 hosts=big,x86" ] &&
    pass command_canonical || fail command_canonical "$(sql "SELECT command, parsed, outcome, reason FROM mail_commands WHERE message_id = '$idr'")"
sql "UPDATE jobs SET state = 'cancelled' WHERE labels = '[\"big\",\"x86\"]' AND state = 'queued'" >/dev/null
curl -s "$PW_URL/series/1" >"$PW_TMP/series1b.html"
http GET /api/v1/series/1 >/dev/null
grep -qF '<td class="mono">#perfwatch retest  hosts=big,x86   runs=02<br><span class="muted">read as #perfwatch retest runs=2 hosts=big,x86</span></td>' "$PW_TMP/series1b.html" &&
    python3 -c '
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["commands"] if c["message_id"] == sys.argv[2]]
assert len(c) == 1 and c[0]["parsed"] == "retest runs=2 hosts=big,x86", c
f = [c for c in json.load(open(sys.argv[1]))["commands"] if c["command"] == "frobnicate"]
assert f and f[0]["parsed"] is None, f
' "$PW_TMP/body" "$idr" && pass canonical_shown || fail canonical_shown "$(grep -o 'read as[^<]*' "$PW_TMP/series1b.html") $(head -c 800 "$PW_TMP/body")"
# The first Message-ID again, the regression made new meanwhile: no
# second record, nothing done, though no answer is keyed on it.
sql "UPDATE regressions SET state = 'new' WHERE id = $reg" >/dev/null
reply "Eve Stranger <eve@example.net>" "$report" '#perfwatch expected\n' "$ide"
wait_until 30 seen_is
sleep 2
[ "$(sql "SELECT count(*) FROM mail_commands WHERE message_id = '$ide'")" = 1 ] &&
    [ "$(sql "SELECT state FROM regressions WHERE id = $reg")" = new ] &&
    [ "$(grep -c "command mail $ide from" "$PW_TMP/d/daemon.log")" = 1 ] &&
    pass once_without_smtp || fail once_without_smtp "$(sql "SELECT state FROM regressions WHERE id = $reg") $(grep "command mail $ide" "$PW_TMP/d/daemon.log")"
[ "$(ls "$SMTP" | grep -c '^mail-')" = "$nmail" ] && pass nothing_mailed_without_smtp ||
    fail nothing_mailed_without_smtp "$(ls "$SMTP")"
stop_pid "$PW_DAEMON_PID"
finish
