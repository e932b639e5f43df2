#!/usr/bin/env bash
# check: parallel
# Requests per address (http.per_ip_rate: 2, per_ip_burst: 5): twelve
# requests at once from 127.0.0.1 get their burst answered and the rest
# 429 with Retry-After, before any route runs; 127.0.0.2 (the same
# loopback, another address) is served meanwhile; after a wait
# 127.0.0.1 is served again.  Without the keys nothing is limited.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d"
cat >>"$PW_DIR/daemon.yaml" <<YAML
http:
  per_ip_rate: 2
  per_ip_burst: 5
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# burst FROM N: the status codes of N requests in one curl, in order.
burst() {
	local urls=() i
	for ((i = 0; i < $2; i++)); do urls+=("$PW_URL/api/v1/jobs"); done
	curl -s --interface "$1" -o /dev/null -w '%{http_code} ' "${urls[@]}"
}
# start_daemon's readiness probes took tokens: let the bucket fill.
sleep 3
codes=$(burst 127.0.0.1 12)
n200=$(grep -o 200 <<<"$codes" | wc -l)
n429=$(grep -o 429 <<<"$codes" | wc -l)
# 5 at once, and perhaps one or two more refilled while curl ran.
[ "$n200" -ge 5 ] && [ "$n200" -le 8 ] && [ $((n200 + n429)) = 12 ] &&
    [ "${codes%% *}" = 200 ] && pass burst_then_429 || fail burst_then_429 "$codes"
hdr=$(curl -s --interface 127.0.0.1 -D - -o "$PW_TMP/body" "$PW_URL/api/v1/jobs")
grep -q '^HTTP/1.1 429' <<<"$hdr" && grep -qi '^Retry-After: 1' <<<"$hdr" &&
    grep -qF 'more than http.per_ip_rate (2 a second)' "$PW_TMP/body" &&
    pass refusal_names_the_key || fail refusal_names_the_key "$hdr $(cat "$PW_TMP/body")"
[ "$(burst 127.0.0.2 1)" = "200 " ] && pass other_address_served ||
    fail other_address_served "$(burst 127.0.0.2 1)"
sleep 1.5
[ "$(burst 127.0.0.1 1)" = "200 " ] && pass served_after_the_wait ||
    fail served_after_the_wait "$(burst 127.0.0.1 1)"
stop_pid "$PW_DAEMON_PID"

# Without the keys: no limit.
daemon_config "$PW_TMP/d2"
start_daemon "$PW_TMP/d2" || { fail daemon2_starts "see log"; finish; }
codes=$(burst 127.0.0.1 40)
[ "$(grep -o 200 <<<"$codes" | wc -l)" = 40 ] && pass no_limit_by_default ||
    fail no_limit_by_default "$codes"
stop_pid "$PW_DAEMON_PID"
finish
