#!/usr/bin/env bash
# check: parallel
# (The runner here never reaches a server: it measures nothing and
# touches no host state.)
# The programs as a user first meets them: every perfwatch command
# answers --help (exit 0, its usage on stdout), also where --help sits
# where a file name would (config expand --help opens no file); each of
# perfwatch, perfwatchd and perfwatch-runner says its version; a second
# perfwatchd on a database a first one holds stops at once, naming the
# first's pid, while the first keeps serving; and perfwatch-runner
# --once against a server that is not there gives up after a few tries
# with a clear error and a non-zero exit, instead of waiting forever.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"

PW=$PW_BIN/perfwatch
cd "$PW_TMP" || exit 1

# Every command perfwatch --help lists.
"$PW" --help >help.txt 2>&1
cmds=$(sed -n 's/^  perfwatch \([a-z][a-z-]*\).*/\1/p' help.txt | sort -u)
[ "$(echo "$cmds" | wc -l)" -ge 13 ] && pass help_lists_commands ||
    fail help_lists_commands "$(cat help.txt)"
bad=
for c in $cmds; do
	"$PW" "$c" --help >out 2>err
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "^usage: perfwatch $c" out || [ -s err ]; then
		bad="$bad $c(exit $rc: $(head -c 120 err))"
	fi
	# -h too, and --help after other arguments.
	"$PW" "$c" x --json -h >out 2>err
	rc=$?
	[ $rc -eq 0 ] && grep -q "^usage: perfwatch $c" out ||
	    bad="$bad $c-h(exit $rc)"
done
[ -z "$bad" ] && pass every_command_help || fail every_command_help "$bad"
"$PW" config expand --help >out 2>err
rc=$?
[ $rc -eq 0 ] && grep -q '^usage: perfwatch config' out && ! grep -q -- '--help:' err &&
    pass config_expand_help || fail config_expand_help "exit $rc: $(cat out err)"
# After "--", --help is an argument: a file that does not exist.
"$PW" config check -- --help >out 2>err
rc=$?
[ $rc -ne 0 ] && grep -q -- '--help' err && pass help_after_dashdash_is_a_file ||
    fail help_after_dashdash_is_a_file "exit $rc: $(cat out err)"

# --version: the build's version, the same for the three programs.
v=
for p in perfwatch perfwatchd perfwatch-runner; do
	"$PW_BIN/$p" --version >out 2>err
	rc=$?
	line=$(cat out)
	if [ $rc -ne 0 ] || ! [[ $line =~ ^$p\ [0-9a-zA-Z._+-]+$ ]] || [ -s err ]; then
		fail "version_$p" "exit $rc: $line $(cat err)"
		continue
	fi
	pass "version_$p"
	v="$v ${line#* }"
done
[ "$(echo $v | tr ' ' '\n' | sort -u | wc -l)" = 1 ] && pass versions_agree ||
    fail versions_agree "$v"
"$PW_BIN/perfwatchd" --help >out 2>err && grep -q '^usage: perfwatchd' out &&
    pass perfwatchd_help || fail perfwatchd_help "$(cat out err)"

# Options: the same parser for every command (cli/opt.c).
usage_case() { # NAME WANT_RC GREP_PATTERN ARGS...
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$PW" "$@" >out 2>err
	rc=$?
	[ $rc -eq "$want" ] && grep -q -- "$pat" err && pass "$name" ||
	    fail "$name" "exit $rc: $(head -c 300 err)"
}
usage_case opt_unknown_named 2 "^perfwatch hosts: unknown argument '--bogus'" \
    hosts --bogus
usage_case opt_missing_value 2 "^perfwatch jobs: --state needs a value" \
    jobs --json --state
usage_case opt_flag_takes_no_value 2 "unknown argument '--json=1'" \
    trees --json=1
usage_case opt_operand_too_many 2 "^perfwatch compare: unknown argument 'c'" \
    compare a b c
# "--name=value" and "--name value" reach the same check.
usage_case opt_value_joined 2 "--alpha takes a number in (0, 0.5): '0.7'" \
    compare --alpha=0.7 a b
usage_case opt_value_apart 2 "--alpha takes a number in (0, 0.5): '0.7'" \
    compare a --alpha 0.7 b
# After "--", what looks like an option is an operand: here a file.
usage_case opt_dashdash_operands 1 "no-such-file" \
    changepoints -- --no-such-file
usage_case opt_repeated_each 2 "--base-param: 'k' given twice" \
    submit --job j --base-param k=1 --base-param k=2

# One perfwatchd a database.
daemon_config "$PW_TMP/d" r1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
sed 's/^listen: .*/listen: 127.0.0.1:0/' "$PW_DIR/daemon.yaml" >d2.yaml
start=$(date +%s)
timeout 20 "$PW_BIN/perfwatchd" -c d2.yaml --port-file port2 >d2.log 2>&1
rc=$?
took=$(($(date +%s) - start))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ ! -s port2 ] &&
    grep -q "database $PW_DIR/pw.db: $PW_DIR/pw.db.lock is held by another process (pid $PW_DAEMON_PID): another perfwatchd runs on it" d2.log; then
	pass second_daemon_refused
else
	fail second_daemon_refused "exit $rc after ${took}s: $(cat d2.log)"
fi
"$PW" jobs --server="$PW_URL" --limit=5 --json >joined.out 2>err &&
    "$PW" jobs --json --limit 5 --server "$PW_URL" >apart.out 2>>err &&
    grep -q '"jobs"' joined.out && cmp -s joined.out apart.out &&
    pass opt_forms_against_daemon ||
    fail opt_forms_against_daemon "$(head -c 300 joined.out apart.out err)"
[ "$(http GET /healthz)" = 200 ] && pass first_daemon_serves ||
    fail first_daemon_serves "the first daemon stopped answering"
# The lock goes with its holder: a daemon started after the first stops
# takes the database.
kill -TERM "$PW_DAEMON_PID"
wait "$PW_DAEMON_PID" 2>/dev/null
start_daemon "$PW_TMP/d" && pass restart_takes_the_lock ||
    fail restart_takes_the_lock "$(tail -n 5 "$PW_DIR/daemon.log")"

# perfwatch-runner --once on a port nobody listens on.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PW_URL_REAL=$PW_URL
PW_URL=http://127.0.0.1:$port
runner_config r1
PW_URL=$PW_URL_REAL
start=$(date +%s)
timeout 60 "$PW_BIN/perfwatch-runner" -c "$PW_TMP/r1/runner.yaml" --once >r.out 2>r.err
rc=$?
took=$(($(date +%s) - start))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$took" -le 30 ] &&
    grep -q "perfwatch-runner: server http://127.0.0.1:$port unreachable after 5 tries: " r.err; then
	pass runner_once_gives_up
else
	fail runner_once_gives_up "exit $rc after ${took}s: $(tail -n 5 r.err)"
fi
finish
