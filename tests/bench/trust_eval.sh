#!/usr/bin/env bash
# make eval-trust: how far perfwatch can be trusted on this machine.
#
# A real perfwatchd and perfwatch-runner on 127.0.0.1 follow a git tree
# whose benchmark is a compiled memory walk (tests/bench/trust/walk.c:
# ns_per_op, lower is better, min_effect 2 %; its work is STEPS_PER_OP in
# walk.h).  The tree gets NOOPS commits that change only a comment, and
# for each size in SIZES, CHANGES excursions: a commit that lengthens
# the walk by that much and, later, its revert (+10 % and -9.1 %: both
# real changes to find).  Two jobs follow the tree, the old schedule
# (OLD_KEYS, `rounds: 1`) and the new defaults (NEW_KEYS, nothing: the
# tree's own defaults), so every commit is measured by both, their pairs
# interleaved in time on one runner.  Meanwhile a disturber
# (tests/bench/trust_disturb.c) alternates busy and idle phases of 0.5 to
# 3 s on every CPU.  The SMTP server of the alert tests receives the
# daemon's reports.  At the end it prints, per schedule: false alarms
# and mails per 100 no-ops, the share of each size of change found, mean
# runs per side and the runner's time, then the issue's goals with PASS
# or MISS (tests/bench/trust_report.py).
#
# Exit 0 when the evaluation ran, whatever it found; 1 when it could not
# finish (timeout, lost pairs); 2 when the harness broke (a daemon or
# runner died, a server did not start, no verdicts).
#
# Knobs (environment):
#   NOOPS=24           no-op commits
#   CHANGES=2          excursions per size (each: a slowdown and its revert)
#   SIZES="3 10 25"    sizes of the real changes, percent
#   SEED=1             commit order and the disturber's phases
#   DISTURB=1          0: no disturber (the quiet machine, for comparison)
#   DISTURB_MIB=16     MiB each busy CPU streams over (0: a pure spin)
#   DISTURB_PHASES=0.5,3   shortest and longest phase, seconds
#   OLD_KEYS="rounds: 1\nmax_runs: 12"   job keys of the old schedule (YAML, "\n" between)
#   NEW_KEYS=""        job keys of the new schedule (empty: the defaults)
#   RUNS=, MAX_RUNS=   set runs / max_runs in both jobs (empty: defaults)
#   MIN_EFFECT=2%      metrics.ns_per_op.min_effect
#   PIN=1              pin the benchmark to one CPU (host.cpus, as the
#                      demo does; 0: no host.cpus)
#   BISECT=0           1: leave bisect.auto at its default (change points
#                      then start bisections, which add pairs of their own)
#   EVAL_TIMEOUT=5400  seconds to wait for the verdicts
#   PW_KEEP=1          keep the scratch directory (lib.sh)
# The report, the verdict of every pair, the commits and the disturber's
# phases are also kept in $OUT/eval-trust/YYYYmmdd-HHMMSS/ (UTC start).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
export PERFWATCH_BIN=${PERFWATCH_BIN:-$OUT/bin}
DISTURB_BIN=${DISTURB_BIN:-$OUT/rel/bench/trust_disturb}
NOOPS=${NOOPS:-24}
CHANGES=${CHANGES:-2}
SIZES=${SIZES:-3 10 25}
SEED=${SEED:-1}
DISTURB=${DISTURB:-1}
DISTURB_MIB=${DISTURB_MIB:-16}
DISTURB_PHASES=${DISTURB_PHASES:-0.5,3}
OLD_KEYS=${OLD_KEYS-'rounds: 1\nmax_runs: 12'}
NEW_KEYS=${NEW_KEYS-}
RUNS=${RUNS:-}
MAX_RUNS=${MAX_RUNS:-}
MIN_EFFECT=${MIN_EFFECT:-2%}
PIN=${PIN:-1}
BISECT=${BISECT:-0}
EVAL_TIMEOUT=${EVAL_TIMEOUT:-5400}
POLL=10
STEPS=10000	# STEPS_PER_OP in tests/bench/trust/walk.h

. "$top/tests/e2e/lib.sh"
. "$top/tests/e2e/lib_runner.sh"
. "$top/tests/e2e/lib_git.sh"
. "$top/tests/e2e/lib_alerts.sh"
REPORT=$here/trust_report.py
SAVE=$OUT/eval-trust/$(date -u +%Y%m%d-%H%M%S)

say() { printf '[%s] %s\n' "$(hms $SECONDS)" "$*"; }
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# broke WHY: the harness itself failed: logs, exit 2.
broke() {
	echo "eval-trust: harness broke: $*" >&2
	[ -n "$PW_DIR" ] && show_logs >&2
	exit 2
}
trap 'exit 130' INT TERM

