#!/usr/bin/env bash
# perfwatch-runner host check|tune|reset on this machine, for real:
# `host check --json` against the real /sys and /proc (what this VM lacks
# must be "unavailable", with no state); `host tune` without root changes
# nothing and says so; as root, a tune/reset round trip on the knobs that
# exist here (THP enabled and defrag under /sys/kernel/mm/
# transparent_hugepage) leaves each file byte for byte as it was, and an
# irqbalance (a stand-in program of that name, since none runs here) is
# stopped by tune and started again by reset.  The fake-root readers are
# tests/unit/host_test.c.
. "$(dirname "$0")/lib.sh"

R=$PW_BIN/perfwatch-runner
THP=/sys/kernel/mm/transparent_hugepage
sel() { sed 's/.*\[\(.*\)\].*/\1/' "$1"; }
# Byte for byte through a pipe: cmp -s trusts st_size, which sysfs fakes.
same_bytes() { cat "$1" | cmp - "$2"; }

# ---- check, real ----
"$R" host check --json >"$PW_TMP/check.json" 2>"$PW_TMP/check.err"
rc=$?
python3 - "$PW_TMP/check.json" "$rc" <<'PY' >"$PW_TMP/check.out" 2>&1
import json, os, re, sys
doc = json.load(open(sys.argv[1]))
rc = int(sys.argv[2])
items = {i["name"]: i for i in doc["items"]}
errs = []
for i in doc["items"]:
    if i["status"] not in ("ready", "not-ready", "unavailable", "info"):
        errs.append("bad status %r" % i)
    if i["status"] == "unavailable" and i.get("state") is not None:
        errs.append("unavailable with a state: %r" % i)
nr = sum(1 for i in doc["items"] if i["status"] == "not-ready")
if nr != doc["not_ready"] or doc["ready"] != (nr == 0):
    errs.append("ready/not_ready disagree with the items")
if rc != (1 if nr else 0):
    errs.append("exit %d with %d not ready" % (rc, nr))
thp = "/sys/kernel/mm/transparent_hugepage/enabled"
if os.path.exists(thp):
    want = re.search(r"\[(.*?)\]", open(thp).read()).group(1)
    if items["thp.enabled"]["state"] != want:
        errs.append("thp.enabled %r, file says %r" % (items["thp.enabled"], want))
elif items["thp.enabled"]["status"] != "unavailable":
    errs.append("thp.enabled should be unavailable")
if not os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq"):
    if items.get("cpufreq", {}).get("status") != "unavailable":
        errs.append("no cpufreq here, but: %r" % items.get("cpufreq"))
