# Runner and CLI helpers for the end-to-end tests, on top of lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib_runner.sh"
#
#   runner_config NAME [YAML...]   writes $PW_TMP/NAME/runner.yaml for runner
#                                  NAME of the daemon in $PW_DIR (server
#                                  $PW_URL, its token, workdir
#                                  $PW_TMP/NAME/work, boot none, heartbeat
#                                  1s); extra YAML lines are appended.
#                                  `user: root` unless a line sets user:
#                                  these tests' benchmarks write markers
#                                  into the test's own directories, which
#                                  are its owner's only (umask 077);
#                                  t0358 runs them as the default user
#   start_runner NAME [ARGS...]    starts perfwatch-runner -v -c that file;
#                                  log in $PW_TMP/NAME/runner.log; pid in $!
#   pw ARGS...                     the perfwatch CLI against $PW_URL
#   pw_admin ARGS...               the same with the admin token
#   job_state ID                   prints a job's state
#   jobs_in_state STATE N          true when N jobs are in STATE
#   tiny_fio_job NAME RUNS [SECS]  writes a job file $PW_DIR/jobs/NAME.yaml:
#                                  real fio, 8 MiB, SECS (1) per run, in
#                                  the job's scratch directory; max_runs
#                                  = RUNS, so the verdict never asks for
#                                  more runs than the tests count
#   wait_until SECS CMD...         runs CMD every 0.2 s until it succeeds
#                                  (0) or SECS of wall-clock time pass (1):
#                                  unlike wait_for, slow commands on a
#                                  loaded machine do not stretch it
#   show_logs                      prints the daemon and runner logs (on
#                                  failure)
#   submit_pair JOB                submits one pair of job JOB (admin);
#                                  sets base, cand and pair (the ids)
#   slowprog_job KEY=VALUE...      writes $PW_DIR/jobs/slowprog.yaml: the
#                                  job the tree app's suites measure, make
#                                  then {workdir}/prog, its time_ms lower
#                                  is better by min_effect=N% (required);
#                                  arg=A appends A to prog's command line,
#                                  every_commit= and every_patch= go under
#                                  trigger: (trees [app]), any other KEY
#                                  is a top-level line (runs=5, rounds=5)

runner_config() {
	local name=$1 dir=$PW_TMP/$1
	shift
	mkdir -p "$dir/work"
	cat >"$dir/runner.yaml" <<YAML
server: $PW_URL
name: $name
token_file: $PW_DIR/tokens/$name.token
workdir: $dir/work
boot: none
heartbeat: 1s
YAML
	local l user="user: root"
	for l in "$@"; do
		echo "$l" >>"$dir/runner.yaml"
		case $l in user:*) user= ;; esac
	done
	[ -z "$user" ] || echo "$user" >>"$dir/runner.yaml"
}

# pin_yaml FILE [CPUS]: appends a host: section pinning the job's runs
# to CPUS, by default the first CPU this test may use (CPU 0 on the VMs;
# a container's cpuset may leave it out).  One vCPU of these VMs runs a CPU-bound loop up to 2.8x
# slower than the other in spells that flip (docs/HOST.md, "Uneven
# CPUs"): runs spread over both read a designed 4x as 1.4x (t0420 in
# CI).  On one CPU, base and candidate in turns share its speed.
pin_yaml() {
	local cpu=${2:-}
	[ -n "$cpu" ] ||
	    cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))' 2>/dev/null) ||
	    cpu=0
	printf 'host:\n  cpus: "%s"\n' "$cpu" >>"$1"
}

slowprog_job() {
	local kv k v args= trig= rest= effect=
	for kv; do
		k=${kv%%=*} v=${kv#*=}
		case $k in
		arg) args="$args, \"$v\"" ;;
		min_effect) effect=$v ;;
		every_commit | every_patch) trig="$trig  $k: $v"$'\n' ;;
		*) rest="$rest$k: $v"$'\n' ;;
		esac
	done
	[ -n "$effect" ] || { echo "slowprog_job: min_effect= missing" >&2; return 1; }
	{
		printf '%s\n' "name: slowprog" "parser: keyvalue" "build: [make]" \
		    "command: [\"{workdir}/prog\"$args]" "trigger:" "  trees: [app]"
		printf '%s' "$trig"
		printf '%s\n' "metrics:" "  time_ms: {better: lower, min_effect: $effect}"
		printf '%s' "$rest"
	} >"$PW_DIR/jobs/slowprog.yaml"
}

