#!/usr/bin/env bash
# check: parallel
# A 50,000-commit repository over file://: the daemon's first copy and
# first sight (tips only), then 1,000 new commits at once, recorded each
# once with the right path filter and one pair per commit that touches the
# watched path (every_commit), checked against `git rev-list`.  The
# history comes from tests/bench/git_genrepo.py (deterministic, kernel-
# like paths; the watched paths are mm/ and one header).  Times are
# printed for information; only generous limits are asserted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$PW_TMP/big.git
git init -q --bare "$SRC"
t0=$(date +%s)
/usr/bin/python3 "$top/tests/bench/git_genrepo.py" 50000 old=49000 |
    git -C "$SRC" fast-import --quiet ||
    { fail generate "git fast-import failed"; finish; }
tip=$(git -C "$SRC" rev-parse refs/heads/master)
old=$(git -C "$SRC" rev-parse refs/heads/old)
[ "$(git -C "$SRC" rev-list --count "$tip")" = 50000 ] &&
    pass generated_50000 || fail generated_50000 "$(git -C "$SRC" rev-list --count "$tip")"
echo "# generated in $(($(date +%s) - t0)) s"
# The branch starts 1,000 commits back.
git -C "$SRC" update-ref refs/heads/master "$old"

daemon_config "$PW_TMP/d" r1
tree_yaml big "file://$SRC" master "mm, include/linux/memcontrol.h"
cat >"$PW_DIR/jobs/j.yaml" <<'YAML'
name: j
parser: keyvalue
command: [echo, "x=1"]
trigger:
  trees: [big]
  paths: [mm, include/linux/memcontrol.h]
runs: 1
YAML
t0=$(date +%s)
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
if wait_tip master "$old" 300; then
	pass first_sight
else
	fail first_sight "$(cat "$PW_TMP/trees.json")"; show_logs; finish
fi
echo "# first copy and first sight in $(($(date +%s) - t0)) s"
[ "$(sql 'SELECT count(*) FROM jobs')" = 0 ] &&
    pass first_sight_no_jobs || fail first_sight_no_jobs "$(njobs queued)"

# 1,000 new commits at once.
git -C "$SRC" update-ref refs/heads/master "$tip"
t0=$(date +%s)
if wait_tip master "$tip" 300; then
	pass new_tip_recorded
else
	fail new_tip_recorded "$(cat "$PW_TMP/trees.json")"; show_logs; finish
fi
echo "# 1,000 new commits recorded in $(($(date +%s) - t0)) s"
want_touch=$(git -C "$SRC" rev-list "$old..$tip" -- mm include/linux/memcontrol.h | sort)
ntouch=$(wc -l <<<"$want_touch")
got=$(sql "SELECT count(*) FROM commits WHERE first_seen IS NOT NULL")
[ "$got" = 1001 ] && pass thousand_recorded_once || fail thousand_recorded_once "$got commits"
got_touch=$(sql "SELECT sha FROM commits WHERE touches = 1 ORDER BY sha")
[ "$got_touch" = "$want_touch" ] && [ "$ntouch" -gt 5 ] &&
    pass path_filter_matches_git || fail path_filter_matches_git "$ntouch by git, $(wc -l <<<"$got_touch") stored"
pairs_for_touched() {
	[ "$(sql "SELECT count(*) FROM jobs WHERE role = 'candidate'")" = "$ntouch" ]
}
if wait_until 60 pairs_for_touched; then
	pass one_pair_per_touching_commit
else
	fail one_pair_per_touching_commit "$(sql "SELECT count(*) FROM jobs WHERE role = 'candidate'") pairs for $ntouch commits"
fi
stop_pid "$PW_DAEMON_PID"
finish
