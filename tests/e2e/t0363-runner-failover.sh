#!/usr/bin/env bash
# A runner with two servers of one database (runner.yaml servers: [A, B])
# fails over when A dies mid-job.  A and B are two perfwatchd on the same
# database (SQLite: the same file; make check-pg: the same PostgreSQL
# database), B started only after A is killed, since one daemon holds a
# database at a time.  The runner reaches A through a proxy
# (api_proxy.py) that passes the upload of run 1 to A, which stores
# it, and then dies without replying, as a daemon killed between its
# commit and its reply; the test then kills A (SIGKILL).  The runner
# goes on to B by itself (logged), sends run 1 again there, which stores
# nothing (a job's run index is stored once, whichever daemon gets it:
# the repeat is answered 200 {"stored": false}), heartbeats there and
# finishes both jobs, and B makes the verdict.  Then a
# second runner whose first server is the dead one registers with B.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
cat >>"$PW_DIR/daemon.yaml" <<YAML
scheduler:
  lease: 60s
  claim_wait: 2s
YAML
cat >"$PW_DIR/jobs/steady.yaml" <<YAML
name: steady
parser: keyvalue
command: [sh, -c, 'sleep 0.3; echo ops=\$\$']
runs: 3
# max_runs = runs: ops is a pid (noise), so the verdict is final at 3.
max_runs: 3
timeout: 60s
metrics:
  ops: {better: higher}
YAML
# B: the same configuration on a port of its own, started later.
daemon_b_config
start_daemon "$PW_TMP/d" || { fail daemon_a_starts "see log"; finish; }
A=$PW_DAEMON_PID
mkdir -p "$PW_TMP/px"
echo 1 >"$PW_TMP/px/cut-run"
spawn "$PW_TMP/px/log" /usr/bin/python3 "$(dirname "$0")/api_proxy.py" \
    "$PW_URL" "$PW_TMP/px"
wait_for 10 test -s "$PW_TMP/px/port" || { fail proxy_starts "$(cat "$PW_TMP/px/log")"; finish; }
A_URL=http://127.0.0.1:$(cat "$PW_TMP/px/port")

runner_config r1
sed -i "s|^server: .*|servers: [$A_URL, $B_URL]|" "$PW_TMP/r1/runner.yaml"
start_runner r1
pw_admin submit --job steady --json >"$PW_TMP/submit.json" || fail submit "exit $?"
pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")

log=$PW_TMP/r1/runner.log
if wait_until 40 test -s "$PW_TMP/px/cut"; then
	pass upload_cut_after_a_stored_it
else
	fail upload_cut_after_a_stored_it "base $(job_state "$base")"
	show_logs
	finish
fi
kill -KILL "$A"
wait "$A" 2>/dev/null
grep -q "registered as r1 with $A_URL " "$log" &&
    grep -q "job [0-9]* (.*) claimed by r1" "$PW_DIR/daemon.log" &&
    pass claimed_through_a ||
    fail claimed_through_a "$(grep -E 'registered|claimed' "$log" "$PW_DIR/daemon.log")"
# The job whose run 1 was cut: the base, or the candidate when one claim
# holds both and the candidate's turn came first.
cut=$(cut -d' ' -f2 "$PW_TMP/px/cut")
[ "$(cut -d' ' -f1 "$PW_TMP/px/cut")" = 201 ] &&
    [ "$(sql "SELECT count(*) FROM runs WHERE job_id = $cut AND idx = 1")" = 1 ] &&
    pass a_stored_run1_before_dying ||
    fail a_stored_run1_before_dying "cut: $(cat "$PW_TMP/px/cut"), $(sql "SELECT job_id, idx FROM runs")"

start_daemon_b
jobs_done_through_b 60 "$base" "$cand"
grep -q "server $A_URL: POST /api/v1/jobs/$cut/runs: .*; failing over to $B_URL" "$log" &&
    pass upload_in_flight_failed_over ||
    fail upload_in_flight_failed_over "$(grep -E 'failing over|spooled' "$log")"
grep -q "job $cut: run 1 uploaded" "$log" && pass run1_resent_answered_2xx ||
    fail run1_resent_answered_2xx "$(grep "run 1" "$log")"
grep -q "server $A_URL: POST /api/v1/runners/heartbeat: .*; failing over to $B_URL" "$log" &&
    pass heartbeats_failed_over || fail heartbeats_failed_over "$(grep 'failing over' "$log")"

for id in "$base" "$cand"; do
	pw jobs show "$id" --json >"$PW_TMP/job$id.json"
	if python3 - "$PW_TMP/job$id.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
idx = sorted(r["index"] for r in j["runs"])
assert idx == [0, 1, 2], ("runs stored", idx)
assert all(r["status"] == "ok" and r["host"] == "r1" for r in j["runs"]), j["runs"]
assert j["attempts"] == 1, ("attempts", j["attempts"])
PY
	then
		pass "job${id}_runs_once_each_one_attempt"
	else
		fail "job${id}_runs_once_each_one_attempt" "$(head -c 1500 "$PW_TMP/job$id.json")"
	fi
done
n=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($base, $cand)")
[ "$n" = 6 ] && pass six_rows_in_runs || fail six_rows_in_runs "got '$n'"
left=$(find "$PW_TMP/r1/work/spool" -name 'run-*.json' | wc -l)
[ "$left" = 0 ] && pass spool_empty || fail spool_empty "$left files left"

verdict_made() {
	[ "$(http GET "/api/v1/pairs/$pair")" = 200 ] &&
	    [ "$(jfield comparisons.0.final <"$PW_TMP/body")" = true ]
}
wait_until 30 verdict_made && pass b_makes_the_verdict ||
    fail b_makes_the_verdict "$(head -c 800 "$PW_TMP/body")"

# Run 1 of the cut job sent again, as the runner did: nothing stored.
R1=$(token_of r1)
body='{"index": 1, "status": "ok", "duration_s": 0.1, "metrics":
  [{"name": "ops", "value": 1, "unit": "", "better": "higher"}]}'
code=$(http POST "/api/v1/jobs/$cut/runs" "$R1" "$body")
stored=$(jfield stored <"$PW_TMP/body")
n=$(sql "SELECT count(*) FROM runs WHERE job_id = $cut AND idx = 1")
[ "$code" = 200 ] && [ "$stored" = false ] && [ "$n" = 1 ] &&
    pass resent_upload_stored_once ||
    fail resent_upload_stored_once "HTTP $code stored=$stored rows=$n"

# A second runner whose first server is down from the start.
runner_config r2
sed -i "s|^server: .*|servers: [$A_URL, $B_URL]|" "$PW_TMP/r2/runner.yaml"
timeout 60 "$PW_BIN/perfwatch-runner" -v -c "$PW_TMP/r2/runner.yaml" --once \
    >"$PW_TMP/r2/runner.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "registered as r2 with $B_URL " "$PW_TMP/r2/runner.log" &&
    grep -q "no job to claim" "$PW_TMP/r2/runner.log" &&
    pass unreachable_first_server_second_used ||
    fail unreachable_first_server_second_used "exit $rc: $(tail -5 "$PW_TMP/r2/runner.log")"
finish
