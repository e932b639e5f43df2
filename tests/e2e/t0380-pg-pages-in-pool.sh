#!/usr/bin/env bash
# make check-pg: on PostgreSQL a page the reply cache does not answer (a
# cookie, a session) renders on a render thread, not on the event thread
# that took the request: a render mostly waits on the server, a round
# trip a statement, and the event thread meanwhile serves its other
# connections.  With one event thread (http.threads: 1), a burst of 40
# requests of the jobs list with a cookie, 20 at a time, is answered 200
# each with the anonymous reply's bytes, by render threads (each opens its own
# connection: the daemon's sessions on the server grow; on the event
# thread they would not), and an admin's session still reaches the
# render: its regressions page says so, with the session's CSRF token.
. "$(dirname "$0")/lib.sh"

if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_pages_in_pool: make check-pg runs it"
	finish
fi
D=$PW_TMP/d
daemon_config "$D" r1
printf 'http:\n  threads: 1\n' >>"$D/daemon.yaml"
pg_vd_job "$D"
start_daemon "$D" || { fail start "daemon did not start"; finish; }
ADM=$(token_of admin)
[ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] ||
    { fail submit "$(cat "$PW_TMP/body")"; finish; }
sessions() {
	sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
}

curl -s -o "$PW_TMP/anon" "$PW_URL/api/v1/jobs"
check anonymous_reply grep -q "\"state\":\"queued\"" "$PW_TMP/anon"
before=$(sessions)
seq 40 | xargs -P 20 -I{} curl -s -H 'Cookie: pw_test={}' --max-time 30 \
    -o "$PW_TMP/c{}" -w "%{http_code}\\n" "$PW_URL/api/v1/jobs" >"$PW_TMP/codes"
check forty_answered_200 [ "$(grep -c '^200$' "$PW_TMP/codes")" = 40 ]
same=0
for i in $(seq 40); do
	cmp -s "$PW_TMP/anon" "$PW_TMP/c$i" && same=$((same + 1))
done
check each_has_the_anonymous_bytes [ "$same" = 40 ]
after=$(sessions)
check rendered_on_render_threads [ "$after" -gt "$before" ]
echo "# the daemon's sessions: $before before the burst, $after after"

# An admin session: its regressions page says it is logged in, with its
# CSRF token; the anonymous one offers the login.
J=$PW_TMP/jar
curl -s -c "$J" -b "$J" -o "$PW_TMP/login" "$PW_URL/login"
pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/login")
curl -s -c "$J" -b "$J" -o /dev/null --data-urlencode "csrf=$pre" \
    --data-urlencode "token=$(cat "$ADM")" "$PW_URL/login"
curl -s -c "$J" -b "$J" -o "$PW_TMP/reg_admin" "$PW_URL/regressions"
curl -s -o "$PW_TMP/reg_anon" "$PW_URL/regressions"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/reg_admin" | head -1)
check admin_session_reaches_the_render [ -n "$csrf" ]
check admin_page_says_logged_in grep -q 'logged in as admin' "$PW_TMP/reg_admin"
check anonymous_page_offers_login grep -q 'Log in</a> to triage' "$PW_TMP/reg_anon"
finish
