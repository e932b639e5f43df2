#!/usr/bin/env bash
# check: parallel
# perfwatchd -n checks a configuration; SIGHUP with a bad configuration
# keeps the running one; a good one swaps in new runners and jobs, and
# of the http.* keys applies the body caps and refuses, by name, the
# ones that need a restart.
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
daemon_config "$D" r1
cat >"$D/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x=1"]
runs: 2
EOF2
cp "$D/daemon.yaml" "$PW_TMP/good.yaml"

out=$("$PW_BIN/perfwatchd" -n -c "$D/daemon.yaml" 2>&1)
[ $? = 0 ] && [ "$out" = "configuration OK" ] && pass check-ok ||
    fail check-ok "$out"
echo "bogus_key: 1" >>"$D/daemon.yaml"
out=$("$PW_BIN/perfwatchd" -n -c "$D/daemon.yaml" 2>&1)
rc=$?
[ $rc = 1 ] && [[ $out == *"daemon.yaml:"*":"*"bogus_key"* ]] &&
    pass check-bad || fail check-bad "rc $rc: $out"
cp "$PW_TMP/good.yaml" "$D/daemon.yaml"
echo "command: [" >"$D/jobs/broken.yaml"
out=$("$PW_BIN/perfwatchd" -n -c "$D/daemon.yaml" 2>&1)
[ $? = 1 ] && [[ $out == *broken.yaml:* ]] && pass check-bad-job ||
    fail check-bad-job "$out"
rm -f "$D/jobs/broken.yaml"

start_daemon "$D" || { fail start "daemon did not start"; finish; }
R1=$(token_of r1)
ADM=$(token_of admin)
[ "$(http POST /api/v1/runners/register "$R1" '{"name":"r1"}')" = 200 ] &&
    pass r1-works || fail r1-works "$(cat "$PW_TMP/body")"

# A bad reload: an unknown key.  Then one with a new runner whose token
# file is missing and a job file that does not parse: both errors are
# logged.  Everything stays as it was.
echo "bogus_key: 1" >>"$D/daemon.yaml"
kill -HUP "$PW_DAEMON_PID"
wait_for 10 grep -q 'keeping the running configuration' "$D/daemon.log" &&
    grep -q 'bogus_key' "$D/daemon.log" &&
    pass bad-reload-logged || fail bad-reload-logged "$(cat "$D/daemon.log")"
sed -i '/^bogus_key/d' "$D/daemon.yaml"
cat >>"$D/daemon.yaml" <<EOF2
  - name: r2
    token_file: $D/tokens/r2.token
EOF2
echo "command: [" >"$D/jobs/broken.yaml"
kill -HUP "$PW_DAEMON_PID"
# A function: the count must be taken again on every try.
two_kept() { [ "$(grep -c 'keeping the running' "$D/daemon.log")" = 2 ]; }
wait_for 10 two_kept &&
    grep -q 'r2.token' "$D/daemon.log" && grep -q 'broken.yaml' "$D/daemon.log" &&
    pass bad-reload-every-error || fail bad-reload-every-error "$(cat "$D/daemon.log")"
[ "$(http POST /api/v1/runners/register "$R1" '{"name":"r1"}')" = 200 ] &&
    pass old-config-kept || fail old-config-kept "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/submit "$ADM" '{"job":"kv"}')" = 201 ] &&
    pass old-jobs-kept || fail old-jobs-kept "$(cat "$PW_TMP/body")"

# A good reload: r2 exists with a token, a new job file.
rm -f "$D/jobs/broken.yaml"
echo "r2-secret-token-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$D/tokens/r2.token"
sed 's/^name: kv/name: kv2/' "$D/jobs/kv.yaml" >"$D/jobs/kv2.yaml"
echo "rogue" >"$PW_TMP/r2.bad"
[ "$(http POST /api/v1/runners/register "$D/tokens/r2.token" '{"name":"r2"}')" = 403 ] &&
    pass r2-unknown-before || fail r2-unknown-before "$(cat "$PW_TMP/body")"
kill -HUP "$PW_DAEMON_PID"
wait_for 10 grep -q 'configuration reloaded' "$D/daemon.log" &&
    pass good-reload || fail good-reload "$(cat "$D/daemon.log")"
[ "$(http POST /api/v1/runners/register "$D/tokens/r2.token" '{"name":"r2"}')" = 200 ] &&
    pass r2-after-reload || fail r2-after-reload "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/submit "$ADM" '{"job":"kv2"}')" = 201 ] &&
    pass new-job-after-reload || fail new-job-after-reload "$(cat "$PW_TMP/body")"

# http.* on a reload: max_body applies to the requests from then on; the
# listener's keys (threads, connection limits, timeout) need a restart,
# and each change is logged by name, never silently ignored.
head -c 2000 /dev/zero | tr '\0' ' ' >"$PW_TMP/2k"
code=$(http POST /api/v1/submit "$ADM" "@$PW_TMP/2k")
[ "$code" = 400 ] && pass body-2k-before || fail body-2k-before "$code $(cat "$PW_TMP/body")"
cat >>"$D/daemon.yaml" <<EOF2
http:
  max_body: 1K
  threads: 2
  max_connections: 100
  per_ip: 10
  timeout: 5s
EOF2
kill -HUP "$PW_DAEMON_PID"
two_ok() { [ "$(grep -c 'configuration reloaded' "$D/daemon.log")" = 2 ]; }
wait_for 10 two_ok && pass http-reload || fail http-reload "$(tail -5 "$D/daemon.log")"
for kv in threads:4:2 max_connections:256:100 per_ip:64:10 timeout:30:5; do
	IFS=: read -r k was now <<<"$kv"
	grep -q "reload: http.$k changed from $was to $now: it needs a restart; keeping $was" "$D/daemon.log" &&
	    pass "http-$k-refused" || fail "http-$k-refused" "$(grep reload: "$D/daemon.log")"
done
grep -q 'reload: http.max_body changed from 8388608 to 1024 bytes: applied' "$D/daemon.log" &&
    pass http-max-body-logged || fail http-max-body-logged "$(grep reload: "$D/daemon.log")"
code=$(http POST /api/v1/submit "$ADM" "@$PW_TMP/2k")
[ "$code" = 413 ] && [[ $(jfield error <"$PW_TMP/body") == *"1024 bytes"* ]] &&
    pass http-max-body-applied || fail http-max-body-applied "$code $(cat "$PW_TMP/body")"
[ "$(http GET /healthz)" = 200 ] && pass served-after-http-reload ||
    fail served-after-http-reload "$(cat "$PW_TMP/body")"

kill -TERM "$PW_DAEMON_PID"
wait "$PW_DAEMON_PID"
rc=$?
[ $rc = 0 ] && pass clean-exit || fail clean-exit "exit $rc: $(tail -20 "$D/daemon.log")"
finish
