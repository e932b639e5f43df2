#!/usr/bin/env bash
# make check-compat: a fleet upgraded one side at a time.  Builds the
# daemon and the runner of an older revision (COMPAT_REV, default the
# last one whose daemon knew no claim ids) from this repository's
# history, in the test's scratch directory, then runs a pair of real
# fio jobs twice:
#   1. this tree's runner and CLI against the older daemon: the runner
#      meets "unknown field 'claim_id'" once, says so in its log and
#      claims without ids from then on; both jobs finish, one attempt
#      each, every run stored;
#   2. the older runner against this tree's daemon: the same jobs finish
#      the same way (a claim without an id is what the daemon took
#      before claim ids).
# Needs the repository's history (a clone, not an exported tree) and
# about 3 minutes of compiling on 2 CPUs.  Ends with tests/run's line.
#   tests/compat/check-compat.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${OUT:-build}
export PERFWATCH_BIN=${PERFWATCH_BIN:-$top/$OUT/san/bin}
. tests/e2e/lib.sh
. tests/e2e/lib_runner.sh
rev=${COMPAT_REV:-870c474^}
NEW_BIN=$PW_BIN
OLD=$PW_TMP/old
npass=0
nfail=0

# lib.sh's pass and fail, counted for the closing line.
pass() {
	echo "PASS $1"
	npass=$((npass + 1))
}
fail() {
	local name=$1
	shift
	echo "FAIL $name: $*"
	nfail=$((nfail + 1))
}
end() {
	echo "$npass passed, $nfail failed"
	exit $((nfail > 0))
}

command -v fio >/dev/null || { fail fio_installed "fio missing (make deps)"; end; }
if ! git -C "$top" rev-parse -q --verify "$rev^{commit}" >/dev/null; then
	fail old_revision "$rev is not a commit of $top (a clone with its history is needed)"
	end
fi
echo "# older side: $(git -C "$top" log -1 --format='%h %s' "$rev")"
mkdir -p "$OLD/src"
git -C "$top" archive "$rev" | tar -x -C "$OLD/src"
t0=$SECONDS
if make -C "$OLD/src" -j2 build/rel/bin/perfwatchd build/rel/bin/perfwatch-runner \
    >"$OLD/build.log" 2>&1; then
	pass "old_side_builds ($((SECONDS - t0)) s)"
else
	fail old_side_builds "$(tail -5 "$OLD/build.log" | tr '\n' ' ')"
	end
fi
OLD_BIN=$OLD/src/build/rel/bin

# pair_runs DAEMON_BIN RUNNER_BIN LABEL: a daemon and a runner from the
# two directories, one fio pair submitted by this tree's CLI; checks
# that both jobs finish, each with its two runs and one attempt.
pair_runs() {
	local dbin=$1 rbin=$2 label=$3 id n
	daemon_config "$PW_TMP/$label" r1
	tiny_fio_job tiny 2
	PW_BIN=$dbin
	if ! start_daemon "$PW_TMP/$label"; then
		PW_BIN=$NEW_BIN
		fail "${label}_daemon_starts" "see above"
		return 1
	fi
	PW_BIN=$rbin
	runner_config r1
	start_runner r1
	RUNNER=$!
	PW_BIN=$NEW_BIN
	if ! pw_admin submit --job tiny --base-param variant=a \
	    --cand-param variant=b --json >"$PW_TMP/$label.submit" 2>&1; then
		fail "${label}_submit" "$(cat "$PW_TMP/$label.submit")"
		return 1
	fi
	pass "${label}_submit"
	if wait_until 90 jobs_in_state success 2; then
		pass "${label}_both_jobs_succeed"
	else
		fail "${label}_both_jobs_succeed" "$(pw jobs --json 2>&1 | head -c 600)"
		show_logs
		return 1
	fi
	for id in $(jfield pairs.0.base_job <"$PW_TMP/$label.submit") \
	    $(jfield pairs.0.candidate_job <"$PW_TMP/$label.submit"); do
		pw jobs show "$id" --json >"$PW_TMP/$label.job$id"
		n=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
ok = [r for r in j["runs"] if r["status"] == "ok"]
print(len(ok), j.get("attempts", "unknown"))' "$PW_TMP/$label.job$id")
		if [ "$n" = "2 1" ]; then
			pass "${label}_job${id}_two_runs_one_attempt"
		else
			fail "${label}_job${id}_two_runs_one_attempt" "runs ok, attempts: $n"
		fi
	done
}

# 1. This tree's runner and CLI against the older daemon.
if pair_runs "$OLD_BIN" "$NEW_BIN" new_runner; then
	n=$(grep -c "unknown field 'claim_id'.*claiming without claim ids" \
	    "$PW_TMP/r1/runner.log")
	if [ "$n" = 1 ]; then
		pass new_runner_falls_back_once
	else
		fail new_runner_falls_back_once "$n fallback lines: $(grep -i claim "$PW_TMP/r1/runner.log" | head -3)"
	fi
fi
stop_pid "$RUNNER"
stop_pid "$PW_DAEMON_PID"
rm -rf "$PW_TMP/r1"

# 2. The older runner against this tree's daemon.
if pair_runs "$NEW_BIN" "$OLD_BIN" old_runner; then
	n=$(sql "SELECT count(*) FROM jobs WHERE lease_claim IS NOT NULL")
	if [ "$n" = 0 ]; then
		pass old_runner_claims_without_ids
	else
		fail old_runner_claims_without_ids "$n jobs hold a claim id"
	fi
fi
stop_pid "$RUNNER"
stop_pid "$PW_DAEMON_PID"
end
