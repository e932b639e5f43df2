#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: the runs are uploaded by curl.)
# Secrets inside URLs stay off the public routes, pages and the log: a
# tree whose URL carries credentials (https://alice:TOKEN@host/...) and
# a webhook whose path is the secret (Slack-style).  The webhook fails
# twice (HTTP 500, so its last_error is set) and is then delivered; the
# tree's fetch fails.  Anonymous GET /api/v1/trees shows the tree URL as
# https://***@host/..., /api/v1/alerts, the alerts pages and the commit
# page show the hook as scheme://host/..., and no public reply nor the
# daemon's log holds either secret, while the hook did get its posts.
# An alert's page shows its delivery; an unknown id is a 404 page.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

TREE_SECRET=TreeTok$$x9
HOOK_SECRET=HookSec$$y7
HOOK=$PW_TMP/hook
hook_start "$HOOK" fail2 || { fail hook_server "no port"; finish; }

SRC=$PW_TMP/app
src_init "$SRC"
base=$(g "$SRC" rev-parse HEAD)
cand=$(commit "$SRC" f1.txt "change 1")

daemon_config "$PW_TMP/d" r1
web_job_file "$PW_DIR"
tree_yaml app "file://$SRC" master
tree_yaml priv "https://alice:$TREE_SECRET@127.0.0.1:1/linux.git" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
alerts:
  webhooks:
    - url: $HOOK_URL/T000/B000/$HOOK_SECRET
      secret_file: $HOOK/secret
      timeout: 5s
  backoff: 1s
  backoff_max: 1s
  poll: 1s
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$cand" 60 || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
[ "$(http POST /api/v1/runners/register "$(token_of r1)" '{"name":"r1"}')" = 200 ] ||
    { fail register "$(cat "$PW_TMP/body")"; finish; }
web_fill_commit app "$base" "$cand" 1000 700 || fail fill "$(head -c 300 "$PW_TMP/body")"

delivered() {
	[ "$(sql "SELECT count(*) FROM alerts WHERE kind = 'webhook' AND sent IS NOT NULL")" -ge 1 ]
}
if wait_until 60 delivered; then
	pass webhook_delivered_after_failures
else
	fail webhook_delivered_after_failures "$(sql "SELECT id, state, attempts, last_error FROM alerts")"
	show_logs
fi
priv_failed() {
	http GET /api/v1/trees >/dev/null &&
	    python3 -c '
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["trees"]}
sys.exit(0 if t.get("priv", {}).get("last_error") else 1)' "$PW_TMP/body"
}
wait_until 30 priv_failed || fail priv_fetch_failed "$(head -c 600 "$PW_TMP/body")"
# A failure was recorded in the store with the host in it (HTTP 500).
[ "$(sql "SELECT count(*) FROM alerts WHERE kind = 'webhook' AND attempts >= 2")" -ge 1 ] &&
    pass webhook_failed_first || fail webhook_failed_first "$(sql "SELECT id, attempts, last_error FROM alerts")"
[ "$(wc -l <"$HOOK/hooks.jsonl")" -ge 3 ] && pass hook_got_posts ||
    fail hook_got_posts "$(wc -l <"$HOOK/hooks.jsonl") posts"

http GET /api/v1/trees >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass trees_url_redacted ||
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["trees"]}
assert t["priv"]["url"] == "https://***@127.0.0.1:1/linux.git", t["priv"]
assert t["app"]["url"].startswith("file://"), t["app"]
PY
    fail trees_url_redacted "$(head -c 600 "$PW_TMP/body")"

http GET /api/v1/alerts >/dev/null
port=$(cat "$HOOK/port")
python3 - "$PW_TMP/body" "$port" <<'PY' && pass alerts_hook_host_only ||
import json, sys
a = [x for x in json.load(open(sys.argv[1]))["alerts"] if x["kind"] == "webhook"]
assert a, "no webhook alert"
for x in a:
    assert x["target"] == "http://127.0.0.1:%s/..." % sys.argv[2], x
PY
    fail alerts_hook_host_only "$(head -c 600 "$PW_TMP/body")"

# Every public read and page, anonymous: neither secret anywhere.
id=$(sql "SELECT id FROM alerts WHERE kind = 'webhook' ORDER BY id LIMIT 1")
leaks=
for p in /api/v1/trees /api/v1/alerts "/api/v1/alerts/$id" /alerts "/alerts/$id" "/commit/$cand" \
    "/api/v1/commits/$cand" / /api/v1/overview /regressions /api/v1/regressions \
    /hosts /jobs /api/v1/jobs /api/v1/hosts /api/v1/commits /metrics; do
	c=$(http GET "$p")
	[ "$c" = 200 ] || leaks+="$p: status $c; "
	grep -qF -e "$TREE_SECRET" -e "$HOOK_SECRET" "$PW_TMP/body" && leaks+="$p; "
done
[ -z "$leaks" ] && pass no_secret_on_public_routes || fail no_secret_on_public_routes "$leaks"
grep -q "127.0.0.1:$port/\.\.\." <(http GET "/commit/$cand" >/dev/null; cat "$PW_TMP/body") &&
    pass commit_page_shows_hook_host || fail commit_page_shows_hook_host "no host on the page"

# The alerts page links each alert to its page, which shows the delivery
# as GET /api/v1/alerts/{id} does, the hook by its host only.
page alerts_list_links_alert /alerts "href=\"/alerts/$id\""
state=$(sql "SELECT state FROM alerts WHERE id = $id")
attempts=$(sql "SELECT attempts FROM alerts WHERE id = $id")
page alert_page "/alerts/$id" "<h1>Alert $id</h1>" \
    "<th>kind</th><td>webhook" "<th>state</th><td>$state</td>" \
    "<th>attempts</th><td>$attempts</td>" \
    "<th>to</th><td>http://127.0.0.1:$port/...</td>" "<h2>Payload</h2>"
code=$(http GET /alerts/999999)
[ "$code" = 404 ] && grep -q '<h1>404 Not found</h1>' "$PW_TMP/body" &&
    pass alert_page_unknown_404 || fail alert_page_unknown_404 "$code $(head -c 300 "$PW_TMP/body")"
code=$(http GET "/alerts/${id}x")
check alert_page_bad_id_404 [ "$code" = 404 ]

# The log names the hook's host and the tree, never the secrets.
grep -q "delivered to http://127.0.0.1:$port/\.\.\." "$PW_DIR/daemon.log" &&
    pass log_names_hook_host || fail log_names_hook_host "$(grep -i webhook "$PW_DIR/daemon.log" | tail -3)"
if grep -qF -e "$TREE_SECRET" -e "$HOOK_SECRET" "$PW_DIR/daemon.log"; then
	fail no_secret_in_log "$(grep -F -e "$TREE_SECRET" -e "$HOOK_SECRET" "$PW_DIR/daemon.log" | head -3)"
else
	pass no_secret_in_log
fi
finish
