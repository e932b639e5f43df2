#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: the uploads are made-up values
# with 2x effects, so a test beside it changes no verdict.)
# Verdicts from a real daemon over real HTTP: a runner (curl) registers,
# pairs are submitted, claimed, given runs and finished, and the daemon's
# verdict thread answers through GET /api/v1/comparisons, /pairs/{id},
# /regressions and the pair page.  The uploaded values are made up, not
# measured: per docs/NOISE.md the effects are 2x (far above any noise)
# with <= 1% spread and min_effect 5%, so the verdicts are certain; the
# noisy pair uses the same +-15% values on both sides in another order, so
# it can only be inconclusive.  Also: adaptive runs (re-queue to 8, then
# 12, on the same host with done_runs), recovery of a lost verdict at
# start, and `perfwatch compare --json` on the exported job JSON.
. "$(dirname "$0")/lib.sh"

D=$PW_TMP/d
hand_daemon_config "$D" r1
cat >"$D/jobs/vd.yaml" <<'EOF2'
# Made-up uploads with 2x effects (see the test header): min_effect 5%
# leaves "unchanged" reachable and keeps noise far from a verdict.
name: vd
parser: keyvalue
command: [echo, "ops=1"]
runs: 5
max_runs: 12
# The test plays the runner by hand, one claim a side (t0356 covers
# rounds).
rounds: 1
metrics:
  ops: {better: higher, min_effect: 5%}
  lat: {better: lower, min_effect: 5%}
EOF2
hand_start_daemon "$D"

# Relative spreads (permil) of the runs; NOISY is +-15%, used in two
# orders for the two sides of the noisy pair.
SMALL=(0 4 -3 6 -5 2 -1 3 -4 5 -2 1)
NOISY=(0 150 -150 75 -75 120 -120 30 -30 100 -100 60)
NOISY2=(-75 30 150 -120 0 -30 75 100 -150 120 60 -100)

# milli N: N / 1000 as a decimal number.
milli() {
	printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

# up JOB FROM TO OPS LAT SPREAD...: uploads runs FROM..TO-1, values
# OPS and LAT times (1 + spread/1000).
up() {
	local job=$1 from=$2 to=$3 ops=$4 lat=$5 i o l
	shift 5
	local sp=("$@")
	for ((i = from; i < to; i++)); do
		o=$(milli $((ops * (1000 + sp[i]))))
		l=$(milli $((lat * (1000 + sp[(i + 5) % 12]))))
		[ "$(http POST "/api/v1/jobs/$job/runs" "$R1" \
		    "{\"index\":$i,\"status\":\"ok\",\"metrics\":[{\"name\":\"ops\",\"value\":$o,\"unit\":\"ops/s\",\"better\":\"higher\"},{\"name\":\"lat\",\"value\":$l,\"unit\":\"us\",\"better\":\"lower\"}]}")" = 201 ] ||
			return 1
	done
}

# claim WANT_ID: claims the next job, which must be WANT_ID.
claim() {
	[ "$(http POST /api/v1/jobs/claim "$R1" '{"wait_s":2}')" = 200 ] &&
	    [ "$(jfield job.id <"$PW_TMP/body")" = "$1" ]
}

done_job() {
	[ "$(http POST "/api/v1/jobs/$1/finish" "$R1" '{"status":"success"}')" = 200 ]
}

# pair BASE_OPS BASE_LAT CAND_OPS CAND_LAT [SPREAD_NAME [SPREAD2_NAME]]:
# submits, runs both jobs (5 runs) and finishes them; prints the pair id.
pair() {
	local sp=${5:-SMALL} sp2=${6:-${5:-SMALL}} p b c
	[ "$(http POST /api/v1/submit "$ADM" '{"job":"vd"}')" = 201 ] || return 1
	p=$(jfield pairs.0.pair_id <"$PW_TMP/body")
	b=$(jfield pairs.0.base_job <"$PW_TMP/body")
	c=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
	local -n s1=$sp s2=$sp2
	claim "$b" && up "$b" 0 5 "$1" "$2" "${s1[@]}" && done_job "$b" &&
	    claim "$c" && up "$c" 0 5 "$3" "$4" "${s2[@]}" && done_job "$c" ||
		return 1
	echo "$p"
}

# verdict PAIR METRIC: the verdict of METRIC in GET /api/v1/comparisons.
verdict() {
	http GET "/api/v1/comparisons?pair=$1" >/dev/null
	{ metric_row "$2" | jfield verdict; } 2>/dev/null
}

has_verdict() {
	local v
	v=$(verdict "$1" "$2")
	[ -n "$v" ] && [ "$v" != unknown ]
}

# 1: the candidate is 2x slower (ops halved, latency doubled).
P1=$(pair 1000 100 500 200) || { fail pair1 "could not run pair 1"; finish; }
wait_for 30 has_verdict "$P1" ops || fail pair1_verdict "no verdict"
http GET "/api/v1/comparisons?pair=$P1" >/dev/null
python3 - "$PW_TMP/body" <<'EOF2' && pass verdict_2x_slower || fail verdict_2x_slower "$(head -c 600 "$PW_TMP/body")"
import json, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["comparisons"]}
o, l = rows["ops"], rows["lat"]
assert o["verdict"] == "regression" and l["verdict"] == "regression", rows
assert -52 < o["change_pct"] < -48 and 95 < l["change_pct"] < 105, rows
assert o["ci_low"] < o["change_pct"] < o["ci_high"] < -40, o
assert o["p"] is not None and o["p"] < 0.01, o
assert o["base_n"] == 5 and o["cand_n"] == 5 and o["min_effect_pct"] == 5, o
EOF2
code=$(http GET "/pair/$P1")
[ "$code" = 200 ] && grep -q 'badge v-regression' "$PW_TMP/body" &&
    pass pair_page_verdict || fail pair_page_verdict "$code"
code=$(http GET "/api/v1/pairs/$P1")
[ "$(jfield comparisons.1.final <"$PW_TMP/body")" = true ] &&
    pass pair_api_final || fail pair_api_final "$(head -c 400 "$PW_TMP/body")"
code=$(http GET /api/v1/regressions)
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["regressions"]))' "$PW_TMP/body")
[ "$code" = 200 ] && [ "$n" = 2 ] &&
    [ "$(jfield regressions.0.pair_id <"$PW_TMP/body")" = "$P1" ] &&
    [ "$(jfield regressions.0.state <"$PW_TMP/body")" = new ] &&
    pass regressions_created || fail regressions_created "$code $n"

