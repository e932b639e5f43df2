#!/usr/bin/env bash
# One claim holds both jobs of a pair in rounds (runner.yaml `pair_claims`,
# t0356); the runner finishes the base, then the candidate.  Once the
# base is finished the daemon answers its heartbeats with cancel (it is
# no longer running), and the runner used to take that for a cancel of
# the claim: the candidate, measured whole, was left running and claimed
# a second time.  A cancel is about a job that is still being measured:
# from its finish on, a job's cancel stops nothing, and it has no more
# heartbeats once finished.
# The runner reaches the daemon through the forwarding proxy
# (api_proxy.py), which holds each finish's reply for 3 s after the
# daemon answered it, so heartbeats of the finished base surely come
# back with cancel before the runner goes on to the candidate; the
# proxy's log shows they did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

PROXY=$(cd "$(dirname "$0")" && pwd)/api_proxy.py
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/rr.yaml" <<YAML
name: rr
parser: keyvalue
command: [sh, -c, 'echo v=10']
hosts: [r1]
runs: 2
max_runs: 2
rounds: 2
timeout: 30s
metrics:
  v: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
mkdir -p "$PW_TMP/proxy"
echo 3 >"$PW_TMP/proxy/finish_delay"
spawn "$PW_TMP/proxy/log" python3 "$PROXY" "$PW_URL" "$PW_TMP/proxy"
wait_for 10 test -s "$PW_TMP/proxy/port" || { fail proxy_starts "$(cat "$PW_TMP/proxy/log")"; finish; }
runner_config r1
sed -i "s|^server: .*|server: http://127.0.0.1:$(cat "$PW_TMP/proxy/port")|" \
    "$PW_TMP/r1/runner.yaml"
PERFWATCH_NO_CGROUPS=1 start_runner r1

submit_pair rr
analysed() { [ "$(sql "SELECT analysed FROM pairs WHERE id = $pair")" = 1 ]; }
if wait_until 120 analysed; then
	pass pair_measured
else
	fail pair_measured "$(sql "SELECT id, role, state, attempts, error FROM jobs")"
	show_logs
	finish
fi

# The window was there: the daemon said cancel for the base after its
# finish, before the runner had the finish's reply.
calls=$(tr '\n' ';' <"$PW_TMP/proxy/calls.log")
case $calls in
*"finish 200 /api/v1/jobs/$base/finish;cancel $base;"*)
	pass base_heartbeat_said_cancel_after_its_finish ;;
*) fail base_heartbeat_said_cancel_after_its_finish "$calls" ;;
esac
states=$(sql "SELECT state || ' ' || attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ';')
[ "$states" = "success 1;success 1;" ] && pass both_finished_in_one_attempt ||
    fail both_finished_in_one_attempt "$states"
claims=$(grep -c "job \($base\|$cand\) ([a-z]*) claimed by r1" "$PW_TMP/d/daemon.log")
[ "$claims" = 1 ] && pass one_claim_for_the_pair || fail one_claim_for_the_pair "$claims claims"
n=$(grep -c "cancelled by the daemon\|stopped after" "$PW_TMP/r1/runner.log")
[ "$n" = 0 ] && pass runner_stopped_nothing ||
    fail runner_stopped_nothing "$(grep "cancelled by the daemon\|stopped after" "$PW_TMP/r1/runner.log")"
runs=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($base, $cand)")
[ "$runs" = 4 ] && pass each_run_stored_once || fail each_run_stored_once "$runs runs"
finish
