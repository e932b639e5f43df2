#!/usr/bin/env bash
# boot: qemu with a real daemon and runner and a real kernel: the tiny
# kernel make check-kernel built and cached ($KERNEL_CACHE/tiny; SKIP when
# it is absent -- run make check-kernel once).  The image is put in the
# runner's kernel cache for this job's (commit, config), so nothing is
# built; the runner makes the initramfs, boots qemu twice (rounds: 2),
# and the guest runs the page-fault loop in the nested memcg /a/b with
# memory.max, through the real cgroup v2 placement and telemetry code.
# The candidate is another commit whose cache entry holds the same image
# (as a cache that handed the base's kernel to the candidate would): the
# pair API and page show the build the runner logged on both sides and
# warn that the candidate's kernel was not measured.  KVM or TCG is
# decided by the first of the four boots and logged once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

TINY=${KERNEL_CACHE:-/var/tmp/perfwatch-kernel}/tiny
if [ ! -f "$TINY/bzImage" ] || [ ! -x "$TINY/gen_init_cpio" ] ||
    ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ]; then
	echo "SKIP qemu_job_runs_in_guest: no cached tiny kernel in $TINY (make check-kernel), or no qemu/busybox-static"
	finish
fi

src_init "$PW_TMP/linux"
SHA=$(g "$PW_TMP/linux" rev-parse HEAD)
CAND=$(commit "$PW_TMP/linux" mm/memcontrol.c "memcg: the candidate")
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/kq.yaml" <<'YAML'
name: kq
parser: will-it-scale
command: [perfwatch-pagefault, -s, "1", -m, "8"]
kernel:
  config: tinyconfig
  fragment: [CONFIG_MEMCG=y]
  boot_timeout: 2m
matrix:
  cgroup: [/a/b]
memory_max: 64M
runs: 2
max_runs: 2
rounds: 2
metrics:
  average: {better: higher, min_effect: 50%}
timeout: 1m
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
KT=$PW_TMP/kernel
key=$(python3 -c 'import hashlib; print(hashlib.sha256(b"config tinyconfig\nalign -falign-functions=64\nfragment CONFIG_MEMCG=y\n").hexdigest()[:16])')
mkdir -p "$KT/images"
cp -a "$TINY" "$KT/images/$SHA-$key"
cp -a "$TINY" "$KT/images/$CAND-$key"
BID=$(awk '$1 == "build_id" {print $2}' "$TINY/meta")
REL=$(awk '$1 == "release" {print $2}' "$TINY/meta")
runner_config r1 "kernel_tree: $KT" "guest_dir: $PW_BIN/guest"
sed -i 's/^boot: none/boot: qemu/' "$PW_TMP/r1/runner.yaml"
start_runner r1

http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"kq\",
    \"base\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"},
    \"candidate\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$CAND\"}}" >"$PW_TMP/code"
check submit [ "$(cat "$PW_TMP/code")" = 201 ]
base=$(jfield pairs.0.base_job <"$PW_TMP/body")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
pair=$(jfield pairs.0.pair_id <"$PW_TMP/body")
ended() { [ "$(job_state "$1")" = success ] || [ "$(job_state "$1")" = failed ]; }
wait_until 600 ended "$base"
wait_until 600 ended "$cand"
http GET "/api/v1/jobs/$base" >/dev/null
python3 - "$PW_TMP/body" "$BID" "$REL" <<'PY' && pass qemu_job_runs_in_guest || { fail qemu_job_runs_in_guest "$(head -c 3000 "$PW_TMP/body")"; show_logs; }
import json, re, sys
j = json.load(open(sys.argv[1]))
bid, rel = sys.argv[2], sys.argv[3]
assert j["state"] == "success", (j["state"], j["error"], j["log"][-2000:])
assert "cached=yes" in j["log"] and "build_id=%s " % bid in j["log"], j["log"][-2000:]
boots = re.findall(r"boot (\d+) \(round (\d+)\): qemu (KVM|TCG), 1 runs, [0-9.]+ s; guest: Linux version (\S+)", j["log"])
assert [(b[0], b[1]) for b in boots] == [("1", "1"), ("2", "2")], boots
assert all(b[3] == rel for b in boots), boots
runs = sorted(j["runs"], key=lambda r: r["index"])
assert [r["index"] for r in runs] == [0, 1], runs
for i, r in enumerate(runs):
    m = {x["name"]: x["value"] for x in r["metrics"]}
    assert r["status"] == "ok" and m["average"] > 0, r
    assert m["kernel.round"] == i + 1 and m["kernel.boot"] == i + 1, m
    assert m["kernel.kvm"] in (0, 1), m
    # cgroup v2 in the guest: the nested memcg's memory.stat deltas.
    assert any(k.startswith("memcg.") for k in m), sorted(m)
