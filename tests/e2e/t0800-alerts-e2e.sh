#!/usr/bin/env bash
# Alerts end to end, with real servers on 127.0.0.1: the daemon watches a
# repository (file://, poll 1s); a commit makes a program twice as slow
# (CPU time, min_effect 5%: far above the noise of a CPU-time measurement
# on a loaded VM, where 20% steps came out inconclusive in 20 runs); a
# real runner builds and measures both sides; the verdict is a regression
# and becomes one report: one mail and one webhook event.
#
# Delivery is durable: the SMTP server is down when the report is made
# (the mail stays pending with its error), the webhook receiver answers
# 500 twice before 200 (retried with backoff), and the daemon is
# SIGKILLed before the mail could go.  Started again with the SMTP server
# up, the mail is delivered exactly once; a further restart sends
# nothing more (the report is deduplicated).  The mail is checked for
# its headers, encoding (a non-ASCII, hostile author name), threading and
# body; the webhook for its HMAC and fields.  A captured delivery
# replayed to the receiver, as sent or with a fresh timestamp, is
# refused: the signature covers X-Perfwatch-Timestamp.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }
/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null ||
    { echo "SKIP alerts_e2e: python3-aiosmtpd is not installed (make deps)"; finish; }
SERVERS=$(cd "$(dirname "$0")" && pwd)/alert_servers.py

SMTP=$PW_TMP/smtp
HOOK=$PW_TMP/hook
mkdir -p "$SMTP" "$HOOK"
echo "s3cret-$$" >"$PW_TMP/hook.secret"
# Signatures older than 3 s are refused (the daemon signs each attempt
# as it sends it; the replay below waits them out).
spawn "$HOOK/log" /usr/bin/python3 "$SERVERS" hook "$HOOK" "s3cret-$$" fail2 3
HOOK2=$PW_TMP/hook429
mkdir -p "$HOOK2"
spawn "$HOOK2/log" /usr/bin/python3 "$SERVERS" hook "$HOOK2" "s3cret-$$" 429
wait_for 10 test -s "$HOOK/port" && wait_for 10 test -s "$HOOK2/port" ||
    { fail hook_server "no port"; finish; }
# A port nothing listens on yet: the SMTP server comes up later on it.
SMTP_PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

SRC=$PW_TMP/app
loop_prog_init "$SRC"
g "$SRC" add -A
g "$SRC" commit -qm "prog: a loop"
c1=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
public_url: https://perf.example.org
alerts:
  email:
    smtp: smtp://127.0.0.1:$SMTP_PORT
    from: "perfwatch <perfwatch@example.org>"
    to: [perf-reports@example.org]
    lists:
      - tree: app
        cc: ["App List <app@lists.example.org>"]
  webhooks:
    - url: http://127.0.0.1:$(cat "$HOOK/port")/hook
      secret_file: $PW_TMP/hook.secret
      slack: true
      timeout: 5s
    - url: http://127.0.0.1:$(cat "$HOOK2/port")/rate-limited
      secret_file: $PW_TMP/hook.secret
  backoff: 1s
  backoff_max: 2s
  poll: 1s
YAML
# Twice the CPU time against min_effect 5%.  Up to 20 runs: this VM's
# CPU time per run swings by tens of percent under a noisy neighbour
# (base 22 ms, candidate 23-42 ms for +20%).  Base and candidate take
# turns, one run each (docs/CONFIG.md rounds): the host's drift falls on
# both sides alike (t0803 and t0850 failed in CI on drift between a
# pair's two jobs).
slowprog_job min_effect=5% runs=5 max_runs=20 rounds=5 timeout=60s
pin_yaml "$PW_DIR/jobs/slowprog.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
runner_config r1
start_runner r1

# The slower commit, by an author whose name is not ASCII and holds
# characters that must not reach a header raw.
echo '#define LOOPS 80000000UL' >"$SRC/loops.h"
GIT_AUTHOR_NAME='Zoë "Ünïcode" <Tëster>, Bcc: evil@example.com' \
    GIT_AUTHOR_EMAIL=zoe@example.org \
    g "$SRC" commit -qam "prog: twice the loop — slower"
