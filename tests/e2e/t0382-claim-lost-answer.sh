#!/usr/bin/env bash
# A claim whose answer is lost costs the job no attempt.  The runner has
# two servers of one database (runner.yaml servers: [A, B]; SQLite: the
# same file, B started once A is dead; make check-pg: the same
# PostgreSQL database) and reaches A through a proxy (api_proxy.py
# cut-claim) that lets A lease it a job and then dies without replying,
# as a daemon killed between its claim's commit and its answer; the test
# kills A.  The runner sends the claim again, with the same claim id,
# and B hands the job back to it (logged) as the same attempt: the job
# is measured and finished with attempts 1, and its pair gets a verdict.
# Then the claim's field as untrusted input (400 naming claim_id), and
# the claims of another runner by curl: the same id again is no new
# attempt, another id or none is one, as a restarted runner's is.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
printf 'scheduler:\n  lease: 60s\n  claim_wait: 2s\n' >>"$PW_DIR/daemon.yaml"
# Two runs a side in two rounds: r1's runner claims both jobs at once.
for j in steady:r1 other:r2; do
	printf 'name: %s\nparser: keyvalue\ncommand: [echo, ops=100]\n%s\nhosts: [%s]\n' \
	    "${j%:*}" 'runs: 2
max_runs: 2
metrics: {ops: {better: higher}}' "${j#*:}" >"$PW_DIR/jobs/${j%:*}.yaml"
done
daemon_b_config
start_daemon "$PW_TMP/d" || { fail daemon_a_starts "see log"; finish; }
A=$PW_DAEMON_PID
mkdir -p "$PW_TMP/px"
touch "$PW_TMP/px/cut-claim"
spawn "$PW_TMP/px/log" /usr/bin/python3 "$(dirname "$0")/api_proxy.py" \
    "$PW_URL" "$PW_TMP/px"
wait_for 10 test -s "$PW_TMP/px/port" || { fail proxy_starts "$(cat "$PW_TMP/px/log")"; finish; }
A_URL=http://127.0.0.1:$(cat "$PW_TMP/px/port")

pw_admin submit --job steady --json >"$PW_TMP/submit.json" || fail submit "exit $?"
pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")
runner_config r1
sed -i "s|^server: .*|servers: [$A_URL, $B_URL]|" "$PW_TMP/r1/runner.yaml"
PERFWATCH_NO_CGROUPS=1 start_runner r1
RUNNER=$!

if wait_until 40 test -s "$PW_TMP/px/claim-cut"; then
	pass claim_answer_cut_after_a_leased_a_job
else
	fail claim_answer_cut_after_a_leased_a_job "$(cat "$PW_TMP/px/claims.log" 2>/dev/null)"
	show_logs
	finish
