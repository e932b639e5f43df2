#!/usr/bin/env bash
# A runner killed (SIGKILL) while its benchmark runs in a nested memcg:
# the cgroup and the benchmark are left behind; the next start of the
# runner (same workdir) kills what is left in the journalled cgroups and
# removes them, and sweeps the cgroup2 companion of the dead runner.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

CG=/pwe2e-$$
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/long.yaml" <<YAML
name: long
parser: keyvalue
command: [sleep, "60"]
hosts: [test]
matrix:
  cgroup: [$CG/a/b]
runs: 1
metrics:
  x: {better: higher}
timeout: 2m
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
start_runner r1
R1=$!
pw_admin submit --job long --json >"$PW_TMP/s.json" 2>&1 || fail submit "$(cat "$PW_TMP/s.json")"
mem=$(find /sys/fs/cgroup/memory -maxdepth 4 -type d -name "pwe2e-$$" 2>/dev/null | head -1)
leaf_busy() {
	mem=$(find /sys/fs/cgroup/memory -maxdepth 4 -type d -name "pwe2e-$$" 2>/dev/null | head -1)
	[ -n "$mem" ] && [ -n "$(cat "$mem/a/b/cgroup.procs" 2>/dev/null)" ]
}
if wait_until 30 leaf_busy; then
	pass benchmark_runs_in_nested_cgroup
else
	fail benchmark_runs_in_nested_cgroup "no process in $CG/a/b"
	show_logs
	finish
fi
sleeper=$(head -1 "$mem/a/b/cgroup.procs")
[ -f "$PW_TMP/r1/work/cgroups.journal" ] && grep -q "$CG/a/b\$" "$PW_TMP/r1/work/cgroups.journal" &&
    pass journal_written || fail journal_written "$(cat "$PW_TMP/r1/work/cgroups.journal" 2>&1)"
kill -9 "$R1"
wait "$R1" 2>/dev/null
sleep 0.5
[ -d "$mem/a/b" ] && kill -0 "$sleeper" 2>/dev/null &&
    pass left_behind_after_kill || fail left_behind_after_kill "nothing left?"
comp=/sys/fs/cgroup/unified/perfwatch-root-$R1

start_runner r1
R2=$!
# The old benchmark dies; the daemon hands the job back to the restarted
# runner, which places it afresh.
dead() { ! kill -0 "$sleeper" 2>/dev/null; }
if wait_until 20 dead; then
	pass restart_kills_leftover
else
	fail restart_kills_leftover "pid $sleeper still runs"
fi
grep -q 'cgroups left by a previous run: [1-9]' "$PW_TMP/r1/runner.log" &&
    pass restart_logs_cleanup || fail restart_logs_cleanup "$(tail -5 "$PW_TMP/r1/runner.log")"
[ ! -d "$comp" ] && pass no_dead_companion || fail no_dead_companion "$comp"
# A runner stopped with SIGTERM mid-job tears its cgroups down itself.
wait_until 20 leaf_busy || true
stop_pid "$R2"
left=$(find /sys/fs/cgroup/memory /sys/fs/cgroup/unified -maxdepth 4 -type d \
    -name "pwe2e-$$" 2>/dev/null)
[ -z "$left" ] && pass sigterm_leaves_nothing || fail sigterm_leaves_nothing "$left"
kill "$sleeper" 2>/dev/null
finish
