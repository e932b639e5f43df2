#!/usr/bin/env bash
# The fleet on separate hosts: perfwatchd in one network namespace, three
# runners each in its own namespace, joined to the daemon's by its own
# veth pair and address (10.201.K.2 -> 10.201.K.1), each with its own
# work directory and no access to the daemon's mirrors (their config
# names none; they reach the daemon only over the veth link).  The
# upstream tree is a repository on file:// that every bench host can
# read, as a real fleet reads git.kernel.org.  All names carry $$.
#
# Checked:
#  1. a push of 12 commits (a job with a root and a nested cgroup point),
#     made while no runner is registered (so its pairs are unbound), is
#     spread over all three runners: every runner measures some commits;
#  2. the root and nested pairs of each commit are measured on one host,
#     and the nested pair gets its memcg tax (where the runners have
#     usable cgroups; else that check is a SKIP);
#  3. a runner whose link is cut in the middle of a job loses its lease,
#     the job completes on another runner, each run index stored once and
#     all from that runner;
#  4. with the link restored, the cut-off runner's spooled runs for the
#     requeued job are refused (409, moved to its spool's rejected/), not
#     stored twice.
#  5. a series posted to the daemon (perfwatch series upload) is measured
#     by the runners, which cannot see the daemon's mirrors (each runner's
#     mount namespace has an empty tmpfs over the mirrors directory): the
#     job names the tree's url and a pack route, and the series commits
#     reach the runner's own clone as the daemon's pack over the veth
#     link, byte-identical (same ids); a pack for a commit that is not a
#     series commit is a 404, with a runner token only.
# Where namespaces cannot be made (not root, no iproute2, no CAP_NET_ADMIN)
# the whole test is a SKIP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_netns.sh"

NS=pwf$$
D=${NS}d
skip() {
	echo "SKIP $1: $2"
}
CGDIRS=()
fleet_cleanup() {
	local n
	pw_cleanup
	netns_cleanup
	for n in "${CGDIRS[@]}"; do
		# A killed runner's cgroup empties a moment after its death.
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			find "$n" -depth -type d -exec rmdir {} \; 2>/dev/null
			[ -d "$n" ] || break
			sleep 0.2
		done
	done
}
trap fleet_cleanup EXIT
netns_hosts "$NS" 201 3 || { skip fleet_netns "$NETNS_WHY"; finish; }
# The test's own curl and CLI calls run inside the daemon's namespace.
curl() {
	ip netns exec "$D" curl "$@"
}
pwd_admin() {
	ip netns exec "$D" "$PW_BIN/perfwatch" "$@" --server "$PW_URL" \
	    --token-file "$PW_ADMIN"
}

# ---- the upstream tree and the daemon ----
SRC=$PW_TMP/app
mkdir -p "$SRC"
git -c init.defaultBranch=master init -q "$SRC"
echo 0 >"$SRC/n"
g "$SRC" add -A
g "$SRC" commit -qm "app: start"
c0=$(g "$SRC" rev-parse HEAD)
CG=/pwfleet-$$
daemon_config "$PW_TMP/d" r1 r2 r3
sed -i 's/^listen: .*/listen: 0.0.0.0:0/' "$PW_DIR/daemon.yaml"
# Plain HTTP off loopback, said explicitly: the links are the test's own.
cat >>"$PW_DIR/daemon.yaml" <<YAML
insecure_http: true
scheduler:
  lease: 10s
  claim_wait: 2s
YAML
tree_yaml app "file://$SRC" master
# A made-up benchmark (the machine's noise is far above any memcg effect,
# docs/NOISE.md): 700 ops/s in the nested memcg, 1000 at root, so
# the tax is 0.7 by construction.
cat >"$PW_DIR/jobs/fleet.yaml" <<YAML
name: fleet
parser: keyvalue
command: [sh, -c, 'if grep -q pwfleet- /proc/self/cgroup; then echo ops=700; else echo ops=1000; fi']
trigger:
  trees: [app]
matrix:
  cgroup: [root, $CG]
metrics:
  ops: {better: higher, min_effect: 20%}
