#!/usr/bin/env bash
# The memcg tax end to end: a job with `cgroup: [root, /pwtax-PID]` on two
# commits of a small key-value program, through the daemon and a real
# runner that places the benchmark in the nested memcg.  The program
# reads /proc/self/cgroup: in the nested memcg, the candidate commit
# reports 0.7 of the throughput it reports at root; the base commit the
# same in both.  The numbers are made by construction (the machine's
# noise is far above any real memcg effect, docs/NOISE.md), so the
# test knows the answer: base tax ~1.0, candidate tax ~0.7, a
# memcg_tax.ops regression on the nested pair, root throughput
# unchanged.  Checked: placement (the program saw the nested cgroup),
# the tax comparison and its numbers against the runs (per-run ratios),
# no tax of latency or telemetry nor on the root pair, the regression in
# /api/v1/regressions and on the commit page, the tax and the charge-path
# share next to throughput in /api/v1/comparisons, and `perfwatch
# memcg-tax` giving the daemon's numbers.  Where the runner has no usable
# cgroups, the test passes with that reason and checks nothing else.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }
CG=/pwtax-$$
SRC=$PW_TMP/kv
mkdir -p "$SRC"
git -c init.defaultBranch=master init -q "$SRC"
printf 'kv: kv.c tax.h\n\tcc -O1 -o kv kv.c\n' >"$SRC/Makefile"
cat >"$SRC/kv.c" <<'C'
/* A key-value workload whose reported throughput is made by construction:
 * 100000 ops/s times NESTED_FACTOR when this process is in a memcg named
 * pwtax-*, times a small jitter that depends on the run (a counter in
 * the job's scratch directory, argv[1]) and the placement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tax.h"

#define SLOTS (1u << 20)

int
main(int argc, char **argv)
{
	unsigned *keys = calloc(SLOTS, sizeof(*keys));
	char path[4096];
	long run = 0;
	unsigned long i, hits = 0;
	char line[4096];
	int nested = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");
	double jitter, ops;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/pwtax-") != NULL)
			nested = 1;
	if (f)
		fclose(f);
	if (keys == NULL || argc < 2)
		return 1;
	/* The run counter of this job, in its scratch directory. */
	snprintf(path, sizeof(path), "%s/run", argv[1]);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%ld", &run) != 1)
			run = 0;
		fclose(f);
	}
	if ((f = fopen(path, "w")) == NULL)
		return 1;
	fprintf(f, "%ld\n", ++run);
	fclose(f);
	/* Puts then gets: real work that charges memory to the memcg. */
	for (i = 0; i < 4 * SLOTS; i++)
		keys[(i * 2654435761u) & (SLOTS - 1)] = (unsigned)i + 1;
	for (i = 0; i < 4 * SLOTS; i++)
		hits += keys[(i * 40503u) & (SLOTS - 1)] != 0;
	jitter = 1 + 0.01 * ((run * 7 + nested * 3) % 5 - 2);
	ops = 100000.0 * (nested ? NESTED_FACTOR : 1.0) * jitter;
	printf("ops=%.3f\nlat_us=%.3f\nnested=%d\nhits=%lu\n", ops, 1e6 / ops,
	    nested, hits);
	free(keys);
	return 0;
}
C
echo '#define NESTED_FACTOR 1.0' >"$SRC/tax.h"
g "$SRC" add -A
g "$SRC" commit -qm "kv: a key-value workload"
c1=$(g "$SRC" rev-parse HEAD)
echo '#define NESTED_FACTOR 0.7' >"$SRC/tax.h"
g "$SRC" commit -qam "kv: charge nested memcgs twice (0.7 of root)"
c2=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >"$PW_DIR/jobs/kvtax.yaml" <<YAML
# Made-up throughput with a 30% nested effect: min_effect 10%.
name: kvtax
parser: keyvalue
build: [make]
command: ["{workdir}/kv", "{workdir}"]
hosts: [test]
matrix:
  cgroup: [root, $CG]
runs: 5
max_runs: 5
profile: true
metrics:
  ops: {better: higher, min_effect: 10%}
  lat_us: {better: lower, min_effect: 10%}
