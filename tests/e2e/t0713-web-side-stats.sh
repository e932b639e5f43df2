#!/usr/bin/env bash
# check: parallel
# (No runner process and no host state: the runs are uploaded through
# the runner API by this script, as a runner of a kernel job would.)
# What a kernel developer quotes beside a median (LKP's reports): each
# side's mean, sd and %stddev, the 95% interval as text, the runs of each
# side, and what the pair cost: its rounds and, for a kernel job, the
# boots each side took.  A real daemon watches a git tree; a kernel job
# (kernel: in its file) in 3 rounds of one run each is measured between
# two of its commits.  The base's ops are 10, 12, 14 (mean 12, sd 2,
# 16.7%), the candidate's 20, 22, 24 (mean 22, sd 2, 9.1%); each run
# records kernel.round and kernel.boot as the runner does (one boot a
# round).  Checked on the pair's JSON, the commit's JSON and both pages,
# with the commit's hostile subject escaped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/app
src_init "$SRC"
c1=$(g "$SRC" rev-parse HEAD)
c2=$(commit "$SRC" README '<script>alert(1)</script> memcg: "x" & y')

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >"$PW_DIR/jobs/kb.yaml" <<'YAML'
name: kb
parser: keyvalue
command: [echo, "ops=1"]
kernel:
  config: defconfig
runs: 3
max_runs: 3
rounds: 3
metrics:
  ops: {better: higher, min_effect: 2%}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c2" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }

[ "$(http POST /api/v1/submit "$(token_of admin)" \
    "{\"job\":\"kb\",\"base\":{\"tree\":\"app\",\"commit\":\"$c1\"},\"candidate\":{\"tree\":\"app\",\"commit\":\"$c2\"}}")" = 201 ] ||
	{ fail submit "$(cat "$PW_TMP/body")"; finish; }
pair=$(jfield pairs.0.pair_id <"$PW_TMP/body")
[ "$(http POST /api/v1/runners/register "$(token_of r1)" \
    '{"name":"r1","labels":["test"],"inventory":{"cgroup":"v2"}}')" = 200 ] ||
	{ fail register "$(cat "$PW_TMP/body")"; finish; }

# One claim is one round (one boot of a kernel job): upload the runs the
# claim asks for, tagged with the claim's round as kernel.round and
# kernel.boot, and finish; until nothing is left.
claims=0
while code=$(http POST /api/v1/jobs/claim "$(token_of r1)" '{"wait_s":1}') &&
    [ "$code" = 200 ] && ((claims < 12)); do
	claims=$((claims + 1))
	read -r j role runs round ndone < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["job"]
print(j["id"], j["role"], j["runs"], j.get("round", 0), len(j["done_runs"]))' "$PW_TMP/body")
	for ((i = ndone; i < runs; i++)); do
		if [ "$role" = base ]; then v=$((10 + 2 * i)); else v=$((20 + 2 * i)); fi
		code=$(http POST "/api/v1/jobs/$j/runs" "$(token_of r1)" \
		    "{\"index\":$i,\"status\":\"ok\",\"duration_s\":1,\"metrics\":[{\"name\":\"ops\",\"value\":$v,\"unit\":\"ops/s\",\"better\":\"higher\"},{\"name\":\"kernel.round\",\"value\":$round,\"unit\":\"\",\"better\":\"info\"},{\"name\":\"kernel.boot\",\"value\":$round,\"unit\":\"\",\"better\":\"info\"}],\"raw\":\"ops=$v\"}")
		[ "$code" = 200 ] || [ "$code" = 201 ] ||
			fail "upload_${j}_$i" "$code $(cat "$PW_TMP/body")"
	done
	http POST "/api/v1/jobs/$j/finish" "$(token_of r1)" '{"status":"success"}' >/dev/null
done
check six_claims_three_rounds_a_side [ "$claims" = 6 ]

has_verdict() {
	[ "$(http GET "/api/v1/pairs/$pair")" = 200 ] &&
	    python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert any(c["metric"] == "ops" and c["final"] for c in o["comparisons"])' "$PW_TMP/body" 2>/dev/null
}
wait_for 60 has_verdict || { fail verdict "$(cat "$PW_TMP/body")"; show_logs; finish; }
pass verdict

# The pair's JSON: the verdict's means and sds, the rounds and boots.
cp "$PW_TMP/body" "$PW_TMP/pair.json"
python3 - "$PW_TMP/pair.json" <<'PY' && pass api_pair_side_stats ||
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["comparisons"] if c["metric"] == "ops"][0]
near = lambda a, b: a is not None and abs(a - b) < 1e-6
assert c["n_base"] == 3 and c["n_cand"] == 3, c
assert near(c["base_mean"], 12) and near(c["base_sd"], 2), c
assert near(c["base_sd_pct"], 100 / 6), c
assert near(c["cand_mean"], 22) and near(c["cand_sd"], 2), c
assert near(c["cand_sd_pct"], 200 / 22), c
for side in ("base", "candidate"):
    assert o[side]["rounds"] == 3 and o[side]["boots"] == 3, o[side]
PY
	fail api_pair_side_stats "$(cat "$PW_TMP/pair.json")"
# The interval as the pages must write it ("[-1.20%, +3.40%]").
ci=$(python3 -c '
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["comparisons"] if c["metric"] == "ops"][0]
lo, hi = sorted((c["ci_low"], c["ci_high"]))
print("[%+.2f%%, %+.2f%%]" % (lo, hi))' "$PW_TMP/pair.json")

means=('<td class="n mean">12 &plusmn;2 <span class="muted">(16.7%)</span></td>'
    '<td class="n mean">22 &plusmn;2 <span class="muted">(9.1%)</span></td>'
    "<span class=\"ci-text\">$ci</span>" '<td class="n">3 / 3</td>')
page pair_page_side_stats "/pair/$pair" "${means[@]}" \
    '<th scope="row">base</th>' '</td><td class="n">3</td><td class="n">3</td></tr>' \
    '<tr><th>boots</th><td class="cost">3 per side <span class="muted">(6 in all;'
page commit_page_side_stats "/commit/$c2" "${means[@]}" \
    '&lt;script&gt;alert(1)&lt;/script&gt; memcg: &quot;x&quot; &amp; y'

# The commit's JSON rows carry them too.
code=$(http GET "/api/v1/commits/$c2")
[ "$code" = 200 ] && python3 - "$PW_TMP/body" <<'PY' && pass api_commit_side_stats ||
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["comparisons"] if c["metric"] == "ops"][0]
near = lambda a, b: a is not None and abs(a - b) < 1e-6
assert near(c["base_mean"], 12) and near(c["base_sd_pct"], 100 / 6), c
assert near(c["cand_mean"], 22) and near(c["cand_sd"], 2), c
assert c["base_n"] == 3 and c["cand_n"] == 3, c
PY
	fail api_commit_side_stats "$code $(head -c 600 "$PW_TMP/body")"
finish