start_runner() {
	local name=$1
	shift
	spawn "$PW_TMP/$name/runner.log" "$PW_BIN/perfwatch-runner" -v \
	    -c "$PW_TMP/$name/runner.yaml" "$@"
}

pw() {
	"$PW_BIN/perfwatch" "$@" --server "$PW_URL"
}

pw_admin() {
	"$PW_BIN/perfwatch" "$@" --server "$PW_URL" --token-file "$PW_ADMIN"
}

job_state() {
	pw jobs show "$1" --json | jfield state
}

jobs_in_state() {
	local n
	n=$(pw jobs --state "$1" --json | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["jobs"]))')
	[ "$n" = "$2" ]
}

tiny_fio_job() {
	cat >"$PW_DIR/jobs/$1.yaml" <<YAML
name: $1
parser: fio
command: [fio, --name=tiny, --rw=randread, --bs=4k, --size=8M,
          --runtime=${3:-1}, --time_based, "--directory={workdir}",
          --output-format=json, --ioengine=psync]
runs: $2
max_runs: $2
timeout: 30s
YAML
}

# score_job_yaml RUNS MAX_RUNS [KEYS]: job "score" of inbox lm, whose
# tree's bench.sh prints score=N (higher is better, 10 % counts); KEYS
# (YAML, "\n" between lines) are appended.
score_job_yaml() {
	cat >"$PW_DIR/jobs/score.yaml" <<YAML
name: score
parser: keyvalue
command: [sh, "{workdir}/bench.sh"]
trigger:
  inboxes: [lm]
metrics:
  score: {better: higher, min_effect: 10%}
runs: $1
max_runs: $2
YAML
	[ -z "${3:-}" ] || printf '%b\n' "$3" >>"$PW_DIR/jobs/score.yaml"
}

show_logs() {
	local f
	for f in "$PW_DIR/daemon.log" "$PW_TMP"/*/runner.log; do
		[ -f "$f" ] || continue
		echo "# --- $f"
		tail -n 40 "$f" | sed 's/^/#   /'
	done
}

wait_until() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.2
	done
	"$@"
}

submit_pair() {
	pw_admin submit --job "$1" --json >"$PW_TMP/submit.json" ||
	    fail "submit_$1" "exit $?"
	base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
	cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")
	pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
}

# A second perfwatchd B on the database of the first (A), for a runner
# that fails over (t0363, t0382).  daemon_b_config: B's config,
# $PW_TMP/b.yaml, A's on a port of its own (B_URL).  start_daemon_b,
# once A is dead (one daemon a SQLite file): B started (log
# $PW_TMP/b.log), PW_URL and PW_DAEMON_PID now B's, PASS or FAIL
# daemon_b_starts_after_a_dies (then finish).  jobs_done_through_b
# SECS BASE CAND: PASS or FAIL both_jobs_finish_through_b.
daemon_b_config() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sed "s/^listen: .*/listen: 127.0.0.1:$port/" "$PW_DIR/daemon.yaml" >"$PW_TMP/b.yaml"
	B_URL=http://127.0.0.1:$port
}

start_daemon_b() {
	spawn "$PW_TMP/b.log" "$PW_BIN/perfwatchd" -v -c "$PW_TMP/b.yaml" \
	    --port-file "$PW_TMP/portb"
	PW_DAEMON_PID=$!
	if wait_for 20 test -s "$PW_TMP/portb"; then
		pass daemon_b_starts_after_a_dies
	else
		fail daemon_b_starts_after_a_dies "$(tail -5 "$PW_TMP/b.log")"
		finish
	fi
	PW_URL=$B_URL
}

jobs_done_through_b() {
	if wait_until "$1" jobs_in_state success 2; then
		pass both_jobs_finish_through_b
	else
		fail both_jobs_finish_through_b "base $(job_state "$2") cand $(job_state "$3")"
		show_logs
		tail -20 "$PW_TMP/b.log" | sed 's/^/#   /'
	fi
}
