#!/usr/bin/env bash
# Adaptive runs with the real runner: a pair whose two runs per side are
# inconclusive is re-queued for 3 runs (max_runs); the runner claims each
# job again, runs only index 2 (done_runs), and the final verdict has 3
# runs a side.  The benchmark prints made-up values (1000 and 1400 in turn,
# a counter in a file), identical on both sides, so the verdict can only
# be inconclusive: no timing is measured (docs/NOISE.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1
cat >>"$PW_TMP/d/daemon.yaml" <<'YAML'
scheduler:
  lease: 30s
  claim_wait: 2s
YAML
mkdir -p "$PW_TMP/ctr"
cat >"$PW_DIR/jobs/alt.yaml" <<'YAML'
name: alt
parser: keyvalue
command: [sh, -c, 'n=$(cat "$0/n" 2>/dev/null || echo 0); echo $((n + 1)) >"$0/n"; echo ops=$((1000 + n % 2 * 400))', CTR]
runs: 2
max_runs: 3
# One claim a side: the counter's values alternate in the order the runs
# happen, which with rounds would depend on each round's order.
rounds: 1
timeout: 30s
metrics:
  ops: {better: higher, min_effect: 1%}
YAML
sed -i "s|CTR|$PW_TMP/ctr|" "$PW_DIR/jobs/alt.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
# No cgroup telemetry: this test counts the pair's metrics (ops and the
# runner's host.other_cpu_pct, which a run shorter than a clock tick of
# /proc/stat goes without).
PERFWATCH_NO_CGROUPS=1 start_runner r1

pw_admin submit --job alt --json >"$PW_TMP/submit.json" || fail submit "exit $?"
pair=$(jfield pairs.0.pair_id <"$PW_TMP/submit.json")
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")
cand=$(jfield pairs.0.candidate_job <"$PW_TMP/submit.json")

final() {
	http GET "/api/v1/pairs/$pair" >/dev/null &&
	    [ "$(jfield comparisons.0.final <"$PW_TMP/body")" = true ]
}
if wait_until 120 final; then
	pass final_verdict
else
	fail final_verdict "$(head -c 600 "$PW_TMP/body")"
	show_logs
	finish
fi
python3 - "$PW_TMP/body" <<'PY' && pass three_runs_a_side || fail three_runs_a_side "$(head -c 1500 "$PW_TMP/body")"
import json, sys
p = json.load(open(sys.argv[1]))
rows = {c["metric"]: c for c in p["comparisons"]}
assert set(rows) <= {"host.other_cpu_pct", "ops"}, rows
c = rows["ops"]
assert c["n_base"] == 3 and c["n_cand"] == 3, c
assert c["verdict"] == "inconclusive", c
o = rows.get("host.other_cpu_pct")
assert o is None or (o["verdict"] == "info" and o["n_base"] <= 3 and o["n_cand"] <= 3), o
for side in ("base", "candidate"):
    j = p[side]
    assert j["state"] == "success" and j["runs"] == 3 and j["runs_done"] == 3, j
PY
for id in "$base" "$cand"; do
	http GET "/api/v1/jobs/$id" >/dev/null
	python3 - "$PW_TMP/body" <<'PY' && pass "job${id}_runs_0_1_2_once" || fail "job${id}_runs_0_1_2_once" "$(head -c 800 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert sorted(r["index"] for r in j["runs"]) == [0, 1, 2], j["runs"]
assert all(r["status"] == "ok" and r["host"] == "r1" for r in j["runs"]), j["runs"]
PY
done
# Six runs in all: the re-claimed jobs ran index 2 only.
check six_benchmark_runs [ "$(cat "$PW_TMP/ctr/n")" = 6 ]
grep -Eq "verdict: pair $pair: 1 inconclusive of [12] metrics, both jobs re-queued for 3 runs" \
    "$PW_DIR/daemon.log" && pass requeue_logged || fail requeue_logged "$(grep verdict "$PW_DIR/daemon.log")"
finish
