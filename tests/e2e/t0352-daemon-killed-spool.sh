#!/usr/bin/env bash
# The daemon killed with SIGKILL while two runners upload runs: after a
# restart every run that got a 2xx is stored exactly once, and the runners
# resend the rest from their spools.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
# A fixed port: the runners must find the restarted daemon where it was.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -i "s/^listen: .*/listen: 127.0.0.1:$port/" "$PW_DIR/daemon.yaml"
cat >>"$PW_DIR/daemon.yaml" <<YAML
scheduler:
  lease: 30s
  claim_wait: 5s
YAML
cat >"$PW_DIR/jobs/steady.yaml" <<YAML
name: steady
parser: keyvalue
command: [sh, -c, 'sleep 0.7; echo ops=\$\$ ops/s']
runs: 5
max_runs: 5
timeout: 30s
metrics:
  ops: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
runner_config r2
start_runner r1
start_runner r2
pw_admin submit --job steady >/dev/null || fail submit "exit $?"
pw_admin submit --job steady >/dev/null || fail submit "exit $?"

both_uploading() {
	grep -q ': run 0 uploaded' "$PW_TMP/r1/runner.log" &&
	    grep -q ': run 0 uploaded' "$PW_TMP/r2/runner.log"
}
if wait_until 40 both_uploading; then
	pass both_runners_upload
else
	fail both_runners_upload "no upload seen"
	show_logs
	finish
fi
kill -KILL "$PW_DAEMON_PID"
wait "$PW_DAEMON_PID" 2>/dev/null
# What the dead daemon had committed (every 2xx it sent is in here).
sql "SELECT job_id || ':' || idx FROM runs ORDER BY 1" >"$PW_TMP/before" 2>"$PW_TMP/sql.err"
[ -s "$PW_TMP/before" ] && pass runs_committed_before_kill ||
    fail runs_committed_before_kill "$(cat "$PW_TMP/sql.err")"

spooled() {
	grep -q 'spooled, will resend' "$PW_TMP/r1/runner.log" "$PW_TMP/r2/runner.log"
}
if wait_until 20 spooled; then
	pass runs_spooled_while_daemon_down
else
	fail runs_spooled_while_daemon_down "no run was spooled"
fi
sleep 1
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; show_logs; finish; }
[ "$PW_PORT" = "$port" ] && pass same_port || fail same_port "$PW_PORT != $port"

if wait_until 50 jobs_in_state success 4; then
	pass all_jobs_succeed_after_restart
else
	fail all_jobs_succeed_after_restart "$(pw jobs)"
	show_logs
fi

pw jobs --json >"$PW_TMP/jobs.json"
bad=""
for id in $(python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(open(sys.argv[1]))["jobs"]))' "$PW_TMP/jobs.json"); do
	pw jobs show "$id" --json >"$PW_TMP/job$id.json"
	python3 - "$PW_TMP/job$id.json" <<'PY' || bad="$bad $id"
import json, sys
j = json.load(open(sys.argv[1]))
idx = sorted(r["index"] for r in j["runs"])
assert idx == [0, 1, 2, 3, 4], idx
# memcg telemetry (better: info, docs/MEMCG.md) may be 0; the benchmark's
# own metrics may not.
assert all(r["status"] == "ok" and
           all(m["value"] > 0 for m in r["metrics"] if m["better"] != "info")
           for r in j["runs"])
PY
done
[ -z "$bad" ] && pass every_run_stored_once || fail every_run_stored_once "jobs:$bad"

n=$(sql "SELECT count(*) FROM runs")
[ "$n" = 20 ] && pass twenty_rows || fail twenty_rows "got $n"
sql "SELECT job_id || ':' || idx FROM runs ORDER BY 1" >"$PW_TMP/after"
missing=$(comm -23 "$PW_TMP/before" "$PW_TMP/after")
[ -z "$missing" ] && pass acknowledged_runs_kept || fail acknowledged_runs_kept "$missing"

left=$(find "$PW_TMP/r1/work/spool" "$PW_TMP/r2/work/spool" -name 'run-*.json' | wc -l)
[ "$left" = 0 ] && pass spools_empty || fail spools_empty "$left files left: $(find "$PW_TMP"/r?/work/spool -name 'run-*')"
finish
