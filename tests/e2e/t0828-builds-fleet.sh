#!/usr/bin/env bash
# check: parallel
# (Runners with PERFWATCH_NO_CGROUPS that measure `echo ops=1000`, a fake
# kexec, a stand-in kernel tree: no host state, nothing timed.)
# Shared kernel builds with a real daemon and three real runners: one
# builder (boot: none, build: true) and two bench hosts (boot: kexec with
# a fake kexec, build: false), on a stand-in kernel tree (docs/KERNEL.md,
# "Shared builds"):
#   - a pair measured on both bench hosts (job kb on h1, kb2 on h2): 2
#     kernels compiled in all, by the builder; every bench job downloads
#     its image, boots it and succeeds, its runs naming the shared build;
#   - a second candidate on the same base: 1 kernel more; the base comes
#     from h2's cache, and h1, whose copy was cut short as by a runner
#     killed mid-download, resumes it from the daemon with Range;
#   - the bench hosts never run make; the build's files are the ones the
#     builder uploaded, the build's log its output.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"
. "$(dirname "$0")/lib_kfleet.sh"

kfleet_tree
kfleet_daemon b1 h1 h2
kfleet_builder b1
kfleet_bench h1
kfleet_bench h2
INST=$(sql "SELECT id FROM instance")

# --- the first pair, measured on both hosts (jobs kb on h1, kb2 on h2) ---
JOBS=
kfleet_submit kb "$BASE" "$CAND"
kfleet_submit kb2 "$BASE" "$CAND"
jobs1=$JOBS
check two_pairs_four_jobs test "$(echo "$jobs1" | wc -w)" = 4
kfleet_start b1
kfleet_start h1
kfleet_start h2
# shellcheck disable=SC2086
if kfleet_until 120 jobs_ended $jobs1; then
	pass first_pairs_ended
else
	fail first_pairs_ended "$(for j in $jobs1; do echo "$j $(job_state "$j")"; done)"
	show_logs
fi
check first_pair_two_compiles test "$(compiles b1)" = 2
check builds_in_store test "$(sql "SELECT count(*) || ' ' || sum(CASE WHEN state = 'success' THEN 1 ELSE 0 END) FROM builds")" = "2 2"

# Every bench job: downloaded (or taken from this host's cache: the
# other job of its pair never shares a build), booted the shared
# build's image, succeeded; its runs name the build.
check_jobs() {
	local j f
	for j in "$@"; do
		f=$PW_TMP/job-$j.json
		job_json "$j" "$f"
		python3 - "$f" "$INST" "$PW_TMP" <<'PY' || { fail "bench_job_${j}_ran_the_shared_build" "$(head -c 2500 "$f")"; continue; }
import json, re, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "success", (j["state"], j["error"])
m = re.search(r"kernel: build_id=(-pwb(\d+)-(\w+)) release=(\S+) config_sha256=([0-9a-f]{64}) cached=(yes|no) incremental=no build_s=0.0 config_steps=none", j["log"])
assert m, j["log"][-2000:]
bid, b, inst, rel, cfg, cached = m.groups()
assert inst == sys.argv[2] and rel == "6.1.0" + bid, m.groups()
if cached == "no":
    d = re.search(r"image: downloaded (\d+) bytes from build %s(?: \(resumed at \d+\))?; \d+ older images? removed" % b, j["log"])
    assert d and int(d.group(1)) > 100000, j["log"][-2000:]
else:
    assert "image: build %s from the local cache" % b in j["log"], j["log"][-2000:]
assert "kernel make" not in j["log"] and "kernel source" not in j["log"], j["log"][-2000:]
assert "boot: resumed after kexec on Linux version %s" % rel in j["log"], j["log"][-2000:]
for r in j["runs"]:
    kb = r["host_state"]["kernel_build"]
    assert kb["shared_build"] == int(b) and kb["build_id"] == bid and kb["release"] == rel, kb
    assert kb["config_sha256"] == cfg and kb["boot"] == "kexec", kb
assert len(j["runs"]) == 1, j["runs"]
open(sys.argv[1] + ".b", "w").write("%s %s %s\n" % (b, cached, j["host"]))
PY
		pass "bench_job_${j}_ran_the_shared_build"
	done
}
# shellcheck disable=SC2086
check_jobs $jobs1

# The two hosts booted the same two builds: one per commit.
python3 - "$PW_TMP" $jobs1 <<'PY' && pass one_build_per_commit_for_both_hosts || fail one_build_per_commit_for_both_hosts "$(cat "$PW_TMP"/job-*.json.b)"
import sys
d = sys.argv[1]
rows = [open("%s/job-%s.json.b" % (d, j)).read().split() for j in sys.argv[2:]]
bases = {r[0] for r in rows[0::2]}
cands = {r[0] for r in rows[1::2]}
assert len(bases) == 1 and len(cands) == 1 and bases != cands, rows
assert [r[2] for r in rows] == ["h1", "h1", "h2", "h2"], rows
assert all(r[1] == "no" for r in rows), rows
PY

