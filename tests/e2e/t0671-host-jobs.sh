#!/usr/bin/env bash
# A job's host: section on a real daemon and runner, and the recorded host
# state: the benchmark (a python3 program that reports its own CPU
# affinity and the THP mode it sees) runs pinned to CPU 1 with THP
# "never", after a warm-up that is executed but not uploaded, with
# drop_caches before each run and a pause between runs; each run records
# the host state; THP is back byte for byte after the job.  Then a pair
# whose two sides ran under different THP modes (the test flips THP
# between two `--once` runners) is marked suspect, in the API and on the
# dashboard, while the first pair is not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

THP=/sys/kernel/mm/transparent_hugepage/enabled
if [ "$(id -u)" != 0 ] || [ ! -w $THP ] || [ "$(nproc)" -lt 2 ]; then
	echo "SKIP host_jobs: needs root, a writable $THP and 2 CPUs"
	finish
fi
same_bytes() { cat "$1" | cmp - "$2"; }
cat $THP >"$PW_TMP/thp.before"
restore_thp() { cat "$PW_TMP/thp.before" | sed 's/.*\[\(.*\)\].*/\1/' >$THP; }

daemon_config "$PW_TMP/d" r1
PROG="import os; a = sorted(os.sched_getaffinity(0)); t = open('$THP').read(); print('ncpus=%d' % len(a)); print('cpu_first=%d' % a[0]); print('thp_never=%d' % ('[never]' in t)); print('score=100')"
cat >"$PW_DIR/jobs/pinned.yaml" <<YAML
name: pinned
parser: keyvalue
command: [python3, -c, "$PROG"]
runs: 2
max_runs: 2
timeout: 30s
host:
  cpus: "1"
  thp: never
  drop_caches: true
  warmup: 1
  pause: 1s
metrics:
  ncpus: {better: higher, min_effect: 50%}
  cpu_first: {better: higher, min_effect: 50%}
  thp_never: {better: higher, min_effect: 50%}
  score: {better: higher, min_effect: 50%}
YAML
cat >"$PW_DIR/jobs/plain.yaml" <<YAML
name: plain
parser: keyvalue
command: [python3, -c, "print('score=100')"]
runs: 1
max_runs: 1
timeout: 30s
metrics:
  score: {better: higher, min_effect: 50%}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
runner_config r1

# ---- the host: keys ----
pw_admin submit --job pinned --json >"$PW_TMP/s1.json" 2>&1 || fail submit1 "$(cat "$PW_TMP/s1.json")"
p1=$(jfield pairs.0.pair_id <"$PW_TMP/s1.json")
b1=$(jfield pairs.0.base_job <"$PW_TMP/s1.json")
start_runner r1
rpid=$!
wait_until 120 jobs_in_state success 2 || fail pinned_jobs_succeed "$(pw jobs; show_logs)"
stop_pid "$rpid"
http GET "/api/v1/jobs/$b1" >/dev/null
cp "$PW_TMP/body" "$PW_TMP/b1.json"
python3 - "$PW_TMP/b1.json" <<'PY' >"$PW_TMP/b1.out" 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
runs = [r for r in j["runs"]]
errs = []
if sorted(r["index"] for r in runs) != [0, 1]:
    errs.append("runs stored: %r (the warm-up must not be)" % [r["index"] for r in runs])
for r in runs:
    m = {x["name"]: x["value"] for x in r["metrics"]}
    if m.get("ncpus") != 1 or m.get("cpu_first") != 1:
        errs.append("run %d not pinned to CPU 1: %r" % (r["index"], m))
    if m.get("thp_never") != 1:
        errs.append("run %d did not see THP never" % r["index"])
    hs = r.get("host_state") or {}
    for k, v in (("pinning", "1"), ("thp", "never"), ("drop_caches", "done")):
        if hs.get(k) != v:
            errs.append("run %d host_state.%s = %r" % (r["index"], k, hs.get(k)))
    for k in ("governor", "turbo", "smt", "cmdline", "microcode", "kernel"):
        if not hs.get(k):
            errs.append("run %d host_state has no %s" % (r["index"], k))
log = j.get("log") or ""
if "warm-up 1/1: exit 0" not in log or "not reported" not in log:
    errs.append("no warm-up in the log: %s" % log[-2000:])
if "host.thp: never for this job" not in log or "host.cpus: benchmark on CPUs 1" not in log:
    errs.append("host: lines missing in the log")
print("\n".join(errs))
sys.exit(1 if errs else 0)
PY
[ $? = 0 ] && pass host_keys_pin_thp_warmup_drop_caches || fail host_keys_pin_thp_warmup_drop_caches "$(cat "$PW_TMP/b1.out")"
same_bytes $THP "$PW_TMP/thp.before" && pass job_thp_restored_byte_for_byte ||
    { fail job_thp_restored_byte_for_byte "$(cat $THP)"; restore_thp; }

# ---- suspect: the two sides ran under different THP modes ----
pw_admin submit --job plain --json >"$PW_TMP/s2.json" 2>&1 || fail submit2 "$(cat "$PW_TMP/s2.json")"
p2=$(jfield pairs.0.pair_id <"$PW_TMP/s2.json")
cur=$(sed 's/.*\[\(.*\)\].*/\1/' $THP)
[ "$cur" = never ] && other=madvise || other=never
"$PW_BIN/perfwatch-runner" -c "$PW_TMP/r1/runner.yaml" --once >"$PW_TMP/once1.log" 2>&1
echo "$other" >$THP
"$PW_BIN/perfwatch-runner" -c "$PW_TMP/r1/runner.yaml" --once >"$PW_TMP/once2.log" 2>&1
restore_thp
same_bytes $THP "$PW_TMP/thp.before" || fail thp_back "$(cat $THP)"

pair_field() { http GET "/api/v1/pairs/$1" >/dev/null; jfield "$2" <"$PW_TMP/body"; }
has_cmp() { [ "$(pair_field "$1" comparisons.0.metric 2>/dev/null)" != "" ]; }
wait_until 60 has_cmp "$p1" || fail pair1_compared "$(pair_field "$p1" comparisons)"
wait_until 60 has_cmp "$p2" || fail pair2_compared "$(cat "$PW_TMP/once1.log" "$PW_TMP/once2.log")"
s1=$(pair_field "$p1" suspect)
s2=$(pair_field "$p2" suspect)
[ "$s1" = null ] && pass same_state_not_suspect || fail same_state_not_suspect "$s1"
case $s2 in
*"thp: "*"(base) vs "*"(candidate)"*) pass different_thp_is_suspect ;;
*) fail different_thp_is_suspect "suspect: $s2" ;;
esac
curl -s "$PW_URL/pair/$p2" >"$PW_TMP/p2.html"
curl -s "$PW_URL/pair/$p1" >"$PW_TMP/p1.html"
grep -q 'class="badge v-suspect" title="thp: ' "$PW_TMP/p2.html" &&
    ! grep -q 'v-suspect"' "$PW_TMP/p1.html" &&
    pass dashboard_marks_suspect || fail dashboard_marks_suspect "$(grep -o 'v-suspect[^<]*' "$PW_TMP/p2.html" | head -3)"
http GET "/api/v1/comparisons?pair=$p2" >/dev/null
case $(jfield comparisons.0.suspect <"$PW_TMP/body") in
*"thp: "*) pass comparisons_api_carries_suspect ;;
*) fail comparisons_api_carries_suspect "$(head -c 600 "$PW_TMP/body")" ;;
esac
finish
