# Shared helpers for the end-to-end tests: source it from tNNNN-*.sh.
#
#   . "$(dirname "$0")/lib.sh"
#
# Every test gets a scratch directory and a cleanup trap that kills what it
# started (only the processes it started, by pid) and removes the
# directory (kept when PW_KEEP=1).  Binaries come from $PERFWATCH_BIN
# (tests/run sets it; default build/san/bin).
#
# Variables
#   PW_TMP        scratch directory of this test
#   PW_BIN        directory of the perfwatch binaries
#   PW_URL        http://127.0.0.1:PORT of the daemon start_daemon started
#   PW_PORT       its port; PW_DAEMON_PID its pid; PW_DB its database file
#   PW_DIR        the daemon directory made by daemon_config
#   PW_ADMIN      path of the admin token file; PW_TOKENS dir of runner tokens
#
# Results
#   pass NAME                 prints "PASS NAME"
#   fail NAME WHY...          prints "FAIL NAME: WHY", the test will exit 1
#   check NAME CMD...         pass if CMD succeeds, else fail
#   finish                    exits 1 if anything failed, else 0 (call last)
#
# Processes
#   spawn LOG CMD...          starts CMD in the background, output to LOG;
#                             its pid in $! and in the cleanup list
#   wait_for SECS CMD...      runs CMD every 0.1 s until it succeeds
#                             (0) or SECS pass (1)
#   stop_pid PID [SIG]        kills PID (TERM default) and waits for it
#
# Daemon
#   daemon_config DIR [RUNNER...]
#                             writes DIR/daemon.yaml (127.0.0.1:0, DIR/pw.db,
#                             DIR/jobs/*.yaml), DIR/admin.token and one token
#                             per runner (default runner: r1) with labels
#                             [test]; extra YAML can be appended to
#                             DIR/daemon.yaml before start_daemon; job files
#                             go in DIR/jobs/
#   start_daemon DIR          starts perfwatchd -c DIR/daemon.yaml with
#                             --port-file, waits until it listens; log in
#                             DIR/daemon.log
#   token_of NAME             prints the token file of runner NAME (or
#                             "admin")
#   hook_start DIR MODE       starts the webhook receiver
#                             (alert_servers.py hook, MODE ok|fail2|429|
#                             hang) in DIR with the secret in DIR/secret;
#                             its POSTs in DIR/hooks.jsonl; sets HOOK_URL
#
# HTTP (curl)
#   http METHOD PATH [TOKEN_FILE|-] [BODY|@FILE]
#                             prints the status code; the reply body is in
#                             $PW_TMP/body
#   jfield PATH < json        prints a field: "jobs.0.state", "pairs.0.pair_id"
#                             (python3; strings bare, others as JSON)
#   sql QUERY                 runs a query on $PW_DB with the sqlite3 CLI
#                             (psql under make check-pg)

set -u
# Token and secret files must not be readable by others (the daemon and
# runner refuse them): everything a test writes is its owner's only.
umask 077

PW_BIN=${PERFWATCH_BIN:-$PWD/build/san/bin}
PW_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pwe2e.XXXXXX")
# make check-pg: the daemon's database is on the test server
# (tests/lib_pg.sh).
if [ -n "${PW_TEST_PG:-}" ]; then
	. "$(dirname "${BASH_SOURCE[0]}")/../lib_pg.sh"
fi
PW_PIDS=()
PW_FAILED=0
PW_URL=
PW_PORT=
PW_DAEMON_PID=
PW_DB=
PW_DIR=
PW_ADMIN=
PW_TOKENS=
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}

# pw_tree PID: PID and its descendants, parents first.  A spawned
# "python3" may be a pyenv shim that runs the interpreter as its child:
# killing the shim alone left the interpreter running after the test.
pw_tree() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do
		pw_tree "$c"
	done
}

pw_cleanup() {
	local p t
	for p in "${PW_PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			t=$(pw_tree "$p")
			# "|| true": a script under set -e must still kill the rest.
			kill -KILL $t 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	if [ "${PW_KEEP:-0}" = 1 ]; then
		echo "# kept $PW_TMP"
	else
		rm -rf "$PW_TMP"
	fi
}
trap pw_cleanup EXIT

pass() {
	echo "PASS $1"
}

fail() {
	local name=$1
	shift
	echo "FAIL $name: $*"
	PW_FAILED=1
}

check() {
	local name=$1
	shift
	if "$@"; then
		pass "$name"
	else
		fail "$name" "command failed: $*"
	fi
}

finish() {
	exit "$PW_FAILED"
}

spawn() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	PW_PIDS+=($!)
}

wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