runs: 2
max_runs: 2
timeout: 30s
YAML
cat >"$PW_DIR/jobs/slow.yaml" <<YAML
name: slow
parser: keyvalue
command: [sh, -c, 'sleep 1; echo ops=1000']
metrics:
  ops: {better: higher, min_effect: 20%}
runs: 8
max_runs: 8
# One long claim a side: the link is cut while the base job holds it.
rounds: 1
timeout: 60s
YAML
netns_daemon "$NS" http || { fail daemon_starts "$(tail -5 "$PW_DIR/daemon.log")"; finish; }
tip_seen() {
	[ "$(sql "SELECT tip FROM tree_branches WHERE branch = 'master'")" = "$1" ]
}
wait_until 30 tip_seen "$c0" || { fail first_sight "tip $c0 not recorded"; finish; }

# ---- 1. a push of 12 commits, before any runner registered ----
for i in $(seq 1 12); do
	echo "$i" >"$SRC/n"
	g "$SRC" commit -qam "app: step $i"
done
pairs_made() {
	[ "$(sql "SELECT count(*) FROM pairs WHERE name = 'fleet'")" -ge 24 ]
}
if wait_until 30 pairs_made; then
	pass push_triggered
else
	fail push_triggered "$(sql "SELECT count(*) FROM pairs") pairs"
	finish
fi

# Three runners on one machine share its cgroup tree, so each gets a
# cgroup of its own (as a runner on its own host has): the job's nested
# point is made below it, not in one directory all three make and remove.
runner_cgroup() {	# runner_cgroup K: prints the new cgroup(s), one a line
	local rel0 relm dir
	rel0=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	relm=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
	for dir in "${relm:+/sys/fs/cgroup/memory${relm%/}}" \
	    "/sys/fs/cgroup/unified${rel0%/}" "/sys/fs/cgroup${rel0%/}"; do
		[ -n "$dir" ] && [ -f "$dir/cgroup.procs" ] || continue
		mkdir "$dir/pwrun-$$-r$1" 2>/dev/null && echo "$dir/pwrun-$$-r$1"
		# v1 memory and its cgroup2 companion, or plain cgroup2.
		[ "$dir" = "/sys/fs/cgroup/unified${rel0%/}" ] && break
	done
}
start_fleet_runner() {	# start_fleet_runner K: runner rK in namespace K
	local k=$1
	if [ ! -f "$PW_TMP/r$k/runner.yaml" ]; then
		runner_config "r$k"
		sed -i "s|^server: .*|server: http://10.201.$k.1:$PW_PORT|" \
		    "$PW_TMP/r$k/runner.yaml"
	fi
	# nsenter, not ip netns exec: only the network namespace changes,
	# so the runner sees the host's cgroup mount.  Its own mount
	# namespace hides the daemon's mirrors (an empty tmpfs over them),
	# as on another host.
	local cg
	cg=$(runner_cgroup "$k" | tr '\n' ' ')
	CGDIRS+=($cg)
	spawn "$PW_TMP/r$k/runner.log" sh -c \
	    'for d in $1; do echo $$ >"$d/cgroup.procs" || exit 1; done; shift; exec "$@"' \
	    sh "$cg" unshare --mount --propagation private sh -c \
	    'mount -t tmpfs pwhide "$1" || exit 1; shift; exec "$@"' \
	    sh "$PW_DIR/git" nsenter --net="/run/netns/${NS}r$k" \
	    "$PW_BIN/perfwatch-runner" -v -c "$PW_TMP/r$k/runner.yaml"
	eval "R${k}_PID=$!"
}
for k in 1 2 3; do
	start_fleet_runner "$k"
done
fleet_done() {
	[ "$(sql "SELECT count(*) FROM jobs WHERE name = 'fleet'
	    AND state NOT IN ('success', 'failed', 'cancelled')")" = 0 ]
}
if wait_until 240 fleet_done; then
	pass push_measured
else
	fail push_measured "$(sql "SELECT state, count(*) FROM jobs GROUP BY state")"
	show_logs
	finish
