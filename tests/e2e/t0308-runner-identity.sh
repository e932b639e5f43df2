#!/usr/bin/env bash
# check: parallel
# A runner's identity is the daemon's configuration for its token: labels
# it reports at register are shown (inventory.reported_labels) but never
# widen what it may claim.  Runner r1 registers claiming label "r2" and
# "gpu"; a job pinned to hosts: [r2] stays queued for it (204 on claim)
# and is claimed by r2 itself.  No runner process runs: the claims are
# made over the API with each runner's token, nothing is measured.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

daemon_config "$PW_TMP/d" r1 r2
cat >>"$PW_TMP/d/daemon.yaml" <<YAML
scheduler:
  claim_wait: 1s
YAML
cat >"$PW_DIR/jobs/pinned.yaml" <<YAML
name: pinned
parser: keyvalue
command: [sh, -c, 'echo ops=1']
runs: 1
max_runs: 1
hosts: [r2]
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

c=$(http POST /api/v1/runners/register "$(token_of r1)" \
    '{"name":"r1","labels":["r2","gpu"],"inventory":{"cgroup":"none"}}')
[ "$c" = 200 ] && pass r1_registers || fail r1_registers "$c $(cat "$PW_TMP/body")"
c=$(http POST /api/v1/runners/register "$(token_of r2)" '{"name":"r2"}')
[ "$c" = 200 ] && pass r2_registers || fail r2_registers "$c $(cat "$PW_TMP/body")"

pw_admin submit --job pinned --json >"$PW_TMP/submit.json" || fail submit "exit $?"
base=$(jfield pairs.0.base_job <"$PW_TMP/submit.json")

# The host row keeps the configured labels and those the daemon derives
# from the reported CPU (none here: unknown) only; what r1 said is shown.
http GET /api/v1/hosts >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass reported_labels_shown_not_trusted ||
import json, sys
h = {x["name"]: x for x in json.load(open(sys.argv[1]))["hosts"]}
derived = ["vendor:unknown", "family:unknown"]
assert h["r1"]["labels"] == ["test"] + derived, h["r1"]["labels"]
assert h["r1"]["inventory"]["reported_labels"] == ["r2", "gpu"], h["r1"]["inventory"]
assert h["r2"]["labels"] == ["test"] + derived, h["r2"]["labels"]
PY
    fail reported_labels_shown_not_trusted "$(head -c 800 "$PW_TMP/body")"

c=$(http POST /api/v1/jobs/claim "$(token_of r1)" '{"wait_s":1}')
[ "$c" = 204 ] && pass r1_cannot_claim_job_pinned_to_r2 ||
    fail r1_cannot_claim_job_pinned_to_r2 "$c $(head -c 400 "$PW_TMP/body")"
[ "$(job_state "$base")" = queued ] && pass job_stays_queued ||
    fail job_stays_queued "state $(job_state "$base")"

c=$(http POST /api/v1/jobs/claim "$(token_of r2)" '{"wait_s":1}')
id=$(jfield job.id <"$PW_TMP/body" 2>/dev/null)
[ "$c" = 200 ] && [ "$id" = "$base" ] && pass r2_claims_its_job ||
    fail r2_claims_its_job "$c $(head -c 400 "$PW_TMP/body")"

# r1 cannot upload to or finish the job r2 holds.
c=$(http POST "/api/v1/jobs/$base/runs" "$(token_of r1)" \
    '{"index":0,"status":"ok","metrics":[{"name":"ops","value":999999,"better":"higher"}]}')
[ "$c" = 409 ] && pass r1_cannot_upload_to_r2s_job ||
    fail r1_cannot_upload_to_r2s_job "$c $(head -c 300 "$PW_TMP/body")"
c=$(http POST "/api/v1/jobs/$base/finish" "$(token_of r1)" '{"status":"success"}')
[ "$c" = 409 ] && pass r1_cannot_finish_r2s_job ||
    fail r1_cannot_finish_r2s_job "$c $(head -c 300 "$PW_TMP/body")"

# Bad reported labels are still refused, naming the field.
c=$(http POST /api/v1/runners/register "$(token_of r1)" '{"name":"r1","labels":[""]}')
[ "$c" = 400 ] && grep -q "labels\[0\]" "$PW_TMP/body" && pass bad_label_refused ||
    fail bad_label_refused "$c $(cat "$PW_TMP/body")"
finish
