#!/usr/bin/env bash
# check: parallel
# (Its runner touches no host state, PERFWATCH_NO_CGROUPS, and measures
# nothing: `echo ops=1000` on both sides.)
# boot: reboot with a real daemon and runner and fake boot programs on
# PATH (a reboot cannot run here: docs/KERNEL.md).  The runner's kernel
# cache is seeded with an image for the job's (commit, config).  The
# fakes act as a distribution whose GRUB names its entries
# "Test Linux>Linux RELEASE": installkernel adds that entry, grub-reboot
# of an entry that exists makes it the next boot, of one that does not
# leaves GRUB's default (the running kernel), and reboot "boots" the
# next kernel and kills the runner.  The test restarts the runner like
# systemd:
#   1. with reboot_entry: "Test Linux>Linux {release}" the runner asks
#      for that entry, the state file is written before the boot, both
#      sides resume after their restarts, say so in their logs, verify
#      the booted build and succeed;
#   2. with the default entry (Debian's name), GRUB boots its default:
#      the job fails naming both builds instead of measuring the wrong
#      kernel.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

. "$(dirname "$0")/lib_boot.sh"

boot_setup rb 901

mkdir -p "$PW_TMP/fakebin"
cat >"$PW_TMP/fakebin/installkernel" <<'SH'
#!/bin/sh
echo "installkernel $*" >>"$FAKE_LOG"
echo "Test Linux>Linux $1" >>"$FAKE_GRUB"
SH
cat >"$PW_TMP/fakebin/update-grub" <<'SH'
#!/bin/sh
echo "update-grub $*" >>"$FAKE_LOG"
SH
cat >"$PW_TMP/fakebin/grub-reboot" <<'SH'
#!/bin/sh
echo "grub-reboot $*" >>"$FAKE_LOG"
if grep -qxF "$1" "$FAKE_GRUB" 2>/dev/null; then
	next=${1##*Linux }
else
	next=6.1.0-13-amd64
fi
echo "Linux version $next (fake reboot) #1 SMP" >"$FAKE_NEXT"
SH
cat >"$PW_TMP/fakebin/reboot" <<'SH'
#!/bin/sh
echo "reboot $*" >>"$FAKE_LOG"
cp "$FAKE_NEXT" "$PERFWATCH_PROC_VERSION"
kill -9 "$PPID"
SH
chmod +x "$PW_TMP"/fakebin/*
export FAKE_LOG=$PW_TMP/fake.log FAKE_GRUB=$PW_TMP/grub.entries \
    FAKE_NEXT=$PW_TMP/next PERFWATCH_PROC_VERSION=$PW_TMP/proc_version
export PERFWATCH_NO_CGROUPS=1
echo "Linux version 6.1.0-13-amd64 (debian) #1 SMP" >"$PERFWATCH_PROC_VERSION"
runner_config r1 "kernel_tree: $KT" 'reboot_entry: "Test Linux>Linux {release}"'
sed -i 's/^boot: none/boot: reboot/' "$PW_TMP/r1/runner.yaml"
STATE=$PW_TMP/r1/work/boot.state

runner() {
	PATH=$PW_TMP/fakebin:$PATH start_runner r1
	RUNNER=$!
}
dead() { ! kill -0 "$RUNNER" 2>/dev/null; }
state_is() { [ "$(job_state "$1")" = "$2" ]; }
submit() {
	http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"rb\",
	    \"base\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"},
	    \"candidate\": {\"tree\": \"$PW_TMP/linux\", \"commit\": \"$SHA\"}}" >"$PW_TMP/code"
	[ "$(cat "$PW_TMP/code")" = 201 ] || { fail submit "$(cat "$PW_TMP/code") $(cat "$PW_TMP/body")"; finish; }
	base=$(jfield pairs.0.base_job <"$PW_TMP/body")
	cand=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
}

# --- 1. the configured entry ---
submit
runner
if wait_until 60 dead && grep -q "^reboot $" "$FAKE_LOG"; then
	pass reboot_ends_the_runner
else
	fail reboot_ends_the_runner "$(cat "$FAKE_LOG" 2>&1)"; show_logs; finish
fi
want="installkernel 6.1.158-pw901 $img/bzImage $img/System.map /boot
update-grub 
grub-reboot Test Linux>Linux 6.1.158-pw901
reboot "
[ "$(cat "$FAKE_LOG")" = "$want" ] && pass boot_programs_with_the_configured_entry ||
    fail boot_programs_with_the_configured_entry "$(cat "$FAKE_LOG")"
python3 - "$STATE" "$base" <<'PY' && pass state_written_before_boot || fail state_written_before_boot "$(cat "$STATE" 2>&1)"
import sys
kv = dict(l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()[1:])
assert kv["job"] == sys.argv[2] and kv["step"] == "boot" and kv["method"] == "reboot", kv
assert kv["build_id"] == "-pw901" and kv["release"] == "6.1.158-pw901", kv
PY
check booted_the_new_kernel grep -q "6.1.158-pw901" "$PERFWATCH_PROC_VERSION"
runner
wait_until 60 state_is "$base" success && pass base_resumed_and_succeeds ||
    { fail base_resumed_and_succeeds "$(job_state "$base")"; show_logs; }
http GET "/api/v1/jobs/$base" >/dev/null
python3 - "$PW_TMP/body" <<'PY' && pass resumed_after_reboot_logged || fail resumed_after_reboot_logged "$(head -c 1500 "$PW_TMP/body")"
import json, sys
j = json.load(open(sys.argv[1]))
assert sorted(r["index"] for r in j["runs"]) == [0, 1], j["runs"]
assert "boot: resumed after reboot on Linux version 6.1.158-pw901" in j["log"], j["log"][-1500:]
for r in j["runs"]:
    assert r["host_state"]["kernel_build"]["boot"] == "reboot", r["host_state"]
PY
# The candidate boots next (the runner dies again), then resumes.
wait_until 60 dead && runner
wait_until 60 state_is "$cand" success && pass candidate_resumed_and_succeeds ||
    { fail candidate_resumed_and_succeeds "$(job_state "$cand")"; show_logs; }
stop_pid "$RUNNER"

# --- 2. Debian's entry on this "distribution": GRUB's default boots ---
sed -i '/^reboot_entry:/d' "$PW_TMP/r1/runner.yaml"
echo "Linux version 6.1.0-13-amd64 (debian) #1 SMP" >"$PERFWATCH_PROC_VERSION"
: >"$FAKE_LOG"
submit
runner
wait_until 60 dead
grep -qxF "grub-reboot Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux 6.1.158-pw901" "$FAKE_LOG" &&
    pass default_entry_is_debians || fail default_entry_is_debians "$(cat "$FAKE_LOG")"
runner
wait_until 60 state_is "$base" failed
wrong_kernel_failed "$base"
stop_pid "$RUNNER"
finish