c2=$(g "$SRC" rev-parse HEAD)

mail_row() {
	sql "SELECT state || '|' || attempts || '|' || coalesce(last_error, '') FROM alerts WHERE kind = 'email'"
}
mail_tried() { case "$(mail_row)" in pending\|[1-9]*) return 0 ;; esac; return 1; }
if wait_until 240 mail_tried; then
	pass report_made
else
	fail report_made "alerts: $(sql 'SELECT id, kind, state, attempts, last_error FROM alerts')
comparisons: $(sql "SELECT metric, verdict, change_pct, n_base, n_cand FROM comparisons")
pairs (a suspect pair alerts nobody, docs/HOST.md): $(sql "SELECT id, analysed, suspect FROM pairs")"
	show_logs; finish
fi
# A clean 2x step is a regression; on a loaded 2-core CI machine the
# analysis sometimes calls the candidate's spread unstable instead (both
# are findings that alert; docs/ANALYSIS.md).  The mail must say which.
V=$(sql "SELECT verdict FROM comparisons WHERE metric = 'time_ms'")
case $V in
regression|unstable) pass "verdict_alertable ($V)" ;;
*) fail verdict_alertable "$(sql "SELECT metric, verdict, change_pct FROM comparisons")" ;;
esac
case "$(mail_row)" in
*onnect*|*refused*) pass mail_pending_with_error ;;
*) fail mail_pending_with_error "$(mail_row)" ;;
esac
[ "$(sql "SELECT count(*) FROM alerts")" = 3 ] && pass one_mail_one_event_per_hook ||
    fail one_mail_one_event_per_hook "$(sql 'SELECT id, kind, key, state FROM alerts')"

# The webhooks: 500, 500, then 200; and 429 (Retry-After: 1), then 200.
hook_sent() { [ "$(sql "SELECT group_concat(state) FROM alerts WHERE kind = 'webhook'")" = sent,sent ]; }
wait_until 30 hook_sent && pass hook_retried_then_sent ||
    fail hook_retried_then_sent "$(sql "SELECT state, attempts, last_error FROM alerts WHERE kind = 'webhook'")"

# /metrics and the API while the mail is pending.
curl -s "$PW_URL/metrics" >"$PW_TMP/metrics"
grep -q '^perfwatch_alerts_pending 1$' "$PW_TMP/metrics" &&
    grep -q '^perfwatch_alerts_failed_total 0$' "$PW_TMP/metrics" &&
    pass metrics_pending || fail metrics_pending "$(grep alerts "$PW_TMP/metrics")"
code=$(http GET '/api/v1/alerts?state=pending')
[ "$code" = 200 ] && [ "$(jfield alerts.0.kind <"$PW_TMP/body")" = email ] &&
    pass api_alerts || fail api_alerts "$code $(cat "$PW_TMP/body")"

# SIGKILL before the mail could go; then the SMTP server comes up.
stop_pid "$PW_DAEMON_PID" KILL
spawn "$SMTP/log" /usr/bin/python3 "$SERVERS" smtp "$SMTP" "$SMTP_PORT"
wait_for 10 test -s "$SMTP/port" || { fail smtp_server "$(cat "$SMTP/log")"; finish; }
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
mail_sent() { [ "$(sql "SELECT state FROM alerts WHERE kind = 'email'")" = sent ]; }
wait_until 30 mail_sent && pass mail_sent_after_restart ||
    { fail mail_sent_after_restart "$(mail_row)"; show_logs; }

# Another restart: nothing is sent again.
stop_pid "$PW_DAEMON_PID"
start_daemon "$PW_TMP/d" || { fail daemon_restarts_again "see log"; finish; }
sleep 4
nmail=$(ls "$SMTP"/mail-*.eml 2>/dev/null | wc -l)
nhook=$(wc -l <"$HOOK/hooks.jsonl")
[ "$nmail" = 1 ] && pass exactly_one_mail || fail exactly_one_mail "$nmail mails"
[ "$nhook" = 3 ] && pass hook_three_attempts_one_event ||
    fail hook_three_attempts_one_event "$nhook posts"
