#!/usr/bin/env bash
# The runner's kernel build steps with a real daemon and runner, on a
# stand-in kernel tree (lib_kstandin.sh: a git repository whose Makefile
# implements the targets the runner calls and a merge_config.sh).  A real
# kernel takes minutes to build here; make check-kernel builds real ones.
#   - boot: none refuses a kernel job when it is claimed;
#   - a fragment option olddefconfig drops fails the job with kind build,
#     naming the option, and uploads no run;
#   - a good build records build id, .config hash, KCFLAGS and
#     LOCALVERSION; the next commit builds incrementally (only the changed
#     file is rewritten) and a rerun of a commit reuses its image.
# Boots use a fake kexec (see t0821) that records what it was given.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"

K=$PW_TMP/linux
standin_kernel_tree "$K"

daemon_config "$PW_TMP/d" r0 r1
cat >>"$PW_TMP/d/daemon.yaml" <<'YAML'
scheduler:
  lease: 10s
  claim_wait: 1s
YAML
kernel_job kb CONFIG_MEMCG=y
kernel_job kdrop "CONFIG_MEMCG=y, CONFIG_NEEDS_MISSING_DEP=y"
# Config check: a kernel job whose runners all boot none is an error.
mkdir -p "$PW_TMP/cc/jobs"
cp "$PW_DIR/jobs/kb.yaml" "$PW_TMP/cc/jobs/"
sed -i 's/^runs: 1$/hosts: [nb]\nruns: 1/' "$PW_TMP/cc/jobs/kb.yaml"
cat >"$PW_TMP/cc/daemon.yaml" <<YAML
listen: 127.0.0.1:0
database: $PW_TMP/cc/pw.db
mirrors: $PW_TMP/cc/git
admin_token_file: $PW_TMP/cc/admin.token
jobs: [jobs/*.yaml]
runners:
  - name: nb
    token_file: $PW_TMP/cc/nb.token
    boot: none
  - name: q1
    token_file: $PW_TMP/cc/q1.token
    labels: [qemu]
    boot: qemu
YAML
if "$PW_BIN/perfwatch" config check "$PW_TMP/cc/daemon.yaml" >"$PW_TMP/cc.out" 2>&1; then
	fail config_check_refuses_boot_none "accepted: $(cat "$PW_TMP/cc.out")"
else
	check config_check_refuses_boot_none grep -q "kb.yaml:5:3: kernel: the job builds a kernel, but every runner it can run on has boot: none (nb) and would refuse it" "$PW_TMP/cc.out"
fi
sed -i 's/^hosts: \[nb\]$/hosts: [nb, qemu]/' "$PW_TMP/cc/jobs/kb.yaml"
check config_check_accepts_a_qemu_runner "$PW_BIN/perfwatch" config check "$PW_TMP/cc/daemon.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
export PERFWATCH_NO_CGROUPS=1 PERFWATCH_PROC_VERSION=$PW_TMP/proc_version
export FAKE_LOG=$PW_TMP/fake.log
fake_kexec "$PW_TMP/fakebin"

submit() {
	http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"$1\",
	    \"base\": {\"tree\": \"$K\", \"commit\": \"$2\"},
	    \"candidate\": {\"tree\": \"$K\", \"commit\": \"$3\"}}" >"$PW_TMP/code"
	[ "$(cat "$PW_TMP/code")" = 201 ] || fail "submit_$1" "$(cat "$PW_TMP/body")"
}
state_is() { [ "$(job_state "$1")" = "$2" ]; }

# --- boot: none refuses a kernel job ---
runner_config r0
start_runner r0 --once
R0=$!
submit kb "$BASE" "$CAND"
b0=$(jfield pairs.0.base_job <"$PW_TMP/body")
wait_until 30 state_is "$b0" failed
http GET "/api/v1/jobs/$b0" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass boot_none_refuses || fail boot_none_refuses "$(head -c 800 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "failed" and not j["runs"], j
assert j["error"].startswith("refused: the job asks for a kernel build (kernel.config tinyconfig) and runner r0 has boot: none"), j["error"]
PY
stop_pid "$R0"

# --- a kexec runner builds ---
# The tree's make and merge_config.sh run as nobody (runner.yaml user):
# the source it exports must be readable (umask 022, as under systemd)
# and the runner's directory reachable.
runner_config r1 "kernel_tree: $PW_TMP/kernel" "user: nobody"
sed -i 's/^boot: none/boot: kexec/' "$PW_TMP/r1/runner.yaml"
chmod 711 "$PW_TMP" "$PW_TMP/r1"
runner() {
	umask 022
	PATH=$PW_TMP/fakebin:$PATH start_runner r1
	RUNNER=$!
	umask 077
}
dead() { ! kill -0 "$RUNNER" 2>/dev/null; }
# The refused pair's candidate is still queued: cancel it.
c0=$((b0 + 1))
http POST "/api/v1/jobs/$c0/cancel" "$PW_ADMIN" >/dev/null

submit kdrop "$BASE" "$BASE"
bd=$(jfield pairs.0.base_job <"$PW_TMP/body")
cd_=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
runner
wait_until 60 state_is "$cd_" failed
http GET "/api/v1/jobs/$bd" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass dropped_option_is_a_build_failure || fail dropped_option_is_a_build_failure "$(head -c 1500 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "failed" and not j["runs"], (j["state"], j["runs"])
assert j["error"].startswith("build: kernel.fragment: dropped by olddefconfig"), j["error"]
assert "CONFIG_NEEDS_MISSING_DEP=y (now: not set)" in j["error"], j["error"]
assert "kernel merge_config.sh: exit 0" in j["log"], j["log"][-1000:]
PY
check no_kexec_after_a_failed_build [ ! -f "$FAKE_LOG" ]

# A good pair: base cold, candidate incremental.
submit kb "$BASE" "$CAND"
bb=$(jfield pairs.0.base_job <"$PW_TMP/body")
cb=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
wait_until 60 dead
runner # resumes the base, runs it, builds the candidate, boots: dies
wait_until 60 state_is "$bb" success
wait_until 60 dead
runner # resumes the candidate
wait_until 60 state_is "$cb" success || { fail pair_succeeds "$(job_state "$cb")"; show_logs; }
for side in bb cb; do
	http GET "/api/v1/jobs/${!side}" >/dev/null
	cp "$PW_TMP/body" "$PW_TMP/$side.json"
done
nobody=$(id -u nobody)
uids=$(cat "$PW_TMP"/kernel/build-*/src/pw-obj/make-uids "$PW_TMP"/kernel/build-*/src/pw-obj/merge-uids 2>/dev/null | sort -u | tr '\n' ' ')
[ "$uids" = "$nobody " ] && pass make_and_merge_config_as_nobody ||
    fail make_and_merge_config_as_nobody "uids '$uids'"
