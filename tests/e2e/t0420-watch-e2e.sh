#!/usr/bin/env bash
# End to end: the daemon watches a repository over file:// (poll 1s); a
# commit that makes a small C program four times slower triggers a pair
# (base: its parent); a real runner clones the repository, exports each
# commit, builds it with make and runs it; both sides' runs are stored and
# the candidate is clearly slower.  A commit that does not compile fails
# its job with "build failed: ..." and the compiler's message in the log.
# With the verdict module present, the pair's verdict is a regression.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

command -v make >/dev/null && command -v cc >/dev/null ||
    { fail toolchain "make and cc are needed"; finish; }
SRC=$PW_TMP/app
loop_prog_init "$SRC"
g "$SRC" add -A
g "$SRC" commit -qm "prog: a loop"
c1=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
# A 4x effect against min_effect 20%: far above this machine's noise.
# Base and candidate in turns, one run each: in one CI run, all base
# runs first, the designed 4x read 1.6x with one 82 ms candidate run,
# "unstable": the host's speed drifted between the two jobs.
slowprog_job min_effect=20% runs=5 max_runs=8 rounds=5 timeout=30s
pin_yaml "$PW_DIR/jobs/slowprog.yaml"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
runner_config r1
start_runner r1

# The slower commit.
echo '#define LOOPS 160000000UL' >"$SRC/loops.h"
g "$SRC" commit -qam "prog: four times the loop"
c2=$(g "$SRC" rev-parse HEAD)
pair_jobs() {
	sql "SELECT bj.state || ' ' || cj.state FROM pairs p
	    JOIN jobs bj ON bj.id = p.base_job_id JOIN jobs cj ON cj.id = p.cand_job_id
	    JOIN commits c ON c.id = cj.commit_id WHERE c.sha = '$1'"
}
pair_done() { [ "$(pair_jobs "$1")" = "success success" ]; }
if wait_until 60 pair_done "$c2"; then
	pass pair_measured
else
	fail pair_measured "states: $(pair_jobs "$c2")"; show_logs; finish