timeout: 1m
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
start_runner r1
if ! wait_until 30 bash -c "'$PW_BIN/perfwatch' hosts --server '$PW_URL' --json | grep -q '\"r1\"'"; then
	fail runner_registers "r1 not in /hosts"
	show_logs
	finish
fi
pw hosts --json >"$PW_TMP/hosts.json"
cgk=$(jfield hosts.0.inventory.cgroup <"$PW_TMP/hosts.json")
if [ "$cgk" = none ]; then
	# Truly no cgroups on this host: nothing to measure.
	pass "skipped_no_cgroups ($(jfield hosts.0.inventory.cgroup_reason <"$PW_TMP/hosts.json"))"
	finish
fi

code=$(http POST /api/v1/submit "$PW_ADMIN" \
    "{\"job\":\"kvtax\",\"base\":{\"tree\":\"app\",\"commit\":\"$c1\"},\"candidate\":{\"tree\":\"app\",\"commit\":\"$c2\"}}")
cp "$PW_TMP/body" "$PW_TMP/submit.json"
[ "$code" = 201 ] && pass submit || { fail submit "$code $(cat "$PW_TMP/body")"; finish; }
read -r rootp nestp < <(python3 - "$PW_TMP/submit.json" "$CG" <<'PY'
import json, sys
p = {x["point"]: x["pair_id"] for x in json.load(open(sys.argv[1]))["pairs"]}
print(p["cgroup=root"], p["cgroup=" + sys.argv[2]])
PY
)

# Both pairs final, the tax with them.
# Stops waiting when a job failed.
analysed() {
	[ "$(sql "SELECT count(*) FROM pairs WHERE analysed = 1")" = 2 ] ||
	    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('failed', 'cancelled')")" != 0 ]
}
if wait_until 400 analysed &&
    [ "$(sql "SELECT count(*) FROM pairs WHERE analysed = 1")" = 2 ]; then
	pass both_pairs_final
else
	fail both_pairs_final "$(pw jobs)"
	show_logs
	finish
fi
http GET "/api/v1/comparisons?commit=$c2" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/cmp.json"
for p in "$rootp" "$nestp"; do
	http GET "/api/v1/pairs/$p" >/dev/null
	cp "$PW_TMP/body" "$PW_TMP/pair$p.json"
	for role in base candidate; do
		id=$(jfield "$role.id" <"$PW_TMP/pair$p.json")
		pw jobs show "$id" --json >"$PW_TMP/job$id.json"
	done
done

# Placement: the candidate's program saw the nested memcg on every run
# of the nested point (0.7 of 100000, jitter +-2%) and never at root;
# the base's is 100000 everywhere.
python3 - "$PW_TMP" "$rootp" "$nestp" <<'PY' && pass placement_seen_by_program || fail placement_seen_by_program "see above"
import json, sys
d, rootp, nestp = sys.argv[1], sys.argv[2], sys.argv[3]
for p, nested in ((rootp, False), (nestp, True)):
    pair = json.load(open("%s/pair%s.json" % (d, p)))
    for role in ("base", "candidate"):
        j = json.load(open("%s/job%s.json" % (d, pair[role]["id"])))
        runs = [r for r in j["runs"] if r["index"] < j["max_runs"]]
        assert len(runs) == 5 and all(r["status"] == "ok" for r in runs), j["runs"]
        want = 70000 if nested and role == "candidate" else 100000
        for r in runs:
            m = {x["name"]: x["value"] for x in r["metrics"]}
            assert abs(m["ops"] / want - 1) <= 0.021, (p, role, r["index"], m)
            # Telemetry of the placement the runner made.
            assert "memcg.usage_delta" in m, sorted(m)
PY
python3 - "$PW_TMP" "$CG" <<'PY' && pass job_log_names_cgroup || fail job_log_names_cgroup "no $CG line in the job logs"
import glob, json, sys
logs = " ".join(json.load(open(f)).get("log") or "" for f in glob.glob(sys.argv[1] + "/job*.json"))
assert sys.argv[2] + " (v" in logs, logs[:2000]
PY

