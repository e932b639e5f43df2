#!/usr/bin/env bash
# A runner without usable cgroups (PERFWATCH_NO_CGROUPS=1, the operator's
# switch; the same path as a host with none) registers cgroup "none" with
# the reason, fails a job that asks for placement with that reason, and
# still runs a job without a cgroup axis (unplaced, no telemetry).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

command -v fio >/dev/null || { fail fio_installed "fio missing (make deps)"; finish; }
daemon_config "$PW_TMP/d" r1
cat >"$PW_DIR/jobs/needs-cg.yaml" <<YAML
name: needs-cg
parser: fio
command: [fio, --name=r, --rw=read, --bs=4k, --size=4M,
          "--directory={workdir}", --output-format=json, --ioengine=psync]
hosts: [test]
matrix:
  cgroup: [root]
runs: 1
metrics:
  read_iops: {better: higher}
YAML
tiny_fio_job plain 1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1
PERFWATCH_NO_CGROUPS=1 start_runner r1
wait_until 20 bash -c "'$PW_BIN/perfwatch' hosts --server '$PW_URL' --json | grep -q '\"r1\"'"
pw hosts --json >"$PW_TMP/hosts.json"
[ "$(jfield hosts.0.inventory.cgroup <"$PW_TMP/hosts.json")" = none ] &&
    grep -q 'PERFWATCH_NO_CGROUPS' "$PW_TMP/hosts.json" &&
    pass registers_none_with_reason || fail registers_none_with_reason "$(cat "$PW_TMP/hosts.json")"

pw_admin submit --job needs-cg --json >"$PW_TMP/s1.json" 2>&1 || fail submit1 "$(cat "$PW_TMP/s1.json")"
pw_admin submit --job plain --json >"$PW_TMP/s2.json" 2>&1 || fail submit2 "$(cat "$PW_TMP/s2.json")"
nb=$(jfield pairs.0.base_job <"$PW_TMP/s1.json")
pb=$(jfield pairs.0.base_job <"$PW_TMP/s2.json")
settled() { jobs_in_state failed 2 && jobs_in_state success 2; }
wait_until 60 settled || fail jobs_settle "$(pw jobs)"
if [ "$(job_state "$nb")" = failed ] &&
    pw jobs show "$nb" --json | grep -q 'no usable cgroups: disabled by PERFWATCH_NO_CGROUPS=1'; then
	pass placement_job_refused_with_reason
else
	fail placement_job_refused_with_reason "$(pw jobs show "$nb" --json | head -c 1500)"
fi
pw jobs show "$pb" --json >"$PW_TMP/plain.json"
if [ "$(job_state "$pb")" = success ] && ! grep -q 'memcg\.' "$PW_TMP/plain.json"; then
	pass unplaced_job_runs_without_telemetry
else
	fail unplaced_job_runs_without_telemetry "$(head -c 1500 "$PW_TMP/plain.json")"
fi
finish
