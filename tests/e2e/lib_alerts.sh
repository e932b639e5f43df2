# A real SMTP server and webhook receiver for the tests, on top of
# lib.sh:
#
#   alert_servers_start       starts tests/e2e/alert_servers.py twice on
#                             127.0.0.1: an SMTP server (mails in
#                             $PW_TMP/smtp/mail-N.eml) and a webhook
#                             receiver that answers 200 (posts in
#                             $PW_TMP/hook/hooks.jsonl, secret in
#                             $PW_TMP/hook.secret); sets ALERTS_YAML to
#                             the daemon's `alerts:` section for both.
#                             0; 1 when python3-aiosmtpd is missing (the
#                             caller prints SKIP or fails); 2 when a
#                             server did not come up (ALERTS_ERR says why)
#   alert_servers_or_skip NAME  the same; prints SKIP NAME (no aiosmtpd)
#                             or FAILs, and finishes the test, when it
#                             could not start them
PW_ALERT_SERVERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/alert_servers.py

alert_servers_start() {
	/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null || return 1
	mkdir -p "$PW_TMP/smtp" "$PW_TMP/hook"
	echo "s3cret-$$" >"$PW_TMP/hook.secret"
	spawn "$PW_TMP/smtp/log" /usr/bin/python3 "$PW_ALERT_SERVERS" smtp "$PW_TMP/smtp"
	spawn "$PW_TMP/hook/log" /usr/bin/python3 "$PW_ALERT_SERVERS" hook "$PW_TMP/hook" "s3cret-$$" ok
	if ! wait_for 10 test -s "$PW_TMP/smtp/port" || ! wait_for 10 test -s "$PW_TMP/hook/port"; then
		ALERTS_ERR="no port: $(cat "$PW_TMP/smtp/log" "$PW_TMP/hook/log")"
		return 2
	fi
	ALERTS_YAML="alerts:
  email:
    smtp: smtp://127.0.0.1:$(cat "$PW_TMP/smtp/port")
    from: \"perfwatch <perfwatch@example.org>\"
    to: [perf-reports@example.org]
  webhooks:
    - url: http://127.0.0.1:$(cat "$PW_TMP/hook/port")/hook
      secret_file: $PW_TMP/hook.secret
  poll: 1s"
}

# alert_servers_or_broke: the same for a bench script, whose broke WHY
# gives up; then alerts_yaml_unlimited prints ALERTS_YAML without the
# mail rate limit, so no report waits past the end of a measurement.
alert_servers_or_broke() {
	alert_servers_start
	case $? in
	0) ;;
	1) broke "python3-aiosmtpd is missing (make deps)" ;;
	*) broke "the alert servers did not start: $ALERTS_ERR" ;;
	esac
}
alerts_yaml_unlimited() {
	echo "${ALERTS_YAML/    to: \[perf-reports@example.org\]/    to: [perf-reports@example.org]
    rate_limit: 0}"
}

alert_servers_or_skip() {
	alert_servers_start
	case $? in
	1) echo "SKIP $1: python3-aiosmtpd is not installed (make deps)"; finish ;;
	2) fail alert_servers "$ALERTS_ERR"; finish ;;
	esac
}
