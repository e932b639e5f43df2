#!/usr/bin/env bash
# check: parallel
# (No runner process and no host state: three runners' uploads are made
# through the runner API by this script.)
# A commit measured on several hosts, summarised as a kernel developer
# quotes it in a cover letter: the range of the change across hosts, and
# each CPU family's.  A real daemon watches a git tree; three runners
# register with the CPU models of two AMD EPYC 7xx2 (Zen 2, Rome) and one
# Xeon Platinum 8380 (Ice Lake-SP), a job runs on every host ("hosts:"),
# and a new commit is measured on each: about -14%, -15% and -26% (the
# Hodges-Lehmann changes -13.9%, -14.9% and -25.7%).  Checked on
# the commit page and its JSON, and that the page names each side of
# each pair: its commit, host, CPU model and family, runs and rounds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

web_tree_start 'hosts: [test]' r1 r2 r3
declare -A cand=([r1]=86 [r2]=85 [r3]=74)
web_register r1 "AMD EPYC 7702 64-Core Processor"
web_register r2 "AMD EPYC 7742 64-Core Processor"
web_register r3 "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz"
c2=$(commit "$SRC" mm/a.c 'mm: memcg: the <b>change</b>')
wait_tip master "$c2" || { fail second_sight "$(cat "$PW_TMP/trees.json")"; finish; }

# Each runner claims its jobs and uploads its runs: the bases around 100
# ops/s, the candidates around its own value.
for r in r1 r2 r3; do
	web_run_queue $r 100 "${cand[$r]}" ||
		{ fail "run_$r" "$(cat "$PW_TMP/body")"; finish; }
done
three() {
	[ "$(sql "SELECT count(*) FROM comparisons WHERE metric = 'ops' AND verdict IS NOT NULL")" = 3 ]
}
wait_for 60 three || { fail three_verdicts "$(sql "SELECT pair_id, verdict FROM comparisons")"; finish; }
pass three_verdicts

page across_hosts_by_family "/commit/$c2" '<h2>Across hosts</h2>' \
    '<li><b>kv.ops</b> -25.7% &hellip; -13.9% across 3 hosts, 2 CPU families <span class="muted">(3 regression)</span>' \
    '<li>Zen 2 (Rome): -14.9% &hellip; -13.9% on 2 hosts</li>' \
    '<li>Ice Lake-SP: -25.7% on 1 host</li>'
page commit_names_each_side "/commit/$c2" '<h2 id="sides">What was compared</h2>' \
    '<td>r1</td><td class="cpu">AMD EPYC 7702 64-Core Processor <span class="muted">(Zen 2 (Rome))</span></td>' \
    '<td>r2</td><td class="cpu">AMD EPYC 7742 64-Core Processor <span class="muted">(Zen 2 (Rome))</span></td>' \
    '<td>r3</td><td class="cpu">Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz <span class="muted">(Ice Lake-SP)</span></td>' \
    "<a class=\"mono\" href=\"/commit/$c1\">" '<td class="n">3</td><td class="n">1</td></tr>'
code=$(http GET "/api/v1/commits/$c2")
python3 - "$PW_TMP/body" <<'PY' && pass api_cpu_family ||
import json, sys
rows = json.load(open(sys.argv[1]))["comparisons"]
fam = {r["host"]: r["cpu_family"] for r in rows if r["metric"] == "ops"}
assert fam == {"r1": "Zen 2 (Rome)", "r2": "Zen 2 (Rome)", "r3": "Ice Lake-SP"}, fam
PY
	fail api_cpu_family "$code $(head -c 600 "$PW_TMP/body")"
python3 - "$PW_TMP/body" "$c1" "$c2" <<'PY' && pass api_sides ||
import json, sys
sides = json.load(open(sys.argv[1]))["sides"]
got = sorted((s["host"], s["role"], s["commit"], s["cpu_family"], s["runs"], s["rounds"]) for s in sides)
want = sorted((h, r, sys.argv[2] if r == "base" else sys.argv[3], f, 3, 1)
              for h, f in (("r1", "Zen 2 (Rome)"), ("r2", "Zen 2 (Rome)"), ("r3", "Ice Lake-SP"))
              for r in ("base", "candidate"))
assert got == want, got
PY
	fail api_sides "$(head -c 800 "$PW_TMP/body")"
finish
