#!/usr/bin/env bash
# check: parallel
# (Its runner touches no host state, PERFWATCH_NO_CGROUPS, and measures
# nothing: `echo ops=1000` on both sides; the waits are leases of 10 s
# and 40 s, which a test beside it does not stretch.)
# boot: kexec with a real daemon and runner, and fake kexec on PATH
# (kexec cannot run here: docs/KERNEL.md).  The runner's kernel cache is
# seeded with an image for the job's (commit, config), so nothing is
# built; the fake `kexec -l IMAGE` writes the "booted" /proc/version
# (PERFWATCH_PROC_VERSION) from the image's meta, and `kexec -e` kills the
# runner as the reboot would.  The test restarts the runner like systemd:
#   1. right kernel: the state file is written before the boot, the job
#      resumes after the restart, its runs carry kernel.round/boot and the
#      kernel facts the runner logged (the pair API and page show them),
#      and it succeeds;
#   2. wrong kernel: the host comes back on another kernel: the job fails
#      naming both builds;
#   3. the host never comes back: the boot lease (40 s, longer than the 10 s run
#      lease) expires, the host shows offline and the job is requeued.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

. "$(dirname "$0")/lib_boot.sh"
. "$(dirname "$0")/lib_kstandin.sh"

boot_setup kx 900

# Fake kexec: -l records the image's release as the next /proc/version
# (FAKE_KERNEL overrides it: the wrong-kernel case); -e "reboots": kills
# the runner that called it.
fake_kexec "$PW_TMP/fakebin"
export FAKE_LOG=$PW_TMP/fake.log PERFWATCH_PROC_VERSION=$PW_TMP/proc_version
export PERFWATCH_NO_CGROUPS=1
echo "Linux version 6.1.0-13-amd64 (debian) #1 SMP" >"$PERFWATCH_PROC_VERSION"
runner_config r1 "kernel_tree: $KT"
sed -i 's/^boot: none/boot: kexec/' "$PW_TMP/r1/runner.yaml"
STATE=$PW_TMP/r1/work/boot.state

runner() {
	PATH=$PW_TMP/fakebin:$PATH start_runner r1
	RUNNER=$!
}
dead() { ! kill -0 "$RUNNER" 2>/dev/null; }

# --- 1. the right kernel comes up ---
http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"kx\",
    \"base\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"},
    \"candidate\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"}}" >"$PW_TMP/code"
check submit [ "$(cat "$PW_TMP/code")" = 201 ]
base=$(jfield pairs.0.base_job <"$PW_TMP/body")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
pair=$(jfield pairs.0.pair_id <"$PW_TMP/body")
runner
if wait_until 60 dead && grep -q "^kexec -e$" "$FAKE_LOG"; then pass kexec_e_reboots_the_runner; else fail kexec_e_reboots_the_runner "runner still up"; show_logs; finish; fi
python3 - "$STATE" "$base" <<'PY' && pass state_written_before_boot || fail state_written_before_boot "$(cat "$STATE" 2>&1)"
import sys
kv = dict(l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()[1:])
assert kv["job"] == sys.argv[2] and kv["step"] == "boot" and kv["method"] == "kexec", kv
assert kv["build_id"] == "-pw900" and kv["release"] == "6.1.158-pw900", kv
assert int(kv["deadline"]) > 0 and kv["runs_done"] == "", kv
PY
grep -q "^kexec -l $img/bzImage --reuse-cmdline$" "$FAKE_LOG" && pass kexec_loads_the_image || fail kexec_loads_the_image "$(cat "$FAKE_LOG")"
check proc_version_is_the_new_kernel grep -q "6.1.158-pw900" "$PERFWATCH_PROC_VERSION"
# The boot lease (40 s; 20 s left too little margin on a loaded CI
# machine): the job stays running past the 10 s run lease.
sleep 12
check boot_lease_outlives_run_lease [ "$(job_state "$base")" = running ]
runner
if wait_until 60 sh -c "[ \"\$(\"$PW_BIN/perfwatch\" jobs show $base --json --server $PW_URL | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = success ]"; then
	pass resumed_job_succeeds
else
	fail resumed_job_succeeds "$(job_state "$base")"
	show_logs
fi
# Consumed: a later state can only be the candidate's own boot.
check state_consumed_after_resume sh -c "! grep -qx 'job $base' '$STATE' 2>/dev/null"
http GET "/api/v1/jobs/$base" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass resumed_runs_recorded || fail resumed_runs_recorded "$(head -c 2000 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert sorted(r["index"] for r in j["runs"]) == [0, 1], j["runs"]
for r in j["runs"]:
    m = {x["name"]: x["value"] for x in r["metrics"]}
    assert m["ops"] == 1000 and m["kernel.round"] == 1 and m["kernel.boot"] == 1, m
