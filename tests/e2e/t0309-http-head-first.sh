#!/usr/bin/env bash
# check: parallel
# Route, method and authorisation are decided on the headers, before the
# daemon buffers a body byte.  48 connections at once each push an 8 MiB
# body (http.max_body) at routes they may not use: anonymous and
# wrong-token POSTs to the admin and runner routes, with and without
# Content-Length, a POST to an unknown route, a body on a GET, and a
# runner's chunked body to a route that takes 32 KiB.  Each is answered
# (401/403/404/413) and the daemon's resident memory stays within 48 MiB
# of where it was (buffering the bodies first took it up by hundreds).
# One authorised upload of 2 MiB is still taken whole.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d" r1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
ADM=$(token_of admin)
R1=$(token_of r1)

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PW_DAEMON_PID/status"; }
# Warm the daemon (threads, store, caches) before the baseline.
for i in 1 2 3 4 5; do http GET /api/v1/jobs >/dev/null; http GET / >/dev/null; done
base=$(rss_kb)

# Sample the RSS every 20 ms while the bodies are pushed.
(
	peak=0
	while [ ! -e "$PW_TMP/stop" ]; do
		v=$(rss_kb) && [ "${v:-0}" -gt "$peak" ] && peak=$v && echo "$peak" >"$PW_TMP/peak"
		sleep 0.02
	done
) &
SAMPLER=$!
PW_PIDS+=("$SAMPLER")

python3 - "$PW_PORT" "$(cat "$R1")" "$PW_TMP/statuses" <<'PY'
import socket, sys, threading
port, runner, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
BODY = 8 * 1024 * 1024
kinds = [
    ("POST", "/api/v1/series", "", True),
    ("POST", "/api/v1/submit", "", True),
    ("POST", "/api/v1/series", "", False),
    ("POST", "/api/v1/jobs/1/runs", "Authorization: Bearer wrong-token-xyz\r\n", True),
    ("POST", "/api/v1/submit", "Authorization: Bearer " + runner + "\r\n", True),
    ("POST", "/api/v1/no/such/route", "", True),
    ("GET", "/api/v1/jobs", "", True),
    ("POST", "/api/v1/runners/heartbeat", "Authorization: Bearer " + runner + "\r\n", False),
]
statuses = [None] * 48
chunk = b"x" * 65536

def push(i):
    method, path, extra, with_len = kinds[i % len(kinds)]
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\n" % (
        method, path, extra)
    head += ("Content-Length: %d\r\n" % BODY) if with_len else "Transfer-Encoding: chunked\r\n"
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head.encode() + b"\r\n")
    try:
        sent = 0
        while sent < BODY:
            if with_len:
                s.sendall(chunk)
            else:
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
        if not with_len:
            s.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server answered and closed: what we want
    try:
        reply = s.recv(200)
        statuses[i] = reply.split(b" ")[1].decode() if reply.startswith(b"HTTP/1.1 ") else "none"
    except OSError:
        statuses[i] = "reset"
    s.close()

threads = [threading.Thread(target=push, args=(i,)) for i in range(48)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out, "w") as f:
    for i, st in enumerate(statuses):
        k = kinds[i % len(kinds)]
        f.write("%s %s %s %s\n" % (k[0], k[1], "len" if k[3] else "chunked", st))
PY
touch "$PW_TMP/stop"
wait "$SAMPLER" 2>/dev/null
peak=$(cat "$PW_TMP/peak" 2>/dev/null || echo 0)
growth=$(((peak - base) / 1024))
echo "# rss base $((base / 1024)) MiB, peak $((peak / 1024)) MiB, growth $growth MiB"
[ "$growth" -lt 48 ] && pass rss_flat_under_48_big_posts ||
    fail rss_flat_under_48_big_posts "grew $growth MiB (base $((base / 1024)), peak $((peak / 1024)))"

# Every push that got an answer got a refusal, never a 2xx or a 400 (a
# 400 would mean the body was read and parsed); most got one at all.
bad=$(awk '$4 ~ /^[0-9]+$/ && $4 !~ /^(401|403|404|405|413)$/' "$PW_TMP/statuses")
answered=$(awk '$4 ~ /^[0-9]+$/' "$PW_TMP/statuses" | wc -l)
[ -z "$bad" ] && [ "$answered" -ge 24 ] && pass big_posts_refused_on_head ||
    fail big_posts_refused_on_head "$answered answered; $(sort "$PW_TMP/statuses" | uniq -c | tr '\n' ';')"

# The same refusals one by one, with curl: status and what they name.
head -c $((6 * 1024 * 1024)) /dev/zero >"$PW_TMP/big"
expect() {	# expect NAME STATUS WORD CURL-ARGS...
	local name=$1 want=$2 word=$3 got
	shift 3
	got=$(curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 30 "$@")
	if [ "$got" = "$want" ] && grep -q -- "$word" "$PW_TMP/body"; then
		pass "$name"
	else
		fail "$name" "status $got (want $want): $(head -c 200 "$PW_TMP/body")"
	fi
}
expect anon_series_401 401 "missing bearer token" -X POST --data-binary "@$PW_TMP/big" "$PW_URL/api/v1/series"
expect runner_token_on_admin_403 403 "admin token" -X POST -H "Authorization: Bearer $(cat "$R1")" \
    --data-binary "@$PW_TMP/big" "$PW_URL/api/v1/series"
expect get_with_body_413 413 "more than the 0 GET /api/v1/jobs takes" -X GET \
    --data-binary '{"x":1}' "$PW_URL/api/v1/jobs"
expect login_form_capped 413 "POST /login takes" -X POST --data-binary "@$PW_TMP/big" "$PW_URL/login"
expect runner_small_route_413 413 "more than the 32768 POST /api/v1/runners/heartbeat" -X POST \
    -H "Authorization: Bearer $(cat "$R1")" --data-binary "@$PW_TMP/big" "$PW_URL/api/v1/runners/heartbeat"
expect runner_chunked_capped 413 "more than the 32768 bytes this route takes" -X POST \
    -H "Authorization: Bearer $(cat "$R1")" -H 'Transfer-Encoding: chunked' \
    --data-binary "@$PW_TMP/big" "$PW_URL/api/v1/runners/heartbeat"
# An admin with the right token still posts a large body whole: the
# series route parses it (400 naming the mbox, not 401/413).
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' a >"$PW_TMP/two"
got=$(curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 30 -X POST \
    -H "Authorization: Bearer $(cat "$ADM")" --data-binary "@$PW_TMP/two" "$PW_URL/api/v1/series")
case $got in
401 | 403 | 413) fail admin_large_body_read "status $got: $(head -c 200 "$PW_TMP/body")" ;;
*) pass admin_large_body_read ;;
esac
[ "$(http GET /healthz)" = 200 ] && pass served_after || fail served_after "$(cat "$PW_TMP/body")"
finish