# The builder's side: the files it uploaded are what the hosts booted,
# the build's log is its output.
http GET "/api/v1/builds?limit=10" >/dev/null
build=$(python3 -c '
import json, sys
print([b["id"] for b in json.load(open(sys.argv[1]))["builds"] if b["commit"] == sys.argv[2]][0])' "$PW_TMP/body" "$BASE")
http GET "/api/v1/builds/$build" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/build.json"
python3 - "$PW_TMP/build.json" "$PW_TMP/h1/kernel/shared" "$PW_TMP/h2/kernel/shared" <<'PY' && pass build_files_are_what_hosts_booted || fail build_files_are_what_hosts_booted "$(head -c 3000 "$PW_TMP/build.json")"
import hashlib, json, os, sys
b = json.load(open(sys.argv[1]))
assert b["state"] == "success" and b["builder"] == "b1" and b["attempts"] == 1, b
assert b["incremental"] is False and b["build_s"] >= 0 and b["release"] == "6.1.0" + b["build_id"], b
f = b["files"]
assert set(f) == {"bzImage", "System.map", "config", "meta", "build.log"}, f
for shared in sys.argv[2:]:
    d = os.path.join(shared, b["build_id"])
    for n in ("bzImage", "System.map", "config", "meta"):
        data = open(os.path.join(d, n), "rb").read()
        assert hashlib.sha256(data).hexdigest() == f[n]["sha256"] and len(data) == f[n]["size"], n
    assert b"KCFLAGS=-falign-functions=64" in open(os.path.join(d, "bzImage"), "rb").read()
    assert b"CONFIG_MEMCG=y" in open(os.path.join(d, "config"), "rb").read()
log = b["log"] or ""
assert "kernel make bzImage: exit 0" in log and "upload: bzImage: " in log, log[-1500:]
assert "build %d (attempt 1) on b1" % b["id"] in log, log[:1500]
PY

# --- a second candidate on the same base ---
# h1's copy of the base image is cut to a part of 50000 bytes, as a
# runner killed mid-download leaves it: h1 resumes it from the daemon
# (Range), h2 takes its copy from its cache.
bdir=$(ls -d "$PW_TMP"/h1/kernel/shared/-pwb"$build"-*)
head -c 50000 "$bdir/bzImage" >"$bdir/bzImage.part"
rm "$bdir/bzImage"
JOBS=
kfleet_submit kb "$BASE" "$CAND2"
kfleet_submit kb2 "$BASE" "$CAND2"
jobs2=$JOBS
# shellcheck disable=SC2086
kfleet_until 120 jobs_ended $jobs2 || { fail second_pairs_ended "see logs"; show_logs; }
check second_candidate_one_more_compile test "$(compiles b1)" = 3
check three_builds test "$(sql "SELECT count(*) FROM builds")" = 3
# shellcheck disable=SC2086
check_jobs $jobs2
python3 - "$PW_TMP" $jobs2 <<'PY' && pass base_resumed_on_h1_cached_on_h2 || fail base_resumed_on_h1_cached_on_h2 "$(cat "$PW_TMP"/job-*.json.b)"
import json, re, sys
d, ids = sys.argv[1], sys.argv[2:]
rows = [open("%s/job-%s.json.b" % (d, j)).read().split() for j in ids]
assert [r[1] for r in rows] == ["no", "no", "yes", "no"], rows
log = json.load(open("%s/job-%s.json" % (d, ids[0])))["log"]
m = re.search(r"image: downloaded (\d+) bytes from build \d+ \(resumed at 50000\)", log)
assert m and "image: bzImage: resuming at 50000 of " in log, log[-2000:]
PY
# The bench hosts never compiled: no make, no build tree, no clone.
for h in h1 h2; do
	if [ "$(compiles "$h")" = 0 ] && ! ls -d "$PW_TMP/$h"/kernel/build-* "$PW_TMP/$h"/kernel/trees/* >/dev/null 2>&1 &&
	    [ "$(ls "$PW_TMP/$h/kernel/shared" | wc -l)" = 3 ]; then
		pass "${h}_never_compiles"
	else
		fail "${h}_never_compiles" "compiles $(compiles "$h"); $(ls -R "$PW_TMP/$h/kernel" | head -20)"
	fi
done
# The builder kept one warm tree for the configuration.
check builder_one_warm_tree test "$(ls -d "$PW_TMP"/b1/kernel/build-* | wc -l)" = 1
for n in b1 h1 h2; do stop_pid "${PIDS[$n]}" 2>/dev/null; done
finish
