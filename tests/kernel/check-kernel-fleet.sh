#!/usr/bin/env bash
# make check-kernel-fleet: a kernel pair measured on two bench hosts, each
# building its own kernels, then with shared builds (docs/KERNEL.md,
# "Shared builds"), side by side in one run (slow; not in make check).
#
# Real kernels: check-kernel's repository (tests/kernel/mkrepo.sh: base,
# and a candidate with a 20 us spin in try_charge_memcg()) and a second
# candidate on the same base (the candidate plus a comment in
# mm/memcontrol.c, a branch of its own, pw-fleet-PID, deleted at the
# end).  A real perfwatchd; two bench runners h1, h2 with boot: qemu and a
# builder b1 with boot: none.  Jobs kf1 (host h1) and kf2 (host h2): the
# page-fault loop in the nested memcg /a/b of a tinyconfig kernel with
# KFRAGMENT, one round.  Each phase submits the pair (base, candidate) to
# both jobs, then (base, second candidate), and waits for every verdict:
#
#   local   builds.shared false: h1 and h2 build what they boot (build:
#           true, kernel_tree fresh for the phase; b1 not running);
#   shared  builds.shared true (SIGHUP): b1 builds (fresh kernel_tree),
#           h1 and h2 have build: false and fresh kernel_trees and only
#           download.
#
# Checks: every job succeeds and every verdict of the spin is a
# regression; local compiles 2 kernels per host for the first pair and 1
# more per host for the second; shared compiles 2 in all, then 1 more;
# the bench hosts of the shared phase never compile (no build tree).
# Prints per phase: kernels compiled, bytes moved (image bytes the bench
# hosts downloaded; the local phase moves none: its hosts clone the tree
# from a local path), and the wall time from the first push to the last
# verdict, for each pair and in all.  Everything runs at nice 10 under
# check-kernel's lock (tests/kernel/lib_kernel.sh).
set -u
T0=$(date +%s)
KERNEL_CACHE=${KERNEL_CACHE:-/var/tmp/perfwatch-kernel}
export PERFWATCH_BIN=${PERFWATCH_BIN:-$PWD/${OUT:-build}/bin}
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/lib_runner.sh"
. "$(dirname "$0")/../e2e/lib_git.sh"
. "$(dirname "$0")/lib_kernel.sh"
kernel_start || { fail kernel_repo "mkrepo.sh failed"; finish; }

gk() { git --git-dir="$REPO" "$@"; }
BRANCH=pw-fleet-$$
trap 'gk update-ref -d "refs/heads/$BRANCH" 2>/dev/null; pw_cleanup' EXIT
# The second candidate: the candidate's tree with a comment appended to
# mm/memcontrol.c (an incremental build over the candidate's objects).
export GIT_INDEX_FILE=$PW_TMP/index
blob=$({ gk cat-file blob "$CAND:mm/memcontrol.c" &&
    printf '/* perfwatch check-kernel-fleet %s */\n' "$$"; } | gk hash-object -w --stdin) &&
    gk read-tree "$CAND" && gk update-index --cacheinfo "100644,$blob,mm/memcontrol.c" &&
    CAND2=$(gk commit-tree "$(gk write-tree)" -p "$CAND" -m "mm: memcg: a comment (fleet)") &&
    gk update-ref "refs/heads/$BRANCH" "$CAND2" ||
    { fail second_candidate "git plumbing failed"; finish; }
unset GIT_INDEX_FILE
echo "# base $BASE, candidate $CAND, second candidate $CAND2"

FLEET=$KERNEL_CACHE/fleet
rm -rf "$FLEET"
mkdir -p "$FLEET"
daemon_config "$PW_TMP/d" b1 h1 h2
cat >>"$PW_TMP/d/daemon.yaml" <<'YAML'
scheduler:
  lease: 60s
  claim_wait: 2s
builds:
  shared: false
YAML
kpf_job kf1 3 3 "hosts: [h1]
rounds: 1"
kpf_job kf2 3 3 "hosts: [h2]
rounds: 1"
# Two cold builds at once on this machine take about twice one.
sed -i 's/^  build_timeout: 40m$/  build_timeout: 3h/' "$PW_DIR/jobs/kf1.yaml" "$PW_DIR/jobs/kf2.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