stop_pid() {
	local pid=$1 sig=${2:-TERM}
	kill -"$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

token_of() {
	if [ "$1" = admin ]; then
		echo "$PW_DIR/admin.token"
	else
		echo "$PW_DIR/tokens/$1.token"
	fi
}

hook_start() {
	local dir=$1
	mkdir -p "$dir"
	echo "s3cret-$$" >"$dir/secret"
	spawn "$dir/log" /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/alert_servers.py" \
	    hook "$dir" "s3cret-$$" "$2"
	wait_for 10 test -s "$dir/port" || return 1
	HOOK_URL=http://127.0.0.1:$(cat "$dir/port")/hook
}

# pw_database DIR: the daemon's database: DIR/pw.db, or under make
# check-pg (PW_TEST_PG) a new database of the test's server named after
# the test and DIR (tests/lib_pg.sh).
pw_database() {
	local name
	if [ -z "${PW_TEST_PG:-}" ]; then
		echo "$1/pw.db"
		return
	fi
	name=$(printf '%s' "$(basename "$PW_TMP")_$(basename "$1")" |
	    tr -c 'a-zA-Z0-9_' '_' | tr 'A-Z' 'a-z' | cut -c1-60)
	pg_createdb "$name"
}

daemon_config() {
	local dir=$1 r
	shift
	[ $# -eq 0 ] && set -- r1
	mkdir -p "$dir/jobs" "$dir/tokens"
	PW_DIR=$dir
	PW_ADMIN=$dir/admin.token
	PW_TOKENS=$dir/tokens
	head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/admin.token"
	cat >"$dir/daemon.yaml" <<EOF
listen: 127.0.0.1:0
database: "$(pw_database "$dir")"
mirrors: $dir/git
admin_token_file: $dir/admin.token
jobs: [$dir/jobs/*.yaml]
EOF
	echo "runners:" >>"$dir/daemon.yaml"
	for r in "$@"; do
		head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
		    >"$dir/tokens/$r.token"
		cat >>"$dir/daemon.yaml" <<EOF
  - name: $r
    token_file: $dir/tokens/$r.token
    labels: [test]
EOF
	done
}

# daemon_config for a test that plays the runner by hand with curl:
# nothing heartbeats between its calls, so a long lease keeps the jobs
# it claimed its own however slow a loaded machine makes the requests.
hand_daemon_config() {
	daemon_config "$@"
	printf 'scheduler:\n  lease: 1h\n' >>"$1/daemon.yaml"
}

# hand_start_daemon DIR: start_daemon, then register r1 as the test's
# hand-played runner (inventory cpu_model "test"); R1 and ADM get the
# runner's and the admin's tokens.  Ends the test when either fails.
hand_start_daemon() {
	start_daemon "$1" || { fail start "daemon did not start"; finish; }
	R1=$(token_of r1)
	ADM=$(token_of admin)
	[ "$(http POST /api/v1/runners/register "$R1" \
	    '{"name":"r1","inventory":{"cpu_model":"test"}}')" = 200 ] ||
		{ fail register "$(cat "$PW_TMP/body")"; finish; }
}

# True once the port file exists, or when the daemon died (stop waiting).
pw_listening() {
	test -s "$1" || ! kill -0 "$PW_DAEMON_PID" 2>/dev/null
}

start_daemon() {
	local dir=$1
	PW_DIR=$dir
	PW_ADMIN=$dir/admin.token
	PW_TOKENS=$dir/tokens
	PW_DB=$dir/pw.db
	# make check-pg: the conninfo daemon_config wrote.
	[ -n "${PW_TEST_PG:-}" ] &&
	    PW_DB=$(sed -n 's/^database: "\(.*\)"$/\1/p' "$dir/daemon.yaml")
	rm -f "$dir/port"
	spawn "$dir/daemon.log" "$PW_BIN/perfwatchd" -v -c "$dir/daemon.yaml" \
	    --port-file "$dir/port"
	PW_DAEMON_PID=$!
	if ! wait_for 20 pw_listening "$dir/port" || ! test -s "$dir/port"; then
		echo "# daemon did not start; log:"
		sed 's/^/#   /' "$dir/daemon.log"
		return 1
	fi
	PW_PORT=$(cat "$dir/port")
	PW_URL=http://127.0.0.1:$PW_PORT
	return 0
}

http() {
	local method=$1 path=$2 tok=${3:--} body=${4:-}
	local args=(-s -o "$PW_TMP/body" -w '%{http_code}' -X "$method"
	    --max-time 60)
	if [ "$tok" != - ]; then
		args+=(-H "Authorization: Bearer $(cat "$tok")")
	fi
	if [ -n "$body" ]; then
		args+=(-H 'Content-Type: application/json' --data-binary "$body")
	fi
	curl "${args[@]}" "$PW_URL$path"
}

jfield() {
	python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if k == "":
        continue
    v = v[int(k)] if isinstance(v, list) else v.get(k)
    if v is None:
        break
print(v if isinstance(v, str) else json.dumps(v))
' "$1"
}

# metric_row METRIC [last]: the first (or last) comparison row of METRIC
# in $PW_TMP/body (GET /api/v1/comparisons or /api/v1/pairs/N) as JSON
# on stdout; exit 1 when there is none.
metric_row() {
	python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["comparisons"]
        if r["metric"] == sys.argv[2]]
if not rows:
    sys.exit(1)
json.dump(rows[-1 if sys.argv[3] == "last" else 0], sys.stdout)
' "$PW_TMP/body" "$1" "${2:-first}"
}

sql() {
	if [ -n "${PW_TEST_PG:-}" ]; then
		PGOPTIONS='-c client_min_messages=warning' \
		    "$(pg_bindir)/psql" -X -A -t -q "$PW_DB" -c "$1"
		return
	fi
	sqlite3 -cmd '.timeout 5000' "$PW_DB" "$1"
}

# page NAME PATH WANT...: GET PATH (into $PW_TMP/body) answers 200 with
# no raw <script, at most 100 KB (views.h's page budget), containing
# each WANT (a fixed string); PASS or FAIL NAME.
page() {
	local name=$1 path=$2 code size w
	shift 2
	code=$(http GET "$path")
	size=$(wc -c <"$PW_TMP/body")
	if [ "$code" != 200 ]; then
		fail "$name" "GET $path: $code"
		return
	elif grep -qi '<script' "$PW_TMP/body"; then
		fail "$name" "raw <script in $path"
		return
	elif [ "$size" -gt 102400 ]; then
		fail "$name" "$path is $size bytes"
		return
	fi
	for w in "$@"; do
		if ! grep -qF -- "$w" "$PW_TMP/body"; then
			fail "$name" "$path lacks '$w'"
			return
		fi
	done
	pass "$name"
}
