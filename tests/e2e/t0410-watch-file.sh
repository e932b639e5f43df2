#!/usr/bin/env bash
# check: parallel
# The watcher over file://: first sight records only the tips, new
# commits are recorded once with the paths they touch and trigger pairs
# whose base is the parent, a force push is noted and cancels the pairs
# of the dropped commits, a deleted branch and a remote that goes away
# are errors in GET /api/v1/trees and `perfwatch trees` until they come
# back, and the daemon keeps serving throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

SRC=$PW_TMP/src
src_init "$SRC"
g "$SRC" branch dev
base0=$(g "$SRC" rev-parse HEAD)

daemon_config "$PW_TMP/d" r1
tree_yaml t1 "file://$SRC" "master, dev, nothere" "mm/a.c, include"
cat >"$PW_DIR/jobs/j1.yaml" <<'YAML'
name: j1
parser: keyvalue
command: [echo, "time_ms=1"]
trigger:
  trees: [t1]
  branches: ["ma*"]
  paths: [mm]
metrics:
  time_ms: {better: lower}
runs: 1
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# First sight: the tips only, nothing triggered.
if wait_tip master "$base0" && wait_tip dev "$base0"; then
	pass first_sight_tips
else
	fail first_sight_tips "$(cat "$PW_TMP/trees.json")"; show_logs
fi
[ "$(sql 'SELECT count(*) FROM commits WHERE first_seen IS NOT NULL')" = 1 ] &&
    [ "$(sql 'SELECT count(*) FROM jobs')" = 0 ] &&
    pass first_sight_no_jobs || fail first_sight_no_jobs "$(sql 'SELECT sha FROM commits')"
[ "$(tree_field "b['nothere']['state']")" = missing ] &&
    tree_field "t['last_error']" | grep -q "nothere does not exist" &&
    [ "$(tree_field "t['status']")" = warning ] &&
    pass missing_branch_is_an_error || fail missing_branch_is_an_error "$(cat "$PW_TMP/trees.json")"

# Three commits: two touch mm/, one only the README.
c1=$(commit "$SRC" mm/a.c "mm: one")
c2=$(commit "$SRC" README "docs only")
c3=$(commit "$SRC" mm/sub/b.c "mm: three <script>'\"&")
if wait_tip master "$c3"; then pass new_tip_recorded; else fail new_tip_recorded "$(cat "$PW_TMP/trees.json")"; show_logs; fi
curl -s "$PW_URL/api/v1/commits?tree=t1&branch=master" >"$PW_TMP/commits.json"
if python3 - "$PW_TMP/commits.json" "$c1" "$c2" "$c3" "$base0" <<'PY'
import json, sys
cs = json.load(open(sys.argv[1]))["commits"]
c1, c2, c3, b0 = sys.argv[2:6]
by = {c["sha"]: c for c in cs}
assert [c["sha"] for c in cs] == [c3, c2, c1, b0], [c["sha"] for c in cs]
assert by[c1]["paths"] == ["mm/a.c"], by[c1]
assert by[c2]["paths"] == [], by[c2]
assert by[c3]["paths"] == [], by[c3]      # mm/sub is not a tree path
assert by[c1]["parents"] == [b0]
assert by[c3]["subject"] == "mm: three <script>'\"&"
assert by[c1]["author"] == "Ann Author <ann@example.org>", by[c1]
assert by[c1]["committer"] == "Cy Committer <cy@example.org>"
assert by[c1]["branches"] == ["master"]
assert isinstance(by[c1]["commit_date"], int)
PY
then pass commits_recorded_with_paths; else fail commits_recorded_with_paths "$(cat "$PW_TMP/commits.json")"; fi