# 2: 2x faster: improvements, recorded as comparisons only.
P2=$(pair 1000 100 2000 50) || { fail pair2 "could not run pair 2"; finish; }
wait_for 30 has_verdict "$P2" ops || fail pair2_verdict "no verdict"
[ "$(verdict "$P2" ops)" = improvement ] && [ "$(verdict "$P2" lat)" = improvement ] &&
    pass verdict_2x_faster || fail verdict_2x_faster "$(head -c 400 "$PW_TMP/body")"
http GET /api/v1/regressions >/dev/null
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["regressions"]))' "$PW_TMP/body")
check improvement_is_no_regression [ "$n" = 2 ]

# 3: the same values on both sides: unchanged.
P3=$(pair 1000 100 1000 100 SMALL) || { fail pair3 "could not run pair 3"; finish; }
wait_for 30 has_verdict "$P3" ops || fail pair3_verdict "no verdict"
[ "$(verdict "$P3" ops)" = unchanged ] && pass verdict_unchanged ||
    fail verdict_unchanged "$(head -c 400 "$PW_TMP/body")"

# 4: +-15% noise, no shift: inconclusive, so more runs: both jobs queued
# again wanting 8, the claim says which runs are done.
P4=$(pair 1000 100 1000 100 NOISY NOISY2) || { fail pair4 "could not run pair 4"; finish; }
B4=$((2 * P4 - 1))
C4=$((2 * P4))
requeued() {
	http GET "/api/v1/jobs/$B4" >/dev/null
	[ "$(jfield state <"$PW_TMP/body")" = queued ] &&
	    [ "$(jfield runs_wanted <"$PW_TMP/body")" = "$1" ]
}
wait_for 30 requeued 8 && pass adaptive_requeued_8 ||
    fail adaptive_requeued_8 "$(head -c 300 "$PW_TMP/body")"
http GET "/api/v1/pairs/$P4" >/dev/null
python3 - "$PW_TMP/body" <<'EOF2' && pass adaptive_interim_row || fail adaptive_interim_row "$(head -c 600 "$PW_TMP/body")"
import json, sys
p = json.load(open(sys.argv[1]))
c = {r["metric"]: r for r in p["comparisons"]}["ops"]
assert c["verdict"] == "inconclusive" and c["final"] is False, c
assert "more runs requested (8)" in c["note"], c
assert p["candidate"]["state"] == "queued", p["candidate"]
EOF2
if claim "$B4" && [ "$(jfield job.runs <"$PW_TMP/body")" = 8 ] &&
    [ "$(jfield job.done_runs <"$PW_TMP/body")" = "[0, 1, 2, 3, 4]" ]; then
	pass adaptive_claim_continues
