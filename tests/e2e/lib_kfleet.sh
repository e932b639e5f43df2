# A fleet of real runners sharing kernel builds (docs/KERNEL.md, "Shared
# builds"), on top of lib.sh, lib_runner.sh, lib_git.sh, lib_kstandin.sh
# and lib_builds.sh: a stand-in kernel tree, builders with boot: none and
# bench hosts with build: false and a fake kexec, each with its own
# "booted" /proc/version.
#
#   kfleet_tree                the stand-in tree $K with commits $BASE,
#                              $CAND and $CAND2 (each a change to
#                              mm/memcontrol.c); a runner's kernels
#                              compiled are listed in $PW_TMP/NAME/compiles
#                              ($PW_COMPILES); while $PW_TMP/slow-make
#                              exists, bzImage waits (the pid of its shell
#                              in $PW_TMP/slow-make.pid)
#   kfleet_daemon RUNNERS... [-- YAML...]
#                              daemon config with those runners,
#                              scheduler lease 10 s, builds.shared true
#                              and builds.dir $PW_TMP/d/artifacts (YAML
#                              lines go into builds:); job "kb"
#                              (tinyconfig + CONFIG_MEMCG=y, one run, one
#                              round, boot timeout 40 s) on host h1 and
#                              (with a runner h2) "kb2", the same on h2;
#                              the daemon started
#   kfleet_builder NAME        runner.yaml of a builder (boot: none)
#   kfleet_bench NAME          runner.yaml of a bench host (boot: kexec,
#                              build: false)
#   kfleet_start NAME          starts runner NAME with its environment
#                              (fake kexec first on PATH); its pid in
#                              ${PIDS[NAME]}
#   kfleet_revive NAMES...     starts again each of NAMES that is not
#                              running (a kexec "rebooted" it)
#   kfleet_submit JOB B C      POST /api/v1/submit; the reply in
#                              $PW_TMP/body; FAIL unless 201; the pair's
#                              jobs appended to $JOBS ("base cand ...")
#   kfleet_until SECS CMD...   wait_until, reviving the bench hosts
#                              h1, h2 meanwhile
#   compiles NAME              how many kernels runner NAME compiled
#   job_json ID FILE           GET /api/v1/jobs/ID into FILE

declare -A PIDS

kfleet_tree() {
	K=$PW_TMP/linux
	standin_kernel_tree "$K"
	g "$K" checkout -q -b second "$BASE"
	echo 'int charge; /* faster */' >"$K/mm/memcontrol.c"
	g "$K" commit -q -am "second candidate"
	CAND2=$(g "$K" rev-parse HEAD)
	fake_kexec "$PW_TMP/fakebin"
	export PERFWATCH_NO_CGROUPS=1 PW_SLOW_MAKE=$PW_TMP/slow-make
}

kfleet_daemon() {
	local runners=() l
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		runners+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	daemon_config "$PW_TMP/d" "${runners[@]}"
	{
		echo "scheduler:"
		echo "  lease: 10s"
		echo "  claim_wait: 1s"
		echo "builds:"
		echo "  shared: true"
		# Where SQLite's store has it by default; a PostgreSQL
		# store has no default (make check-pg).
		echo "  dir: $PW_TMP/d/artifacts"
		for l in "$@"; do
			echo "  $l"
		done
	} >>"$PW_TMP/d/daemon.yaml"
	kernel_job kb CONFIG_MEMCG=y "kernel.boot_timeout: 40s" "hosts: [h1]" \
	    "rounds: 1" "timeout: 30s"
	# The same kernel measured on the other host: the same build.
	[[ " ${runners[*]} " == *" h2 "* ]] && sed -e 's/^name: kb$/name: kb2/' -e 's/^hosts: \[h1\]$/hosts: [h2]/' \
	    "$PW_DIR/jobs/kb.yaml" >"$PW_DIR/jobs/kb2.yaml"
	start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
}

kfleet_builder() {
	runner_config "$1" "kernel_tree: $PW_TMP/$1/kernel"
}

kfleet_bench() {
	runner_config "$1" "kernel_tree: $PW_TMP/$1/kernel" "build: false"
	sed -i 's/^boot: none/boot: kexec/' "$PW_TMP/$1/runner.yaml"
	echo "Linux version 6.1.0-13-amd64 (debian) #1 SMP" >"$PW_TMP/$1/proc_version"
}

kfleet_start() {
	local n=$1
	PATH=$PW_TMP/fakebin:$PATH FAKE_LOG=$PW_TMP/$n/kexec.log \
	    PERFWATCH_PROC_VERSION=$PW_TMP/$n/proc_version \
	    PW_COMPILES=$PW_TMP/$n/compiles start_runner "$n"
	PIDS[$n]=$!
}

kfleet_revive() {
	local n
	for n in "$@"; do
		[ -n "${PIDS[$n]:-}" ] && kill -0 "${PIDS[$n]}" 2>/dev/null && continue
		kfleet_start "$n"
	done
}

kfleet_submit() {
	submit "$@"
	JOBS="${JOBS:-} $(jfield pairs.0.base_job <"$PW_TMP/body") $(jfield pairs.0.candidate_job <"$PW_TMP/body")"
}

# Reviving the bench hosts between tries (each kexec ends its runner).
revived_check() {
	kfleet_revive h1 h2
	"$@"
}

kfleet_until() {
	local secs=$1
	shift
	wait_until "$secs" revived_check "$@"
}

compiles() {
	cat "$PW_TMP/$1/compiles" 2>/dev/null | wc -l
}

job_json() {
	http GET "/api/v1/jobs/$1" >/dev/null
	cp "$PW_TMP/body" "$2"
}

# True when every job listed is finished (success, failed, cancelled).
jobs_ended() {
	local id s
	for id in "$@"; do
		s=$(job_state "$id")
		case $s in success | failed | cancelled) ;; *) return 1 ;; esac
	done
}
