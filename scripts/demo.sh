#!/usr/bin/env bash
# make demo: a real perfwatchd and perfwatch-runner on 127.0.0.1, a real fio
# base/candidate pair on the running kernel, the verdict, and where to look.
#
#   DEMO_ONCE=1   do not wait for Ctrl-C; exit 0 only if everything worked
#   DEMO_PORT=N   the daemon's port (default 8080; a free one if taken)
#   DEMO_DIR=DIR  state directory (default ./demo; wiped at each start)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PERFWATCH_BIN:-$top/build/bin}
DIR=${DEMO_DIR:-$top/demo}
PORT=${DEMO_PORT:-8080}
ONCE=${DEMO_ONCE:-0}
pids=()

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() {
	printf 'demo: %s\n' "$*" >&2
	[ -f "$DIR/daemon.log" ] && { echo "--- daemon.log (tail)"; tail -n 20 "$DIR/daemon.log"; } >&2
	[ -f "$DIR/runner.log" ] && { echo "--- runner.log (tail)"; tail -n 20 "$DIR/runner.log"; } >&2
	exit 1
}
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'cleanup' EXIT
trap 'echo; say "stopping"; exit 0' INT TERM

for p in perfwatchd perfwatch-runner perfwatch; do
	[ -x "$BIN/$p" ] || die "$BIN/$p is missing: run make first"
done
command -v fio >/dev/null || die "fio is not installed: run make deps"

rm -rf "$DIR"
mkdir -p "$DIR/jobs" "$DIR/tokens" "$DIR/runner"
token() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
token >"$DIR/admin.token"
token >"$DIR/tokens/demo-runner.token"
chmod 600 "$DIR/admin.token" "$DIR/tokens/demo-runner.token"
cp "$top/config/examples/demo-fio.yaml" "$DIR/jobs/"

# A taken port falls back to any free one (the daemon writes it down).
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	echo "demo: port $PORT is taken, using a free one"
	PORT=0
fi
cat >"$DIR/daemon.yaml" <<YAML
listen: 127.0.0.1:$PORT
database: $DIR/perfwatch.db
mirrors: $DIR/git
public_url: http://127.0.0.1:$PORT
admin_token_file: $DIR/admin.token
jobs: [$DIR/jobs/*.yaml]
runners:
  - name: demo-runner
    token_file: $DIR/tokens/demo-runner.token
    labels: [demo]
scheduler:
  claim_wait: 5s
  lease: 30s
YAML

say "checking the configuration"
"$BIN/perfwatchd" -n -c "$DIR/daemon.yaml" || die "bad daemon configuration"

say "starting perfwatchd"
"$BIN/perfwatchd" -c "$DIR/daemon.yaml" --port-file "$DIR/port" \
    >"$DIR/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[ -s "$DIR/port" ] && break
	kill -0 "${pids[0]}" 2>/dev/null || die "perfwatchd exited"
	sleep 0.1
done
[ -s "$DIR/port" ] || die "perfwatchd did not start listening"
PORT=$(cat "$DIR/port")
URL=http://127.0.0.1:$PORT
export PERFWATCH_SERVER=$URL PERFWATCH_TOKEN_FILE=$DIR/admin.token

cat >"$DIR/runner/runner.yaml" <<YAML
server: $URL
name: demo-runner
token_file: $DIR/tokens/demo-runner.token
workdir: $DIR/runner/work
boot: none
heartbeat: 2s
YAML
say "starting perfwatch-runner (boot: none, benchmarks the running kernel)"
"$BIN/perfwatch-runner" -c "$DIR/runner/runner.yaml" >"$DIR/runner.log" 2>&1 &
pids+=($!)

say "submitting a fio pair: base at 2000 IOPS, candidate capped at 1000 IOPS"
"$BIN/perfwatch" submit --job demo-fio --cand-param iops=1000 --json \
    >"$DIR/submit.json" || die "submit failed"
pair=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["pairs"][0]["pair_id"])' <"$DIR/submit.json") ||
    die "no pair in the submit reply: $(cat "$DIR/submit.json")"
ids=$(python3 -c 'import json,sys; p=json.load(sys.stdin)["pairs"][0]; print(p["base_job"], p["candidate_job"])' <"$DIR/submit.json")
read -r base cand <<<"$ids"

say "waiting for the runs (about 20 s)"
deadline=$((SECONDS + 240))
state() { "$BIN/perfwatch" jobs show "$1" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
while :; do
	sb=$(state "$base") || die "cannot read job $base"
	sc=$(state "$cand") || die "cannot read job $cand"
	[ "$sb" = success ] && [ "$sc" = success ] && break
	case "$sb$sc" in *failed*|*cancelled*) die "a job ended $sb/$sc" ;; esac
	[ $SECONDS -lt $deadline ] || die "timed out waiting (base $sb, candidate $sc)"
	sleep 1
done

echo
"$BIN/perfwatch" jobs
echo
say "verdict (perfwatch compare on the two jobs' exported runs)"
"$BIN/perfwatch" jobs show "$base" --json >"$DIR/base.json"
"$BIN/perfwatch" jobs show "$cand" --json >"$DIR/cand.json"
"$BIN/perfwatch" compare "$DIR/base.json" "$DIR/cand.json" | tee "$DIR/compare.txt"
grep -E '^read_iops .*regression' "$DIR/compare.txt" >/dev/null ||
    die "expected read_iops to be a regression"

echo
say "look here"
echo "  dashboard:   $URL/"
echo "  this pair:   $URL/pair/$pair"
echo "  JSON:        $URL/api/v1/jobs/$cand"
echo "  state:       $DIR (perfwatch.db, daemon.log, runner.log)"
if [ "$ONCE" = 1 ]; then
	say "demo OK"
	exit 0
fi
say "running; Ctrl-C stops the daemon and the runner"
while kill -0 "${pids[0]}" 2>/dev/null; do
	sleep 1
done
die "perfwatchd exited"