# The tax: one row, on the nested pair, with the known answer, and equal
# to the median of the per-run ratios computed here from the runs.
python3 - "$PW_TMP" "$rootp" "$nestp" <<'PY' && pass memcg_tax_regression || fail memcg_tax_regression "$(cat "$PW_TMP/pair$nestp.json" | head -c 3000)"
import json, statistics, sys
d, rootp, nestp = sys.argv[1], sys.argv[2], sys.argv[3]
rp = json.load(open("%s/pair%s.json" % (d, rootp)))
np_ = json.load(open("%s/pair%s.json" % (d, nestp)))
assert not [c for c in rp["comparisons"] if c["metric"].startswith("memcg_tax.")], rp["comparisons"]
tax = [c for c in np_["comparisons"] if c["metric"].startswith("memcg_tax.")]
assert [c["metric"] for c in tax] == ["memcg_tax.ops"], [c["metric"] for c in tax]
t = tax[0]
assert t["verdict"] == "regression" and t["final"] and t["better"] == "higher", t
assert t["n_base"] == 5 and t["n_cand"] == 5, t
assert 0.95 < t["base_median"] < 1.05 and 0.65 < t["cand_median"] < 0.75, t
assert -35 < t["change_pct"] < -25, t
def runs(job, metric):
    j = json.load(open("%s/job%s.json" % (d, job)))
    return {r["index"]: m["value"] for r in j["runs"] if r["index"] < j["max_runs"]
            for m in r["metrics"] if m["name"] == metric}
for role, key in (("base", "base_median"), ("candidate", "cand_median")):
    n, r = runs(np_[role]["id"], "ops"), runs(rp[role]["id"], "ops")
    want = statistics.median(n[i] / r[i] for i in n)
    assert abs(t[key] - want) < 1e-9, (role, t[key], want)
# Throughput at root did not move; nested it did.
c = {x["metric"]: x for x in rp["comparisons"]}
assert c["ops"]["verdict"] == "unchanged", c["ops"]
print("# memcg_tax.ops: base %.4f, candidate %.4f (%+.1f%%), p %s: %s" % (
    t["base_median"], t["cand_median"], t["change_pct"], t["p"], t["verdict"]))
PY

# /api/v1/comparisons: the tax row, and the tax and charge-path share
# next to the throughput row of the same pair.
python3 - "$PW_TMP" "$rootp" "$nestp" <<'PY' && pass comparisons_api || fail comparisons_api "$(head -c 3000 "$PW_TMP/cmp.json")"
import json, statistics, sys
d, rootp, nestp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = json.load(open("%s/cmp.json" % d))["comparisons"]
by = {(r["pair_id"], r["metric"]): r for r in rows}
t = by[(nestp, "memcg_tax.ops")]
assert t["verdict"] == "regression", t
assert t["better"] == "higher" and t["unit"] == "ratio", t
assert t["base_n"] == 5 and t["cand_n"] == 5, t
ops = by[(nestp, "ops")]
assert abs(ops["memcg_tax_pct"] - (t["cand_median"] - 1) * 100) < 1e-6, ops
assert abs(ops["memcg_tax_base_pct"] - (t["base_median"] - 1) * 100) < 1e-6, ops
assert ops["memcg_tax_verdict"] == "regression", ops
# No tax at root, none on latency.
assert by[(rootp, "ops")]["memcg_tax_pct"] is None, by[(rootp, "ops")]
assert by[(nestp, "lat_us")]["memcg_tax_pct"] is None
# The charge-path share: the profiled run's metric, or unknown (null).
for p in (rootp, nestp):
    pair = json.load(open("%s/pair%d.json" % (d, p)))
    for role, key in (("candidate", "charge_path_pct"), ("base", "charge_path_base_pct")):
        j = json.load(open("%s/job%s.json" % (d, pair[role]["id"])))
        v = [m["value"] for r in j["runs"] if "profile" in r
             for m in r["metrics"] if m["name"] == "memcg.charge_path_share_pct"]
        got = by[(p, "ops")][key]
        if v:
            assert abs(got - statistics.median(v)) < 1e-9, (p, role, got, v)
        else:
            prof = [r["profile"] for r in j["runs"] if "profile" in r]
            assert got is None, (p, role, got, prof)
            print("# pair %d %s: charge-path share unknown: %s" % (
                p, role, prof[0].get("reason") if prof else "no profiled run"))
    print("# pair %d ops: charge path %s%% (base %s%%)" % (
        p, by[(p, "ops")]["charge_path_pct"], by[(p, "ops")]["charge_path_base_pct"]))
