#!/usr/bin/env bash
# check: parallel
# (No runner process and no host state: the runners' register and claim
# calls are made through the runner API by this script.)
# Runner labels derived from the CPU a runner reports: r1 reports an AMD
# EPYC 7702 (Zen 2, Rome), r2 an Intel Xeon Platinum 8380 (Ice Lake-SP),
# r3 a CPU the table does not know.  The daemon gives them vendor: and
# family: labels beside the configured ones; a job pinned to
# "hosts: [family:ice-lake-sp]" is claimed by r2 only, even though r1
# reports that label itself (a runner's own labels are never trusted).
# /hosts and /api/v1/hosts show the derived labels; r3's say unknown.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

web_tree_start 'hosts: [family:ice-lake-sp]' r1 r2 r3
# Each reports family:ice-lake-sp itself: never trusted.
web_register r1 "AMD EPYC 7702 64-Core Processor" AuthenticAMD family:ice-lake-sp
web_register r2 "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz" GenuineIntel \
    family:ice-lake-sp
web_register r3 "QEMU Virtual CPU version 2.5+" GenuineIntel family:ice-lake-sp

code=$(http GET /api/v1/hosts)
python3 - "$PW_TMP/body" <<'PY' && pass api_hosts_derived_labels ||
import json, sys
hosts = {h["name"]: h["labels"] for h in json.load(open(sys.argv[1]))["hosts"]}
want = {"r1": ["test", "vendor:amd", "family:zen-2-rome"],
        "r2": ["test", "vendor:intel", "family:ice-lake-sp"],
        "r3": ["test", "vendor:intel", "family:unknown"]}
assert hosts == want, hosts
PY
	fail api_hosts_derived_labels "$code $(head -c 800 "$PW_TMP/body")"
page hosts_page_derived_labels /hosts vendor:amd family:zen-2-rome \
    family:ice-lake-sp family:unknown

c2=$(commit "$SRC" mm/a.c 'mm: memcg: a change')
wait_tip master "$c2" || { fail second_sight "$(cat "$PW_TMP/trees.json")"; finish; }
queued() { [ "$(njobs queued kv)" -ge 1 ]; }
wait_for 30 queued || { fail job_queued "$(sql "SELECT id, name, state FROM jobs")"; finish; }
pass job_queued

# r1 (Zen 2) and r3 (unknown) get nothing; r2 (Ice Lake-SP) gets every job.
for r in r1 r3; do
	code=$(http POST /api/v1/jobs/claim "$(token_of $r)" '{"wait_s":1}')
	if [ "$code" = 204 ]; then
		pass "no_claim_$r"
	else
		fail "no_claim_$r" "$code $(head -c 400 "$PW_TMP/body")"
	fi
done
n=$(sql "SELECT count(*) FROM jobs WHERE name = 'kv'")
web_run_queue r2 100 100 || fail claims_r2 "$(cat "$PW_TMP/body")"
got=$(sql "SELECT count(*) FROM jobs j JOIN hosts h ON h.id = j.host_id WHERE j.name = 'kv' AND h.name = 'r2'")
if [ "$n" -ge 2 ] && [ "$got" = "$n" ]; then
	pass pinned_job_on_r2_only
else
	fail pinned_job_on_r2_only "$got of $n jobs on r2: $(sql "SELECT j.id, j.state, j.host_id FROM jobs j")"
fi
finish