[ "$(sql "SELECT count(*) FROM alerts")" = 3 ] && pass no_new_alerts ||
    fail no_new_alerts "$(sql 'SELECT id, kind, key, state FROM alerts')"

/usr/bin/python3 - "$HOOK2" <<'PY' && pass hook_retry_after || fail hook_retry_after "$(cat "$HOOK2/hooks.jsonl")"
import json, sys
p = [json.loads(l) for l in open(sys.argv[1] + "/hooks.jsonl")]
assert len(p) == 2 and all(x["ok"] for x in p), p
assert p[1]["time"] - p[0]["time"] >= 0.9, (p[0]["time"], p[1]["time"])
assert p[0]["headers"]["X-Perfwatch-Delivery"] == p[1]["headers"]["X-Perfwatch-Delivery"]
assert "text" not in json.loads(p[1]["body"])   # slack: false
PY
/usr/bin/python3 - "$SMTP" "$HOOK" "$c2" "$V" <<'PY' && pass mail_and_hook_content || fail mail_and_hook_content "see above"
import email, email.policy, json, os, sys, glob
smtp, hook, sha, verdict = sys.argv[1:]
raw = open(glob.glob(smtp + "/mail-*.eml")[0], "rb").read()
env = json.loads(open(smtp + "/envelopes.jsonl").readline())
m = email.message_from_bytes(raw, policy=email.policy.default)
def check(c, what):
    if not c:
        print("# mail: " + what)
        print(raw.decode("utf-8", "replace")[:3000])
        sys.exit(1)
# The envelope: the author, the configured To and the tree's Cc list;
# the hostile "Bcc:" in the author's name adds nobody.
check(sorted(env["rcpt"]) == sorted(["zoe@example.org", "perf-reports@example.org",
      "app@lists.example.org"]), "rcpt %r" % env["rcpt"])
check(env["from"] == "perfwatch@example.org", "from %r" % env["from"])
hdr = raw.split(b"\r\n\r\n", 1)[0].decode("ascii")   # headers are ASCII
check(all(ord(ch) < 128 for ch in hdr), "non-ASCII header")
check("\nBcc:" not in hdr and "evil@example.com>" not in hdr.replace("\r\n ", " "),
      "header injection")
for h in ("Date", "Message-ID", "From", "To", "Cc", "Subject", "MIME-Version",
          "Content-Type", "Content-Transfer-Encoding"):
    check(m[h] is not None, "missing " + h)
check(str(m["Subject"]).startswith("[app:master] " + sha[:12] +
      " prog: twice the loop — slower: slowprog.time_ms +"), "subject %r" % str(m["Subject"]))
check(str(m["Subject"]).endswith("% " + verdict), "subject %r" % str(m["Subject"]))
to = str(m["To"])
check("Zoë" in to and "zoe@example.org" in to, "To %r" % to)
check("app@lists.example.org" in str(m["Cc"]), "Cc")
body = m.get_content()
for s in (verdict + " of slowprog.time_ms", "commit: " + sha[:12],
          "test machine: r1", "95% CI", "https://perf.example.org/commit/" + sha,
          "| Reported-by:", "| Link: https://perf.example.org/commit/" + sha,
          "to reproduce", "cgroup: root",
          # No kernel: block: both sides on the running kernel, which no
          # job built (docs/KERNEL.md), as the runs reported it.
          "  kernel build ids: base none, candidate none",
          "    base: %s build none " % os.uname().release,
          "kernel builds: none: both sides ran on the test machine's running kernel"):
    check(s in body, "body lacks %r" % s)
# No inbox, no public archive: no Closes: tag to make up.
check("| Closes:" not in body, "a Closes: without an archive")
long = [l for l in body.splitlines() if len(l) > 78 and "://" not in l]
check(not long, "long lines %r" % long)
for l in hdr.split("\r\n"):
    check(len(l) <= 78, "long header line %r" % l)
