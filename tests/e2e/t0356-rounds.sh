#!/usr/bin/env bash
# Rounds (docs/CONFIG.md `rounds`): a pair's base and candidate are
# measured in turns on one host, each round's order drawn from the pair
# and the round (randomised blocks), so drift of the host falls on both
# sides alike instead of on one.
# A real daemon and runner; each run's command appends its job's role to
# one file, so the order the runs really happened in is read back, and
# the daemon's order (the runs' ids) must agree.  The verdict comes only
# after the last round, and rounds are not counted as attempts.
# By default (runner.yaml `pair_claims`) one claim holds both jobs and
# the runner takes the turns itself, in the order common/rounds.h draws
# (the same for the same pair and round, so the test draws it too); with
# `pair_claims: false` the daemon hands out one round of one job a claim.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
# rr on r1 (pair claims), rr2 on r2 (pair_claims: false); each run
# appends its {run} to its runner's file.
for r in 1 2; do
	cat >"$PW_DIR/jobs/rr$r.yaml" <<YAML
name: rr$r
parser: keyvalue
command: [sh, -c, 'echo "\$1" >>"\$0"; echo "v=\$((\$2 * 0 + 10))"', "$PW_TMP/order$r", "{run}", "{run}"]
hosts: [r$r]
runs: 6
max_runs: 6
rounds: 3
timeout: 30s
metrics:
  v: {better: higher}
YAML
done
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# expected_order PAIR: the rounds' order rounds_base_first draws, b/c.
expected_order() {
	python3 - "$1" <<'PY'
import sys
M = (1 << 64) - 1
pair = int(sys.argv[1])
out = ""
for k in range(3):
    x = (pair * 0x9e3779b97f4a7c15 + k * 0xbf58476d1ce4e5b9) & M
    x ^= x >> 31
    x = (x * 0x94d049bb133111eb) & M
    x ^= x >> 29
    out += "bbcc" if x & 1 else "ccbb"
print(out)
PY
}
runner_config r1
PERFWATCH_NO_CGROUPS=1 start_runner r1
runner_config r2 "pair_claims: false"
PERFWATCH_NO_CGROUPS=1 start_runner r2
# measure LABEL R: one pair of job rrR, measured by runner rR; sets
# base, cand, pair, order (the runs' roles in arrival order) and ran.
measure() {
	local label=$1
	pw_admin submit --job "rr$2" --json >"$PW_TMP/submit.json" || fail "${label}_submit" "exit $?"
	base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
	cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")
	pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
	wait_until 120 analysed || { fail "${label}_measured" "$(sql 'SELECT id, role, state, error FROM jobs')"; show_logs; finish; }
	pass "${label}_measured"
	order=$(sql "SELECT group_concat(CASE job_id WHEN $base THEN 'b' WHEN $cand THEN 'c' END, '')
	    FROM (SELECT job_id FROM runs WHERE job_id IN ($base, $cand) ORDER BY id) AS o")
	ran=$(tr -d '\n' <"$PW_TMP/order$2")
}
analysed() { [ "$(sql "SELECT analysed FROM pairs WHERE id = $pair")" = 1 ]; }
# Two runs of one job per round, both jobs each round (bbcc or ccbb), in
# the daemon's order of arrival; the command saw {run} 1 2 1 2, 3 4 3 4...
check_rounds() {
	local label=$1 ok k att v
	ok=$([ ${#order} = 12 ] && echo 1 || echo 0)
	for k in 0 4 8; do
		case ${order:k:4} in bbcc|ccbb) ;; *) ok=0 ;; esac
	done
	[ $ok = 1 ] && pass "${label}_runs_alternate_in_rounds" || fail "${label}_runs_alternate_in_rounds" "$order"
	[ "$ran" = 121234345656 ] && pass "${label}_runner_ran_each_round_once" || fail "${label}_runner_ran_each_round_once" "$ran"
	att=$(sql "SELECT attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ' ')
	[ "$att" = "1 1 " ] && pass "${label}_rounds_are_not_attempts" || fail "${label}_rounds_are_not_attempts" "$att"
	v=$(sql "SELECT verdict FROM comparisons WHERE pair_id = $pair AND metric = 'v'")
	[ "$v" = unchanged ] && pass "${label}_verdict_after_last_round" || fail "${label}_verdict_after_last_round" "$v"
}

measure pair 1
check_rounds pair
want=$(expected_order "$pair")
[ "$order" = "$want" ] && pass pair_order_is_the_drawn_one || fail pair_order_is_the_drawn_one "$order, drawn $want"
claims=$(grep -c "job \($base\|$cand\) ([a-z]*) claimed by r1" "$PW_TMP/d/daemon.log")
both=$(grep -c "job \($base\|$cand\) ([a-z]*) claimed by r1, with its pair's other job" "$PW_TMP/d/daemon.log")
[ "$claims" = 1 ] && [ "$both" = 1 ] && pass one_claim_holds_both || fail one_claim_holds_both "$claims claims, $both of both"
n=$(grep -c "measured in turns with job" "$PW_TMP/r1/runner.log")
[ "$n" = 2 ] && pass job_logs_say_turns || fail job_logs_say_turns "$n lines"

measure round 2
check_rounds round
claims=$(grep -c "job $base (base) claimed by r2\$" "$PW_TMP/d/daemon.log")
[ "$claims" = 3 ] && pass round_three_claims_each || fail round_three_claims_each "$claims"
finish