declare -A PIDS
# fleet_runner NAME PHASE BOOT [YAML...]: runner NAME with that boot
# method and a fresh kernel_tree for the phase; started, its pid in
# ${PIDS[NAME]}.
fleet_runner() {
	local n=$1 phase=$2 boot=$3
	shift 3
	rm -rf "$FLEET/$n-$phase"
	runner_config "$n" "kernel_tree: $FLEET/$n-$phase" "guest_dir: $PW_BIN/guest" "$@"
	sed -i "s/^boot: none/boot: $boot/" "$PW_TMP/$n/runner.yaml"
	start_runner "$n"
	PIDS[$n]=$!
}
stop_runners() {
	local n
	for n in "${!PIDS[@]}"; do
		stop_pid "${PIDS[$n]}" 2>/dev/null
	done
	PIDS=()
}
submit() {
	http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"$1\",
	    \"base\": {\"tree\": \"$REPO\", \"commit\": \"$2\"},
	    \"candidate\": {\"tree\": \"$REPO\", \"commit\": \"$3\"}}" >"$PW_TMP/code"
	[ "$(cat "$PW_TMP/code")" = 201 ] || { fail "submit_$1" "$(cat "$PW_TMP/body")"; return 1; }
	PAIRS="$PAIRS $(jfield pairs.0.pair_id <"$PW_TMP/body")"
}
final() {
	http GET "/api/v1/pairs/$1" >/dev/null &&
	    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]));
assert all(p[s]["state"] in ("success","failed","cancelled") for s in ("base","candidate"))
assert p["base"]["state"] != "success" or p["candidate"]["state"] != "success" or (p["comparisons"] and all(c["final"] for c in p["comparisons"]))' "$PW_TMP/body" 2>/dev/null
}
all_final() {
	local p
	for p in "$@"; do final "$p" || return 1; done
}

# run_pairs PHASE CAND LABEL: the pair (base, CAND) on both hosts, to the
# last verdict; its pairs in $PW_TMP/PHASE-LABEL.pairs, the seconds from
# the push to the last verdict in $PW_TMP/PHASE-LABEL.s.
run_pairs() {
	local phase=$1 cand=$2 label=$3 t p
	PAIRS=
	t=$(date +%s)
	submit kf1 "$BASE" "$cand" && submit kf2 "$BASE" "$cand" || return 1
	# shellcheck disable=SC2086
	if ! wait_until 7200 all_final $PAIRS; then
		fail "${phase}_${label}_verdicts" "pairs$PAIRS not done after 2 h"
		show_logs
		return 1
	fi
	echo "$(($(date +%s) - t))" >"$PW_TMP/$phase-$label.s"
	echo "$PAIRS" >"$PW_TMP/$phase-$label.pairs"
	for p in $PAIRS; do
		http GET "/api/v1/pairs/$p" >/dev/null
		python3 - "$PW_TMP/body" <<'PY' && pass "${phase}_${label}_pair_${p}_regression" || fail "${phase}_${label}_pair_${p}_regression" "$(head -c 2000 "$PW_TMP/body")"
import json, sys
p = json.load(open(sys.argv[1]))
for s in ("base", "candidate"):
    assert p[s]["state"] == "success", (s, p[s]["state"], p[s].get("error"))
c = [c for c in p["comparisons"] if c["metric"] == "average"][0]
print("  pair %d on %s: page faults %.0f -> %.0f/s (%+.1f%%): %s; kernels %s / %s" % (
    p["id"], p["host"], c["base_median"], c["cand_median"], c["change_pct"], c["verdict"],
    p["base"]["kernel"]["build_id"], p["candidate"]["kernel"]["build_id"]))
assert c["verdict"] == "regression", c
PY
	done
}