else
	fail adaptive_claim_continues "$(head -c 400 "$PW_TMP/body")"
fi
code=$(http POST /api/v1/runners/heartbeat "$R1" "{\"job_id\":$B4}")
[ "$code" = 200 ] && [ "$(jfield runs <"$PW_TMP/body")" = 8 ] &&
    pass adaptive_heartbeat_runs || fail adaptive_heartbeat_runs "$code"
up "$B4" 5 8 1000 100 "${NOISY[@]}" && done_job "$B4" && claim "$C4" &&
    up "$C4" 5 8 1000 100 "${NOISY2[@]}" && done_job "$C4" ||
	fail adaptive_runs_8 "uploads refused"
wait_for 30 requeued 12 && pass adaptive_requeued_12 ||
    fail adaptive_requeued_12 "$(head -c 300 "$PW_TMP/body")"
claim "$B4" && up "$B4" 8 12 1000 100 "${NOISY[@]}" && done_job "$B4" &&
    claim "$C4" && up "$C4" 8 12 1000 100 "${NOISY2[@]}" && done_job "$C4" ||
	fail adaptive_runs_12 "uploads refused"
final4() {
	http GET "/api/v1/pairs/$P4" >/dev/null
	[ "$(jfield comparisons.1.final <"$PW_TMP/body")" = true ]
}
wait_for 30 final4 || fail adaptive_final "no final verdict"
python3 - "$PW_TMP/body" <<'EOF2' && pass adaptive_final_at_max_runs || fail adaptive_final_at_max_runs "$(head -c 600 "$PW_TMP/body")"
import json, sys
p = json.load(open(sys.argv[1]))
c = {r["metric"]: r for r in p["comparisons"]}["ops"]
assert c["final"] is True and c["n_base"] == 12 and c["n_cand"] == 12, c
assert c["verdict"] == "inconclusive", c
assert p["base"]["state"] == "success" and p["base"]["runs"] == 12, p["base"]
EOF2

# `perfwatch compare --json` on the jobs exported by GET /api/v1/jobs/{id}
# agrees with the daemon (the analysis branch's CLI; skipped while it is
# not in this build).
http GET /api/v1/jobs/1 >/dev/null && cp "$PW_TMP/body" "$PW_TMP/base.json"
http GET /api/v1/jobs/2 >/dev/null && cp "$PW_TMP/body" "$PW_TMP/cand.json"
if "$PW_BIN/perfwatch" compare --help >/dev/null 2>&1 ||
    "$PW_BIN/perfwatch" help 2>&1 | grep -q compare; then
	"$PW_BIN/perfwatch" compare --json --better higher --min-effect 5 \
	    "$PW_TMP/base.json" "$PW_TMP/cand.json" >"$PW_TMP/cmp.json" 2>"$PW_TMP/cmp.err"
	python3 - "$PW_TMP/cmp.json" <<'EOF2' && pass compare_cli_on_export || fail compare_cli_on_export "$(cat "$PW_TMP/cmp.json" "$PW_TMP/cmp.err" | head -c 600)"
import json, sys
m = {r["metric"]: r for r in json.load(open(sys.argv[1]))["metrics"]}
assert m["ops"]["verdict"] == "regression", m
assert m["ops"]["n_base"] == 5 and m["ops"]["n_cand"] == 5, m
assert -52 < m["ops"]["change_pct"] < -48, m
EOF2
else
	echo "# perfwatch compare is not in this build (analysis CLI not merged): skipped"
fi

# A verdict lost in a crash is redone at start: stop the daemon, drop
# pair 1's verdict as if it had never been written, start again.
stop_pid "$PW_DAEMON_PID"
sql "DELETE FROM comparisons WHERE pair_id = $P1;
     UPDATE pairs SET analysed = 0 WHERE id = $P1;"
start_daemon "$D" || { fail restart "daemon did not restart"; finish; }
wait_for 30 has_verdict "$P1" ops && [ "$(verdict "$P1" ops)" = regression ] &&
    pass verdict_recovered_at_start ||
    fail verdict_recovered_at_start "$(head -c 400 "$PW_TMP/body")"
grep -q "verdict: pair $P1: 2 metrics, 2 regression" "$D/daemon.log" &&
    pass verdict_logged || fail verdict_logged "$(grep verdict "$D/daemon.log")"
finish
