# Helpers of the tests of runner.yaml `limits` (t0362, t0365): one-run
# jobs, a fork bomb, and the checks that a stopped bomb left nothing.
# Sourced after lib.sh and lib_runner.sh.

# limits_job NAME COMMAND-YAML: a job of one run, no comparison rounds.
limits_job() {
	cat >"$PW_DIR/jobs/$1.yaml" <<YAML
name: $1
parser: keyvalue
command: $2
runs: 1
max_runs: 1
rounds: 1
timeout: 60s
metrics:
  ops: {better: higher}
YAML
}

# The bomb: a shell starting background sleeps until a fork fails; its
# first line names its session.
limits_bomb_job() {
	limits_job "$1" "[sh, -c, 'echo bomb-pid=\$\$; while :; do sleep 300 & done']"
}

# limits_submit NAME: the pair's base job id.
limits_submit() {
	local code
	code=$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"$1\"}")
	[ "$code" = 201 ] || { fail "submit_$1" "$code $(cat "$PW_TMP/body")"; finish; }
	jfield pairs.0.base_job <"$PW_TMP/body"
}
limits_ended() { case $(job_state "$1") in success | failed) return 0 ;; esac; return 1; }
limits_err() { sql "SELECT error FROM jobs WHERE id = $1"; }

# limits_bomb_left_nothing JOBNAME: both jobs of the bomb's pair ended
# and the sessions they started are empty.  Killed orphans are zombies
# until init reaps them (PID 1 of these VMs takes a second or two), and
# a zombie still counts against RLIMIT_NPROC: wait for them.
limits_bomb_left_nothing() {
	local j s sids=
	wait_until 120 eval '[ "$(sql "SELECT count(*) FROM jobs WHERE name = '"'$1'"' AND state NOT IN ('"'success'"', '"'failed'"')")" = 0 ]'
	for j in $(sql "SELECT id FROM jobs WHERE name = '$1'"); do
		sids="$sids $(curl -s "$PW_URL/api/v1/jobs/$j/runs/0/raw" | sed -n 's/^bomb-pid=//p')"
	done
	LIMITS_SIDS=$sids
	[ "$(wc -w <<<"$sids")" = 2 ] && wait_until 30 limits_sessions_gone &&
	    pass fork_bomb_left_nothing ||
	    fail fork_bomb_left_nothing "sessions$sids: $(for s in $sids; do ps -o pid=,ppid=,stat=,etime=,args= -s "$s" | head -3; done)"
}
limits_sessions_gone() {
	local s
	for s in $LIMITS_SIDS; do
		[ "$(pgrep -s "$s" | wc -l)" = 0 ] || return 1
	done
}