posts = [json.loads(l) for l in open(hook + "/hooks.jsonl")]
assert all(p["ok"] for p in posts), "bad signature"
ids = {p["headers"]["X-Perfwatch-Delivery"] for p in posts}
assert len(ids) == 1, ids
b = json.loads(posts[-1]["body"])
assert posts[-1]["headers"]["X-Perfwatch-Event"] == "report", posts[-1]["headers"]
assert b["event"] == "report" and b["verdict"] == verdict, b
assert b["commit"]["sha"] == sha and b["tree"] == "app" and b["branch"] == "master", b
assert b["benchmark"] == "slowprog" and b["host"] == "r1", b
assert [x["metric"] for x in b["metrics"]] == ["time_ms"], b["metrics"]
for side in ("base", "candidate"):
    k = b["kernel"][side]
    # runs: every measured run reported it (5, more when more were asked).
    assert (k["build_id"], k["release"], k["boot"]) == ("none", os.uname().release, "none") and k["runs"] >= 5, b["kernel"]
assert b["kernel"]["warning"] is None, b["kernel"]
x = b["metrics"][0]
assert x["verdict"] == verdict and x["change_pct"] > 5, x
assert verdict != "regression" or x["ci_low_pct"] > 0, x
assert b["url"] == "https://perf.example.org/commit/" + sha, b["url"]
assert b["text"].startswith("[app:master]"), b["text"]
# Retries were spaced by the backoff (1 s, then 1-2 s).
t = [p["time"] for p in posts]
assert t[1] - t[0] >= 0.4 and t[2] - t[1] >= 0.4, t
PY
# The replay, against the same receiver: a captured POST sent again
# after the receiver's 3 s, and the same with its timestamp made now.
/usr/bin/python3 - "$HOOK" <<'PY' && pass webhook_replay_refused || fail webhook_replay_refused "$(tail -2 "$HOOK/hooks.jsonl")"
import json, sys, time, urllib.error, urllib.request
d = sys.argv[1]
port = int(open(d + "/port").read())
p = [json.loads(l) for l in open(d + "/hooks.jsonl")][-1]
assert p["ok"], p
h = {k: v for k, v in p["headers"].items() if k.lower() not in ("host", "content-length")}
ts = int(h["X-Perfwatch-Timestamp"])
def post(headers):
    r = urllib.request.Request("http://127.0.0.1:%d/hook" % port, p["body"].encode(), headers)
    try:
        return urllib.request.urlopen(r).status
    except urllib.error.HTTPError as e:
        return e.code
time.sleep(max(0, ts + 4.5 - time.time()))
assert post(h) == 401, "a replay as sent was accepted"
h["X-Perfwatch-Timestamp"] = str(int(time.time()))
assert post(h) == 401, "a replay with a fresh timestamp was accepted"
last = [json.loads(l) for l in open(d + "/hooks.jsonl")][-2:]
assert [x["fresh"] for x in last] == [False, True] and not any(x["ok"] for x in last), last
PY
if [ "${PW_KEEP:-0}" = 1 ] || [ -n "${PW_ALERT_SAMPLES:-}" ]; then
	mkdir -p "${PW_ALERT_SAMPLES:-$PW_TMP/samples}"
	cp "$SMTP"/mail-1.eml "${PW_ALERT_SAMPLES:-$PW_TMP/samples}/report.eml"
	tail -1 "$HOOK/hooks.jsonl" >"${PW_ALERT_SAMPLES:-$PW_TMP/samples}/hook.json"
fi

# The dashboard page of the commit lists its alerts.
curl -s "$PW_URL/commit/$c2" >"$PW_TMP/page.html"
grep -q 'Alerts' "$PW_TMP/page.html" && grep -q 'sent' "$PW_TMP/page.html" &&
    pass commit_page_alerts || fail commit_page_alerts "$(grep -i alert "$PW_TMP/page.html" | head)"
pw alerts >"$PW_TMP/cli.txt" 2>&1
grep -q 'email' "$PW_TMP/cli.txt" && grep -q 'webhook' "$PW_TMP/cli.txt" &&
    pass cli_alerts || fail cli_alerts "$(cat "$PW_TMP/cli.txt")"
stop_pid "$PW_DAEMON_PID"
finish