fi
kill -KILL "$A"
wait "$A" 2>/dev/null
read -r cid st job att <"$PW_TMP/px/claim-cut"
# What A committed before its answer was lost: both jobs of the pair
# (rounds: runs, pair_claims: one claim holds both), leased to r1 as
# their first attempt; the claim's job is the side that opens the first
# round.
role=$(sql "SELECT role FROM jobs WHERE id = ${job:-0}")
states=$(sql "SELECT state || ' ' || attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ';')
[[ $cid =~ ^[0-9a-f]{32}$ ]] && [ "$st" = 200 ] && [ "$att" = 1 ] &&
    { [ "$job" = "$base" ] || [ "$job" = "$cand" ]; } &&
    [ "$states" = "running 1;running 1;" ] &&
    pass a_leased_the_pair_for_the_claim_id ||
    fail a_leased_the_pair_for_the_claim_id "cut: $(cat "$PW_TMP/px/claim-cut"); $(sql "SELECT id, state, attempts FROM jobs")"

start_daemon_b
jobs_done_through_b 90 "$base" "$cand"
# The same claim's answer, on another daemon: the same job first, the
# pair's other one with it, neither a new attempt.
grep -q "job $job ($role) handed back to r1 on its repeated claim $cid, attempt 1 as before, with its pair's other job" "$PW_TMP/b.log" &&
    pass b_handed_the_same_job_back_to_the_same_claim_id ||
    fail b_handed_the_same_job_back_to_the_same_claim_id "$(grep -E 'claimed by|handed back' "$PW_TMP/b.log")"
# Handed back, not claimed anew: B made no other claim of them.
n=$(grep -c "claimed by r1" "$PW_TMP/b.log")
[ "$n" = 0 ] && pass no_second_claim_of_the_pair ||
    fail no_second_claim_of_the_pair "$(grep -E 'claimed by|handed back' "$PW_TMP/b.log")"
states=$(sql "SELECT role || ' ' || state || ' ' || attempts FROM jobs WHERE id IN ($base, $cand) ORDER BY id" | tr '\n' ';')
[ "$states" = "base success 1;candidate success 1;" ] &&
    pass each_job_one_attempt ||
    fail each_job_one_attempt "$states"
n=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($base, $cand)")
[ "$n" = 4 ] && pass four_runs_stored || fail four_runs_stored "got '$n'"
analysed() { [ "$(sql "SELECT analysed FROM pairs WHERE id = $pair")" = 1 ]; }
wait_until 30 analysed && pass b_makes_the_verdict ||
    fail b_makes_the_verdict "$(sql "SELECT * FROM pairs")"
stop_pid "$RUNNER"

# The claim id is untrusted input: a string of 1 to 64 letters, digits,
# '-' or '_', else 400 naming the field; nothing is claimed.
R2=$(token_of r2)
[ "$(http POST /api/v1/runners/register "$R2" '{"name": "r2"}')" = 200 ] ||
    fail r2_registers "$(cat "$PW_TMP/body")"
long=$(printf 'a%.0s' $(seq 65))
bads=('""' '"a b"' '"../x"' '"k\u00e9"' '"x;drop"' 7 "\"$long\"")
names=(empty space path non_ascii punctuation number too_long)
for i in "${!bads[@]}"; do
	code=$(http POST /api/v1/jobs/claim "$R2" "{\"claim_id\": ${bads[$i]}}")
	if [ "$code" = 400 ] && grep -q "field 'claim_id'" "$PW_TMP/body"; then
		pass "claim_id_${names[$i]}_refused"
	else
		fail "claim_id_${names[$i]}_refused" "HTTP $code $(cat "$PW_TMP/body")"
	fi
done
code=$(http POST /api/v1/jobs/claim "$R2" "{\"claim_id\": \"$(printf 'Z%.0s' $(seq 64))\"}")
[ "$code" = 204 ] && pass claim_id_of_64_accepted ||
    fail claim_id_of_64_accepted "HTTP $code $(cat "$PW_TMP/body")"

# Another runner's claims by hand (one job a claim, no "pairs"): the
# same id again is the same attempt; another id, or none (a runner
# without ids), one more.
pw_admin submit --job other --json >"$PW_TMP/other.json" || fail submit_other "exit $?"
claim_as() { # claim_as BODY: "JOB ATTEMPT" of r2's claim
	[ "$(http POST /api/v1/jobs/claim "$R2" "$1")" = 200 ] || { echo "HTTP $(cat "$PW_TMP/body")"; return; }
	echo "$(jfield job.id <"$PW_TMP/body") $(jfield job.attempt <"$PW_TMP/body")"
}
got=$(claim_as '{"claim_id": "c-1"}';
    claim_as '{"claim_id": "c-1"}';
    claim_as '{"claim_id": "c-2"}';
    claim_as '{}' ;
    claim_as '{"claim_id": "c-2"}')
ob=$(echo "$got" | head -n 1 | cut -d' ' -f1)
want="$ob 1
$ob 1
$ob 2
$ob 3
$ob 4"
[ -n "$ob" ] && [ "$got" = "$want" ] &&
    pass same_id_same_attempt_other_id_or_none_one_more ||
    fail same_id_same_attempt_other_id_or_none_one_more "$(echo "$got" | tr '\n' ';')"
[ "$(sql "SELECT attempts FROM jobs WHERE id = ${ob:-0}")" = 4 ] &&
    pass attempts_stored_as_answered ||
    fail attempts_stored_as_answered "$(sql "SELECT id, attempts FROM jobs")"
finish