# The job's trigger paths (mm) pick c1 and c3, each a pair with its parent.
pairs=$(sql "SELECT c.sha || ':' || b.sha FROM pairs p
    JOIN jobs cj ON cj.id = p.cand_job_id JOIN commits c ON c.id = cj.commit_id
    JOIN jobs bj ON bj.id = p.base_job_id JOIN commits b ON b.id = bj.commit_id
    ORDER BY p.id")
[ "$pairs" = "$c1:$base0
$c3:$c2" ] && pass pairs_for_path_commits || fail pairs_for_path_commits "$pairs"
spec=$(sql "SELECT params FROM jobs WHERE role = 'candidate' ORDER BY id LIMIT 1")
echo "$spec" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["tree"] == {"url": sys.argv[1], "commit": sys.argv[2]}, s["tree"]
assert s["boot"] == "runner"' "file://$SRC" "$c1" &&
    pass job_spec_carries_tree || fail job_spec_carries_tree "$spec"
[ "$(sql "SELECT count(*) FROM pairs WHERE host_id IS NULL AND pinned = 0")" = 2 ] &&
    pass unbound_without_hosts || fail unbound_without_hosts "$(sql 'SELECT * FROM pairs')"
# dev is not matched by the job's branch glob "ma*".
c_dev=$(g "$SRC" checkout -q dev && commit "$SRC" mm/a.c "mm: on dev")
g "$SRC" checkout -q master
wait_tip dev "$c_dev" && [ "$(sql 'SELECT count(*) FROM pairs')" = 2 ] &&
    pass branch_glob_filters || fail branch_glob_filters "$(sql 'SELECT count(*) FROM pairs')"

# Force push: master back to c1, then a new commit.  c2 and c3 are
# dropped; c3's queued pair is superseded, c1's stays.
g "$SRC" reset -q --hard "$c1"
c4=$(commit "$SRC" mm/a.c "mm: four")
if wait_tip master "$c4"; then pass force_push_followed; else fail force_push_followed "$(cat "$PW_TMP/trees.json")"; fi
[ "$(tree_field "b['master']['rewrites']")" = 1 ] &&
    tree_field "b['master']['last_rewrite']" | grep -q "${c3:0:12} -> ${c4:0:12}, merge base ${c1:0:12}, 2 commit(s) dropped" &&
    pass rewrite_noted || fail rewrite_noted "$(cat "$PW_TMP/trees.json")"
states=$(sql "SELECT c.sha || ':' || cj.state FROM pairs p JOIN jobs cj ON cj.id = p.cand_job_id
    JOIN commits c ON c.id = cj.commit_id ORDER BY p.id")
[ "$states" = "$c1:queued
$c3:cancelled
$c4:queued" ] && pass dropped_commit_cancelled || fail dropped_commit_cancelled "$states"
sql "SELECT error FROM jobs WHERE state = 'cancelled'" | grep -q "superseded: t1/master moved to ${c4:0:12}" &&
    pass cancel_reason || fail cancel_reason "$(sql 'SELECT error FROM jobs')"
grep -q "tree t1: branch master was rewritten (force push)" "$PW_DIR/daemon.log" &&
    pass rewrite_logged || fail rewrite_logged "no log line"

# A deleted branch; recreated at master's tip, the commit gains the branch.
g "$SRC" branch -q -D dev
if wait_until 20 bash -c "grep -q 'branch dev is gone from the remote (last tip ${c_dev:0:12})' '$PW_DIR/daemon.log'"; then
	pass deleted_branch_logged
else
	fail deleted_branch_logged "no log line"; show_logs
fi
[ "$(tree_field "b['dev']['state']")" = missing ] &&
    tree_field "t['last_error']" | grep -q "branch dev is gone" &&
    pass deleted_branch_in_api || fail deleted_branch_in_api "$(cat "$PW_TMP/trees.json")"
g "$SRC" branch dev "$c4"
if wait_tip dev "$c4"; then pass branch_comes_back; else fail branch_comes_back "$(cat "$PW_TMP/trees.json")"; fi
[ "$(tree_field "b['dev']['state']")" = ok ] && pass branch_state_ok || fail branch_state_ok "$(cat "$PW_TMP/trees.json")"
[ "$(sql "SELECT count(*) || ' ' || max(branches) FROM commits WHERE sha = '$c4'")" = "1 master,dev" ] &&
    pass commit_recorded_once || fail commit_recorded_once "$(sql "SELECT * FROM commits WHERE sha = '$c4'")"

# The remote goes away: errors with backoff, the daemon keeps serving.
mv "$SRC" "$SRC.away"
failures_ge2() { [ "$(tree_field "t['failures']")" -ge 2 ] 2>/dev/null; }
if wait_until 20 failures_ge2; then
	pass remote_away_counted
else
	fail remote_away_counted "$(curl -s "$PW_URL/api/v1/trees")"
fi
[ "$(tree_field "t['status']")" = error ] && [ -n "$(tree_field "t['last_error']")" ] &&
    pass remote_away_status || fail remote_away_status "$(cat "$PW_TMP/trees.json")"
grep -q "tree t1: fetch failed (2 in a row, next try in 4 s)" "$PW_DIR/daemon.log" &&
    pass backoff_doubles || fail backoff_doubles "$(grep 'fetch failed' "$PW_DIR/daemon.log")"
[ "$(http GET /healthz)" = 200 ] && pass daemon_serves || fail daemon_serves "healthz"
pw trees >"$PW_TMP/trees.txt"
grep -q '^TREE  *STATUS' "$PW_TMP/trees.txt" && grep -q '^t1  *error .* master  *'"${c4:0:12}" "$PW_TMP/trees.txt" &&
    grep -q '^error: t1: ' "$PW_TMP/trees.txt" &&
    pass cli_trees_table || fail cli_trees_table "$(cat "$PW_TMP/trees.txt")"
mv "$SRC.away" "$SRC"
c5=$(commit "$SRC" include/x.h "include: five")
if wait_tip master "$c5" 30; then pass remote_comes_back; else fail remote_comes_back "$(cat "$PW_TMP/trees.json")"; fi
[ "$(tree_field "t['failures']")" = 0 ] && [ "$(tree_field "t['status']")" = warning ] &&
    pass status_recovers || fail status_recovers "$(cat "$PW_TMP/trees.json")"
pw trees --json | jfield trees.0.branches.0.branch | grep -q dev &&
    pass cli_trees_json || fail cli_trees_json "$(pw trees --json)"
curl -s "$PW_URL/api/v1/commits/$c5" | jfield commit.sha | grep -q "$c5" &&
    pass commit_page_json || fail commit_page_json "$(curl -s "$PW_URL/api/v1/commits/$c5")"
curl -s "$PW_URL/api/v1/commits?limit=2" >"$PW_TMP/page.json"
cur=$(jfield next_cursor <"$PW_TMP/page.json")
[ -n "$cur" ] && [ "$(curl -s "$PW_URL/api/v1/commits?limit=2&cursor=$cur" | jfield commits.0.sha)" != "$(jfield commits.0.sha <"$PW_TMP/page.json")" ] &&
    pass commits_paginate || fail commits_paginate "$(cat "$PW_TMP/page.json")"
stop_pid "$PW_DAEMON_PID"
grep -q "stopped" "$PW_DIR/daemon.log" && pass daemon_stops || fail daemon_stops "$(tail -5 "$PW_DIR/daemon.log")"
finish