print("boots:", boots)
PY
# What the runner logged of each side's kernel is what the pair API and
# page say, with the same-build warning.
for side in base cand; do
	http GET "/api/v1/jobs/${!side}" >/dev/null
	cp "$PW_TMP/body" "$PW_TMP/job-$side.json"
done
http GET "/api/v1/pairs/$pair" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/pair.json"
curl -s -o "$PW_TMP/pair.html" "$PW_URL/pair/$pair"
python3 - "$PW_TMP/job-base.json" "$PW_TMP/job-cand.json" "$PW_TMP/pair.json" "$PW_TMP/pair.html" <<'PY' && pass pair_shows_both_kernels || { fail pair_shows_both_kernels "$(head -c 3000 "$PW_TMP/pair.json")"; show_logs; }
import html, json, re, sys
p = json.load(open(sys.argv[3]))
page = html.unescape(open(sys.argv[4]).read())
for f, side in ((sys.argv[1], "base"), (sys.argv[2], "candidate")):
    j = json.load(open(f))
    assert j["state"] == "success", (side, j["state"], j["error"])
    m = re.search(r"kernel: build_id=(\S+) release=(\S+) config_sha256=([0-9a-f]{64}) cached=(yes|no)", j["log"])
    assert m, j["log"][-2000:]
    bid, rel, cfg, cached = m.groups()
    k = p[side]["kernel"]
    assert k == {"build_id": bid, "release": rel, "config_sha256": cfg,
                 "boot": "qemu", "cached": cached, "runs": 2}, (side, k, m.groups())
    line = "kernel: %s build %s config %s (boot qemu, cached %s)" % (rel, bid, cfg[:12], cached)
    assert line in page, (line, re.findall(r"kernel: [^<]*", page))
w = p["kernel_warning"]
assert w and "same kernel build %s" % p["base"]["kernel"]["build_id"] in w, w
assert "kernel</span> warning: " + w in page, re.findall(r"warning: [^<]*", page)
PY
# KVM or TCG is decided once per runner process (runners/qemu.h), by its
# first boot, and logged once: four boots, one decision, one accelerator.
python3 - "$PW_TMP/job-base.json" "$PW_TMP/job-cand.json" "$PW_TMP/r1/runner.log" <<'PY' && pass qemu_accel_decided_once || { fail qemu_accel_decided_once "see above"; show_logs; }
import json, re, sys
logs = "".join(json.load(open(f))["log"] for f in sys.argv[1:3])
runner = open(sys.argv[3], errors="replace").read()
said = re.findall(r"boot \d+: qemu (KVM|TCG)[^\n]*; every boot of this runner uses it", logs)
rsaid = re.findall(r"qemu: (KVM|TCG)[^\n]*; every boot of this runner uses it", runner)
boots = re.findall(r"boot \d+ \(round \d+\): qemu (KVM|TCG)", logs)
print("accel:", said, "runner log:", rsaid, "boots:", boots)
assert len(said) == 1 and len(rsaid) == 1, (said, rsaid)
assert len(boots) == 4 and set(boots) == {said[0]} and rsaid[0] == said[0], boots
# A KVM that failed once is not tried again: at most one failed try.
assert logs.count("qemu with KVM failed") <= 1, logs.count("qemu with KVM failed")
PY
finish
