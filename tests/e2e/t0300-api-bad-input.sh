#!/usr/bin/env bash
# check: parallel
# Bad input to the API: each refusal is a 4xx with a JSON error naming the
# problem, nothing is stored, and the daemon keeps serving.
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
daemon_config "$D" r1
cat >>"$D/daemon.yaml" <<'EOF2'
http:
  max_body: 4K
# Nothing heartbeats in this test: a long lease keeps the claimed job
# ours however slow a loaded machine makes the requests below.
scheduler:
  lease: 1h
EOF2
cat >"$D/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x={x}"]
matrix:
  x: [1]
runs: 2
max_runs: 3
EOF2
start_daemon "$D" || { fail start "daemon did not start"; finish; }
R1=$(token_of r1)
ADM=$(token_of admin)
echo "not-a-token" >"$PW_TMP/wrong.token"

# expect NAME STATUS WORD METHOD PATH TOKEN [BODY]: the status, a JSON
# {"error": ...} that mentions WORD.
expect() {
	local name=$1 want=$2 word=$3 got err
	shift 3
	got=$(http "$@")
	err=$(jfield error <"$PW_TMP/body" 2>/dev/null)
	if [ "$got" != "$want" ]; then
		fail "$name" "status $got, want $want: $(head -c 300 "$PW_TMP/body")"
	elif [ -z "$err" ] || [ "$err" = null ]; then
		fail "$name" "no JSON error: $(head -c 300 "$PW_TMP/body")"
	elif [[ $err != *"$word"* ]]; then
		fail "$name" "error '$err' does not mention '$word'"
	else
		pass "$name"
	fi
}

reg='{"name":"r1","inventory":{"cpu_model":"t","cores":2}}'
sub='{"job":"kv"}'

# Authentication.
expect no-token-runner 401 token POST /api/v1/runners/register - "$reg"
expect no-token-admin 401 token POST /api/v1/submit - "$sub"
expect wrong-token-runner 403 token POST /api/v1/runners/register \
    "$PW_TMP/wrong.token" "$reg"
expect wrong-token-admin 403 token POST /api/v1/submit "$PW_TMP/wrong.token" \
    "$sub"
expect runner-token-on-admin-route 403 admin POST /api/v1/submit "$R1" "$sub"
expect runner-token-on-cancel 403 admin POST /api/v1/jobs/1/cancel "$R1"
expect admin-token-on-runner-route 403 runner POST /api/v1/runners/register \
    "$ADM" "$reg"
expect name-not-the-tokens 403 name POST /api/v1/runners/register "$R1" \
    '{"name":"r2"}'
expect unregistered-claim 409 registered POST /api/v1/jobs/claim "$R1" '{}'

# Oversized bodies: with Content-Length, and chunked without it.
head -c 5000 /dev/zero | tr '\0' ' ' >"$PW_TMP/big"
expect oversized-body 413 large POST /api/v1/submit "$ADM" "@$PW_TMP/big"
got=$(curl -s -o "$PW_TMP/body" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $(cat "$ADM")" -H 'Transfer-Encoding: chunked' \
    --data-binary "@$PW_TMP/big" "$PW_URL/api/v1/submit")
if [ "$got" = 413 ]; then pass oversized-chunked; else
	fail oversized-chunked "status $got"; fi

# Malformed JSON and wrong types.
expect malformed-json 400 line POST /api/v1/submit "$ADM" '{"job": "kv",'
expect not-an-object 400 object POST /api/v1/submit "$ADM" '[1,2]'
expect unknown-field 400 bogus POST /api/v1/submit "$ADM" \
    '{"job":"kv","bogus":1}'
expect runs-wrong-type 400 runs POST /api/v1/submit "$ADM" \
    '{"job":"kv","runs":"5"}'
expect params-wrong-type 400 base.params.x POST /api/v1/submit "$ADM" \
    '{"job":"kv","base":{"params":{"x":[1]}}}'
expect job-wrong-type 400 job POST /api/v1/submit "$ADM" '{"job":5}'
expect bad-job-yaml 400 job_yaml POST /api/v1/submit "$ADM" \
    '{"job_yaml":"name: x\nparser: nope\ncommand: [a]\n"}'
expect unknown-job 404 nope POST /api/v1/submit "$ADM" '{"job":"nope"}'
expect inventory-wrong-type 400 inventory.cores POST /api/v1/runners/register \
    "$R1" '{"name":"r1","inventory":{"cores":"many"}}'

# Nothing was stored by any of that.
n=$(sql 'SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM pairs)
    + (SELECT count(*) FROM hosts)')
if [ "$n" = 0 ]; then pass nothing-stored-yet; else
	fail nothing-stored-yet "$n rows"; fi

# Now a real pair and a claimed job, then bad uploads against it.
[ "$(http POST /api/v1/runners/register "$R1" "$reg")" = 200 ] ||
	fail register "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/submit "$ADM" "$sub")" = 201 ] ||
	fail submit "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/jobs/claim "$R1" '{}')" = 200 ] ||
	fail claim "$(cat "$PW_TMP/body")"
