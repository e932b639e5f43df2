#!/usr/bin/env bash
# Triggers with registered hosts: one pinned pair per host and point;
# tip-only jobs coalesce (a superseded tip's queued pairs are cancelled,
# deprioritised with coalesce: deprioritise, or kept with coalesce: keep);
# candidates with the same baseline on one
# host share one base job; a job on labels no host carries waits unbound;
# an admin submit names a tree and a commit (prefix of a recorded one, or
# all 40 digits) and the claim hands the runner {"url", "commit"}.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

# Commits are made in a work clone and pushed at once, so the watcher
# sees each push whole.
SRC=$PW_TMP/src.git
WORK=$PW_TMP/work
src_init "$WORK"
g "$WORK" branch feat
git clone -q --bare "$WORK" "$SRC"
g "$WORK" remote add origin "$SRC"
b0=$(g "$WORK" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1 r2
tree_yaml t "file://$SRC" "master, feat"
job() {	# job NAME YAML-LINES...
	local n=$1
	shift
	{
		echo "name: $n"
		echo "parser: keyvalue"
		echo "command: [echo, \"x=1\"]"
		echo "metrics: {x: {better: higher}}"
		echo "runs: 1"
		printf '%s\n' "$@"
	} >"$PW_DIR/jobs/$n.yaml"
}
job tip "trigger: {trees: [t], branches: [master], every_commit: false}" \
    "matrix: {size: [1, 2]}" "hosts: [test]"
job tipkeep "trigger: {trees: [t], branches: [master], every_commit: false, coalesce: keep}"
job tipdep "trigger: {trees: [t], branches: [master], every_commit: false, coalesce: deprioritise}"
job every "trigger: {trees: [t], branches: [feat]}" "baseline: branch-base:master"
job noreuse "trigger: {trees: [t], branches: [feat], baseline_max_age: 0s}" "baseline: branch-base:master"
job elsewhere "trigger: {trees: [t], branches: [master], every_commit: false}" "hosts: [r2]"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
for r in r1 r2; do
	[ "$(http POST /api/v1/runners/register "$(token_of $r)" "{\"name\": \"$r\"}")" = 200 ] ||
	    fail register "$r: $(cat "$PW_TMP/body")"
done
wait_tip master "$b0" && wait_tip feat "$b0" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }

count() {	# count JOB [STATE]: pairs of JOB whose candidate is in STATE
	sql "SELECT count(*) FROM pairs p JOIN jobs c ON c.id = p.cand_job_id
	    WHERE p.name = '$1' ${2:+AND c.state = '$2'}"
}

# A push of three commits to master: tip-only jobs get the tip only.
commit "$WORK" a "one" >/dev/null
commit "$WORK" b "two" >/dev/null
t1=$(commit "$WORK" c "three")
g "$WORK" push -q origin master
wait_tip master "$t1" || fail push1 "$(cat "$PW_TMP/trees.json")"
[ "$(count tip)" = 4 ] && pass tip_only_per_point_and_host || fail tip_only_per_point_and_host "$(count tip)"
[ "$(sql "SELECT DISTINCT c.sha FROM pairs p JOIN jobs j ON j.id = p.cand_job_id JOIN commits c ON c.id = j.commit_id WHERE p.name = 'tip'")" = "$t1" ] &&
    pass tip_only_is_the_tip || fail tip_only_is_the_tip "$(sql 'SELECT * FROM pairs')"
[ "$(sql "SELECT count(DISTINCT host_id) || ' ' || min(pinned) FROM pairs WHERE name = 'tip'")" = "2 1" ] &&
    pass pairs_pinned_per_host || fail pairs_pinned_per_host "$(sql "SELECT * FROM pairs WHERE name = 'tip'")"
[ "$(sql "SELECT count(*) FROM pairs p JOIN hosts h ON h.id = p.host_id WHERE p.name = 'elsewhere' AND h.name = 'r2'")" = 1 ] &&
    [ "$(count elsewhere)" = 1 ] && pass host_label_by_name || fail host_label_by_name "$(sql "SELECT * FROM pairs WHERE name = 'elsewhere'")"

# The branch moves again before anything ran: the old tip's pairs go.
t2=$(commit "$WORK" d "four")
g "$WORK" push -q origin master
wait_tip master "$t2" || fail push2 "$(cat "$PW_TMP/trees.json")"
[ "$(count tip cancelled)" = 4 ] && [ "$(count tip queued)" = 4 ] &&
    pass coalesce_cancels || fail coalesce_cancels "cancelled $(count tip cancelled), queued $(count tip queued)"
[ "$(sql "SELECT count(*) FROM jobs WHERE name = 'tip' AND state = 'cancelled'")" = 8 ] &&
    pass coalesce_cancels_bases_too || fail coalesce_cancels_bases_too "$(sql "SELECT role, state FROM jobs WHERE name = 'tip'")"
[ "$(count tipkeep queued)" = 4 ] && [ "$(count tipkeep cancelled)" = 0 ] &&
    pass coalesce_keep || fail coalesce_keep "$(sql "SELECT * FROM pairs WHERE name = 'tipkeep'")"
# deprioritise: the old tip's pairs (one per host) stay queued, marked.
[ "$(count tipdep queued)" = 4 ] &&
    [ "$(sql "SELECT group_concat(CAST(p.superseded AS TEXT), '') FROM (SELECT p.superseded FROM pairs p
        JOIN jobs c ON c.id = p.cand_job_id JOIN commits k ON k.id = c.commit_id
        WHERE p.name = 'tipdep' ORDER BY k.sha = '$t2', p.id) p")" = 1100 ] &&
    pass coalesce_deprioritise || fail coalesce_deprioritise "$(sql "SELECT * FROM pairs WHERE name = 'tipdep'")"
dep=$(sql "SELECT min(id) FROM pairs WHERE name = 'tipdep'")
curl -s "$PW_URL/api/v1/pairs/$dep" | grep -q '"deprioritised": *true' &&
    pass deprioritised_in_api || fail deprioritised_in_api "$(curl -s "$PW_URL/api/v1/pairs/$dep")"

# Two commits on feat: both compare with the merge base with master; on
# each host they share one base job (reuse), unless baseline_max_age is 0.
f1=$(g "$WORK" checkout -q feat && commit "$WORK" f "feat one")
f2=$(commit "$WORK" f "feat two")
g "$WORK" checkout -q master
g "$WORK" push -q origin feat
wait_tip feat "$f2" || fail push_feat "$(cat "$PW_TMP/trees.json")"
[ "$(count every)" = 4 ] && pass every_commit_pairs || fail every_commit_pairs "$(count every)"
[ "$(sql "SELECT count(DISTINCT base_job_id) FROM pairs WHERE name = 'every'")" = 2 ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE name = 'every' AND role = 'base'")" = 2 ] &&
    pass baseline_shared_per_host || fail baseline_shared_per_host "$(sql "SELECT id, host_id, base_job_id, cand_job_id FROM pairs WHERE name = 'every'")"
[ "$(sql "SELECT count(DISTINCT base_job_id) FROM pairs WHERE name = 'noreuse'")" = 4 ] &&
    pass baseline_reuse_off || fail baseline_reuse_off "$(sql "SELECT * FROM pairs WHERE name = 'noreuse'")"
[ "$(sql "SELECT DISTINCT c.sha FROM pairs p JOIN jobs j ON j.id = p.base_job_id JOIN commits c ON c.id = j.commit_id WHERE p.name = 'every'")" = "$b0" ] &&
    pass branch_base_baseline || fail branch_base_baseline "$(sql 'SELECT sha FROM commits')"
shared=$(sql "SELECT id FROM pairs WHERE name = 'every' ORDER BY id DESC LIMIT 1")
curl -s "$PW_URL/api/v1/pairs/$shared" >"$PW_TMP/pair.json"
python3 - "$PW_TMP/pair.json" <<'PY' && pass pair_shows_shared_base || fail pair_shows_shared_base "$(cat "$PW_TMP/pair.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["base"]["role"] == "base" and p["candidate"]["role"] == "candidate", p
assert p["base"]["pair_id"] != p["id"], p   # made by the first pair
PY

# A runner takes the shared base once; both pairs then have it.
runner_config r1
start_runner r1
RUNNER=$!
every_done() { [ "$(sql "SELECT count(*) FROM pairs p JOIN jobs b ON b.id = p.base_job_id JOIN jobs c ON c.id = p.cand_job_id JOIN hosts h ON h.id = p.host_id WHERE p.name = 'every' AND h.name = 'r1' AND b.state = 'success' AND c.state = 'success'")" = 2 ]; }
if wait_until 60 every_done; then pass shared_base_measured_once; else fail shared_base_measured_once "$(sql "SELECT id, name, role, state FROM jobs")"; show_logs; fi
stop_pid "$RUNNER"

# Admin submit on a commit: a prefix of a recorded commit, or 40 digits.
body="{\"job\": \"every\", \"base\": {\"tree\": \"t\", \"commit\": \"${b0:0:8}\"}, \"candidate\": {\"tree\": \"file://$SRC\", \"commit\": \"$f1\"}}"
[ "$(http POST /api/v1/submit "$PW_ADMIN" "$body")" = 201 ] && pass submit_tree_commit || fail submit_tree_commit "$(cat "$PW_TMP/body")"
bj=$(jfield pairs.0.base_job <"$PW_TMP/body")
# (The params' JSON read here, not by SQL: json_extract of a string is
# SQLite's alone.)
[ "$(sql "SELECT params FROM jobs WHERE id = $bj" | jfield tree.commit) $(sql "SELECT c.sha FROM jobs j JOIN commits c ON c.id = j.commit_id WHERE j.id = $bj")" = "$b0 $b0" ] &&
    pass submit_prefix_resolved || fail submit_prefix_resolved "$(sql "SELECT params FROM jobs WHERE id = $bj")"
[ "$(http POST /api/v1/submit "$PW_ADMIN" '{"job": "every", "base": {"tree": "t", "commit": "abcdef12"}, "candidate": {"tree": "t", "commit": "abcdef12"}}')" = 400 ] &&
    grep -q "not a recorded commit" "$PW_TMP/body" && pass submit_unknown_prefix || fail submit_unknown_prefix "$(cat "$PW_TMP/body")"
[ "$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"every\", \"base\": {\"tree\": \"/elsewhere/x.git\", \"commit\": \"${b0:0:10}\"}, \"candidate\": {\"tree\": \"t\", \"commit\": \"$b0\"}}")" = 400 ] &&
    grep -q "give all 40 hex digits" "$PW_TMP/body" && pass submit_url_needs_full_sha || fail submit_url_needs_full_sha "$(cat "$PW_TMP/body")"
stop_pid "$PW_DAEMON_PID"
finish
