#!/usr/bin/env bash
# check: parallel
# (Runners with PERFWATCH_NO_CGROUPS, a fake kexec, a stand-in kernel
# tree: no host state, nothing timed.)
# A shared build whose stored image went bad between the upload and the
# download: a real builder uploads base and candidate, then the daemon's
# artifact store is damaged (the base's bzImage has a byte changed, the
# candidate's is cut to half).  The bench host (build: false, fake kexec)
# must refuse both by hash: each job fails naming the hash it got and the
# one expected, is queued again once and fails again, uploads no run,
# and no kexec ever loads the image; nothing of it is kept to boot or to
# resume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"
. "$(dirname "$0")/lib_kfleet.sh"

kfleet_tree
kfleet_daemon b1 h1
kfleet_builder b1
kfleet_bench h1
ARTS=$PW_TMP/d/artifacts
JOBS=
kfleet_submit kb "$BASE" "$CAND"
read -r jb jc <<<"$JOBS"
kfleet_start b1
builds_done() { [ "$(sql "SELECT count(*) FROM builds WHERE state = 'success'")" = 2 ]; }
wait_until 60 builds_done || { fail builds_succeed "$(sql "SELECT id, state, error FROM builds")"; show_logs; finish; }
stop_pid "${PIDS[b1]}"

# bzImage of the build of COMMIT: its sha256 (the claim's) and the file.
image_of() {
	http GET "/api/v1/builds?limit=10" >/dev/null
	python3 -c '
import json, sys
b = [b for b in json.load(open(sys.argv[1]))["builds"] if b["commit"] == sys.argv[2]][0]
print(b["id"])' "$PW_TMP/body" "$1"
}
bb=$(image_of "$BASE")
bc=$(image_of "$CAND")
sha_of() {
	http GET "/api/v1/builds/$1" >/dev/null
	jfield files.bzImage.sha256 <"$PW_TMP/body"
}
sb=$(sha_of "$bb")
sc=$(sha_of "$bc")
fb=$ARTS/${sb:0:2}/$sb
fc=$ARTS/${sc:0:2}/$sc
if [ -f "$fb" ] && [ -f "$fc" ]; then
	pass artifacts_stored_by_hash
else
	fail artifacts_stored_by_hash "$(find "$ARTS" -type f | head)"
	finish
fi
# Damage: one byte changed (same size), and a file cut to half.
python3 - "$fb" "$fc" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1000)
    b = f.read(1)
    f.seek(1000)
    f.write(bytes([b[0] ^ 0x5a]))
n = os.path.getsize(sys.argv[2])
os.truncate(sys.argv[2], n // 2)
PY
gotb=$(sha256sum "$fb" | cut -d' ' -f1)
gotc=$(sha256sum "$fc" | cut -d' ' -f1)

kfleet_start h1
kfleet_until 90 jobs_ended "$jb" "$jc" || { fail jobs_end "$(job_state "$jb") $(job_state "$jc")"; show_logs; }
check_refused() {
	local job=$1 got=$2 want=$3 build=$4
	job_json "$job" "$PW_TMP/job-$job.json"
	python3 - "$PW_TMP/job-$job.json" "$got" "$want" "$build" <<'PY' && pass "job_${job}_refused_by_hash" || fail "job_${job}_refused_by_hash" "$(head -c 2500 "$PW_TMP/job-$job.json")"
import json, sys
j = json.load(open(sys.argv[1]))
got, want, build = sys.argv[2:]
assert j["state"] == "failed" and not j["runs"], (j["state"], j["runs"])
assert j["error"] == "image: bzImage: sha256 %s, expected %s (GET /api/v1/artifacts/%s)" % (got, want, want), j["error"]
# Queued again once (a download can go wrong), then left failed.
assert j["attempts"] == 2, j["attempts"]
assert j["log"].count("image: bzImage: refused: ") == 2, j["log"][-2000:]
assert "boot: state written" not in j["log"], j["log"][-2000:]
PY
}
check_refused "$jb" "$gotb" "$sb" "$bb"
check_refused "$jc" "$gotc" "$sc" "$bc"
# Never booted: no kexec at all; nothing kept to boot or to resume.
check never_booted test ! -e "$PW_TMP/h1/kexec.log"
left=$(find "$PW_TMP/h1/kernel/shared" -name 'bzImage*' | wc -l)
check nothing_left_to_boot test "$left" = 0
check no_run_measured test "$(sql "SELECT count(*) FROM runs")" = 0
stop_pid "${PIDS[h1]}" 2>/dev/null
finish