for p in perfwatchd perfwatch-runner perfwatch; do
	[ -x "$PW_BIN/$p" ] || broke "$PW_BIN/$p is missing (make all)"
done
[ "$DISTURB" = 0 ] || [ -x "$DISTURB_BIN" ] ||
    broke "$DISTURB_BIN is missing (make eval-trust builds it)"
for c in git cc make curl sqlite3; do
	command -v $c >/dev/null || broke "$c is not installed (make deps)"
done
case "$NOOPS $CHANGES" in *[!0-9\ ]*) broke "NOOPS and CHANGES are counts" ;; esac

D=$PW_TMP/eval
mkdir -p "$D" "$SAVE"
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	if c=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null); then
		git -C "$top" diff --quiet HEAD || c="$c with local changes"
	else
		c=unknown
	fi
	echo "commit=$c"
	echo "branch=$(git -C "$top" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)"
	echo "cpus=$(nproc)"
	echo "poll=$POLL"
	echo "maildir=$PW_TMP/smtp"
	echo "start=$(date +%s)"
} >"$D/meta"

# ---- the benchmark's tree, first commit -----------------------------------
SRC=$PW_TMP/walk
mkdir -p "$SRC"
g "$SRC" init -q
cp "$here/trust/walk.c" "$here/trust/walk.h" "$here/trust/Makefile" "$SRC/"
grep -q "^#define STEPS_PER_OP $STEPS\$" "$SRC/walk.h" ||
    broke "walk.h does not say STEPS_PER_OP $STEPS"
g "$SRC" add -A
g "$SRC" commit -qm "walk: a dependent walk over 64 MiB"
c0=$(g "$SRC" rev-parse HEAD)

# ---- the daemon: one tree, a job per schedule, the alert servers ----------
alert_servers_or_broke
daemon_config "$PW_TMP/d" r1
tree_yaml walk "file://$SRC" master
alerts_yaml_unlimited >>"$PW_DIR/daemon.yaml"

: >"$D/schedules.tsv"
job_yaml() {	# NAME KEYS
	local f=$PW_DIR/jobs/$1.yaml
	cat >"$f" <<YAML
# eval-trust: every commit of the walk tree, ns_per_op against its parent.
name: $1
parser: keyvalue
build: [make]
command: ["{workdir}/walk"]
trigger:
  trees: [walk]
metrics:
  ns_per_op: {better: lower, min_effect: $MIN_EFFECT}
timeout: 2m
YAML
	[ -n "$RUNS" ] && echo "runs: $RUNS" >>"$f"
	[ -n "$MAX_RUNS" ] && echo "max_runs: $MAX_RUNS" >>"$f"
	# The verdicts of the pairs are measured, not what bisections add.
	[ "$BISECT" = 1 ] || printf 'bisect:\n  auto: false\n' >>"$f"
	[ "$PIN" = 1 ] && pin_yaml "$f"
	[ -n "$2" ] && printf '%b\n' "$2" >>"$f"
	return 0
}
for s in old new; do
	if [ $s = old ]; then keys=$OLD_KEYS; else keys=$NEW_KEYS; fi
	job_yaml "trust-$s" "$keys"
	printf '%s\ttrust-%s\t%s\n' $s $s "$(printf '%b' "${keys:--}" | paste -sd';' - | sed 's/;/; /g')" \
	    >>"$D/schedules.tsv"
done
"$PW_BIN/perfwatchd" -n -c "$PW_DIR/daemon.yaml" >"$D/config-check.txt" 2>&1 ||
    broke "the configuration is refused: $(cat "$D/config-check.txt")"
start_daemon "$PW_DIR" || broke "perfwatchd did not start"
wait_tip master "$c0" 60 || broke "the watcher did not see the first commit"
runner_config r1
start_runner r1
RUNNER_PID=$!

# ---- the disturber ----------------------------------------------------------
if [ "$DISTURB" = 1 ]; then
	spawn "$D/disturb.out" "$DISTURB_BIN" -d $((EVAL_TIMEOUT + 600)) \
	    -m "$DISTURB_MIB" -p "$DISTURB_PHASES" -s "$SEED" -l "$D/disturb.log"
	DISTURB_PID=$!
	echo "disturber=busy/idle phases of ${DISTURB_PHASES/,/-} s on each CPU, $DISTURB_MIB MiB streamed per busy CPU" >>"$D/meta"
	say "disturber started (pid $DISTURB_PID)"
else
	DISTURB_PID=
	echo "disturber=off" >>"$D/meta"
fi

# ---- the commits -------------------------------------------------------------
/usr/bin/python3 "$REPORT" plan "$SEED" "$NOOPS" "$CHANGES" "$SIZES" >"$D/plan.txt" ||
    broke "no plan"