job=$(jfield job.id <"$PW_TMP/body")
role=$(jfield job.role <"$PW_TMP/body")
run='"status":"ok","metrics":[{"name":"m","value":1,"better":"higher"}]'
expect index-out-of-range 400 index POST "/api/v1/jobs/$job/runs" "$R1" \
    "{\"index\":3,$run}"
expect index-negative 400 index POST "/api/v1/jobs/$job/runs" "$R1" \
    "{\"index\":-1,$run}"
expect index-wrong-type 400 index POST "/api/v1/jobs/$job/runs" "$R1" \
    "{\"index\":\"0\",$run}"
expect index-missing 400 index POST "/api/v1/jobs/$job/runs" "$R1" "{$run}"
expect status-wrong 400 status POST "/api/v1/jobs/$job/runs" "$R1" \
    '{"index":0,"status":"great"}'
expect metric-value-type 400 'metrics[0].value' POST "/api/v1/jobs/$job/runs" \
    "$R1" '{"index":0,"status":"ok","metrics":[{"name":"m","value":"1","better":"higher"}]}'
expect metric-better 400 'metrics[0].better' POST "/api/v1/jobs/$job/runs" \
    "$R1" '{"index":0,"status":"ok","metrics":[{"name":"m","value":1,"better":"up"}]}'
expect metric-duplicate 400 'metrics[1]' POST "/api/v1/jobs/$job/runs" "$R1" \
    '{"index":0,"status":"ok","metrics":[{"name":"m","value":1,"better":"higher"},{"name":"m","value":2,"better":"higher"}]}'
expect unknown-job-run 404 'not found' POST /api/v1/jobs/999/runs "$R1" \
    "{\"index\":0,$run}"
# The pair's other job (the claim takes either side first: rounds).
[ "$role" = base ] && other=$((job + 1)) ||
	other=$((job - 1))
expect not-my-job 409 'leased' POST "/api/v1/jobs/$other/runs" "$R1" \
    "{\"index\":0,$run}"
expect unknown-job-read 404 'not found' GET /api/v1/jobs/999
expect unknown-route 404 route GET /api/v1/nothing
expect wrong-method 405 method DELETE /api/v1/jobs
# One table for the API and the dashboard: a page's path with another
# method is a 405 as well, and an unknown path a JSON 404.
expect page-wrong-method 405 method DELETE /hosts
expect page-unknown 404 route GET /nothing
expect bad-limit 400 limit GET '/api/v1/jobs?limit=0'
expect bad-state 400 state GET '/api/v1/jobs?state=sleeping'
expect finish-bad-status 400 status POST "/api/v1/jobs/$job/finish" "$R1" \
    '{"status":"done"}'
expect cancel-unknown 404 'not found' POST /api/v1/jobs/999/cancel "$ADM"

n=$(sql 'SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM metrics)
    + (SELECT count(*) FROM raw_outputs)')
if [ "$n" = 0 ]; then pass no-runs-stored; else
	fail no-runs-stored "$n rows"; fi

# A good upload still works, once.
[ "$(http POST "/api/v1/jobs/$job/runs" "$R1" "{\"index\":0,$run}")" = 201 ] &&
    [ "$(http POST "/api/v1/jobs/$job/runs" "$R1" "{\"index\":0,$run}")" = 200 ] &&
    [ "$(sql "SELECT count(*) FROM runs WHERE job_id = $job")" = 1 ] &&
    pass good-upload-idempotent || fail good-upload-idempotent "$(cat "$PW_TMP/body")"

# Still serving, and the 4xx were counted.
[ "$(http GET /healthz)" = 200 ] && kill -0 "$PW_DAEMON_PID" &&
    pass still-serving || fail still-serving "daemon gone"
http GET /metrics >/dev/null
grep -q 'perfwatch_http_requests_total{code="4xx"} [1-9]' "$PW_TMP/body" &&
    pass metrics-count-4xx || fail metrics-count-4xx "$(cat "$PW_TMP/body")"
# The latency histogram: cumulative buckets ending in +Inf = count =
# every request answered so far (the 4xx/2xx counters' sum).
if python3 - "$PW_TMP/body" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
b = [(le, int(n)) for le, n in re.findall(
    r'perfwatch_http_request_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', t)]
assert len(b) == 9 and b[-1][0] == "+Inf", b
assert all(b[i][1] <= b[i + 1][1] for i in range(8)), b
count = int(re.search(r'_duration_seconds_count (\d+)', t).group(1))
total = sum(int(n) for n in re.findall(
    r'perfwatch_http_requests_total\{code="[1-5]xx"\} (\d+)', t))
assert count == b[-1][1] == total and count > 20, (count, b[-1], total)
assert float(re.search(r'_duration_seconds_sum (\S+)', t).group(1)) > 0
PY
then pass metrics-latency-histogram
else fail metrics-latency-histogram "$(grep duration "$PW_TMP/body")"
fi

stop_pid "$PW_DAEMON_PID"
finish
