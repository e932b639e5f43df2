#!/usr/bin/env bash
# make bench-latency: the time from a series posted to a mailing list to
# its report mailed, on this machine, next to the goals it is held to.
#
# A real perfwatchd and perfwatch-runner on 127.0.0.1 watch a
# public-inbox archive this script writes (a git repository, one message
# a commit, in file m) and a tree whose benchmark takes BENCH_S seconds
# in all (RUNS runs a side, each BENCH_S / (2 * RUNS) s of sleep, then a
# score).  SERIES one-patch series that halve the score are posted one
# after the other, each once the report of the one before was mailed to
# the SMTP server of the alert tests.  A message's Date is the moment
# it is committed to the archive, so "posted" is the archive commit's
# time.  Per series, from GET /api/v1/series/{id} (the times the store
# keeps): pickup (posted to seen), apply, queue (applied to the first
# run started), measure (the benchmark itself: first run started to last
# uploaded), verdict and mail (the last upload to the report sent), and
# total (posted to mailed); next to them, from the same run, the goals:
# pickup <= the inbox's poll interval + 5 s, and total <= measure + 60 s
# (the benchmark's own time is the reference: what any CI must spend).
#
# Prints a Markdown table for docs/BENCHMARKS.md (also kept in
# $OUT/bench-latency/YYYYmmdd-HHMMSS/ with the daemon's log).  Exit 0
# when it ran, whatever it found; 1 when a report did not come within
# TIMEOUT; 2 when the harness broke.
#
# Knobs (environment):
#   SERIES=2      series posted, one after the other
#   BENCH_S=60    the benchmark's seconds per pair (both sides, all runs)
#   RUNS=5        runs a side (max_runs the same: no extension)
#   POLL=5        the inbox's poll interval, seconds
#   TIMEOUT=600   seconds to wait for each report
#   PW_KEEP=1     keep the scratch directory (lib.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
export PERFWATCH_BIN=${PERFWATCH_BIN:-$OUT/bin}
SERIES=${SERIES:-2}
BENCH_S=${BENCH_S:-60}
RUNS=${RUNS:-5}
POLL=${POLL:-5}
TIMEOUT=${TIMEOUT:-600}

. "$top/tests/e2e/lib.sh"
. "$top/tests/e2e/lib_runner.sh"
. "$top/tests/e2e/lib_git.sh"
. "$top/tests/e2e/lib_alerts.sh"
SAVE=$OUT/bench-latency/$(date -u +%Y%m%d-%H%M%S)

broke() {
	echo "bench-latency: harness broke: $*" >&2
	[ -n "$PW_DIR" ] && show_logs >&2
	exit 2
}
trap 'exit 130' INT TERM
case "$SERIES $BENCH_S $RUNS $POLL $TIMEOUT" in
*[!0-9\ ]*) broke "SERIES, BENCH_S, RUNS, POLL and TIMEOUT are counts" ;;
esac
[ "$RUNS" -ge 1 ] && [ "$SERIES" -ge 1 ] || broke "RUNS and SERIES are at least 1"
for p in perfwatchd perfwatch-runner; do
	[ -x "$PW_BIN/$p" ] || broke "$PW_BIN/$p is missing (make all)"
done
for c in git curl sqlite3 python3; do
	command -v $c >/dev/null || broke "$c is not installed (make deps)"
done
mkdir -p "$SAVE"

# ---- the tree: a benchmark of BENCH_S seconds a pair --------------------------
SRC=$PW_TMP/app
src_init "$SRC"
# Milliseconds of sleep per run: the pair's 2 * RUNS runs make BENCH_S.
ms=$((BENCH_S * 1000 / (2 * RUNS)))
cat >"$SRC/bench.sh" <<SH
sleep $((ms / 1000)).$(printf '%03d' $((ms % 1000)))
v=\$(cat "\$(dirname "\$0")/value")
echo "score=\$((v + \$\$ % 7))"
SH
echo 1000 >"$SRC/value"
g "$SRC" add -A
g "$SRC" commit -qm "bench: a score"
c1=$(g "$SRC" rev-parse HEAD)