PY

# A regression like any other: listed, and on the commit page.
http GET "/api/v1/regressions?bench=kvtax" >/dev/null
python3 - "$PW_TMP/body" "$nestp" "$c2" <<'PY' && pass regression_listed || fail regression_listed "$(head -c 2000 "$PW_TMP/body")"
import json, sys
rs = json.load(open(sys.argv[1]))["regressions"]
m = [r for r in rs if r["metric"] == "memcg_tax.ops"]
assert len(m) == 1, rs
r = m[0]
assert r["pair_id"] == int(sys.argv[2]) and r["sha"] == sys.argv[3], r
assert r["state"] == "new" and r["verdict"] == "regression", r
PY
code=$(http GET "/commit/$c2")
python3 - "$PW_TMP/body" <<'PY' && [ "$code" = 200 ] && pass commit_page || fail commit_page "$code $(head -c 3000 "$PW_TMP/body")"
import re, sys
h = open(sys.argv[1]).read()
assert "memcg tax" in h and "charge path" in h
def rows(part):
    return re.findall(r"<tr>.*?</tr>", part, re.S)
def section(title):
    return h.split("<h2>%s</h2>" % title, 1)[1].split("<h2>", 1)[0]
# The tax regression is among what changed ...
tax = [r for r in rows(section("What changed")) if ">memcg_tax.ops</a>" in r]
assert len(tax) == 1 and "v-regression" in tax[0], tax
# ... and in the memcg section, where the nested point's throughput row
# (under its group header) has its tax and the base's beside it.
memcg = section("memcg")
tax = [r for r in rows(memcg) if ">memcg_tax.ops</a>" in r]
assert len(tax) == 1 and "v-regression" in tax[0], tax
nested = memcg.split("pwtax-", 1)[1].split('<tr class="grp">', 1)[0]
ops = [r for r in rows(nested) if ">ops</a>" in r]
assert len(ops) == 1, ops
assert re.search(r"-3\d\.\d%</span> <span class=\"muted\">base [-+]\d\.\d%", ops[0]), ops[0]
PY

# The CLI gives the daemon's numbers, per kernel.
for role in base candidate; do
	key=$([ $role = base ] && echo base_median || echo cand_median)
	rj=$(jfield "$role.id" <"$PW_TMP/pair$rootp.json")
	nj=$(jfield "$role.id" <"$PW_TMP/pair$nestp.json")
	if pw memcg-tax "$rj" "$nj" --json >"$PW_TMP/cli$role.json" 2>"$PW_TMP/cli.err" &&
	    python3 - "$PW_TMP/cli$role.json" "$PW_TMP/pair$nestp.json" "$key" <<'PY'
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["memcg_tax"]}
c = [c for c in json.load(open(sys.argv[2]))["comparisons"] if c["metric"] == "memcg_tax.ops"][0]
assert abs(t["memcg_tax.ops"]["value"] - c[sys.argv[3]]) < 1e-9, (t, c)
assert t["memcg_tax.ops"]["runs"] == 5
PY
	then
		pass "cli_matches_daemon_$role"
	else
		fail "cli_matches_daemon_$role" "$(cat "$PW_TMP/cli.err" "$PW_TMP/cli$role.json")"
	fi
done
grep -q "memcg tax row(s), 1 of them regression" "$PW_DIR/daemon.log" &&
    pass daemon_logs_tax || fail daemon_logs_tax "$(grep verdict: "$PW_DIR/daemon.log")"
stop_pid "$PW_DAEMON_PID"
finish
