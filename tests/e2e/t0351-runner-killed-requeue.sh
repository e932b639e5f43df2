#!/usr/bin/env bash
# A runner killed with SIGKILL mid-job: its lease expires, the job goes
# back to the queue, a second runner completes it, and no run is stored
# twice.  The benchmark is a gate (a real process, keyvalue output): run 0
# passes, later runs wait for $PW_TMP/gate/open, so the kill lands mid-job
# however loaded the machine is.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
cat >>"$PW_TMP/d/daemon.yaml" <<YAML
scheduler:
  lease: 10s
  claim_wait: 5s
YAML
mkdir -p "$PW_TMP/gate"
cat >"$PW_DIR/jobs/tiny.yaml" <<YAML
name: tiny
parser: keyvalue
command: [sh, -c, 'if [ -e "\$0/ran0" ]; then
  while [ ! -e "\$0/open" ]; do sleep 0.1; done; fi;
  touch "\$0/ran0"; echo ops=\$\$', "$PW_TMP/gate"]
runs: 2
# max_runs = runs: ops is a pid (noise), so a verdict would otherwise ask
# for more runs than this test counts.
max_runs: 2
# One claim holds both of the base's runs, so the kill lands mid-claim.
rounds: 1
timeout: 60s
metrics:
  ops: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
runner_config r2
start_runner r1
R1=$!

pw_admin submit --job tiny --json >"$PW_TMP/submit.json" || fail submit "exit $?"
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")

# The runner's own log says when run 0 is stored: kill it in run 1.
one_run_stored() {
	grep -q "job $base: run 0 uploaded" "$PW_TMP/r1/runner.log"
}
if wait_until 30 one_run_stored; then
	pass r1_stores_a_run
else
	fail r1_stores_a_run "state $(job_state "$base")"
	show_logs
	finish
fi
kill -KILL "$R1"
wait "$R1" 2>/dev/null
# The orphaned gate (its own process group) ends once the gate opens.
touch "$PW_TMP/gate/open"
[ "$(job_state "$base")" = running ] && pass job_still_leased_after_kill ||
    fail job_still_leased_after_kill "state $(job_state "$base")"

start_runner r2
t0=$(date +%s)
requeued_or_taken() {
	pw jobs show "$base" --json >"$PW_TMP/b.json" || return 1
	[ "$(jfield attempts <"$PW_TMP/b.json")" -ge 2 ] 2>/dev/null
}
if wait_until 25 requeued_or_taken; then
	pass lease_expiry_requeues
else
	fail lease_expiry_requeues "$(head -c 600 "$PW_TMP/b.json")"
fi
[ $(($(date +%s) - t0)) -ge 5 ] && pass not_requeued_before_lease ||
    fail not_requeued_before_lease "requeued after $(($(date +%s) - t0)) s"

if wait_until 50 jobs_in_state success 2; then
	pass second_runner_completes_both
else
	fail second_runner_completes_both "base $(job_state "$base") cand $(job_state "$cand")"
	show_logs
fi

for id in "$base" "$cand"; do
	pw jobs show "$id" --json >"$PW_TMP/job$id.json"
	if python3 - "$PW_TMP/job$id.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
idx = [r["index"] for r in j["runs"]]
assert sorted(idx) == [0, 1], ("runs stored", idx)
assert all(r["status"] == "ok" for r in j["runs"]), j["runs"]
# Both sides of the pair come from one host: the survivor.
assert j["host"] == "r2", j["host"]
assert all(r["host"] == "r2" for r in j["runs"]), [r["host"] for r in j["runs"]]
assert j["runs_done"] == 2, j["runs_done"]
PY
	then
		pass "job${id}_two_runs_once_each"
	else
		fail "job${id}_two_runs_once_each" "$(head -c 1500 "$PW_TMP/job$id.json")"
	fi
done
[ "$(jfield attempts <"$PW_TMP/job$base.json")" = 2 ] && pass base_took_two_attempts ||
    fail base_took_two_attempts "attempts $(jfield attempts <"$PW_TMP/job$base.json")"
# In the database too, not only in the API's view.
n=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($base, $cand)" 2>/dev/null)
[ "$n" = 4 ] && pass four_rows_in_runs || fail four_rows_in_runs "got '$n'"
# Each pair's count of queued jobs (store v25, kept by triggers through
# the claim, the lost lease's requeue and the finish) is the jobs' own.
n=$(sql "SELECT count(*) FROM pairs p WHERE p.queued <> (SELECT count(*)
    FROM jobs j WHERE j.pair_id = p.id AND j.state = 'queued')" 2>/dev/null)
[ "$n" = 0 ] && pass queue_counts_kept || fail queue_counts_kept "$n pairs' counts differ"
finish