fi
hosts=$(sql "SELECT count(DISTINCT p.host_id) FROM pairs p WHERE p.name = 'fleet'")
per_host=$(sql "SELECT h.name || ':' || count(*) FROM pairs p JOIN hosts h
    ON h.id = p.host_id WHERE p.name = 'fleet' GROUP BY h.name" | tr '\n' ' ')
check push_spread_over_three_runners [ "$hosts" = 3 ]
echo "# fleet pairs per runner: $per_host"
failed=$(sql "SELECT count(*) FROM jobs WHERE name = 'fleet' AND state <> 'success'")
check push_jobs_succeeded [ "$failed" = 0 ]

# ---- 2. siblings on one host, the memcg tax ----
split=$(sql "SELECT count(*) FROM (SELECT c.sha FROM pairs p
    JOIN jobs j ON j.id = p.cand_job_id JOIN commits c ON c.id = j.commit_id
    WHERE p.name = 'fleet' GROUP BY c.sha HAVING count(DISTINCT p.host_id) <> 1
    OR count(*) <> 2)")
check siblings_share_a_host [ "$split" = 0 ]
ncommits=$(sql "SELECT count(DISTINCT j.commit_id) FROM pairs p
    JOIN jobs j ON j.id = p.cand_job_id WHERE p.name = 'fleet'")
check twelve_commits_measured [ "$ncommits" = 12 ]
nested_seen=$(sql "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id
    JOIN jobs j ON j.id = r.job_id WHERE j.name = 'fleet' AND m.name = 'ops'
    AND m.value = 700")
if [ "$nested_seen" = 0 ]; then
	skip memcg_tax "the runners placed nothing in $CG (no usable cgroups here): $(grep -h -i cgroup "$PW_TMP"/r*/runner.log | head -2)"
else
	verdicts_done() {
		[ "$(sql "SELECT count(*) FROM pairs WHERE name = 'fleet' AND analysed = 0")" = 0 ]
	}
	wait_until 60 verdicts_done || fail verdicts "pairs not analysed"
	tax=$(sql "SELECT count(*) FROM comparisons c JOIN pairs p ON p.id = c.pair_id
	    WHERE p.name = 'fleet' AND p.point = 'cgroup=$CG'
	    AND c.metric = 'memcg_tax.ops' AND abs(c.cand_median - 0.7) < 0.01")
	check memcg_tax_on_every_nested_pair [ "$tax" = 12 ]
fi

# ---- 5. a series on runners that cannot see the mirrors ----
# The tree's url, file://$SRC, is the upstream every bench host reads (as
# git.kernel.org for a real fleet); the series commits exist only in the
# daemon's mirror, which the runners' mount namespaces hide.  The patches
# are made in a clone of their own, so the upstream never holds them.
hidden=1
for k in 1 2 3; do
	eval "pid=\$R${k}_PID"
	n=$(nsenter --mount="/proc/$pid/ns/mnt" ls -A "$PW_DIR/git" 2>&1 | wc -l)
	[ "$n" = 0 ] || hidden=0
done
check mirrors_hidden_from_runners [ "$hidden" = 1 ] && [ -d "$PW_DIR/git/app.git" ]
c12=$(g "$SRC" rev-parse HEAD)
PATCHER=$PW_TMP/patcher
git clone -q "$SRC" "$PATCHER"
echo "part one" >"$PATCHER/s1"
g "$PATCHER" add -A
g "$PATCHER" commit -qm "app: series part one"
echo "part two" >"$PATCHER/s2"
g "$PATCHER" add -A
g "$PATCHER" commit -qm "app: series part two"
g "$PATCHER" format-patch -q --cover-letter --thread --base="$c12" \
    -o "$PW_TMP/sp" "$c12..HEAD"
cat "$PW_TMP"/sp/*.patch >"$PW_TMP/remote.mbox"
pwd_admin series upload --tree app "$PW_TMP/remote.mbox" >"$PW_TMP/upload.out" 2>&1 ||
    fail series_upload "$(cat "$PW_TMP/upload.out")"
series_applied() {
	[ "$(sql "SELECT state FROM series ORDER BY id DESC LIMIT 1")" = applied ]
}
wait_until 60 series_applied || fail series_applied "$(sql "SELECT state, error FROM series")"
stip=$(sql "SELECT c.sha FROM series se JOIN commits c ON c.id = se.commit_id
    ORDER BY se.id DESC LIMIT 1")
# With the runners registered, each of them gets the series' pairs (the
# job names no host labels): every one must fetch the commits itself.
series_jobs() {
	sql "SELECT count(*) FROM jobs j JOIN commits c ON c.id = j.commit_id
	    WHERE c.sha = '$stip' AND j.name = 'fleet' ${1:-}"
}
series_measured() {
	[ "$(series_jobs)" -ge 2 ] &&
	    [ "$(series_jobs "AND j.state IN ('success', 'failed', 'cancelled')")" = "$(series_jobs)" ]
}
if [ -n "$stip" ] && wait_until 120 series_measured; then
	njobs=$(series_jobs)
	sok=$(series_jobs "AND j.state = 'success'")
	sruns=$(sql "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id
	    JOIN commits c ON c.id = j.commit_id WHERE c.sha = '$stip'")
	spec=$(sql "SELECT j.params FROM jobs j JOIN commits c ON c.id = j.commit_id
	    WHERE c.sha = '$stip' LIMIT 1")
	# Every host that measured it took the pack, and the commit in its
	# own clone is the daemon's, id for id, tree for tree.
	bad=""
	for shost in $(sql "SELECT DISTINCT h.name FROM jobs j JOIN commits c
	    ON c.id = j.commit_id JOIN hosts h ON h.id = j.host_id
	    WHERE c.sha = '$stip'"); do
		packs=$(sql "SELECT count(*) FROM job_logs l JOIN jobs j ON j.id = l.job_id
		    JOIN commits c ON c.id = j.commit_id JOIN hosts h ON h.id = j.host_id
		    WHERE c.sha = '$stip' AND h.name = '$shost'
		    AND l.text LIKE 'series commit $stip from the daemon''s pack%'")
		clone_has=0
		for d in "$PW_TMP/$shost"/work/trees/u-*.git; do
			[ "$(git --git-dir="$d" cat-file -t "$stip" 2>/dev/null)" = commit ] &&
			    [ "$(git --git-dir="$d" rev-parse "$stip^{tree}")" = \
			    "$(git --git-dir="$PW_DIR/git/app.git" rev-parse "$stip^{tree}")" ] &&
			    clone_has=1
		done
		[ "$packs" -ge 1 ] && [ "$clone_has" = 1 ] || bad="$bad $shost($packs packs, clone $clone_has)"
	done
	echo "# series tip ${stip:0:12}: $njobs jobs"
	if [ "$sok" = "$njobs" ] && [ "$sruns" = $((2 * njobs)) ] && [ -z "$bad" ] &&
	    echo "$spec" | grep -q "\"url\": *\"file://$SRC\"" &&
	    echo "$spec" | grep -q "\"pack\": *\"/api/v1/packs/$stip?have=$c12\"" &&
	    ! echo "$spec" | grep -q "$PW_DIR/git"; then
		pass series_remote_runner
	else
		fail series_remote_runner "$sok of $njobs succeeded, $sruns runs, hosts without the pack:$bad; spec $spec; $(sql "SELECT error FROM jobs j JOIN commits c ON c.id = j.commit_id WHERE c.sha = '$stip'")"
		show_logs
	fi
else
	fail series_remote_runner "series tip '$stip': $(sql "SELECT j.state, j.error FROM jobs j JOIN commits c ON c.id = j.commit_id WHERE c.sha = '$stip'")"
	show_logs
fi
# The pack route over a runner's link: only series commits, runner token.
rcurl() {	# rcurl K ARGS...: curl from runner K's namespace
	local k=$1
	shift
	ip netns exec "${NS}r$k" curl -s -o "$PW_TMP/pbody" -w '%{http_code}' --max-time 30 "$@"
}
R1TOK=$(cat "$PW_DIR/tokens/r1.token")
code=$(rcurl 1 -H "Authorization: Bearer $R1TOK" \
    "http://10.201.1.1:$PW_PORT/api/v1/packs/$c12?have=$c0")
check pack_of_a_tree_commit_is_404 [ "$code" = 404 ] &&
    grep -q "not a series commit" "$PW_TMP/pbody"
code=$(rcurl 1 "http://10.201.1.1:$PW_PORT/api/v1/packs/$stip?have=$c12")
check pack_needs_a_token [ "$code" = 401 ]
code=$(rcurl 1 -H "Authorization: Bearer $R1TOK" \
    "http://10.201.1.1:$PW_PORT/api/v1/packs/$stip?have=$c12")
check pack_over_the_link [ "$code" = 200 ] && [ "$(head -c 4 "$PW_TMP/pbody")" = PACK ]

# ---- 3. a runner's link cut mid-job ----
pwd_admin submit --job slow >"$PW_TMP/submit.out" 2>&1 || fail submit "$(cat "$PW_TMP/submit.out")"
slow_base=$(sql "SELECT base_job_id FROM pairs WHERE name = 'slow'")
slow_cand=$(sql "SELECT cand_job_id FROM pairs WHERE name = 'slow'")
base_started() {
	[ "$(sql "SELECT count(*) FROM runs WHERE job_id = $slow_base")" -ge 1 ]
}
if ! wait_until 60 base_started; then
	fail slow_started "$(sql "SELECT state FROM jobs WHERE id = $slow_base")"
	show_logs
	finish
fi
cut=$(sql "SELECT substr(h.name, 2) FROM jobs j JOIN hosts h ON h.id = j.lease_owner
    WHERE j.id = $slow_base")
ip -n "${NS}r$cut" link set "${NS}b$cut" down
echo "# cut the link of r$cut during job $slow_base"
slow_done() {
	[ "$(sql "SELECT count(*) FROM jobs WHERE id IN ($slow_base, $slow_cand)
	    AND state = 'success'")" = 2 ]
}
if wait_until 120 slow_done; then
	pass cut_job_completed_elsewhere
else
	fail cut_job_completed_elsewhere "$(sql "SELECT id, state, host_id FROM jobs WHERE name = 'slow'")"
	show_logs
fi
hosts_of_runs=$(sql "SELECT group_concat(DISTINCT h.name) FROM runs r JOIN hosts h
    ON h.id = r.host_id WHERE r.job_id IN ($slow_base, $slow_cand)")
check cut_runs_from_one_other_host [ -n "$hosts_of_runs" ] && [ "$hosts_of_runs" != "r$cut" ] &&
    ! echo "$hosts_of_runs" | grep -q ,
nruns=$(sql "SELECT count(*) || ' ' || count(DISTINCT job_id || ':' || idx) FROM runs
    WHERE job_id IN ($slow_base, $slow_cand)")
check cut_no_duplicate_runs [ "$nruns" = "16 16" ]

# ---- 4. the link restored ----
ip -n "${NS}r$cut" link set "${NS}b$cut" up
spooled() {	# runs of the slow base job still waiting in r$cut's spool
	find "$PW_TMP/r$cut/work/spool" -maxdepth 1 -type f -name "${slow_base}[-_.]*" \
	    2>/dev/null | wc -l
}
refused() {
	grep -q "job $slow_base: run [0-9]* refused" "$PW_TMP/r$cut/runner.log" &&
	    [ "$(spooled)" = 0 ]
}
if wait_until 60 refused; then
	pass restored_spool_refused
else
	fail restored_spool_refused "spool: $(ls -R "$PW_TMP/r$cut/work/spool" 2>&1 | head -20)"
	show_logs
fi
rejected=$(find "$PW_TMP/r$cut/work/spool/rejected" -type f | wc -l)
check restored_runs_kept_in_rejected [ "$rejected" -ge 1 ]
nruns2=$(sql "SELECT count(*) FROM runs WHERE job_id IN ($slow_base, $slow_cand)")
check restored_not_stored_twice [ "$nruns2" = 16 ]
finish
