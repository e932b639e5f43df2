#!/usr/bin/env bash
# Long-poll claims wake when work arrives, time out with 204, and SIGTERM
# answers parked claims, finishes requests in flight and exits 0.
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
daemon_config "$D" r1 r2
cat >>"$D/daemon.yaml" <<'EOF2'
scheduler:
  claim_wait: 20s
EOF2
cat >"$D/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x=1"]
runs: 2
EOF2
start_daemon "$D" || { fail start "daemon did not start"; finish; }
R1=$(token_of r1)
R2=$(token_of r2)
ADM=$(token_of admin)
http POST /api/v1/runners/register "$R1" '{"name":"r1"}' >/dev/null
http POST /api/v1/runners/register "$R2" '{"name":"r2"}' >/dev/null

# An empty queue: a 1 s claim ends with 204 after about a second.
t0=$(date +%s%N)
got=$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":1}')
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$got" = 204 ] && [ $ms -ge 900 ] && [ $ms -lt 5000 ] &&
    pass claim-times-out || fail claim-times-out "status $got after $ms ms"

# A parked claim wakes when a pair is submitted.
claim() {	# claim TOKEN OUT
	curl -s -o "$2" -w '%{http_code}' -X POST --max-time 60 \
	    -H "Authorization: Bearer $(cat "$1")" --data-binary '{"wait_s":15}' \
	    "$PW_URL/api/v1/jobs/claim" >"$2.code"
}
claim "$R1" "$PW_TMP/c1" &
cpid=$!
sleep 1
t0=$(date +%s%N)
http POST /api/v1/submit "$ADM" '{"job":"kv"}' >/dev/null
wait $cpid
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$(cat "$PW_TMP/c1.code")" = 200 ] && [ $ms -lt 3000 ] &&
    [ -n "$(jfield job.role <"$PW_TMP/c1")" ] &&
    pass claim-wakes-on-submit || fail claim-wakes-on-submit \
    "$(cat "$PW_TMP/c1.code") after $ms ms: $(cat "$PW_TMP/c1")"

# r2 may not take the other job of r1's pair: it long-polls.
claim "$R2" "$PW_TMP/c2" &
cpid=$!
sleep 1
http GET /metrics >/dev/null
grep -q '^perfwatch_claims_waiting 1' "$PW_TMP/body" &&
    pass claim-parked || fail claim-parked "$(grep waiting "$PW_TMP/body")"

# SIGTERM: the parked claim is answered 204 and the daemon exits 0.
t0=$(date +%s%N)
kill -TERM "$PW_DAEMON_PID"
wait "$PW_DAEMON_PID"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
wait $cpid
[ $rc = 0 ] && pass clean-exit || fail clean-exit "exit $rc: $(tail "$D/daemon.log")"
[ $ms -lt 5000 ] && pass exit-prompt || fail exit-prompt "$ms ms"
[ "$(cat "$PW_TMP/c2.code")" = 204 ] && pass parked-claim-answered ||
    fail parked-claim-answered "status $(cat "$PW_TMP/c2.code")"
grep -q stopped "$D/daemon.log" && pass logged-stop || fail logged-stop "no 'stopped'"

# The database is intact and the next start serves the same jobs.
[ "$(sql 'PRAGMA integrity_check')" = ok ] && pass db-intact || fail db-intact
start_daemon "$D" || fail restart "daemon did not start"
[ "$(http GET '/api/v1/jobs?state=running')" = 200 ] &&
    [ "$(jfield jobs.0.host <"$PW_TMP/body")" = r1 ] &&
    pass restart-keeps-state || fail restart-keeps-state "$(cat "$PW_TMP/body")"
stop_pid "$PW_DAEMON_PID"
finish
