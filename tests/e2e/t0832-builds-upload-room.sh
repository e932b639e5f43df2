#!/usr/bin/env bash
# check: parallel
# Uploads at once never pass builds.max_size (8K here): the room an
# upload needs is reserved on its headers, before a body byte is taken,
# and given back when it fails.  A real daemon, curl and raw sockets as
# the builder:
#   - upload A's headers (5000 bytes) are taken and its body not sent:
#     upload B's headers (5000 bytes more) are refused at once, 413
#     naming the bytes promised to uploads in progress;
#   - A's body, which does not hash to its header, is refused: its room
#     is given back, and B's headers are then taken;
#   - B's client goes away after its headers: its room is given back
#     too, and a 5000-byte upload is stored;
#   - three uploads of 3000 bytes at once into the 3192 bytes left: one
#     is stored, two are 413, and the store stays within its cap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"

builds_setup "max_size: 8K" "max_file: 6K"
submit kb "$BASE" "$CAND"
code=$(claim b1)
build=$(jfield build.id <"$PW_TMP/body")
check builder_claims test "$code/$(sql "SELECT state FROM builds WHERE id = $build")" = 200/running
mkdir -p "$PW_TMP/files/x"
head -c 5000 /dev/urandom >"$PW_TMP/files/x/a"
head -c 5000 /dev/urandom >"$PW_TMP/files/x/b"
sha_a=$(sha256sum <"$PW_TMP/files/x/a" | cut -d' ' -f1)
sha_b=$(sha256sum <"$PW_TMP/files/x/b" | cut -d' ' -f1)

# A sends its headers, and its body (the bytes of x/b, which do not
# hash to sha_a) once a.go exists; B sends its headers meanwhile.  Each
# prints its status line.
python3 - "$PW_PORT" "$(cat "$PW_TOKENS/b1.token")" "$build" "$sha_a" \
    "$PW_TMP/files/x/b" "$PW_TMP/a" >"$PW_TMP/a.out" 2>&1 <<'PY' &
import os, socket, sys, time
port, tok, build, sha, body, flag = sys.argv[1:]
data = open(body, "rb").read()
s = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
s.sendall(("PUT /api/v1/builds/%s/files/bzImage HTTP/1.1\r\nHost: x\r\n"
           "Authorization: Bearer %s\r\nX-Perfwatch-Sha256: %s\r\n"
           "Content-Length: %d\r\n\r\n" % (build, tok, sha, len(data))).encode())
for _ in range(300):
    if os.path.exists(flag + ".go"):
        break
    time.sleep(0.1)
s.sendall(data)
print(s.recv(4096).decode(errors="replace").split("\r\n")[0])
PY
apid=$!
# The daemon took A's headers when A's temporary file is there.
for i in $(seq 100); do [ -n "$(ls -A "$ARTS/tmp" 2>/dev/null)" ] && break; sleep 0.1; done
check a_headers_taken test -n "$(ls -A "$ARTS/tmp" 2>/dev/null)"
head_only() {	# head_only NAME SHA LENGTH: the reply's status line and body
	python3 - "$PW_PORT" "$(cat "$PW_TOKENS/b1.token")" "$build" "$1" "$2" "$3" <<'PY'
import socket, sys
port, tok, build, name, sha, n = sys.argv[1:]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=3)
s.sendall(("PUT /api/v1/builds/%s/files/%s HTTP/1.1\r\nHost: x\r\n"
           "Authorization: Bearer %s\r\nX-Perfwatch-Sha256: %s\r\n"
           "Content-Length: %s\r\n\r\n" % (build, name, tok, sha, n)).encode())
try:
    r = s.recv(4096).decode(errors="replace")
    print(r.split("\r\n")[0])
    print(r.split("\r\n\r\n", 1)[-1])
except socket.timeout:
    print("no reply before the body")
PY
}
head_only System.map "$sha_b" 5000 >"$PW_TMP/b.out"
if [ "$(head -1 "$PW_TMP/b.out" | cut -c1-12)" = "HTTP/1.1 413" ] &&
    grep -q "artifact store full (builds.max_size 8192): 0 bytes held by builds that queued jobs need, 5000 promised to uploads in progress" "$PW_TMP/b.out"; then
	pass second_upload_refused_on_its_headers
else
	fail second_upload_refused_on_its_headers "$(cat "$PW_TMP/b.out")"
fi
touch "$PW_TMP/a.go"
wait "$apid"
check bad_body_refused test "$(cut -c1-12 "$PW_TMP/a.out")" = "HTTP/1.1 400"
check nothing_stored test "$(nfiles)/$(sql "SELECT count(*) FROM artifacts")" = 0/0

# A's room is back: B's 5000 bytes are taken (its client then leaves
# without sending them).
check room_back_after_a_failed_body test \
    "$(head_only System.map "$sha_b" 5000 | head -1)" = "no reply before the body"
# The client that left gives its room back: 5000 bytes fit (its end
# may take the daemon a moment to see).
for i in $(seq 50); do
	code=$(put_file "$build" bzImage "$PW_TMP/files/x/b" b1)
	[ "$code" = 413 ] || break
	sleep 0.1
done
check room_back_after_a_client_left test "$code" = 201

# Three uploads of 3000 bytes at once into the 3192 bytes left: one fits.
for n in config meta System.map; do
	head -c 3000 /dev/urandom >"$PW_TMP/files/x/$n"
done
for n in config meta System.map; do
	put_one() {
		curl -s -o "$PW_TMP/par.$1.body" -w '%{http_code}' -X PUT --max-time 60 \
		    -H "Authorization: Bearer $(cat "$PW_TOKENS/b1.token")" \
		    -H "X-Perfwatch-Sha256: $(sha256sum <"$PW_TMP/files/x/$1" | cut -d' ' -f1)" \
		    -H 'Content-Type: application/octet-stream' \
		    --data-binary "@$PW_TMP/files/x/$1" \
		    "$PW_URL/api/v1/builds/$build/files/$1" >"$PW_TMP/par.$1.code"
	}
	put_one "$n" &
	pids="${pids:-} $!"
done
# shellcheck disable=SC2086
wait $pids
codes=$(for f in "$PW_TMP"/par.*.code; do cat "$f"; echo; done | sort | tr '\n' ' ')
held=$(sql "SELECT sum(size) FROM artifacts")
if [ "$codes" = "201 413 413 " ] && [ "$held" = 8000 ]; then
	pass concurrent_uploads_one_fits
else
	fail concurrent_uploads_one_fits "codes $codes held $held: $(cat "$PW_TMP"/par.*.body)"
fi
check store_within_cap test "$held" -le 8192
check no_temp_left test -z "$(ls -A "$ARTS/tmp" 2>/dev/null)"
finish