assert "boot: resumed after kexec on Linux version 6.1.158-pw900" in j["log"], j["log"][-1500:]
PY
# The kernel the runner logged (before the kexec) is what the resumed
# runs uploaded, and what the job, the pair API and the pair page say of
# the base side; the candidate has no run yet: unknown, not made up.
cp "$PW_TMP/body" "$PW_TMP/job-base.json"
http GET "/api/v1/pairs/$pair" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/pair.json"
curl -s -o "$PW_TMP/pair.html" "$PW_URL/pair/$pair"
python3 - "$PW_TMP/job-base.json" "$PW_TMP/pair.json" "$PW_TMP/pair.html" <<'PY' && pass kernel_facts_of_the_logged_build || fail kernel_facts_of_the_logged_build "$(head -c 3000 "$PW_TMP/pair.json")"
import html, json, re, sys
j = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
page = html.unescape(open(sys.argv[3]).read())
m = re.search(r"kernel: build_id=(\S+) release=(\S+) config_sha256=([0-9a-f]{64}) cached=(yes|no)", j["log"])
assert m, j["log"][-2000:]
bid, rel, cfg, cached = m.groups()
assert (bid, rel, cached) == ("-pw900", "6.1.158-pw900", "yes"), m.groups()
want = {"build_id": bid, "release": rel, "config_sha256": cfg, "boot": "kexec", "cached": cached == "yes"}
for r in j["runs"]:
    # Built by this runner, not downloaded from a shared build.
    assert r["host_state"]["kernel_build"] == dict(want, shared_build=None), r["host_state"]
want_side = dict(want, cached=cached, runs=2)
assert j["kernel"] == want_side, j["kernel"]
assert p["base"]["kernel"] == want_side, p["base"]
c = p["candidate"]["kernel"]
assert c["build_id"] == "unknown" and c["release"] == "unknown" and c["runs"] == 0, c
assert p["kernel_warning"] is None, p["kernel_warning"]
# The pair page's sides table names each side's kernel once.
line = "%s build %s config %s (boot kexec, cached yes)" % (rel, bid, cfg[:12])
assert line in page, re.findall(r"[^>]*build -pw[^<]*", page)
# The candidate has not run: its kernel is unknown, not the host's.
assert [x["kernel"] for x in p["sides"]] == [line, None], p["sides"]
PY
pw jobs show "$base" >"$PW_TMP/show.txt"
check cli_shows_the_kernel grep -qx "kernel  *6.1.158-pw900 build -pw900 config 000000000000 (boot kexec, cached yes)" "$PW_TMP/show.txt"
# The candidate boots next: the runner dies again.
if wait_until 60 dead; then pass candidate_boots; else fail candidate_boots "runner still up"; fi

# --- 2. the host comes back on another kernel ---
export FAKE_KERNEL=6.1.0-13-amd64
echo "Linux version 6.1.0-13-amd64 (debian) #1 SMP" >"$PERFWATCH_PROC_VERSION"
rm -f "$STATE"
# Let the candidate's boot lease run out and boot it again with the
# wrong kernel this time.
wait_until 60 sh -c "[ \"\$(\"$PW_BIN/perfwatch\" jobs show $cand --json --server $PW_URL | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = queued ]"
runner
wait_until 60 dead
check wrong_kernel_state_written [ -f "$STATE" ]
runner
wait_until 60 sh -c "[ \"\$(\"$PW_BIN/perfwatch\" jobs show $cand --json --server $PW_URL | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = failed ]"
wrong_kernel_failed "$cand"
stop_pid "$RUNNER"
unset FAKE_KERNEL

# --- 3. the host never comes back ---
http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"kx\",
    \"base\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"},
    \"candidate\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"}}" >"$PW_TMP/code"
base2=$(jfield pairs.0.base_job <"$PW_TMP/body")
rm -f "$STATE"
runner
wait_until 60 dead
check down_host_job_running_in_boot [ "$(job_state "$base2")" = running ]
# The lease the boot left (its deadline) and when the boot began (the
# state file, written just before it): read from the store and the file,
# not from this test's clock, which a loaded machine stretches.
booted=$(stat -c %Y "$STATE")
expires=$(sql "SELECT lease_expires FROM jobs WHERE id = $base2")
if wait_until 60 sh -c "[ \"\$(\"$PW_BIN/perfwatch\" jobs show $base2 --json --server $PW_URL | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = queued ]"; then
	pass boot_timeout_requeues
else
	fail boot_timeout_requeues "$(job_state "$base2")"
fi
requeued=$(date +%s)
# The boot lease (40 s), not the run lease (10 s), and not before it ran
# out.
if [ -n "$expires" ] && [ $((expires - booted)) -ge 30 ] && [ "$requeued" -ge "$expires" ]; then
	pass requeued_after_the_boot_lease
else
	fail requeued_after_the_boot_lease "boot at $booted, lease to ${expires:-none}, requeued by $requeued"
fi
pw hosts --json >"$PW_TMP/hosts.json"
python3 - "$PW_TMP/hosts.json" <<'PY' && pass host_shown_offline || fail host_shown_offline "$(cat "$PW_TMP/hosts.json")"
import json, sys
h = [h for h in json.load(open(sys.argv[1]))["hosts"] if h["name"] == "r1"][0]
assert h["state"] == "offline", h
PY
finish
