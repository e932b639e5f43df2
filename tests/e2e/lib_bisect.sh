# Bisection helpers for the end-to-end tests, on top of lib.sh,
# lib_runner.sh and lib_git.sh:
#
#   bisect_repo DIR               loop_prog_init DIR and its first commit on
#                                 master; later commits go to branch wip
#   publish DIR                   moves master to wip in one step (the
#                                 watcher polls every second: commits made
#                                 one by one on master would be pushes of
#                                 their own)
#   filler DIR N                  N commits that change notes.txt only
#   bisect_setup                  ($BISECT_EXTRA_YAML is appended to the
#                                 daemon's config) a daemon watching $SRC (tree app, poll 1s)
#                                 with job slowprog (tip-only trigger,
#                                 baseline previous-tip or $BISECT_BASELINE,
#                                 runs 3, max_runs 10, every run on the
#                                 first CPU it may use (CPU 0 here) or on
#                                 $BISECT_CPUS (empty: not pinned),
#                                 time_ms lower with min_effect 5%) and a
#                                 runner r1 (pid $RUNNER_PID); waits for
#                                 the first tip; $BISECT_JOB_YAML is
#                                 appended to the job; a function
#                                 bisect_pre_start, if defined, runs
#                                 before the daemon starts
#   bisect_wait SECS              until bisection 1 has ended; prints its
#                                 state
#   bfield EXPR                   python expression over b (GET
#                                 /api/v1/bisect/1's bisection), printed
#   bisect_steps_brief            every step on one line (for FAIL lines)
#   bisect_check_verified [revert]
#                                 PASS or FAIL verify_parent (bisection
#                                 1's culprit against its parent "shows
#                                 the regression") and, with "revert",
#                                 verify_revert ("shows the recovery")
#
# The slow program: loops.h sets LOOPS; 40,000,000 takes 50-100 ms of
# CPU time here, and the tests make steps of 1.6x and 2.5x: this VM's
# CPU time per run swings by tens of percent, so a 20% step comes out
# inconclusive.

bisect_repo() {
	loop_prog_init "$1"
	g "$1" add -A
	g "$1" commit -qm "prog: a loop"
	g "$1" checkout -qb wip
}

publish() {
	g "$1" branch -f master wip
}

filler() {
	local d=$1 n=$2 i
	for i in $(seq 1 "$n"); do
		echo "note $RANDOM $i" >>"$d/notes.txt"
		g "$d" add -A
		g "$d" commit -qm "notes: line $i"
	done
}

loops() {
	echo "#define LOOPS ${2}UL" >"$1/loops.h"
	g "$1" commit -qam "$3"
	g "$1" rev-parse HEAD
}

bisect_setup() {
	c0=$(g "$SRC" rev-parse HEAD)
	daemon_config "$PW_TMP/d" r1
	tree_yaml app "file://$SRC" master
	# Up to 10 runs: under a loaded CI run (other suites and other
	# worktrees' tests at once) 6 runs left steps inconclusive twice often
	# enough to end a bisection inconclusive now and then.  Base and
	# candidate take turns, one run each (rounds, docs/CONFIG.md): the
	# host's drift between a step's two jobs misjudged steps in CI.
	slowprog_job every_commit=false \
	    "baseline=${BISECT_BASELINE:-previous-tip}" min_effect=5% runs=3 \
	    max_runs=10 rounds=3 timeout=60s
	cat >>"$PW_DIR/jobs/slowprog.yaml" <<'YAML'
bisect:
  max_steps: 14
  max_inconclusive: 3
YAML
	[ -n "${BISECT_JOB_YAML:-}" ] && echo "$BISECT_JOB_YAML" >>"$PW_DIR/jobs/slowprog.yaml"
	# Every run on one CPU (pin_yaml, lib_runner.sh, says why), or on
	# $BISECT_CPUS; BISECT_CPUS= for none.  After $BISECT_JOB_YAML,
	# which may continue the bisect: mapping.
	[ "${BISECT_CPUS-x}" = "" ] || pin_yaml "$PW_DIR/jobs/slowprog.yaml" "${BISECT_CPUS:-}"
	[ -n "${BISECT_EXTRA_YAML:-}" ] && echo "$BISECT_EXTRA_YAML" >>"$PW_DIR/daemon.yaml"
	# A test's own changes to the configs, before the daemon reads them.
	if declare -F bisect_pre_start >/dev/null; then bisect_pre_start; fi
	start_daemon "$PW_TMP/d" || return 1
	wait_tip master "$c0" || return 1
	runner_config r1
	start_runner r1
	RUNNER_PID=$!
	# The runner registers before the push: the pair is pinned to it.
	wait_until 20 bisect_one_host
}

# The runner has registered: one host.
bisect_one_host() {
	[ "$(sql 'SELECT count(*) FROM hosts')" = 1 ]
}

bisect_json() {
	curl -s --max-time 10 "$PW_URL/api/v1/bisect/${1:-1}" >"$PW_TMP/bisect.json"
}

bfield() {
	bisect_json
	python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["bisection"]
print(eval(sys.argv[2]))' "$PW_TMP/bisect.json" "$1" 2>/dev/null
}

bisect_ended() {
	case "$(sql "SELECT state FROM bisections WHERE id = 1")" in
	done|inconclusive|cancelled) return 0 ;;
	esac
	return 1
}

bisect_wait() {
	wait_until "$1" bisect_ended
	sql "SELECT state FROM bisections WHERE id = 1"
}

bisect_dump() {
	echo "# bisections: $(sql 'SELECT id, state, culprit_sha, reason, verify_parent, verify_revert FROM bisections')"
	echo "# steps:"
	sql "SELECT kind, substr(sha, 1, 12), class, note FROM bisect_steps" | sed 's/^/#   /'
	echo "# regressions: $(sql 'SELECT r.id, c.pair_id, c.verdict, c.change_pct FROM regressions r JOIN comparisons c ON c.id = r.comparison_id')"
}

# One line of every step (kind, sha, class, both comparisons), for a
# FAIL line: the CI output keeps FAIL lines whole, not the log's dump.
bisect_steps_brief() {
	sql "SELECT kind || ' ' || substr(sha, 1, 7) || ' ' || coalesce(class, '-') || ' ' ||
	    replace(replace(coalesce(note, ''), 'against the good end: ', 'g '),
	    '; against the bad end: ', ' b ') FROM bisect_steps ORDER BY id" | tr '\n' ';'
}

bisect_check_verified() {
	local v
	v=$(bfield "b['verify_parent']")
	case "$v" in
	"shows the regression"*) pass verify_parent ;;
	*) fail verify_parent "$v" ;;
	esac
	[ "${1:-}" = revert ] || return 0
	v=$(bfield "b['verify_revert']")
	case "$v" in
	"shows the recovery"*) pass verify_revert ;;
	*) fail verify_revert "$v" ;;
	esac
}