# Build ids are -pw<job>-<the database's instance id>.
INST=$(sql "SELECT id FROM instance")
python3 - "$PW_TMP/bb.json" "$PW_TMP/cb.json" "$bb" "$cb" "$INST" <<'PY' && pass build_recorded || fail build_recorded "$(head -c 3000 "$PW_TMP/cb.json")"
import json, re, sys
for path, job, cached, incr in ((sys.argv[1], sys.argv[3], "no", "no"),
                                (sys.argv[2], sys.argv[4], "no", "yes")):
    j = json.load(open(path))
    m = re.search(r"kernel: build_id=(\S+) release=(\S+) config_sha256=([0-9a-f]{64}) cached=(\w+) incremental=(\w+)", j["log"])
    assert m, j["log"][-1500:]
    assert re.fullmatch(r"[0-9a-f]{12}", sys.argv[5]), sys.argv[5]
    bid = "-pw%s-%s" % (job, sys.argv[5])
    assert m.group(1) == bid and m.group(2) == "6.1.0" + bid, m.groups()
    assert (m.group(4), m.group(5)) == (cached, incr), (path, m.groups())
    assert j["state"] == "success" and len(j["runs"]) == 1, j["state"]
    # The config steps ran for the base; the candidate changed no config
    # input (mm/memcontrol.c only), so they were skipped.
    steps = re.search(r" build_s=[0-9.]+ config_steps=(ran|skipped|none)", j["log"])
    assert steps and steps.group(1) == ("skipped" if incr == "yes" else "ran"), (path, steps and steps.group(1))
    assert (incr == "yes") == ("merge_config.sh and olddefconfig skipped" in j["log"]), j["log"][-1500:]
