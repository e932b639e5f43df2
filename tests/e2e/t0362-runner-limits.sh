#!/usr/bin/env bash
# Limits on what a tree runs (runner.yaml `limits`, docs/CONFIG.md): a
# root runner whose commands run as an account nothing else on this
# machine runs as (RLIMIT_NPROC counts the uid's processes host-wide,
# and other tests here run PostgreSQL as nobody: the first of Debian's
# base accounts games, news, uucp, ... without processes) under
# limits.nproc 32 and limits.nofile 64.  A fork-bomb benchmark (a shell starting background
# sleeps until a fork fails) and a file-descriptor hog (a shell opening
# /dev/null until an open fails) are stopped by the limit: each job
# fails, its error names the limit, and the hog got exactly 64
# descriptors.  The runner survives them: the same process then runs a
# normal job to success, and nothing of the bomb is left running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_limits.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP t0362: needs root (the runner drops to another user)"
	finish
fi
U=
for u in games news uucp lp list irc backup; do
	id -u "$u" >/dev/null 2>&1 && [ -z "$(pgrep -u "$u")" ] && { U=$u; break; }
done
[ -n "$U" ] || { echo "SKIP t0362: no idle system account to run as"; finish; }

daemon_config "$PW_TMP/d" r1
limits_bomb_job bomb
limits_job fdhog "[bash, -c, 'n=3; while eval \"exec \$n</dev/null\"; do n=\$((n+1)); done; echo failed_at=\$n; exit 3']"
limits_job fine "[sh, -c, 'echo ops=\$(ulimit -n)']"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1 "user: $U" "limits:" "  nproc: 32" "  nofile: 64"
chmod 711 "$PW_TMP" "$PW_TMP/r1"
start_runner r1
RUNNER=$!

bomb=$(limits_submit bomb)
wait_until 120 limits_ended "$bomb" || { fail bomb_ends "$(job_state "$bomb")"; show_logs; finish; }
[ "$(job_state "$bomb")" = failed ] && grep -qF "(under RLIMIT_NPROC 32, RLIMIT_NOFILE 64)" <<<"$(limits_err "$bomb")" &&
    pass fork_bomb_fails_naming_the_limit ||
    fail fork_bomb_fails_naming_the_limit "$(job_state "$bomb"): $(limits_err "$bomb")"
# It was the limit that stopped it, not the timeout.
raw=$(curl -s "$PW_URL/api/v1/jobs/$bomb/runs/0/raw")
grep -qi "fork" <<<"$raw" && ! grep -q "timed out" <<<"$(limits_err "$bomb")" &&
    pass fork_bomb_stopped_by_fork_failure || fail fork_bomb_stopped_by_fork_failure "$(limits_err "$bomb"); raw: $(head -c 300 <<<"$raw")"
# Its processes are killed with it.
limits_bomb_left_nothing bomb

# RLIMIT_NPROC counts the uid's zombies too: the bomb's are reaped
# by now (the sessions are empty).
fdhog=$(limits_submit fdhog)
wait_until 120 limits_ended "$fdhog" || { fail fdhog_ends "$(job_state "$fdhog")"; show_logs; finish; }
raw=$(curl -s "$PW_URL/api/v1/jobs/$fdhog/runs/0/raw")
failed_at=$(sed -n 's/^failed_at=//p' <<<"$raw")
[ "$(job_state "$fdhog")" = failed ] && grep -qF "exit 3 (under RLIMIT_NPROC 32, RLIMIT_NOFILE 64)" <<<"$(limits_err "$fdhog")" &&
    pass fd_hog_fails_naming_the_limit || fail fd_hog_fails_naming_the_limit "$(job_state "$fdhog"): $(limits_err "$fdhog"); $U's: $(ps -o pid=,sess=,stat=,etime=,args= -u "$U" | head -5)"
# Descriptors 0..63 opened, the 65th refused.
[ "$failed_at" = 64 ] && grep -q "Too many open files" <<<"$raw" && pass fd_hog_stopped_at_the_limit ||
    fail fd_hog_stopped_at_the_limit "failed at '$failed_at': $(head -c 300 <<<"$raw")"

# The runner lived through both and runs the next job.
fine=$(limits_submit fine)
wait_until 120 limits_ended "$fine" || { fail fine_ends "$(job_state "$fine")"; show_logs; finish; }
kill -0 "$RUNNER" 2>/dev/null && [ "$(job_state "$fine")" = success ] &&
    [ "$(sql "SELECT CAST(m.value AS INT) FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = $fine AND m.name = 'ops'")" = 64 ] &&
    pass runner_survives || { fail runner_survives "$(job_state "$fine"): $(limits_err "$fine")"; show_logs; }
grep -q "their limits: RLIMIT_NPROC 32, RLIMIT_NOFILE 64" "$PW_TMP/r1/runner.log" &&
    pass runner_log_names_limits || fail runner_log_names_limits "$(head -8 "$PW_TMP/r1/runner.log")"
stop_pid "$RUNNER"
finish