fi
medians=$(sql "SELECT j.role, m.value FROM pairs p JOIN jobs j ON j.id IN (p.base_job_id, p.cand_job_id)
    JOIN commits c ON c.id = j.commit_id JOIN runs r ON r.job_id = j.id
    JOIN metrics m ON m.run_id = r.id AND m.name = 'time_ms'
    WHERE p.cand_job_id = (SELECT cj.id FROM jobs cj JOIN commits cc ON cc.id = cj.commit_id
      WHERE cc.sha = '$c2' AND cj.role = 'candidate')" |
    python3 -c '
import sys, statistics
v = {"base": [], "candidate": []}
for line in sys.stdin:
    role, x = line.strip().split("|")
    v[role].append(float(x))
print(len(v["base"]), len(v["candidate"]),
      statistics.median(v["candidate"]) / statistics.median(v["base"]))')
read -r nb nc ratio <<<"$medians"
# 5 runs each, or up to max_runs when the verdict asked for more.
[ "$nb" -ge 5 ] && [ "$nb" -le 8 ] && [ "$nc" = "$nb" ] &&
    pass runs_stored || fail runs_stored "$medians"
python3 -c "import sys; sys.exit(0 if float('$ratio') > 1.5 else 1)" &&
    pass candidate_slower || fail candidate_slower "candidate/base median ratio $ratio (designed 4x)"
# The jobs list says which commit each job measures (API, CLI, page).
http GET '/api/v1/jobs?limit=10' >/dev/null
python3 - "$PW_TMP/body" "$c1" "$c2" <<'PY' && pass jobs_list_commit || fail jobs_list_commit "$(cat "$PW_TMP/body")"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
want = {("base", sys.argv[2]), ("candidate", sys.argv[3])}
got = {(j["role"], j["commit"]) for j in jobs}
assert want <= got, got
assert all(j["tree"] == "app" for j in jobs), jobs
assert any(j["subject"] == "prog: four times the loop" for j in jobs), jobs
PY
pw jobs | grep -q " ${c2:0:12} *app *slowprog" && pass jobs_cli_commit ||
    fail jobs_cli_commit "$(pw jobs)"
http GET /jobs >/dev/null
grep -q "href=\"/commit/$c2\"" "$PW_TMP/body" && pass jobs_page_commit ||
    fail jobs_page_commit "no commit link on /jobs"
base_commit=$(sql "SELECT c.sha FROM jobs j JOIN commits c ON c.id = j.commit_id
    WHERE j.role = 'base' ORDER BY j.id LIMIT 1")
[ "$base_commit" = "$c1" ] && pass base_is_parent || fail base_is_parent "$base_commit"
cand=$(sql "SELECT cj.id FROM jobs cj JOIN commits c ON c.id = cj.commit_id WHERE c.sha = '$c2' AND cj.role = 'candidate'")
pw jobs show "$cand" --json >"$PW_TMP/cand.json"
python3 - "$PW_TMP/cand.json" "$c2" <<'PY' && pass build_logged || fail build_logged "$(cat "$PW_TMP/cand.json")"
import json, sys
j = json.load(open(sys.argv[1]))
log = j["log"]
assert "checkout file://" in log and sys.argv[2] in log, log
assert "build (make) exit 0" in log and "cc -O1 -o prog prog.c" in log, log
PY
ls "$PW_TMP"/r1/work/trees/u-*.git/HEAD >/dev/null 2>&1 &&
    pass runner_keeps_a_clone || fail runner_keeps_a_clone "$(ls -R "$PW_TMP/r1/work" | head)"

if [ -f "$(dirname "$0")/../../daemon/verdict.c" ]; then
	has_verdict() { [ -n "$(sql "SELECT verdict FROM comparisons WHERE metric = 'time_ms' AND pair_id = (SELECT id FROM pairs WHERE cand_job_id = $cand)")" ]; }
	wait_until 30 has_verdict
	v=$(sql "SELECT verdict FROM comparisons WHERE metric = 'time_ms' AND pair_id = (SELECT id FROM pairs WHERE cand_job_id = $cand)")
	[ "$v" = regression ] && pass regression_verdict ||
	    fail regression_verdict "verdict '$v': $(sql "SELECT * FROM comparisons WHERE pair_id = (SELECT id FROM pairs WHERE cand_job_id = $cand)")
$(sql "SELECT j.role, m.value FROM jobs j JOIN runs r ON r.job_id = j.id JOIN metrics m ON m.run_id = r.id
    WHERE j.id IN (SELECT base_job_id FROM pairs WHERE cand_job_id = $cand UNION SELECT $cand) ORDER BY r.id")"
else
	echo "# no daemon/verdict.c here: the verdict is not checked"
fi

# A commit that does not build.
echo 'this is not C' >>"$SRC/prog.c"
g "$SRC" commit -qam "prog: broken"
c3=$(g "$SRC" rev-parse HEAD)
cand_failed() { [ "$(pair_jobs "$c3" | cut -d' ' -f2)" = failed ]; }
if wait_until 60 cand_failed; then
	pass broken_build_fails
else
	fail broken_build_fails "states: $(pair_jobs "$c3")"; show_logs
fi
bad=$(sql "SELECT cj.id FROM jobs cj JOIN commits c ON c.id = cj.commit_id WHERE c.sha = '$c3' AND cj.role = 'candidate'")
pw jobs show "$bad" --json >"$PW_TMP/bad.json"
python3 - "$PW_TMP/bad.json" <<'PY' && pass build_failure_reported || fail build_failure_reported "$(cat "$PW_TMP/bad.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["error"].startswith("build failed: exit 2: "), j["error"]
assert "prog.c" in j["error"], j["error"]
assert "build (make) exit 2" in j["log"], j["log"]
assert j["runs"] == [], j["runs"]
PY
stop_pid "$PW_DAEMON_PID"
finish