: >"$D/commits.tsv"
nnoop=0
while read -r kind size k; do
	case $kind in
	noop)
		nnoop=$((nnoop + 1))
		sed -i "s|^/\* note: .*\*/\$|/* note: reworded in no-op $nnoop */|" "$SRC/walk.h"
		subj="walk: reword a note (no-op $nnoop)"
		size=0 k=0
		;;
	up)
		v=$(awk -v s="$STEPS" -v p="$size" 'BEGIN { printf "%d", s * (1 + p / 100) + 0.5 }')
		sed -i "s/^#define STEPS_PER_OP .*/#define STEPS_PER_OP $v/" "$SRC/walk.h"
		subj="walk: $v steps per op (+$size% #$k)"
		;;
	down)
		sed -i "s/^#define STEPS_PER_OP .*/#define STEPS_PER_OP $STEPS/" "$SRC/walk.h"
		subj="walk: back to $STEPS steps per op (revert +$size% #$k)"
		;;
	esac
	g "$SRC" commit -qam "$subj" || broke "commit failed: $subj"
	sha=$(g "$SRC" rev-parse HEAD)
	printf '%s\t%s\t%s\t%s\t%s\n' "$sha" "$kind" "$size" "$k" "$subj" >>"$D/commits.tsv"
	# One commit per fetch: the trigger then makes the pairs of both
	# jobs for it together, so the queue takes the schedules in turns,
	# commit by commit (a batch of commits is queued job by job).
	wait_tip master "$sha" 60 || broke "the watcher did not see $subj"
done <"$D/plan.txt"
n=$(wc -l <"$D/commits.tsv")
say "$n commits ($NOOPS no-ops, $CHANGES excursions of each of ${SIZES// /, } %), two jobs each"

# ---- waiting for every final verdict ------------------------------------------
deadline=$((SECONDS + EVAL_TIMEOUT))
last_print=-60
idle_since=
complete=0
while [ $SECONDS -lt $deadline ]; do
	kill -0 "$PW_DAEMON_PID" 2>/dev/null || broke "perfwatchd died"
	kill -0 "$RUNNER_PID" 2>/dev/null || broke "perfwatch-runner died"
	[ -z "$DISTURB_PID" ] || kill -0 "$DISTURB_PID" 2>/dev/null ||
	    broke "the disturber died: $(cat "$D/disturb.out")"
	cut -d' ' -f1 /proc/loadavg >>"$D/load.txt"
	ov=$(curl -s --max-time 30 "$PW_URL/api/v1/overview") || ov=
	busy=$(printf '%s' "$ov" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["queued"] + v["running"])' 2>/dev/null) || busy=?
	if [ "$busy" = 0 ] || [ $((SECONDS - last_print)) -ge 60 ]; then
		line=$(python3 "$REPORT" status "$PW_URL" "$D" 2>&1)
		st=$?
		if [ $((SECONDS - last_print)) -ge 60 ] || [ $st = 0 ]; then
			say "$line; load $(cut -d' ' -f1 /proc/loadavg)"
			last_print=$SECONDS
		fi
		if [ $st = 0 ]; then
			complete=1
			break
		fi
	fi
	# Nothing queued or running and still not final: give the verdict
	# thread a minute, then call the pairs lost.
	if [ "$busy" = 0 ]; then
		idle_since=${idle_since:-$SECONDS}
		[ $((SECONDS - idle_since)) -lt 120 ] || break
	else
		idle_since=
	fi
	sleep $POLL
done
echo "end=$(date +%s)" >>"$D/meta"

# The reports of the last verdicts: until no delivery is pending.
pending() {
	curl -s --max-time 30 "$PW_URL/api/v1/alerts?state=pending&limit=1" |
	    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["alerts"] else 1)'
}
for _ in $(seq 60); do
	pending 2>/dev/null || break
	sleep 2
done
sleep 2
[ -z "$DISTURB_PID" ] || stop_pid "$DISTURB_PID"
kill -0 "$PW_DAEMON_PID" 2>/dev/null || broke "perfwatchd died"

echo
python3 "$REPORT" report "$PW_URL" "$D"
rc=$?
cp "$D/report.md" "$D/verdicts.tsv" "$D/plan.txt" "$D/commits.tsv" "$SAVE/" 2>/dev/null
[ "$DISTURB" = 1 ] && cp "$D/disturb.log" "$SAVE/" 2>/dev/null
echo
echo "(report, verdicts and commits also in $SAVE/)"
[ $rc = 0 ] || broke "no verdicts to report"
if [ $complete != 1 ]; then
	echo "eval-trust: not every pair has a final verdict (timeout $EVAL_TIMEOUT s, or pairs lost)" >&2
	exit 1
fi
exit 0
