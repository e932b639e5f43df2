#!/usr/bin/env bash
# The canary (docs/HOST.md) on a real daemon and runner: runners[].canary
# names a reference job the daemon runs on that host every few seconds as
# an A/A pair.  A steady host: A/A unchanged, not quarantined, its noise
# floor (CV, smallest detectable effect) published in GET /api/v1/hosts
# and on /hosts.  Then the host drifts between the two sides of a canary
# pair (the program's candidate side does 40% fewer ops): the A/A pair
# finds a regression, the host is quarantined, and it claims nothing but
# its canary (a submitted pair waits) until the operator clears it
# (POST /api/v1/hosts/{id}/clear, admin only); then the pair runs.  A
# canary naming no job is a config error at file:line:column.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1
# The runner entry gets its canary: every 2 s.
sed -i 's/^    labels: \[test\]$/    labels: [test]\n    canary: {job: ref, every: 2s}/' "$PW_DIR/daemon.yaml"
COUNT=$PW_TMP/count
DRIFT=$PW_TMP/drift_after
# The job id is the last part of {workdir}: a canary pair's base and
# candidate are consecutive jobs (odd, even) while nothing else is
# queued, so "the first candidate from job N on is slower" is a drift
# that falls between the two sides of one pair, whatever the timing.
cat >"$PW_TMP/ref.py" <<PY
import os, sys
n = int(open("$COUNT").read()) + 1 if os.path.exists("$COUNT") else 1
open("$COUNT", "w").write("%d" % n)
job = int(os.path.basename(sys.argv[1].rstrip("/")))
v = 100.0 + n % 3          # about 1% of spread, deterministic
if os.path.exists("$DRIFT"):
    d = int(open("$DRIFT").read())
    if job == d + d % 2:
        v *= 0.6           # the host drifted: 40% fewer ops
print("ops=%.1f" % v)
PY
cat >"$PW_DIR/jobs/ref.yaml" <<YAML
name: ref
parser: keyvalue
command: [python3, "$PW_TMP/ref.py", "{workdir}"]
runs: 3
max_runs: 3
timeout: 30s
metrics:
  ops: {better: higher, min_effect: 5%}
YAML
cat >"$PW_DIR/jobs/work.yaml" <<YAML
name: work
parser: keyvalue
command: [echo, "x=1"]
runs: 1
max_runs: 1
metrics:
  x: {better: higher}
YAML

# A canary that names no job: the error says where.
sed 's/canary: {job: ref,/canary: {job: nope,/' "$PW_DIR/daemon.yaml" >"$PW_TMP/bad.yaml"
out=$("$PW_BIN/perfwatchd" -n -c "$PW_TMP/bad.yaml" 2>&1)
case $out in
*bad.yaml:*:*:\ runners\[0\].canary.job:\ no\ job\ named\ \'nope\'*) pass config_error_names_the_place ;;
*) fail config_error_names_the_place "$out" ;;
esac

start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
start_runner r1
rpid=$!
canary_pairs() { sql "SELECT count(*) FROM pairs WHERE canary = 2"; }
judged() { [ "$(canary_pairs)" -ge "$1" ]; }
wait_until 90 judged 2 && pass canary_pairs_run ||
    { fail canary_pairs_run "$(sql 'SELECT id, name, canary, analysed FROM pairs'; show_logs)"; finish; }
