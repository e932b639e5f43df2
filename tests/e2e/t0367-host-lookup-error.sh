#!/usr/bin/env bash
# Every runner call past register looks up the runner's host by name.
# A lookup that fails with a database error (a busy server's lock
# timeout, a lost connection) is no answer: the call gets a 5xx naming
# the error, which the runner retries, not 409 "runner is not
# registered", which it takes for a refusal (a run refused is set aside
# in spool/rejected, a refused finish leaves the job to be claimed again).
# The lookup is made to fail while a runner measures a pair: the hosts
# table is renamed away and back, which fails the lookup's statement at
# once on either backend (a held lock would first wait out the store's
# busy timeout).  The benchmark is a gate (as in t0351): run 0 passes,
# the later runs wait for $PW_TMP/gate/open, opened while the lookup
# fails; the table comes back once an upload met the failure.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1
mkdir -p "$PW_TMP/gate"
cat >"$PW_DIR/jobs/lk.yaml" <<YAML
name: lk
parser: keyvalue
command: [sh, -c, 'while [ -e "\$0/ran0" ] && [ ! -e "\$0/open" ]; do sleep 0.1; done; touch "\$0/ran0"; echo v=10', "$PW_TMP/gate"]
runs: 3
max_runs: 3
timeout: 60s
metrics:
  v: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
PERFWATCH_NO_CGROUPS=1 start_runner r1

submit_pair lk
one_run_stored() { [ "$(sql "SELECT count(*) FROM runs")" = 1 ]; }
if ! wait_until 60 one_run_stored; then
	fail first_run_stored "$(sql "SELECT id, role, state, error FROM jobs")"
	show_logs
	finish
fi

sql "ALTER TABLE hosts RENAME TO hosts_away" ||
    { fail hosts_renamed_away "see above"; finish; }
code=$(http POST /api/v1/runners/heartbeat "$(token_of r1)" '{}')
body=$(cat "$PW_TMP/body")
# The database's error, from the lookup's step ("host id: ..."), or from
# its prepare on a thread that had not made it before.
case $code:$body in
5??:*"not registered"*) fail failed_lookup_is_5xx "$code $body" ;;
5??:*"no such table: hosts"* | 5??:*relation*hosts*"does not exist"*)
	pass failed_lookup_is_5xx ;;
*) fail failed_lookup_is_5xx "$code $body" ;;
esac
touch "$PW_TMP/gate/open"
upload_failed() {
	grep -q "/api/v1/jobs/$base/runs: 5[0-9][0-9] " "$PW_DIR/daemon.log"
}
wait_until 30 upload_failed && pass upload_met_the_failure ||
    fail upload_met_the_failure "no 5xx: $(grep -c "not registered" "$PW_TMP/r1/runner.log") runner lines say 'not registered'"
sql "ALTER TABLE hosts_away RENAME TO hosts" ||
    { fail hosts_renamed_back "see above"; finish; }

wait_until 90 jobs_in_state success 2 && pass jobs_succeed_after_the_failure || {
	fail jobs_succeed_after_the_failure "$(sql "SELECT id, role, state, attempts, error FROM jobs")"
	show_logs
	finish
}
states=$(sql "SELECT state || ' ' || attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ';')
[ "$states" = "success 1;success 1;" ] && pass jobs_finished_in_one_attempt ||
    fail jobs_finished_in_one_attempt "$states"
runs=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($base, $cand)")
[ "$runs" = 6 ] && pass every_run_stored || fail every_run_stored "$runs runs"
rejected=$(find "$PW_TMP/r1/work/spool" -path '*rejected*' -type f 2>/dev/null | wc -l)
[ "$rejected" = 0 ] && pass no_run_rejected || fail no_run_rejected "$rejected files"
n=$(grep -c "not registered" "$PW_DIR/daemon.log" "$PW_TMP/r1/runner.log" | awk -F: '{ s += $2 } END { print s }')
[ "$n" = 0 ] && pass never_not_registered || fail never_not_registered "$n lines"
finish
