#!/usr/bin/env bash
# Alerts for a mailing-list series: a v2 series with a cover letter
# (git format-patch) posted to POST /api/v1/series, applied and measured
# by a real runner (the tip makes the loop 4x, min_effect 20%): the report
# lands in the patch thread: In-Reply-To and References are the cover
# letter's Message-ID, the subject "Re: [PATCH v2 0/2] <its title>:
# <job.metric> +N% regression", and the body names the series.  Its
# author (the cover letter's From:) is not mailed: an upload's mail came
# through no list that alerts.email.lists[] names, and its From: is
# whatever the mbox says.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_alerts.sh"
. "$(dirname "$0")/lib_inbox.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }
alert_servers_or_skip alerts_series
SMTP=$PW_TMP/smtp

loop_series 2 "memcg: make the loop longer"

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
echo "$ALERTS_YAML" >>"$PW_DIR/daemon.yaml"
# Base and candidate in turns, one run each, so a drift of the host's
# speed between the two jobs does not read as the change (t0420).
slowprog_job min_effect=20% runs=5 max_runs=8 rounds=5 timeout=60s
pin_yaml "$PW_DIR/jobs/slowprog.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
series_post_applied
runner_config r1
start_runner r1

has_mail() { ls "$SMTP"/mail-*.eml >/dev/null 2>&1; }
wait_until 240 has_mail && pass report_sent ||
    { fail report_sent "$(sql 'SELECT kind, state, last_error FROM alerts'); $(sql "SELECT metric, verdict, final, base_median, cand_median, ci_low, ci_high, n_base, n_cand, coalesce(note, '') FROM comparisons WHERE metric = 'time_ms'"); runs: $(sql "SELECT group_concat(r.job_id || ':' || m.value, ' ') FROM runs r JOIN metrics m ON m.run_id = r.id WHERE m.name = 'time_ms'")"; show_logs; finish; }
/usr/bin/python3 - "$SMTP" "$cover_id" <<'PY' && pass threaded_under_the_series || fail threaded_under_the_series "see above"
import email, email.policy, glob, json, re, sys
d, cover = sys.argv[1:]
files = glob.glob(d + "/mail-*.eml")
m = email.message_from_bytes(open(files[0], "rb").read(), policy=email.policy.default)
env = json.loads(open(d + "/envelopes.jsonl").readline())
ok = len(files) == 1
def check(c, what):
    global ok
    if not c:
        print("# " + what); ok = False
check(m["In-Reply-To"] == cover, "In-Reply-To %r, cover %r" % (m["In-Reply-To"], cover))
check(cover in str(m["References"]), "References %r" % str(m["References"]))
check(re.fullmatch(r"Re: \[PATCH v2 0/2\] memcg: make the loop longer: slowprog\.time_ms \+[0-9.]+% regression", str(m["Subject"])), "subject %r" % str(m["Subject"]))
# Not the series' author (cy@example.org, who sent the cover letter).
check(sorted(env["rcpt"]) == ["perf-reports@example.org"], "rcpt %r" % env["rcpt"])
check("cy@example.org" not in str(m["To"]), "To %r" % str(m["To"]))
b = m.get_content()
check("series: [PATCH v2 0/2] memcg: make the loop longer" in b, "body:\n" + b)
check("slowprog.time_ms" in b, "metric")
sys.exit(0 if ok else 1)
PY
stop_pid "$PW_DAEMON_PID"
finish
