#!/usr/bin/env bash
# fio in a nested memcg with memory_max: the runner creates the cgroup
# below its own, sets the limit (v1 memory.limit_in_bytes, v2 memory.max),
# starts fio inside it, and the run's telemetry shows the limit at work:
# 96 MiB of buffered writes in a 32 MiB memcg peak at or under 32 MiB and
# hit the limit (v1 failcnt, v2 events.max).  Then the cgroup is gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

command -v fio >/dev/null || { fail fio_installed "fio missing (make deps)"; finish; }
CG=/pwe2e-$$
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/fio-limit.yaml" <<YAML
name: fio-limit
parser: fio
command: [fio, --name=w, --rw=write, --bs=1M, --size=96M,
          "--directory={workdir}", --output-format=json, --ioengine=psync]
hosts: [test]
matrix:
  cgroup: [$CG/fio]
memory_max: 32M
runs: 1
# max_runs = runs: no verdict re-queue re-creates the cgroup mid-check.
max_runs: 1
metrics:
  write_bw: {better: higher, min_effect: 50%}
timeout: 2m
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
start_runner r1
pw_admin submit --job fio-limit --base-param variant=a --cand-param variant=b \
    --json >"$PW_TMP/submit.json" 2>"$PW_TMP/submit.err" &&
    pass submit || fail submit "$(cat "$PW_TMP/submit.err")"
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
if wait_until 120 jobs_in_state success 2; then
	pass both_jobs_succeed
else
	fail both_jobs_succeed "$(pw jobs)"
	show_logs
fi
pw jobs show "$base" --json >"$PW_TMP/job.json"
if python3 - "$PW_TMP/job.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["runs"][0]
m = {x["name"]: x["value"] for x in r["metrics"]}
assert m["write_bw"] > 0, m
peak = m.get("memcg.peak_bytes")
assert peak is not None and 0 < peak <= 32 * 2**20, ("peak", peak)
hit = m.get("memcg.failcnt_delta", m.get("memcg.events.max"))
assert hit is not None and hit > 0, ("limit never hit", sorted(m))
assert m["memcg.file_delta"] <= 32 * 2**20
print("# fio in a 32 MiB memcg: peak %.1f MiB, limit hit %d times, "
      "write_bw %.0f" % (peak / 2**20, hit, m["write_bw"]))
PY
then
	pass limit_applied_and_seen_in_telemetry
else
	fail limit_applied_and_seen_in_telemetry "$(head -c 3000 "$PW_TMP/job.json")"
fi
cg_left() {
	find /sys/fs/cgroup/memory /sys/fs/cgroup/unified -maxdepth 4 -type d \
	    -name "pwe2e-$$" 2>/dev/null
}
# Teardown follows the job's last run; give a loaded machine a moment.
wait_until 20 test -z "$(cg_left)"
left=$(cg_left)
[ -z "$left" ] && pass cgroups_removed || fail cgroups_removed "$left"
finish
