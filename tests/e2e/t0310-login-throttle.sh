#!/usr/bin/env bash
# check: parallel
# Failed logins cost time: five wrong admin tokens from one address are
# answered 403; then that address waits (429, Retry-After: 1, doubling
# with each further failure) and even the right token is not looked at
# until the wait is over.  Another address (127.0.0.2, the same
# loopback) logs in meanwhile; after the wait the first one does, and
# its count starts over.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
ADM=$(token_of admin)

# login FROM TOKEN: the status of one login from address FROM (a fresh
# form and its CSRF cookie); the reply's headers in $PW_TMP/hdr.
login() {
	local jar=$PW_TMP/jar.$1 pre
	rm -f "$jar"
	curl -s --interface "$1" -c "$jar" -b "$jar" -o "$PW_TMP/form" "$PW_URL/login"
	pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/form")
	curl -s --interface "$1" -D "$PW_TMP/hdr" -c "$jar" -b "$jar" \
	    -o "$PW_TMP/body" -w '%{http_code}' --data-urlencode "csrf=$pre" \
	    --data-urlencode "token=$2" --data-urlencode "next=/" "$PW_URL/login"
}

codes=
for i in 1 2 3 4 5; do codes="$codes $(login 127.0.0.1 "wrong-$i")"; done
[ "$codes" = " 403 403 403 403 403" ] && pass five_wrong_tokens_403 ||
    fail five_wrong_tokens_403 "$codes"
code=$(login 127.0.0.1 "$(cat "$ADM")")
if [ "$code" = 429 ] && grep -qi '^Retry-After: 1' "$PW_TMP/hdr" &&
    grep -q 'Too many failed logins from your address' "$PW_TMP/body" &&
    ! grep -qi '^Set-Cookie: pw_session=' "$PW_TMP/hdr"; then
	pass sixth_try_waits_even_with_the_right_token
else
	fail sixth_try_waits_even_with_the_right_token "$code $(cat "$PW_TMP/hdr")"
fi
code=$(login 127.0.0.2 "$(cat "$ADM")")
[ "$code" = 303 ] && grep -qi '^Set-Cookie: pw_session=' "$PW_TMP/hdr" &&
    pass other_address_logs_in || fail other_address_logs_in "$code $(cat "$PW_TMP/hdr")"
sleep 1.2
code=$(login 127.0.0.1 "wrong-6")
[ "$code" = 403 ] && pass after_the_wait_a_token_is_checked ||
    fail after_the_wait_a_token_is_checked "$code"
# The sixth failure doubles the wait.
code=$(login 127.0.0.1 "$(cat "$ADM")")
[ "$code" = 429 ] && grep -qi '^Retry-After: 2' "$PW_TMP/hdr" &&
    pass wait_doubles || fail wait_doubles "$code $(cat "$PW_TMP/hdr")"
sleep 2.2
code=$(login 127.0.0.1 "$(cat "$ADM")")
[ "$code" = 303 ] && pass right_token_after_the_wait ||
    fail right_token_after_the_wait "$code $(cat "$PW_TMP/hdr")"
# Four more failures after the success are free again.
codes=
for i in 7 8 9 10; do codes="$codes $(login 127.0.0.1 "wrong-$i")"; done
codes="$codes $(login 127.0.0.1 "$(cat "$ADM")")"
[ "$codes" = " 403 403 403 403 303" ] && pass success_forgets_the_failures ||
    fail success_forgets_the_failures "$codes"
grep -q 'failed admin login from 127.0.0.1' "$PW_DIR/daemon.log" &&
    pass failures_logged || fail failures_logged "$(tail -3 "$PW_DIR/daemon.log")"
stop_pid "$PW_DAEMON_PID"
finish
