#!/usr/bin/env bash
# limits.pids (runner.yaml, docs/CONFIG.md) in the host's real cgroups:
# on cgroup v2 as pids.max of the benchmark's leaf, on cgroup v1 (this
# VM) as pids.max of a companion leaf in the pids hierarchy, for a job
# in the root memcg too.  A root runner, for which RLIMIT_NPROC does not
# count, runs a fork bomb under limits.pids 24: the kernel refuses its
# forks, the job fails naming "pids.max 24 (N forks refused)", nothing
# of the bomb is left, the companion leaf is removed, and the runner runs
# the next job.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_limits.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP t0365: needs root (cgroups)"
	finish
fi

daemon_config "$PW_TMP/d" r1
limits_bomb_job bomb
limits_job fine "[sh, -c, 'echo ops=1']"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1 "limits:" "  pids: 24" "  nproc: 1000000"
start_runner r1
RUNNER=$!
wait_until 30 grep -q "cgroups: " "$PW_TMP/r1/runner.log"
# Whether this host offers the pids controller, read from the kernel
# rather than from the runner: a v1 pids hierarchy, or pids in the
# cgroup2 root's controllers.
pids_here=
if grep -qE ' - cgroup [^ ]+ ([^ ]*,)?pids(,|$)' /proc/self/mountinfo; then
	pids_here=v1
elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	pids_here=v2
fi
if [ -z "$pids_here" ]; then
	echo "SKIP t0365: this host has no pids controller"
	stop_pid "$RUNNER"
	finish
fi
grep -q "limits.pids as pids.max" "$PW_TMP/r1/runner.log" &&
    pass runner_says_pids_enforced ||
    fail runner_says_pids_enforced "pids on $pids_here; $(grep "cgroups: " "$PW_TMP/r1/runner.log")"

bomb=$(limits_submit bomb)
wait_until 120 limits_ended "$bomb" || { fail bomb_ends "$(job_state "$bomb")"; show_logs; finish; }
[ "$(job_state "$bomb")" = failed ] && grep -qE "pids\.max 24 \([0-9]+ forks refused\)" <<<"$(limits_err "$bomb")" &&
    pass fork_bomb_fails_naming_pids_max ||
    fail fork_bomb_fails_naming_pids_max "$(job_state "$bomb"): $(limits_err "$bomb")"
raw=$(curl -s "$PW_URL/api/v1/jobs/$bomb/runs/0/raw")
grep -qi "fork" <<<"$raw" && ! grep -q "timed out" <<<"$(limits_err "$bomb")" &&
    pass fork_bomb_stopped_by_fork_failure || fail fork_bomb_stopped_by_fork_failure "$(limits_err "$bomb"); raw: $(head -c 300 <<<"$raw")"
limits_bomb_left_nothing bomb
# The runner's pids leaves (perfwatch-root-PID on v1) are gone.
left=$(find /sys/fs/cgroup/pids /sys/fs/cgroup -maxdepth 3 -type d -name "perfwatch-root-$RUNNER" 2>/dev/null |
    while read -r d; do [ -f "$d/pids.max" ] && echo "$d"; done)
[ -z "$left" ] && pass pids_leaf_removed || fail pids_leaf_removed "$left"

fine=$(limits_submit fine)
wait_until 120 limits_ended "$fine" || { fail fine_ends "$(job_state "$fine")"; show_logs; finish; }
kill -0 "$RUNNER" 2>/dev/null && [ "$(job_state "$fine")" = success ] &&
    pass runner_survives || { fail runner_survives "$(job_state "$fine"): $(limits_err "$fine")"; show_logs; }
stop_pid "$RUNNER"
finish
