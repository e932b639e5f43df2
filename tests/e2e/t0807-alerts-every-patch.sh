#!/usr/bin/env bash
# A report pinned to one patch lands under that patch: a v2 series of
# three patches (git format-patch --thread --cover-letter) whose second
# makes the program loop four times as long, a job with
# `trigger.every_patch: true` (each patch against its parent), a real
# runner and the SMTP test server.  One report is under patch 2 (patches
# 1 and 3 change nothing; the tip against the base is the series' own,
# under the cover letter): In-Reply-To is patch 2's Message-ID,
# References holds the cover letter's and patch 2's, the subject is
# "Re: [PATCH v2 2/3] <patch 2's title>: slowprog.time_ms +N% regression",
# and "To reproduce" is what a list reader can run: the public tree and
# the series' base, `b4 am -P 1-2 <cover id>`, the job's commands with
# {workdir} filled in and the job itself as job-file YAML, no
# daemon-only commit and no file of this repo.
# No follow-up calls the series' regression "unchanged" because the
# tip against patch 2 (another change) is.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_alerts.sh"
. "$(dirname "$0")/lib_inbox.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }
alert_servers_or_skip alerts_every_patch
SMTP=$PW_TMP/smtp

loop_series 3 "memcg: a longer loop"
p2_id=$(sed -n 's/^Message-ID: *//Ip' "$PW_TMP"/out/v2-0002-*.patch | head -1)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
echo "$ALERTS_YAML" >>"$PW_DIR/daemon.yaml"
every_patch_job
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
series_post_applied
runner_config r1
start_runner r1

# Every pair analysed and the alerter past them: then the mail is all.
settled() {
	[ "$(sql "SELECT count(*) FROM pairs WHERE analysed = 0")" = 0 ] &&
	    [ "$(sql "SELECT count(*) FROM pairs")" -ge 4 ] &&
	    ls "$SMTP"/mail-*.eml >/dev/null 2>&1 &&
	    [ "$(sql "SELECT count(*) FROM alerts WHERE sent IS NULL")" = 0 ]
}
wait_until 300 settled && pass report_sent ||
    { fail report_sent "$(sql 'SELECT kind, state, last_error FROM alerts'); $(sql "SELECT pair_id, metric, verdict, change_pct FROM comparisons WHERE metric = 'time_ms'")"; show_logs; finish; }
sleep 3
base_sha=$(sql "SELECT base_sha FROM series WHERE id = 1")
/usr/bin/python3 - "$SMTP" "$cover_id" "$p2_id" "file://$SRC" "$base_sha" "$PW_TMP/job-from-mail.yaml" <<'PY' && pass threaded_under_the_patch || fail threaded_under_the_patch "see above"
import email, email.policy, glob, re, sys
d, cover, p2, url, base, job_file = sys.argv[1:]
ok = True
def check(c, what):
    global ok
    if not c:
        print("# " + what); ok = False
mails = [email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
         for f in sorted(glob.glob(d + "/mail-*.eml"))]
# First reports answer the list's mail; follow-ups answer our own.
first = [m for m in mails if not str(m["In-Reply-To"]).startswith("<perfwatch.")]
pinned = [m for m in first if m["In-Reply-To"] == p2]
check(len(pinned) == 1, "reports under patch 2: %d of %r" % (len(pinned),
      [(str(m["In-Reply-To"]), str(m["Subject"])) for m in mails]))
# The other first reports are of the whole series, under the cover letter.
for m in first:
    check(m["In-Reply-To"] in (p2, cover), "In-Reply-To %r" % m["In-Reply-To"])
if pinned:
    m = pinned[0]
    check(str(m["References"]).split() == [cover, p2], "References %r" % str(m["References"]))
    check(re.fullmatch(r"Re: \[PATCH v2 2/3\] prog: four times the loop: "
                       r"slowprog\.time_ms \+[0-9.]+% regression", str(m["Subject"])),
          "subject %r" % str(m["Subject"]))
    b = m.get_content().replace("\r\n", "\n")
    want = ["  git fetch %s master\n" % url,
            "  git checkout %s     # the series' base\n" % base,
            "  b4 am -P 1-2 %s\n" % cover.strip("<>"),
            "  make\n  ./prog\n",
            # The job itself, as a job file a reader's perfwatch loads.
            "the job, as a perfwatch job file:\n  name: \"slowprog\"\n"
            "  parser: \"keyvalue\"\n  build:\n    - \"make\"\n"
            "  command:\n    - \"./prog\"\n  runs: 5\n  max_runs: 8\n"
            "  timeout: 30s\n  metrics:\n    \"time_ms\":\n"
            "      better: lower\n      min_effect: 100%\n"]
    for w in want:
        check(w in b, "no %r in:\n%s" % (w, b))
    check("{" not in b.split("to reproduce")[1], "a placeholder left:\n" + b)
    check("docs/" not in b and ".md" not in b, "names a repository file:\n" + b)
    y = b.split("the job, as a perfwatch job file:\n", 1)
    if len(y) == 2:
        lines = []
        for l in y[1].split("\n"):
            if not l.startswith("  "):
                break
            lines.append(l[2:])
        open(job_file, "w").write("\n".join(lines) + "\n")
sys.exit(0 if ok else 1)
PY
# The job in the mail is a job file that perfwatch itself loads.
"$PW_BIN/perfwatch" config check --kind job "$PW_TMP/job-from-mail.yaml" >"$PW_TMP/jcheck" 2>&1 &&
    pass job_yaml_loads || fail job_yaml_loads "$(cat "$PW_TMP/jcheck" "$PW_TMP/job-from-mail.yaml" 2>&1)"
# The tip has a pair against the series' base (patch 2's slowdown) and
# one against patch 2 (unchanged): the second is another change and
# must not turn the series' report into "unchanged" by a follow-up.
/usr/bin/python3 - "$SMTP" <<'PY' && pass no_false_unchanged || fail no_false_unchanged "see above"
import email, email.policy, glob, sys
bad = []
for f in sorted(glob.glob(sys.argv[1] + "/mail-*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if "every metric reported before is unchanged" in m.get_content():
        bad.append(str(m["Subject"]))
if bad:
    print("# follow-ups saying unchanged: %r" % bad)
sys.exit(1 if bad else 0)
PY
stop_pid "$PW_DAEMON_PID"
finish
