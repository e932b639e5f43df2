#!/usr/bin/env bash
# HTTPS end to end (daemon tls.cert_file/key_file, runner ca_file): the
# test makes a private CA and a certificate for 127.0.0.1 with openssl.
# The daemon answers HTTPS (TLS 1.2+), not plain HTTP; a client without
# the CA is refused by its own verification; the login's session cookie
# is Secure and pages carry HSTS; a runner with ca_file registers and
# runs a job to success over HTTPS, and one without it cannot register
# (its log names the certificate problem).  The CLI verifies the daemon
# against PERFWATCH_CA_FILE.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_tls.sh"

command -v openssl >/dev/null || { echo "SKIP t0359: no openssl"; finish; }
C=$PW_TMP/ca
tls_certs "$C" 127.0.0.1 IP:127.0.0.1 || finish

daemon_config "$PW_TMP/d" r1 r2
cat >>"$PW_TMP/d/daemon.yaml" <<YAML
tls:
  cert_file: $C/server.pem
  key_file: $C/server.key
scheduler:
  claim_wait: 1s
YAML
cat >"$PW_DIR/jobs/kv.yaml" <<YAML
name: kv
parser: keyvalue
command: [sh, -c, 'echo ops=100']
runs: 1
max_runs: 1
metrics:
  ops: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
PW_URL=https://127.0.0.1:$PW_PORT
CURL_CA=(--cacert "$C/ca.pem")

code=$(curl -s -o /dev/null -w '%{http_code}' "${CURL_CA[@]}" --max-time 10 "$PW_URL/healthz")
[ "$code" = 200 ] && pass https_with_ca || fail https_with_ca "status $code"
curl -s -o /dev/null --max-time 10 "$PW_URL/healthz"
rc=$?
[ "$rc" = 60 ] && pass unknown_ca_refused_by_client || fail unknown_ca_refused_by_client "curl exit $rc"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PW_PORT/healthz")
[ "$code" != 200 ] && pass plain_http_not_served || fail plain_http_not_served "status $code"
curl -s -o /dev/null --max-time 10 "${CURL_CA[@]}" --tls-max 1.1 "$PW_URL/healthz"
rc=$?
[ "$rc" != 0 ] && pass tls11_refused || fail tls11_refused "curl exit 0"

# Login: the session cookie is Secure; pages say HSTS.
curl -s -D "$PW_TMP/login.h" -o "$PW_TMP/login.html" -c "$PW_TMP/jar" "${CURL_CA[@]}" "$PW_URL/login"
csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' "$PW_TMP/login.html" | head -1)
curl -s -D "$PW_TMP/post.h" -o /dev/null -b "$PW_TMP/jar" "${CURL_CA[@]}" \
    --data-urlencode "token=$(cat "$PW_ADMIN")" --data-urlencode "csrf=$csrf" \
    --data-urlencode "next=/" "$PW_URL/login"
grep -i '^set-cookie:' "$PW_TMP/post.h" | grep -qi 'secure' &&
    ! grep -i '^set-cookie:' "$PW_TMP/post.h" "$PW_TMP/login.h" | grep -vqi 'secure' &&
    pass cookies_secure || fail cookies_secure "$(grep -i '^set-cookie' "$PW_TMP/login.h" "$PW_TMP/post.h")"
grep -qi '^strict-transport-security: max-age=' "$PW_TMP/login.h" && pass hsts ||
    fail hsts "$(cat "$PW_TMP/login.h")"

# A runner with the CA runs a job over HTTPS.
runner_config r1 "ca_file: $C/ca.pem"
PERFWATCH_NO_CGROUPS=1 start_runner r1
R1=$!
curl -s "${CURL_CA[@]}" -H "Authorization: Bearer $(cat "$PW_ADMIN")" \
    --data-binary '{"job":"kv"}' "$PW_URL/api/v1/submit" >"$PW_TMP/submit.json"
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
ok() {
	curl -s "${CURL_CA[@]}" "$PW_URL/api/v1/jobs/$base" | jfield state | grep -qx success
}
wait_until 60 ok && pass runner_over_https || { fail runner_over_https "$(curl -s "${CURL_CA[@]}" "$PW_URL/api/v1/jobs/$base" | head -c 400)"; show_logs; }
stop_pid "$R1"

# The CLI: against the system's CAs the daemon is refused; with
# PERFWATCH_CA_FILE it is verified.
if out=$("$PW_BIN/perfwatch" hosts --server "$PW_URL" 2>&1); then
	fail cli_without_ca_refused "accepted: $out"
else
	check cli_without_ca_refused grep -qi 'certificate' <<<"$out"
fi
PERFWATCH_CA_FILE=$C/ca.pem "$PW_BIN/perfwatch" hosts --server "$PW_URL" >"$PW_TMP/hosts.txt" 2>&1 &&
    grep -q 'r1' "$PW_TMP/hosts.txt" && pass cli_with_ca_file ||
    fail cli_with_ca_file "$(cat "$PW_TMP/hosts.txt")"

# Without the CA: no registration, and the log says why.
runner_config r2
PERFWATCH_NO_CGROUPS=1 start_runner r2
R2=$!
wait_until 20 grep -qi 'certificate' "$PW_TMP/r2/runner.log" && pass runner_without_ca_refused ||
    fail runner_without_ca_refused "$(tail -5 "$PW_TMP/r2/runner.log")"
[ "$(sql "SELECT count(*) FROM hosts WHERE name = 'r2'")" = 0 ] && pass r2_not_registered ||
    fail r2_not_registered "r2 registered"
stop_pid "$R2"
finish