hosts() { http GET /api/v1/hosts >/dev/null; cat "$PW_TMP/body"; }
hosts >"$PW_TMP/h1.json"
/usr/bin/python3 - "$PW_TMP/h1.json" <<'PY' && pass steady_host_noise_floor || fail steady_host_noise_floor "$(cat "$PW_TMP/h1.json")"
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
assert h["quarantined"] is None, h
c = h["canary"]
assert c["job"] == "ref" and c["every_s"] == 2 and c["runs_per_side"] == 3, c
z = {n["metric"]: n for n in c["noise"]}["ops"]
# Runs of 100 + n % 3: a spread near 0.8% of the mean.
assert 0.2 < z["cv_pct"] < 2, z
assert z["runs"] >= 12 and z["jobs"] >= 4, z
# (1.96 + 0.84) * sqrt(2/3) * CV
assert abs(z["mde_pct"] - 2.8016 * (2 / 3) ** 0.5 * z["cv_pct"]) < 0.01, z
PY
[ "$(sql "SELECT count(*) FROM comparisons c JOIN pairs p ON p.id = c.pair_id WHERE p.canary <> 0 AND c.metric = 'ops' AND c.verdict IN ('regression', 'improvement', 'unstable')")" = 0 ] &&
    pass steady_canary_unchanged ||
    fail steady_canary_unchanged "$(sql "SELECT pair_id, metric, verdict, change_pct FROM comparisons")"

# The drift: the next canary candidate.
echo $(( $(sql "SELECT max(id) FROM jobs") + 1 )) >"$DRIFT"
quarantined() { [ -n "$(sql "SELECT quarantined FROM hosts WHERE name = 'r1'")" ]; }
wait_until 90 quarantined && pass drift_quarantines ||
    { fail drift_quarantines "$(sql 'SELECT pair_id, metric, verdict, change_pct FROM comparisons'; show_logs)"; finish; }
why=$(sql "SELECT quarantined FROM hosts WHERE name = 'r1'")
case $why in
"canary pair "*": ops -"[34][0-9].[0-9]"% regression between two runs of the same job on the same kernel") pass quarantine_says_why ;;
*) fail quarantine_says_why "$why" ;;
esac

# Quarantined: a submitted pair waits while canary pairs still run.
pw_admin submit --job work --json >"$PW_TMP/s.json" 2>&1 || fail submit "$(cat "$PW_TMP/s.json")"
c0=$(canary_pairs)
wait_until 30 judged $((c0 + 1)) && pass canary_runs_while_quarantined ||
    fail canary_runs_while_quarantined "$(sql 'SELECT id, canary, analysed FROM pairs')"
[ "$(sql "SELECT count(*) FROM jobs WHERE name = 'work' AND state = 'queued'")" = 2 ] &&
    pass quarantined_host_claims_no_work ||
    fail quarantined_host_claims_no_work "$(sql "SELECT id, name, state FROM jobs WHERE name = 'work'")"
curl -s "$PW_URL/hosts" >"$PW_TMP/hosts.html"
grep -q 'class="badge v-regression quarantined" title="canary pair' "$PW_TMP/hosts.html" &&
    grep -q '<h2>Noise floor (canary)</h2>' "$PW_TMP/hosts.html" &&
    pass hosts_page_shows_it || fail hosts_page_shows_it "$(grep -o 'quarantined[^<]*' "$PW_TMP/hosts.html" | head -3)"

# Clearing: admin only; then the waiting pair runs.
hid=$(sql "SELECT id FROM hosts WHERE name = 'r1'")
code=$(http POST "/api/v1/hosts/$hid/clear" "$PW_TOKENS/r1.token")
[ "$code" = 403 ] && pass clear_needs_admin || fail clear_needs_admin "$code $(cat "$PW_TMP/body")"
code=$(http POST "/api/v1/hosts/999/clear" "$PW_ADMIN")
[ "$code" = 404 ] && pass clear_unknown_host_404 || fail clear_unknown_host_404 "$code"
code=$(http POST "/api/v1/hosts/$hid/clear" "$PW_ADMIN")
[ "$code" = 200 ] && ! quarantined && pass operator_clears || fail operator_clears "$code $(cat "$PW_TMP/body")"
work_done() { [ "$(sql "SELECT count(*) FROM jobs WHERE name = 'work' AND state = 'success'")" = 2 ]; }
wait_until 60 work_done && pass work_runs_after_clear ||
    fail work_runs_after_clear "$(sql "SELECT id, name, state FROM jobs WHERE name = 'work'"; show_logs)"
finish
