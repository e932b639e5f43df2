#!/usr/bin/env bash
# check: parallel
# The watcher over HTTP: a real server on 127.0.0.1 (git http-backend
# behind tests/unit/git_httpd.py; libgit2 has no dumb-HTTP client, so a
# static server cannot answer the watcher's ref check).  New commits with
# path filtering, a server that goes away (fetch errors, backoff, the
# daemon serves on) and comes back on the same port, and an HTTP URL that
# wants credentials (an auth error, never a prompt).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

HTTPD=$(cd "$(dirname "$0")/../unit" && pwd)/git_httpd.py
ROOT=$PW_TMP/srv
mkdir -p "$ROOT"
src_init "$ROOT/app.git.src"
git clone -q --bare "$ROOT/app.git.src" "$ROOT/app.git"
WORK=$ROOT/app.git.src
g "$WORK" remote add origin "$ROOT/app.git"
b0=$(g "$WORK" rev-parse HEAD)

start_httpd() {	# start_httpd [PORT]: sets HTTPD_PID and PORT
	spawn "$PW_TMP/httpd.out" /usr/bin/env python3 "$HTTPD" "$ROOT" ${1:-}
	HTTPD_PID=$!
	wait_until 10 test -s "$PW_TMP/httpd.out"
	PORT=$(head -1 "$PW_TMP/httpd.out")
}
start_httpd
[ -n "$PORT" ] || { fail httpd_starts "$(cat "$PW_TMP/httpd.out")"; finish; }

daemon_config "$PW_TMP/d" r1
tree_yaml web "http://127.0.0.1:$PORT/app.git" master "mm"
cat >"$PW_DIR/jobs/j.yaml" <<'YAML'
name: j
parser: keyvalue
command: [echo, "x=1"]
trigger:
  trees: [web]
  paths: [mm/a.c]
metrics:
  x: {better: higher}
runs: 1
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
if wait_tip master "$b0"; then pass http_first_copy; else fail http_first_copy "$(cat "$PW_TMP/trees.json")"; show_logs; finish; fi

c1=$(commit "$WORK" README "docs")
c2=$(commit "$WORK" mm/a.c "mm: change")
g "$WORK" push -q origin master
if wait_tip master "$c2"; then pass http_new_commits; else fail http_new_commits "$(cat "$PW_TMP/trees.json")"; show_logs; fi
[ "$(sql "SELECT sha || ' ' || paths FROM commits WHERE sha IN ('$c1', '$c2') ORDER BY id")" = "$c1 []
$c2 [\"mm\"]" ] && pass http_paths || fail http_paths "$(sql 'SELECT sha, paths FROM commits')"
[ "$(sql "SELECT c.sha FROM pairs p JOIN jobs j ON j.id = p.cand_job_id JOIN commits c ON c.id = j.commit_id")" = "$c2" ] &&
    pass http_trigger_on_path || fail http_trigger_on_path "$(sql 'SELECT * FROM pairs')"

# The server goes away...
stop_pid "$HTTPD_PID" KILL
failing() { [ "$(tree_field "t['status']")" = error ]; }
if wait_until 20 failing; then pass server_gone_is_an_error; else fail server_gone_is_an_error "$(cat "$PW_TMP/trees.json")"; fi
tree_field "t['last_error']" | grep -q "127.0.0.1" && pass error_names_the_server ||
    fail error_names_the_server "$(cat "$PW_TMP/trees.json")"
grep -q "tree web: fetch failed (1 in a row" "$PW_DIR/daemon.log" && pass failure_logged_with_tree ||
    fail failure_logged_with_tree "$(tail -5 "$PW_DIR/daemon.log")"
[ "$(http GET /api/v1/jobs)" = 200 ] && pass daemon_serves_meanwhile || fail daemon_serves_meanwhile "jobs"
# ...and comes back on the same port with a new commit.
c3=$(commit "$WORK" mm/a.c "mm: again")
g "$WORK" push -q origin master
start_httpd "$PORT"
if wait_tip master "$c3" 40; then pass server_back; else fail server_back "$(cat "$PW_TMP/trees.json")"; show_logs; fi
[ "$(tree_field "t['status']")" = ok ] && [ "$(tree_field "t['last_error']")" = None ] &&
    pass status_ok_again || fail status_ok_again "$(cat "$PW_TMP/trees.json")"
[ "$(sql "SELECT count(*) FROM pairs")" = 2 ] && pass pair_after_outage || fail pair_after_outage "$(sql 'SELECT count(*) FROM pairs')"

# A second tree whose server asks for credentials: SIGHUP adds it.
cat >"$PW_TMP/auth.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
spawn "$PW_TMP/auth.out" /usr/bin/env python3 "$PW_TMP/auth.py"
wait_until 10 test -s "$PW_TMP/auth.out"
APORT=$(head -1 "$PW_TMP/auth.out")
tree_yaml locked "http://127.0.0.1:$APORT/x.git" master
kill -HUP "$PW_DAEMON_PID"
auth_err() {
	curl -s "$PW_URL/api/v1/trees" >"$PW_TMP/all.json"
	python3 -c '
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["trees"]}
sys.exit(0 if t["locked"]["status"] == "error" and t["web"]["status"] == "ok" else 1)' "$PW_TMP/all.json" 2>/dev/null
}
if wait_until 20 auth_err; then pass auth_failure_is_an_error; else fail auth_failure_is_an_error "$(cat "$PW_TMP/all.json")"; fi
grep "tree locked: fetch failed" "$PW_DIR/daemon.log" | grep -qi "username\|auth\|credential" &&
    pass auth_failure_logged ||
    fail auth_failure_logged "$(tail -5 "$PW_DIR/daemon.log")"
stop_pid "$PW_DAEMON_PID"
finish
