#!/usr/bin/env bash
# Rounds (docs/CONFIG.md `rounds`): a pair's base and candidate are
# measured in turns on one host, each round's order drawn from the pair
# and the round (randomised blocks), so drift of the host falls on both
# sides alike instead of on one.
# A real daemon and runner; each run's command appends its job's role to
# one file, so the order the runs really happened in is read back, and
# the daemon's order (the runs' ids) must agree.  The verdict comes only
# after the last round, and rounds are not counted as attempts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/rr.yaml" <<YAML
name: rr
parser: keyvalue
command: [sh, -c, 'echo "\$1" >>"\$0"; echo "v=\$((\$2 * 0 + 10))"', "$PW_TMP/order", "{run}", "{run}"]
runs: 6
max_runs: 6
rounds: 3
timeout: 30s
metrics:
  v: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
PERFWATCH_NO_CGROUPS=1 start_runner r1
pw_admin submit --job rr --json >"$PW_TMP/submit.json" || fail submit "exit $?"
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")
pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
analysed() { [ "$(sql "SELECT analysed FROM pairs WHERE id = $pair")" = 1 ]; }
wait_until 120 analysed || { fail measured "$(sql 'SELECT id, role, state, error FROM jobs')"; show_logs; finish; }
pass measured
# Two runs of one job per round, both jobs each round (bbcc or ccbb), in
# the daemon's order of arrival.
order=$(sql "SELECT group_concat(CASE job_id WHEN $base THEN 'b' WHEN $cand THEN 'c' END, '')
    FROM (SELECT job_id FROM runs WHERE job_id IN ($base, $cand) ORDER BY id)")
ok=$([ ${#order} = 12 ] && echo 1 || echo 0)
for k in 0 4 8; do
	case ${order:k:4} in bbcc|ccbb) ;; *) ok=0 ;; esac
done
[ $ok = 1 ] && pass runs_alternate_in_rounds || fail runs_alternate_in_rounds "$order"
ran=$(tr -d '\n' <"$PW_TMP/order")
[ "$ran" = 121234345656 ] && pass runner_ran_each_round_once || fail runner_ran_each_round_once "$ran"
claims=$(grep -c "job $base (base) claimed by r1" "$PW_TMP/d/daemon.log")
[ "$claims" = 3 ] && pass three_claims_each || fail three_claims_each "$claims"
att=$(sql "SELECT attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ' ')
[ "$att" = "1 1 " ] && pass rounds_are_not_attempts || fail rounds_are_not_attempts "$att"
v=$(sql "SELECT verdict FROM comparisons WHERE pair_id = $pair AND metric = 'v'")
[ "$v" = unchanged ] && pass verdict_after_last_round || fail verdict_after_last_round "$v"
finish