PY
KB=$(dirname "$(ls "$PW_TMP"/kernel/build-*/src/pw-obj/rebuilds)")
check config_steps_once_for_the_pair [ "$(cat "$KB/config-steps")" = "$(printf 'tinyconfig\nolddefconfig')" ]
# Base and candidate share one build tree (same configuration): the
# stand-in's "object" is rebuilt once per changed source, not per job.
check one_rebuild_per_source_change [ "$(cat "$PW_TMP"/kernel/build-*/src/pw-obj/rebuilds | wc -l)" = 2 ]
check kcflags_alignment grep -q "KCFLAGS=-falign-functions=64" "$PW_TMP"/kernel/images/"$CAND"-*/bzImage
# make's own CC is cc: the runner named the job's compiler (gcc, the
# default of kernel.compiler), through ccache when the host has it.
check cc_is_the_jobs_compiler grep -qE "CC=(ccache )?gcc$" "$PW_TMP"/kernel/images/"$CAND"-*/bzImage
check fragment_merged grep -qx "CONFIG_MEMCG=y" "$PW_TMP"/kernel/images/"$BASE"-*/config

# A rerun of the base commit reuses its image (and its build id).
submit kb "$BASE" "$BASE"
br=$(jfield pairs.0.base_job <"$PW_TMP/body")
wait_until 60 dead
http GET "/api/v1/jobs/$br" >/dev/null
python3 - "$PW_TMP/body" "$bb" "$INST" <<'PY' && pass rerun_reuses_image || fail rerun_reuses_image "$(head -c 1500 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert "kernel: build_id=-pw%s-%s " % (sys.argv[2], sys.argv[3]) in j["log"] and "cached=yes" in j["log"], j["log"][-1500:]
PY

# A commit that changes a Kconfig file: the config steps run again.
printf 'config MEMCG\n\tbool "memcg"\n\tdefault y\n' >"$K/Kconfig"
g "$K" commit -q -am "Kconfig: MEMCG default y"
KC=$(g "$K" rev-parse HEAD)
submit kb "$CAND" "$KC"
ck=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
# The rerun's jobs go first; the runner dies at each boot (fake kexec).
done_or_dead() { state_is "$1" success || state_is "$1" failed || dead; }
for i in 1 2 3 4 5 6 7 8; do
	wait_until 60 done_or_dead "$ck"
	state_is "$ck" success || state_is "$ck" failed && break
	dead && runner
done
http GET "/api/v1/jobs/$ck" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass kconfig_change_reruns_config_steps || fail kconfig_change_reruns_config_steps "$(head -c 2500 "$PW_TMP/body")"
import json, re, sys
j = json.load(open(sys.argv[1]))
m = re.search(r"cached=(\w+) incremental=(\w+) build_s=[0-9.]+ config_steps=(ran|skipped|none)", j["log"])
assert m and m.groups() == ("no", "yes", "ran"), m and m.groups()
assert "kernel config: inputs or .config changed" in j["log"], j["log"][-1500:]
PY
check config_steps_after_kconfig_change [ "$(cat "$KB/config-steps" | wc -l)" = 4 ]
finish
