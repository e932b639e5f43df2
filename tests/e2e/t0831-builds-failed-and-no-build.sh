#!/usr/bin/env bash
# check: parallel
# (Runners with PERFWATCH_NO_CGROUPS, a fake kexec, a stand-in kernel
# tree: no host state, nothing timed.)
# What a shared build that fails does, and what build: false means when
# builds are not shared:
#   - builds.shared: a fragment line olddefconfig drops fails the build
#     on the builder with the text a job's build failure has (naming the
#     option); both jobs of the pair fail "build failed: build B: ...",
#     the bench host never claims or boots them, and nothing is built
#     for it again;
#   - builds.shared false: a bench host with build: false is never
#     handed the kernel job (it would have to build it): the job stays
#     queued while the host runs a job without a kernel.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"
. "$(dirname "$0")/lib_kfleet.sh"

kfleet_tree
kfleet_daemon b1 h1
sed -e 's/^name: kb$/name: kdrop/' \
    -e 's/fragment: \[CONFIG_MEMCG=y\]/fragment: [CONFIG_MEMCG=y, CONFIG_NEEDS_MISSING_DEP=y]/' \
    "$PW_DIR/jobs/kb.yaml" >"$PW_DIR/jobs/kdrop.yaml"
stop_pid "$PW_DAEMON_PID"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
kfleet_builder b1
kfleet_bench h1
JOBS=
kfleet_submit kdrop "$BASE" "$CAND"
read -r jb jc <<<"$JOBS"
kfleet_start b1
kfleet_start h1
if wait_until 60 jobs_ended "$jb" "$jc"; then
	pass jobs_ended
else
	fail jobs_ended "$(job_state "$jb") $(job_state "$jc"); $(sql "SELECT id, state, error FROM builds")"
	show_logs
fi
http GET "/api/v1/builds?limit=10" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/builds.json"
python3 - "$PW_TMP/builds.json" <<'PY' && pass build_fails_naming_the_option || fail build_fails_naming_the_option "$(head -c 2500 "$PW_TMP/builds.json")"
import json, sys
bs = json.load(open(sys.argv[1]))["builds"]
assert len(bs) == 2, bs
for b in bs:
    assert b["state"] == "failed" and b["builder"] == "b1", b
    assert b["error"].startswith("build: kernel.fragment: dropped by olddefconfig"), b["error"]
    assert "CONFIG_NEEDS_MISSING_DEP=y (now: not set)" in b["error"], b["error"]
PY
for j in "$jb" "$jc"; do
	job_json "$j" "$PW_TMP/job-$j.json"
	python3 - "$PW_TMP/job-$j.json" <<'PY' && pass "job_${j}_failed_with_its_build" || fail "job_${j}_failed_with_its_build" "$(head -c 2000 "$PW_TMP/job-$j.json")"
import json, re, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "failed" and not j["runs"], (j["state"], j["runs"])
assert re.match(r"build failed: build \d+: build: kernel.fragment: dropped by olddefconfig", j["error"]), j["error"]
assert j["host"] in (None, "", "h1") and "image:" not in (j["log"] or ""), (j["host"], j["log"])
PY
done
check bench_host_never_booted test ! -e "$PW_TMP/h1/kexec.log"
check bench_host_never_compiled test "$(compiles h1)" = 0
check builder_compiled_none test "$(compiles b1)" = 0
check no_build_again test "$(sql "SELECT count(*) FROM builds")" = 2
stop_pid "${PIDS[b1]}"
stop_pid "${PIDS[h1]}" 2>/dev/null

# --- builds.shared false: build: false is never handed a kernel job ---
stop_pid "$PW_DAEMON_PID"
sed -i 's/^  shared: true$/  shared: false/' "$PW_TMP/d/daemon.yaml"
cat >"$PW_DIR/jobs/plain.yaml" <<'YAML'
name: plain
parser: keyvalue
command: [sh, -c, "echo ops=1000"]
hosts: [h1]
runs: 1
max_runs: 1
metrics:
  ops: {better: higher, min_effect: 50%}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_restarts "see log"; finish; }
kfleet_bench h1
JOBS=
kfleet_submit kb "$BASE" "$CAND"
read -r kjb kjc <<<"$JOBS"
check kernel_job_not_linked_to_a_build test "$(sql "SELECT count(*) FROM jobs WHERE id IN ($kjb, $kjc) AND build_id IS NOT NULL")" = 0
http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"plain\"}" >/dev/null
pj=$(sql "SELECT max(id) FROM jobs WHERE name = 'plain'")
kfleet_start h1
if wait_until 60 sh -c "[ \"\$(\"$PW_BIN/perfwatch\" jobs show $pj --json --server $PW_URL | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = success ]"; then
	pass host_runs_other_jobs
else
	fail host_runs_other_jobs "$(job_state "$pj")"
	show_logs
fi
sleep 3 # a few more claims of h1
if [ "$(job_state "$kjb")" = queued ] && [ "$(job_state "$kjc")" = queued ] &&
    [ "$(compiles h1)" = 0 ] && ! grep -q "refused: the job asks for a kernel build" "$PW_TMP/h1/runner.log"; then
	pass build_false_never_handed_a_kernel_job
else
	fail build_false_never_handed_a_kernel_job "$(job_state "$kjb") $(job_state "$kjc"); $(tail -5 "$PW_TMP/h1/runner.log")"
fi
stop_pid "${PIDS[h1]}"
finish
