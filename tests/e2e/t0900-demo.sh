#!/usr/bin/env bash
# make demo's script, as `DEMO_ONCE=1 make demo` runs it, on the sanitizer
# build: a real daemon and runner watch the demo's git tree (14 commits on
# a model of the memcg per-cpu charge stock) and run a tcp_rr memcg-tax
# pair; exit 0 only when the verdicts are the expected ones.  Checked here
# as well, from its output: the fix is an improvement, the no-op commit
# unchanged, the mailed revert of the fix a regression, the change point
# at the fix, the memcg tax shown, run progress shown, the revert's report
# mailed to the local SMTP server under the patch mail (links on the
# daemon's real port) and posted to the webhook receiver with a valid
# signature, and nothing it started left running.
. "$(dirname "$0")/lib.sh"

out=$PW_TMP/demo.out
if DEMO_ONCE=1 DEMO_PORT=0 DEMO_DIR=$PW_TMP/demo PERFWATCH_BIN=$PW_BIN \
    timeout 560 scripts/demo.sh >"$out" 2>&1; then
	pass demo-exits-0
else
	fail demo-exits-0 "after ${SECONDS}s: $(tail -n 30 "$out")"
fi
grep -qE 'improvement <- the fix$' "$out" && pass demo-fix-is-an-improvement ||
	fail demo-fix-is-an-improvement "$(grep -- '<- the fix' "$out")"
grep -qE 'unchanged <- no-op$' "$out" && pass demo-noop-is-unchanged ||
	fail demo-noop-is-unchanged "$(grep -A1 -- '<- no-op' "$out")"
grep -qE 'regression <- the mailed revert$' "$out" &&
	pass demo-mailed-revert-is-a-regression ||
	fail demo-mailed-revert-is-a-regression "$(grep -- 'mailed revert' "$out")"
fix=$(git -C "$PW_TMP/demo/src" log --format='%h' --abbrev=12 -1 \
    --grep='trim the per-cpu charge stock' 2>/dev/null)
[ -n "$fix" ] && grep -qE "^  at $fix .*improvement" "$out" &&
	pass demo-change-point-at-the-fix ||
	fail demo-change-point-at-the-fix "fix '$fix': $(sed -n '/change points/,/memcg tax/p' "$out")"
grep -qE 'memcg_tax\.throughput +base +[0-9.]+ +cand +[0-9.]+' "$out" &&
	pass demo-shows-the-memcg-tax ||
	fail demo-shows-the-memcg-tax "$(sed -n '/memcg tax/,/look here/p' "$out")"
# The alerts: read from what the SMTP server and webhook receiver stored.
mid=$(sed -n 's/^Message-I[dD]: *<\(.*\)>.*/\1/p' "$PW_TMP/demo/revert.mbox" | head -n 1)
port=$(cat "$PW_TMP/demo/port" 2>/dev/null)
/usr/bin/python3 - "$PW_TMP/demo" "$mid" "$port" <<'PY' && pass demo-alerts-mailed-and-posted ||
import email, email.policy, glob, json, sys
d, mid, port = sys.argv[1:4]
assert mid and port, (mid, port)
mails = [email.message_from_bytes(open(p, "rb").read(), policy=email.policy.default)
         for p in glob.glob(d + "/mail/mail-*.eml")]
th = [m for m in mails if mid in str(m["In-Reply-To"])]
assert len(th) == 1, [str(m["Subject"]) for m in mails]
m = th[0]
assert str(m["Subject"]).startswith("Re: [PATCH"), m["Subject"]
body = m.get_content()
assert "regression of demo-stock.ns_per_op" in body, body[:400]
assert "http://127.0.0.1:%s/series/" % port in body, body[:800]
posts = [json.loads(l) for l in open(d + "/hooks/hooks.jsonl")]
assert posts and all(p["ok"] for p in posts), posts
assert any(json.loads(p["body"]).get("verdict") == "regression" and
           json.loads(p["body"]).get("series") for p in posts), posts
PY
	fail demo-alerts-mailed-and-posted "$(sed -n '/alerts: reports/,/memcg tax/p' "$out")"
grep -qE '^  job +[0-9]+ +demo-stock +candidate +run [0-9]+/5$' "$out" &&
	pass demo-shows-progress || fail demo-shows-progress "no run i/N line"
grep -q '/commit/[0-9a-f]\{40\}' "$out" && pass demo-says-where-to-look ||
	fail demo-says-where-to-look "no commit link"
# Everything it started is gone: no daemon or runner of this demo left.
sleep 0.5
if pgrep -f "$PW_TMP/demo/" >/dev/null; then
	fail demo-stops-everything "$(pgrep -af "$PW_TMP/demo/")"
else
	pass demo-stops-everything
fi
finish
