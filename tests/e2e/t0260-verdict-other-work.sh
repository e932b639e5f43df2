#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: the uploads are made-up values,
# so a test beside it changes no verdict.)
# Other work on the host (docs/ANALYSIS.md): a real daemon judges two
# pairs given the same uploads over HTTP, 12 runs a side, the candidate
# 5 % slower, each run's ops moved 15 % by the share of the host's CPU
# that other work used during it (host.other_cpu_pct, 20 or 60 %, as
# the runner reports it; as many busy runs on each side).  The default
# job judges adjusted for it: a regression of about -5 %, saying so in
# its note.  The same job with adjust_other_work: false sees the 15 %
# spread as noise: not a regression.
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
hand_daemon_config "$D" r1
for j in ow owoff; do
	cat >"$D/jobs/$j.yaml" <<EOF2
name: $j
parser: keyvalue
command: [echo, "ops=1"]
runs: 12
max_runs: 12
rounds: 1
metrics:
  ops: {better: higher, min_effect: 2%}
EOF2
done
echo "adjust_other_work: false" >>"$D/jobs/owoff.yaml"
hand_start_daemon "$D"

# body SIDE I: run I's upload; ops = level * exp(-0.004 z) * (1 + noise).
body() {
	python3 - "$1" "$2" <<'PY'
import json, math, sys
side, i = sys.argv[1], int(sys.argv[2])
zb = [20, 60, 21, 59, 62, 19, 58, 22, 61, 18, 63, 20]
zc = [61, 19, 60, 22, 20, 58, 21, 62, 18, 59, 23, 60]
sp = [0, 4, -3, 6, -5, 2, -1, 3, -4, 5, -2, 1]
z = (zb if side == "b" else zc)[i]
level = 1000 if side == "b" else 950
ops = level * math.exp(-0.004 * z) * (1 + sp[(i + (5 if side == "c" else 0)) % 12] / 1000)
print(json.dumps({"index": i, "status": "ok", "metrics": [
    {"name": "ops", "value": round(ops, 3), "unit": "ops/s", "better": "higher"},
    {"name": "host.other_cpu_pct", "value": z, "unit": "%", "better": "info"}]}))
PY
}

claim() {
	[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":2}')" = 200 ] &&
	    [ "$(jfield job.id <"$PW_TMP/body")" = "$1" ]
}

run_side() {	# JOB SIDE
	local i
	claim "$1" || return 1
	for ((i = 0; i < 12; i++)); do
		[ "$(http POST "/api/v1/jobs/$1/runs" "$R1" "$(body "$2" $i)")" = 201 ] ||
			return 1
	done
	[ "$(http POST "/api/v1/jobs/$1/finish" "$R1" '{"status":"success"}')" = 200 ]
}

pair() {	# JOB: prints the pair id
	local p b c
	[ "$(http POST /api/v1/submit "$ADM" "{\"job\":\"$1\"}")" = 201 ] || return 1
	p=$(jfield pairs.0.pair_id <"$PW_TMP/body")
	b=$(jfield pairs.0.base_job <"$PW_TMP/body")
	c=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
	run_side "$b" b && run_side "$c" c || return 1
	echo "$p"
}

judged() {	# PAIR: the ops row is final
	local v
	http GET "/api/v1/comparisons?pair=$1" >/dev/null
	v=$(metric_row ops | jfield verdict) || return 1
	[ -n "$v" ] && [ "$v" != null ] && [ "$v" != unknown ]
}

# ops_row PAIR: the ops comparison of GET /api/v1/comparisons into
# $PW_TMP/ops.json (and the note of the pair page's row into
# $PW_TMP/note), both printed on failure.
ops_row() {
	http GET "/api/v1/comparisons?pair=$1" >/dev/null
	metric_row ops >"$PW_TMP/ops.json"
	http GET "/api/v1/pairs/$1" >/dev/null
	metric_row ops last | jfield note >"$PW_TMP/note"
}

# judge NAME JOB PYTHON-ASSERTS: runs a pair of JOB, then checks its ops
# row (o) and its note on the pair page (n).
judge() {
	local p
	p=$(pair "$2") || { fail "$1" "pair: $(head -c 300 "$PW_TMP/body")"; return; }
	wait_for 30 judged "$p" || { fail "$1" "no verdict"; return; }
	ops_row "$p"
	if python3 -c "import json, sys
o = json.load(open(sys.argv[1]))
n = open(sys.argv[2]).read()
$3" "$PW_TMP/ops.json" "$PW_TMP/note"; then
		pass "$1"
	else
		fail "$1" "$(cat "$PW_TMP/ops.json") note: $(cat "$PW_TMP/note")"
	fi
}

judge adjusted_regression ow \
    'assert o["verdict"] == "regression"
assert -6 < o["change_pct"] < -4
assert o["ci_low"] < o["change_pct"] < o["ci_high"] < 0
assert "adjusted for other work on the host (40% of its CPU in base runs, 40% in candidate runs)" in n'
judge unadjusted_inconclusive owoff \
    'assert o["verdict"] == "inconclusive"
assert "other work" not in n'
finish
