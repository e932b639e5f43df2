#!/usr/bin/env bash
# check: parallel
# History: each final verdict appends the candidate median to its series
# (here the "submitted" series of job cp on host r1), and a step in that
# series shows as a change point on /api/v1/history and /history.  Made-up
# uploads (not measurements): candidates run at 1000 for 6 pairs, then at
# 2000 (a 2x step, far above their <= 0.5% spread and the noise of docs/NOISE.md).
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
hand_daemon_config "$D" r1
cat >"$D/jobs/cp.yaml" <<'EOF2'
name: cp
parser: keyvalue
command: [echo, "ops=1"]
runs: 2
max_runs: 2
# The test plays the runner by hand, one claim a side (t0356 covers
# rounds).
rounds: 1
metrics:
  ops: {better: higher, min_effect: 5%}
EOF2
hand_start_daemon "$D"

# job JOB CENTRE K: claim (must be JOB), two runs near CENTRE, finish.
job() {
	local j=$1 c=$2 k=$3 i
	[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":2}')" = 200 ] &&
	    [ "$(jfield job.id <"$PW_TMP/body")" = "$j" ] || return 1
	for i in 0 1; do
		[ "$(http POST "/api/v1/jobs/$j/runs" "$R1" \
		    "{\"index\":$i,\"status\":\"ok\",\"metrics\":[{\"name\":\"ops\",\"value\":$((c + (k * 7 + i * 3) % 5)),\"better\":\"higher\"}]}")" = 201 ] ||
			return 1
	done
	[ "$(http POST "/api/v1/jobs/$j/finish" "$R1" '{"status":"success"}')" = 200 ]
}

analysed() {
	[ "$(sql "SELECT count(*) FROM pairs WHERE analysed = 1")" = "$1" ]
}

ok=1
for ((k = 0; k < 12; k++)); do
	c=$((k < 6 ? 1000 : 2000))
	[ "$(http POST /api/v1/submit "$ADM" '{"job":"cp"}')" = 201 ] &&
	    job $((2 * k + 1)) 1000 "$k" && job $((2 * k + 2)) "$c" "$k" &&
	    wait_for 30 analysed $((k + 1)) || { ok=0; break; }
done
[ $ok = 1 ] && pass history_pairs_done || { fail history_pairs_done "pair $((k + 1))"; finish; }

n=$(sql "SELECT count(*) FROM history_points")
check history_points_appended [ "$n" = 12 ]
code=$(http GET '/api/v1/history?job=cp&metric=ops&host=r1')
python3 - "$PW_TMP/body" <<'EOF2' && pass history_api_change_point || fail history_api_change_point "$code $(head -c 800 "$PW_TMP/body")"
import json, sys
h = json.load(open(sys.argv[1]))
cps = h["change_points"]
assert len(cps) == 1, cps
cp = cps[0]
# Points are per job (base and candidate) oldest first; the change is at
# the candidate job of the 7th pair (job 14).
assert cp["job_id"] == 14 and h["points"][cp["index"]]["job_id"] == 14, cp
assert 95 < cp["change_pct"] < 105 and cp["direction"] == "improvement", cp
EOF2
code=$(http GET '/history?job=cp&metric=ops')
[ "$code" = 200 ] && grep -q 'change point' "$PW_TMP/body" &&
    pass history_page_change_point || fail history_page_change_point "$code"
finish
