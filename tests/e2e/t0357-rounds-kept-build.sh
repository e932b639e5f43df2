#!/usr/bin/env bash
# A job on a commit builds once, not once a round (runner.yaml
# `keep_builds`, docs/CONFIG.md): a real daemon and runner, a pair of two
# commits in three rounds.  The job's build appends its directory to one
# file, and each run appends to a file in the job's directory, so the
# builds and the directory's life are read back: one build a job, the
# later rounds start where the last left off (the runs' file grows across
# rounds) and the job log says so.  With keep_builds 0 every round
# exports and builds from nothing, and the runner's start removes what
# an earlier config kept.  The runner claims a round at a time
# (`pair_claims: false`): with pair claims (the default) a pair's rounds
# are one claim, built once anyway (t0356).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/app
src_init "$SRC"
C1=$(g "$SRC" rev-parse HEAD)
echo two >>"$SRC/README"
g "$SRC" commit -qam two
C2=$(g "$SRC" rev-parse HEAD)
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/kb.yaml" <<YAML
name: kb
parser: keyvalue
build: [sh, -c, 'echo "\$0" >>"$PW_TMP/builds"; echo built >built.txt', "{workdir}"]
command: [sh, -c, 'cat built.txt >/dev/null && echo run >>runs.txt && printf "v=10\\nseen=%s\\n" "\$(wc -l <runs.txt)"']
runs: 6
max_runs: 6
rounds: 3
timeout: 30s
metrics:
  v: {better: higher}
  seen: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1 "pair_claims: false"
PERFWATCH_NO_CGROUPS=1 start_runner r1
RUNNER=$!
JOBS=$PW_TMP/r1/work/jobs

# submit: one pair of C1 and C2; sets base, cand and pair.
submit() {
	local code
	code=$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"kb\",
	    \"base\": {\"tree\": \"$SRC\", \"commit\": \"$C1\"},
	    \"candidate\": {\"tree\": \"$SRC\", \"commit\": \"$C2\"}}")
	[ "$code" = 201 ] || { fail submit "$code $(cat "$PW_TMP/body")"; finish; }
	base=$(jfield pairs.0.base_job <"$PW_TMP/body")
	cand=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
	pair=$(jfield pairs.0.pair_id <"$PW_TMP/body")
}
analysed() { [ "$(sql "SELECT analysed FROM pairs WHERE id = $pair")" = 1 ]; }
builds_of() { grep -c "/jobs/$1\$" "$PW_TMP/builds" 2>/dev/null; }

submit
wait_until 120 analysed || { fail measured "$(sql 'SELECT id, role, state, error FROM jobs')"; show_logs; finish; }
pass measured
claims=$(grep -c "job $base (base) claimed by r1" "$PW_TMP/d/daemon.log")
[ "$claims" = 3 ] && pass three_rounds "$claims" || fail three_rounds "$claims claims of the base"
[ "$(builds_of "$base")" = 1 ] && [ "$(builds_of "$cand")" = 1 ] &&
    pass one_build_a_job || fail one_build_a_job "$(cat "$PW_TMP/builds")"
# The runs of each round saw the last round's runs: one directory.
seen=$(sql "SELECT group_concat(CAST(m.value AS INT), ',') FROM (SELECT m.value FROM runs r
    JOIN metrics m ON m.run_id = r.id AND m.name = 'seen' WHERE r.job_id = $base ORDER BY r.idx) m")
[ "$seen" = 1,2,3,4,5,6 ] && pass later_rounds_start_where_the_last_left || fail later_rounds_start_where_the_last_left "$seen"
n=$(grep -c "job $base: tree and build kept from this job's last round here (${C1:0:12}): no checkout, no build" "$PW_TMP/r1/runner.log")
[ "$n" = 2 ] && pass job_log_says_kept || fail job_log_says_kept "$n lines"
http GET "/api/v1/jobs/$cand" >/dev/null
grep -q "tree and build kept from this job's last round here (${C2:0:12})" "$PW_TMP/body" &&
    pass job_api_log_says_kept || fail job_api_log_says_kept "$(head -c 600 "$PW_TMP/body")"
[ -f "$JOBS/$base.kept" ] && [ -f "$JOBS/$base/runs.txt" ] && pass kept_after_its_last_round ||
    fail kept_after_its_last_round "$(ls -la "$JOBS")"

# keep_builds 0: the runner's start removes what was kept, and every
# round exports and builds again.
stop_pid "$RUNNER"
runner_config r1 "pair_claims: false" "keep_builds: 0"
PERFWATCH_NO_CGROUPS=1 start_runner r1
RUNNER=$!
first=$base
submit
wait_until 120 analysed || { fail measured_without_keeping "$(sql 'SELECT id, role, state, error FROM jobs')"; show_logs; finish; }
[ ! -e "$JOBS/$first" ] && [ ! -e "$JOBS/$first.kept" ] && pass start_removes_what_was_kept ||
    fail start_removes_what_was_kept "$(ls -la "$JOBS")"
[ "$(builds_of "$base")" = 3 ] && [ "$(builds_of "$cand")" = 3 ] &&
    pass keep_builds_0_builds_each_round || fail keep_builds_0_builds_each_round "$(cat "$PW_TMP/builds")"
seen=$(sql "SELECT group_concat(CAST(m.value AS INT), ',') FROM (SELECT m.value FROM runs r
    JOIN metrics m ON m.run_id = r.id AND m.name = 'seen' WHERE r.job_id = $base ORDER BY r.idx) m")
[ "$seen" = 1,2,1,2,1,2 ] && pass keep_builds_0_fresh_directory || fail keep_builds_0_fresh_directory "$seen"
[ -z "$(ls -A "$JOBS")" ] && pass nothing_left || fail nothing_left "$(ls -la "$JOBS")"
# The config check knows the key and its bounds.
runner_config r2 "keep_builds: 65"
"$PW_BIN/perfwatch" config check "$PW_TMP/r2/runner.yaml" >"$PW_TMP/cc.txt" 2>&1
grep -q "runner.yaml:[0-9]*:[0-9]*:.*keep_builds" "$PW_TMP/cc.txt" && pass config_bounds_named ||
    fail config_bounds_named "$(cat "$PW_TMP/cc.txt")"
finish