elif items["cpu0.governor"]["state"] != open(
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read().strip():
    errs.append("cpu0.governor differs from sysfs")
# cpus.speed: a time for each CPU this process may use, the spread of
# those times named with the two CPUs, judged against x1.20 (its speed
# is the machine's, never asserted here).
allowed = sorted(os.sched_getaffinity(0))
cs = items.get("cpus.speed")
if len(allowed) < 2:
    if cs is None or cs["state"] != "one CPU":
        errs.append("one CPU, but cpus.speed %r" % cs)
else:
    per = {c: items.get("cpu%d.speed_ms" % c) for c in allowed}
    if any(v is None or not float(v["state"]) > 0 for v in per.values()):
        errs.append("a CPU without a time: %r" % per)
    ms = [float(v["state"]) for v in per.values() if v]
    m = re.fullmatch(r"x([0-9.]+) \(slowest cpu(\d+) ([0-9.]+) ms, fastest cpu(\d+) ([0-9.]+) ms\)", cs["state"] if cs else "")
    if not m:
        errs.append("cpus.speed %r" % cs)
    else:
        spread = float(m.group(1))
        if abs(spread - max(ms) / min(ms)) > 0.01 or float(m.group(3)) != max(ms) or float(m.group(5)) != min(ms):
            errs.append("cpus.speed %r, per CPU %r" % (cs, ms))
        # (printed to 2 places: at x1.20 itself either is right)
        if cs["status"] != ("not-ready" if spread > 1.20 else "ready") and abs(spread - 1.20) > 0.006:
            errs.append("cpus.speed judged %r" % cs)
        if cs["status"] == "not-ready" and "host.cpus" not in (cs["note"] or ""):
            errs.append("no advice in %r" % cs)
    print("# cpus.speed here: %s %s" % (cs["state"], cs["status"]) if cs else "")
if items["kernel"]["state"] != os.uname().release:
    errs.append("kernel %r" % items["kernel"])
if items["cmdline"]["state"] != open("/proc/cmdline").read().strip():
    errs.append("cmdline differs")
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
PY
[ $? = 0 ] && pass check_json_matches_this_machine ||
    fail check_json_matches_this_machine "$(cat "$PW_TMP/check.out" "$PW_TMP/check.err")"
grep '^# cpus.speed' "$PW_TMP/check.out"
"$R" host check >"$PW_TMP/check.txt" 2>&1
grep -Eq '^(benchmark-ready|[0-9]+ items? not benchmark-ready)$' "$PW_TMP/check.txt" &&
    grep -q '^thp.enabled ' "$PW_TMP/check.txt" &&
    pass check_text || fail check_text "$(cat "$PW_TMP/check.txt")"

if [ ! -w $THP/enabled ] || [ ! -w $THP/defrag ] || [ "$(id -u)" != 0 ]; then
	echo "SKIP tune_reset_round_trip: $THP not writable here (needs root and THP)"
	finish
fi

# A profile that changes both THP files from what they are now.
cur=$(sel $THP/enabled)
[ "$cur" = never ] && want=madvise || want=never
curd=$(sel $THP/defrag)
[ "$curd" = never ] && wantd=defer || wantd=never
stop_irqb=true
if pgrep -x irqbalance >/dev/null; then
	# A real one: leave this host's IRQ handling alone.
	echo "SKIP irqbalance_stop_start: a real irqbalance runs here"
	stop_irqb=false
else
	cp /bin/sleep "$PW_TMP/irqbalance"
	spawn "$PW_TMP/irqb.log" "$PW_TMP/irqbalance" 600
	ib_pid=$!
	wait_for 5 pgrep -x irqbalance >/dev/null
fi
mkdir -p "$PW_TMP/work"
cat >"$PW_TMP/runner.yaml" <<YAML
server: http://127.0.0.1:1
name: r1
token_file: $PW_TMP/token
workdir: $PW_TMP/work
host:
  thp: $want
  thp_defrag: $wantd
  stop_irqbalance: $stop_irqb
YAML
cat $THP/enabled >"$PW_TMP/enabled.before"
cat $THP/defrag >"$PW_TMP/defrag.before"

# ---- not root: nothing changes ----
# The unprivileged user must read the config (the e2e umask is 077).
chmod 755 "$PW_TMP" "$PW_TMP/work"
chmod 644 "$PW_TMP/runner.yaml"
setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$R" host tune -c "$PW_TMP/runner.yaml" >"$PW_TMP/nr.out" 2>"$PW_TMP/nr.err"
nrc=$?
[ "$nrc" = 1 ] && grep -q 'needs root (running as uid 65534); nothing was changed' "$PW_TMP/nr.err" &&
    same_bytes $THP/enabled "$PW_TMP/enabled.before" &&
    [ ! -e "$PW_TMP/work/host-tune.json" ] &&
    pass tune_without_root_changes_nothing ||
    fail tune_without_root_changes_nothing "exit $nrc: $(cat "$PW_TMP/nr.err")"

# ---- tune ----
"$R" host tune -c "$PW_TMP/runner.yaml" >"$PW_TMP/tune.out" 2>&1
trc=$?
after=$(sel $THP/enabled)
afterd=$(sel $THP/defrag)
"$R" host check -c "$PW_TMP/runner.yaml" --json >"$PW_TMP/tuned.json" 2>/dev/null
tuned_ready=$(python3 -c 'import json,sys; d={i["name"]:i["status"] for i in json.load(open(sys.argv[1]))["items"]}; print(d["thp.enabled"], d["thp.defrag"], d["irqbalance"])' "$PW_TMP/tuned.json")
# ---- reset, right away: the host must not stay tuned ----
"$R" host reset -c "$PW_TMP/runner.yaml" >"$PW_TMP/reset.out" 2>&1
rrc=$?

[ $trc = 0 ] && [ "$after" = "$want" ] && [ "$afterd" = "$wantd" ] &&
    pass tune_sets_thp || fail tune_sets_thp "exit $trc, $after/$afterd: $(cat "$PW_TMP/tune.out")"
[ "$tuned_ready" = "ready ready ready" ] && pass tuned_check_ready ||
    fail tuned_check_ready "$tuned_ready"
[ $rrc = 0 ] && same_bytes $THP/enabled "$PW_TMP/enabled.before" &&
    same_bytes $THP/defrag "$PW_TMP/defrag.before" &&
    pass reset_restores_byte_for_byte ||
    fail reset_restores_byte_for_byte "exit $rrc: $(cat "$PW_TMP/reset.out")"
[ ! -e "$PW_TMP/work/host-tune.json" ] && pass reset_removes_state ||
    fail reset_removes_state "state file left"
if [ "$stop_irqb" = true ]; then
	grep -q "irqbalance: stopped (pid $ib_pid)" "$PW_TMP/tune.out" &&
	    ! kill -0 "$ib_pid" 2>/dev/null &&
	    pass tune_stops_irqbalance || fail tune_stops_irqbalance "$(cat "$PW_TMP/tune.out")"
	np=$(pgrep -f "^$PW_TMP/irqbalance 600\$")
	[ -n "$np" ] && [ "$np" != "$ib_pid" ] &&
	    grep -q "irqbalance: started $PW_TMP/irqbalance (pid $np)" "$PW_TMP/reset.out" &&
	    pass reset_starts_irqbalance_again ||
	    fail reset_starts_irqbalance_again "$(cat "$PW_TMP/reset.out")"
	[ -n "$np" ] && kill "$np"
fi
"$R" host reset -c "$PW_TMP/runner.yaml" >"$PW_TMP/reset2.out" 2>&1
[ $? = 1 ] && grep -q 'nothing to reset' "$PW_TMP/reset2.out" &&
    pass second_reset_says_nothing_to_reset || fail second_reset_says_nothing_to_reset "$(cat "$PW_TMP/reset2.out")"
finish