# tally PHASE: "compiled downloaded_bytes" from the phase's job logs and
# (shared) its builds.
tally() {
	local phase=$1 p ids=
	for p in $(cat "$PW_TMP/$phase-first.pairs" "$PW_TMP/$phase-second.pairs" 2>/dev/null); do
		http GET "/api/v1/pairs/$p" >/dev/null
		ids="$ids $(jfield base.id <"$PW_TMP/body") $(jfield candidate.id <"$PW_TMP/body")"
	done
	for p in $ids; do
		http GET "/api/v1/jobs/$p" >/dev/null
		cp "$PW_TMP/body" "$PW_TMP/$phase-job-$p.json"
	done
	# shellcheck disable=SC2086
	python3 - "$PW_TMP" "$phase" $ids <<'PY'
import json, re, sys
d, phase, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
compiled = moved = 0
for i in ids:
    log = json.load(open("%s/%s-job-%s.json" % (d, phase, i)))["log"] or ""
    # Built by the host itself: its kernel line says cached=no and no
    # image was downloaded for it.
    if re.search(r"kernel: build_id=\S+ release=\S+ config_sha256=\S+ cached=no", log) and "image: " not in log:
        compiled += 1
    moved += sum(int(x) for x in re.findall(r"image: downloaded (\d+) bytes", log))
print(compiled, moved)
PY
}

# --- local: each bench host builds what it boots ---
fleet_runner h1 local qemu
fleet_runner h2 local qemu
run_pairs local "$CAND" first
read -r lc1 _ <<<"$(tally local)"
run_pairs local "$CAND2" second
read -r lc lm <<<"$(tally local)"
stop_runners
[ "$lc1" = 4 ] && [ "$lc" = 6 ] && pass local_compiles_per_host ||
    fail local_compiles_per_host "first pair $lc1 (want 4), both $lc (want 6)"

# --- shared: one builder, the bench hosts download ---
sed -i 's/^  shared: false$/  shared: true/' "$PW_TMP/d/daemon.yaml"
kill -HUP "$PW_DAEMON_PID"
sleep 2
fleet_runner b1 shared none
fleet_runner h1 shared qemu "build: false"
fleet_runner h2 shared qemu "build: false"
run_pairs shared "$CAND" first
n1=$(sql "SELECT count(*) FROM builds WHERE state = 'success'")
read -r _ sm1 <<<"$(tally shared)"
run_pairs shared "$CAND2" second
n2=$(sql "SELECT count(*) FROM builds WHERE state = 'success'")
read -r sc sm <<<"$(tally shared)"
stop_runners
[ "$n1" = 2 ] && [ "$n2" = 3 ] && pass shared_compiles_2_then_1 ||
    fail shared_compiles_2_then_1 "builds after the first pair $n1 (want 2), after the second $n2 (want 3)"
[ "$sc" = 0 ] && ! ls -d "$FLEET"/h1-shared/build-* "$FLEET"/h2-shared/build-* >/dev/null 2>&1 &&
    pass shared_bench_hosts_never_compile ||
    fail shared_bench_hosts_never_compile "$sc jobs built locally; $(ls -d "$FLEET"/h?-shared/build-* 2>&1)"
[ "$sm" -gt 0 ] && pass shared_images_downloaded || fail shared_images_downloaded "$sm bytes"

ls1=$(cat "$PW_TMP/local-first.s" 2>/dev/null || echo ?)
ls2=$(cat "$PW_TMP/local-second.s" 2>/dev/null || echo ?)
ss1=$(cat "$PW_TMP/shared-first.s" 2>/dev/null || echo ?)
ss2=$(cat "$PW_TMP/shared-second.s" 2>/dev/null || echo ?)
echo "MEASURED kernels compiled: local ${lc1} for the first pair, ${lc} in all; shared ${n1} for the first pair, ${n2} in all"
echo "MEASURED image bytes moved to the bench hosts: local ${lm}; shared ${sm1} for the first pair, ${sm} in all"
echo "MEASURED wall time push -> last verdict, first pair on both hosts: local ${ls1} s, shared ${ss1} s"
echo "MEASURED wall time push -> last verdict, second candidate on both hosts: local ${ls2} s, shared ${ss2} s"
echo "MEASURED make check-kernel-fleet: $(($(date +%s) - T0)) s"
rm -rf "$FLEET"
finish
