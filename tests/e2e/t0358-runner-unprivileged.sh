#!/usr/bin/env bash
# What comes from a tree runs unprivileged (runner.yaml `user`,
# docs/CONFIG.md): a root runner with no `user` key runs a tree's build,
# the benchmark and its server_command as perfwatch-bench, or nobody on
# a host without that account (called nobody below).  The build writes
# `id -u` to a marker in the job's directory; the benchmark reports that
# uid, its own and its groups, and tries to read the runner's token and
# to write into the runner's spool and workdir; the server writes its
# uid too.  All must be nobody's (non-zero) and every attempt must fail.
# A runner with an unknown user, or whose workdir that user cannot
# reach, refuses to start and says why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP t0358: needs root (the runner drops to another user)"
	finish
fi
# The default user: the dedicated account when the host has it.
who=nobody
id -u perfwatch-bench >/dev/null 2>&1 && who=perfwatch-bench
nobody=$(id -u "$who" 2>/dev/null) || { echo "SKIP t0358: no user nobody"; finish; }

SRC=$PW_TMP/app
src_init "$SRC"
C1=$(g "$SRC" rev-parse HEAD)
C2=$(commit "$SRC" two.txt "a second commit")
daemon_config "$PW_TMP/d" r1
W=$PW_TMP/r1/work
cat >"$PW_DIR/jobs/who.yaml" <<YAML
name: who
parser: keyvalue
build: [sh, -c, 'id -u >build-uid']
server_command: [sh, -c, 'id -u >server-uid; exec sleep 60']
command: [sh, -c, 'printf "build_uid=%s\\nrun_uid=%s\\nrun_groups=%s\\n" "\$(cat build-uid)" "\$(id -u)" "\$(id -G | wc -w)";
  if cat "\$0" >/dev/null 2>&1; then echo token_read=1; else echo token_read=0; fi;
  if touch "\$1/spool/x" 2>/dev/null; then echo spool_write=1; else echo spool_write=0; fi;
  if touch "\$1/x" 2>/dev/null; then echo workdir_write=1; else echo workdir_write=0; fi;
  echo server_uid=\$(cat server-uid)', "$PW_DIR/tokens/r1.token", "$W"]
runs: 1
max_runs: 1
rounds: 1
timeout: 30s
metrics:
  run_uid: {better: higher}
  build_uid: {better: higher}
  server_uid: {better: higher}
  run_groups: {better: higher}
  token_read: {better: lower}
  spool_write: {better: lower}
  workdir_write: {better: lower}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# An unknown user: the runner refuses to start and says which key.
runner_config r1 "user: no-such-user-pw"
if "$PW_BIN/perfwatch-runner" -c "$PW_TMP/r1/runner.yaml" --once >"$PW_TMP/bad.log" 2>&1; then
	fail unknown_user_refused "started: $(tail -3 "$PW_TMP/bad.log")"
else
	check unknown_user_refused grep -q "user: no user 'no-such-user-pw' on this host" "$PW_TMP/bad.log"
fi

# The default: no user key at all.  While the test's directory is its
# owner's only (umask 077), nobody cannot reach the workdir: the runner
# says so at start instead of failing every job.
runner_config r1
sed -i '/^user: /d' "$PW_TMP/r1/runner.yaml"
if "$PW_BIN/perfwatch-runner" -c "$PW_TMP/r1/runner.yaml" --once >"$PW_TMP/reach.log" 2>&1; then
	fail unreachable_workdir_refused "started: $(tail -3 "$PW_TMP/reach.log")"
else
	check unreachable_workdir_refused grep -q "user $who cannot reach it: $PW_TMP/ is mode 0700" "$PW_TMP/reach.log"
fi
chmod 711 "$PW_TMP" "$PW_TMP/r1"
start_runner r1
RUNNER=$!
code=$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"who\",
    \"base\": {\"tree\": \"$SRC\", \"commit\": \"$C1\"},
    \"candidate\": {\"tree\": \"$SRC\", \"commit\": \"$C2\"}}")
[ "$code" = 201 ] || { fail submit "$code $(cat "$PW_TMP/body")"; finish; }
base=$(jfield pairs.0.base_job <"$PW_TMP/body")
done_base() { [ "$(job_state "$base")" = success ]; }
if ! wait_until 90 done_base; then
	fail base_job_succeeds "$(job_state "$base"): $(sql "SELECT error FROM jobs WHERE id = $base")"
	show_logs
	finish
fi
pass base_job_succeeds
m() {
	sql "SELECT CAST(m.value AS INT) FROM runs r JOIN metrics m ON m.run_id = r.id
	    AND m.name = '$1' WHERE r.job_id = $base"
}
[ "$(m build_uid)" = "$nobody" ] && pass build_runs_as_nobody || fail build_runs_as_nobody "build uid '$(m build_uid)'"
[ "$(m run_uid)" = "$nobody" ] && pass benchmark_runs_as_nobody || fail benchmark_runs_as_nobody "run uid '$(m run_uid)'"
[ "$(m server_uid)" = "$nobody" ] && pass server_runs_as_nobody || fail server_runs_as_nobody "server uid '$(m server_uid)'"
[ "$(m run_groups)" = 1 ] && pass no_supplementary_groups || fail no_supplementary_groups "$(m run_groups) groups"
[ "$(m token_read)" = 0 ] && pass token_unreadable || fail token_unreadable "token_read=$(m token_read)"
[ "$(m spool_write)" = 0 ] && pass spool_unwritable || fail spool_unwritable "spool_write=$(m spool_write)"
[ "$(m workdir_write)" = 0 ] && pass workdir_unwritable || fail workdir_unwritable "workdir_write=$(m workdir_write)"
[ "$(stat -c %a "$W/spool")" = 700 ] && (($(stat -c 0%a "$W/jobs") & 1)) &&
    pass spool_private_jobs_reachable || fail spool_private_jobs_reachable "$(stat -c '%a %n' "$W/spool" "$W/jobs")"
grep -q "builds and benchmarks run as $who (uid $nobody" "$PW_TMP/r1/runner.log" &&
    pass runner_log_says_who || fail runner_log_says_who "$(head -5 "$PW_TMP/r1/runner.log")"
stop_pid "$RUNNER"
finish
