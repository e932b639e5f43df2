#!/usr/bin/env bash
# The runner's built-in placeholders (docs/CONFIG.md): {run} is each run's
# 1-based index in `command` and 0 in `server_command` (as in `build`);
# {host} is the runner's name; {cpus} its online CPUs; {workdir} the
# job's scratch directory.  The command writes them where the test reads
# them back, so each value is checked against its source.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/bi.yaml" <<'YAML'
name: bi
parser: keyvalue
server_command: [sh, -c, 'echo "server run={run}" >>"$0/seen"; exec sleep 60', "{workdir}"]
command: [sh, -c, 'echo "command run={run} host={host} cpus={cpus}" >>"$0/seen"; cat "$0/seen" >>"$1"; echo "idx={run}"', "{workdir}", OUT]
runs: 3
max_runs: 3
timeout: 30s
metrics:
  idx: {better: higher}
YAML
sed -i "s|OUT|$PW_TMP/all|" "$PW_DIR/jobs/bi.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
PERFWATCH_NO_CGROUPS=1 start_runner r1
pw_admin submit --job bi --json >"$PW_TMP/submit.json" || fail submit "exit $?"
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")
done_() { [ "$(job_state "$cand")" = success ]; }
if wait_until 90 done_; then pass job_done; else fail job_done "$(job_state "$cand")"; show_logs; finish; fi
idx=$(sql "SELECT group_concat(m.value, ' ') FROM (SELECT m.value FROM runs r
    JOIN metrics m ON m.run_id = r.id AND m.name = 'idx' WHERE r.job_id = $cand ORDER BY r.idx) m")
[ "$idx" = "1.0 2.0 3.0" ] || [ "$idx" = "1 2 3" ] && pass run_is_the_index || fail run_is_the_index "$idx"
ncpu=$(getconf _NPROCESSORS_ONLN)
grep -q "^command run=3 host=r1 cpus=$ncpu\$" "$PW_TMP/all" &&
    pass host_and_cpus || fail host_and_cpus "$(tail -3 "$PW_TMP/all")"
grep -q "^server run=0\$" "$PW_TMP/all" &&
    pass server_run_zero || fail server_run_zero "$(head -3 "$PW_TMP/all")"
finish