INBOX=$PW_TMP/inbox
git -c init.defaultBranch=master init -q "$INBOX"
post() {	# post FILE: one message, one archive commit, dated now
	sed -e '1{/^From [0-9a-f]* /d}' \
	    -e "s/^Date: .*/Date: $(LC_ALL=C date -R)/" "$1" >"$INBOX/m"
	g "$INBOX" add m
	g "$INBOX" commit -qm "$(grep -m1 '^Subject:' "$1" | cut -c10-)"
}
printf 'From: a@x\nSubject: hello\nMessage-Id: <old@x>\nDate: %s\n\nhi\n' \
    "$(LC_ALL=C date -R)" >"$PW_TMP/old.msg"
post "$PW_TMP/old.msg"

# ---- the daemon, the runner, the SMTP server ----------------------------------
alert_servers_or_broke
daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
inboxes:
  - {name: lm, url: "file://$INBOX", poll: ${POLL}s, tree: app, branch: master}
$(alerts_yaml_unlimited)
YAML
score_job_yaml "$RUNS" "$RUNS" "timeout: $((BENCH_S + 60))s\nbisect:\n  auto: false"
start_daemon "$PW_TMP/d" || broke "perfwatchd did not start"
wait_tip master "$c1" 60 || broke "the watcher did not see the tree"
seen_is() { [ "$(sql "SELECT last_commit FROM inbox_state WHERE name = 'lm'")" = "$(g "$INBOX" rev-parse HEAD)" ]; }
wait_until 60 seen_is || broke "the watcher did not read the archive"
runner_config r1
start_runner r1

# ---- the series, one after the other ------------------------------------------
mailed() { [ "$(sql "SELECT count(*) FROM alerts WHERE kind = 'email' AND state = 'sent'")" -ge "$1" ]; }
: >"$SAVE/latency.jsonl"
status=0
for k in $(seq 1 "$SERIES"); do
	g "$SRC" checkout -qb "topic$k" "$c1"
	echo $((1000 / (k + 1))) >"$SRC/value"
	g "$SRC" commit -qam "memcg: lower the score ($k)"
	rm -rf "$PW_TMP/out"
	g "$SRC" format-patch -q --thread -o "$PW_TMP/out" -1
	g "$SRC" checkout -q master
	post "$PW_TMP"/out/0001-*.patch
	if ! wait_until "$TIMEOUT" mailed "$k"; then
		echo "bench-latency: series $k: no report within $TIMEOUT s" >&2
		status=1
		break
	fi
	id=$(sql "SELECT id FROM series ORDER BY id DESC LIMIT 1")
	[ "$(http GET "/api/v1/series/$id")" = 200 ] || broke "GET /api/v1/series/$id"
	cp "$PW_TMP/body" "$SAVE/series-$k.json"
	/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["latency"]))' \
	    "$PW_TMP/body" >>"$SAVE/latency.jsonl"
done
cp "$PW_DIR/daemon.log" "$SAVE/daemon.log" 2>/dev/null
stop_pid "$PW_DAEMON_PID"

# ---- the table ------------------------------------------------------------------
c=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git -C "$top" diff --quiet HEAD 2>/dev/null || c="$c with local changes"
/usr/bin/python3 - "$SAVE/latency.jsonl" "$POLL" "$BENCH_S" "$RUNS" "$c" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY' | tee "$SAVE/table.md"
import json, sys
path, poll, bench, runs, commit, load = sys.argv[1:]
poll, bench = int(poll), int(bench)
rows = [json.loads(l) for l in open(path) if l.strip()]
print("commit %s, %d series, benchmark %d s a pair (%s runs a side), "
      "inbox poll %d s, load average %s at the end" % (commit, len(rows), bench, runs, poll, load))
print()
print("| series | pickup | apply | queue | measure (the benchmark) | verdict + mail | total | goal: pickup <= %d s | goal: total <= measure + 60 s |" % (poll + 5))
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
def s(v):
    return "%d s" % v if isinstance(v, int) and v >= 0 else "-"
for i, l in enumerate(rows, 1):
    st = l["stages"]
    tail = (st["verdict"] + st["mail"]) if st.get("verdict") is not None and st.get("mail") is not None else None
    ok1 = st["pickup"] is not None and st["pickup"] <= poll + 5
    ok2 = st["total"] is not None and st["measure"] is not None and st["total"] <= st["measure"] + 60
    print("| %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        i, s(st["pickup"]), s(st["apply"]), s(st["queue"]), s(st["measure"]), s(tail),
        s(st["total"]), "met" if ok1 else "MISSED",
        "met (%s over)" % s(st["total"] - st["measure"]) if ok2 else "MISSED"))
PY
exit $status
