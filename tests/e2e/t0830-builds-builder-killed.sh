#!/usr/bin/env bash
# check: parallel
# (Runners with PERFWATCH_NO_CGROUPS, a fake kexec, a stand-in kernel
# tree; the waits are the 10 s build lease, which a test beside it does
# not stretch.)
# A builder killed (kill -9) in the middle of a shared build: its make
# hangs (the stand-in waits while $PW_TMP/slow-make exists), the runner
# and its make are killed, and a second builder starts.  The build's
# lease runs out, the build is queued again and the second builder makes
# it (attempt 2) and the next one; the bench host boots both and the
# pair succeeds.  Nothing the dead builder began is finished in its name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"
. "$(dirname "$0")/lib_kfleet.sh"

kfleet_tree
kfleet_daemon b1 b2 h1
kfleet_builder b1
kfleet_builder b2
kfleet_bench h1
touch "$PW_TMP/slow-make"
JOBS=
kfleet_submit kb "$BASE" "$CAND"
read -r jb jc <<<"$JOBS"
kfleet_start b1
in_make() { [ -s "$PW_TMP/slow-make.pid" ] && kill -0 "$(cat "$PW_TMP/slow-make.pid")" 2>/dev/null; }
if wait_until 60 in_make; then
	pass builder_in_make
else
	fail builder_in_make "$(sql "SELECT id, state, error FROM builds")"
	show_logs
	finish
fi
build=$(sql "SELECT id FROM builds WHERE state = 'running'")
check running_on_b1 test "$(sql "SELECT count(*) FROM builds WHERE state = 'running'")" = 1
# The host dies: the runner and the build it ran (the recipe's shell
# and the make above it), all at once.
msh=$(cat "$PW_TMP/slow-make.pid")
mk=$(ps -o ppid= -p "$msh" | tr -d ' ')
kill -9 "${PIDS[b1]}" "$msh" "$mk" 2>/dev/null
rm -f "$PW_TMP/slow-make"
killed_at=$(date +%s)
kfleet_start b2
kfleet_start h1
if kfleet_until 90 jobs_ended "$jb" "$jc"; then
	pass pair_ended
else
	fail pair_ended "$(job_state "$jb") $(job_state "$jc"); $(sql "SELECT id, state, attempts, error FROM builds")"
	show_logs
fi
http GET "/api/v1/builds/$build" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/build.json"
python3 - "$PW_TMP/build.json" <<'PY' && pass build_requeued_and_made_by_b2 || fail build_requeued_and_made_by_b2 "$(head -c 3000 "$PW_TMP/build.json")"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["state"] == "success" and b["builder"] == "b2" and b["attempts"] == 2, (b["state"], b["builder"], b["attempts"])
log = b["log"] or ""
assert "(attempt 1) on b1" in log and "(attempt 2) on b2" in log, log[-2500:]
assert "upload: bzImage: " in log, log[-1500:]
PY
# Requeued when the lease (10 s) ran out, not at once.
done_at=$(sql "SELECT finished FROM builds WHERE id = $build")
check requeued_after_the_lease test "$((done_at - killed_at))" -ge 5
check b2_made_both test "$(compiles b2)" = 2
check b1_finished_none test "$(compiles b1)" = 0
for j in "$jb" "$jc"; do
	job_json "$j" "$PW_TMP/job-$j.json"
	python3 - "$PW_TMP/job-$j.json" <<'PY' && pass "job_${j}_booted_the_shared_build" || fail "job_${j}_booted_the_shared_build" "$(head -c 2000 "$PW_TMP/job-$j.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "success" and len(j["runs"]) == 1, (j["state"], j["error"])
kb = j["runs"][0]["host_state"]["kernel_build"]
assert kb["shared_build"] and kb["build_id"].startswith("-pwb%d-" % kb["shared_build"]), kb
PY
done
for n in b2 h1; do stop_pid "${PIDS[$n]}" 2>/dev/null; done
finish
