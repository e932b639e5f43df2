#!/usr/bin/env bash
# A series' commits from any daemon of a PostgreSQL database (make
# check-pg; SKIP on SQLite).  Daemons A and B share a database, each
# with mirrors of its own and worker leases of 3 s: A, started first,
# holds the watcher's lease, so only A's mirror has the tree and the
# commits it makes from a mailed series.  The runner lists B alone.
# A series uploaded through A is applied by A's watcher; the runner
# claims its candidate job through B and gets the series' pack from B
# (GET /api/v1/packs on B: the pack A's watcher kept in the store, as B's
# mirror lacks the series), builds that commit (its build step reads a
# file only the series adds) and measures it.  Checked too: B never made
# a mirror of the tree, B's pack is one git reads holding the series
# commit, a commit that is no series commit is still 404 on B, and an
# applied series whose pack was over http.max_pack answers 413 on B.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_pack_any_daemon: make check-pg runs it"
	exit 0
fi

SRC=$PW_TMP/app
src_init "$SRC"
c1=$(commit "$SRC" mm/a.c "mm: a second commit")

daemon_config "$PW_TMP/a" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<'YAML'
scheduler:
  worker_lease: 3s
http:
  max_pack: 8K
YAML
# The build needs series.txt, which only the series' commit has.
cat >"$PW_DIR/jobs/packjob.yaml" <<'YAML'
name: packjob
build: [sh, -c, 'cp series.txt built.txt']
command: [sh, -c, 'echo ops=$(wc -c <built.txt)']
parser: keyvalue
runs: 1
max_runs: 1
timeout: 30s
trigger: {trees: [app]}
metrics: {ops: {better: higher}}
YAML
mkdir -p "$PW_TMP/b"
sed "s|^mirrors: .*|mirrors: $PW_TMP/b/git|" "$PW_TMP/a/daemon.yaml" >"$PW_TMP/b/daemon.yaml"

start_daemon "$PW_TMP/a" || { fail a_starts "see log"; finish; }
A_URL=$PW_URL
wait_for 20 grep -q "leases: watch taken by this perfwatchd" "$PW_TMP/a/daemon.log" ||
    { fail a_takes_watch "$(grep leases "$PW_TMP/a/daemon.log")"; finish; }
spawn "$PW_TMP/b/daemon.log" "$PW_BIN/perfwatchd" -v -c "$PW_TMP/b/daemon.yaml" \
    --port-file "$PW_TMP/b/port"
wait_for 20 test -s "$PW_TMP/b/port" || { fail b_starts "$(cat "$PW_TMP/b/daemon.log")"; finish; }
B_URL=http://127.0.0.1:$(cat "$PW_TMP/b/port")
wait_tip master "$c1" || { fail first_sight "tip not seen"; show_logs; finish; }

# The runner knows B only.
runner_config r1
sed -i "s|^server: .*|server: $B_URL|" "$PW_TMP/r1/runner.yaml"
start_runner r1

cand_job() {	# cand_job SHA: the candidate job measuring SHA
	sql "SELECT j.id FROM jobs j JOIN commits c ON c.id = j.commit_id
	    WHERE c.sha = '$1' AND j.role = 'candidate'"
}
job_is() { [ "$(job_state "$1")" = "$2" ]; }

PW_URL=$A_URL series_upload app "$SRC" "$c1" small series.txt "made from mail"
tipa=$TIP
[ -n "$tipa" ] || finish
check series_applied_by_a grep -q "series 1 (.*): 1 patches applied" "$PW_TMP/a/daemon.log"
ja=$(cand_job "$tipa")
if [ -n "$ja" ] && wait_until 60 job_is "$ja" success; then
	pass job_built_through_b
else
	fail job_built_through_b "job '$ja': $(job_state "$ja"): $(sql "SELECT error FROM jobs WHERE id = ${ja:-0}")"
	show_logs
fi
# Measured what the build made from the series' file: 15 bytes.
check measured_the_series_commit [ "$(sql "SELECT m.value FROM metrics m
    JOIN runs r ON r.id = m.run_id WHERE r.job_id = ${ja:-0} AND m.name = 'ops'")" = 15 ]
check pack_came_from_b [ "$(sql "SELECT count(*) FROM job_logs WHERE job_id = ${ja:-0}
    AND text LIKE 'series commit $tipa from the daemon''s pack%'")" = 1 ]
check b_served_it_from_the_store grep -q "tree app: pack of ${tipa:0:12} from the store" "$PW_TMP/b/daemon.log"
grep -q "registered as r1 with $B_URL" "$PW_TMP/r1/runner.log" &&
    ! grep -q "$A_URL" "$PW_TMP/r1/runner.log" && pass runner_talked_to_b_alone ||
    fail runner_talked_to_b_alone "$(grep -i "registered\|server" "$PW_TMP/r1/runner.log" | head -3)"
[ -z "$(ls -A "$PW_TMP/b/git" 2>/dev/null)" ] && pass b_has_no_mirror ||
    fail b_has_no_mirror "$(ls -A "$PW_TMP/b/git")"

# B's pack, as git reads it: the series commit over its base.
pack() {	# pack PATH: status from B; body in $PW_TMP/pack
	curl -s -o "$PW_TMP/pack" -w '%{http_code}' --max-time 30 \
	    -H "Authorization: Bearer $(cat "$PW_TOKENS/r1.token")" \
	    "$B_URL/api/v1/packs/$1"
}
code=$(pack "$tipa?have=$c1")
scratch=$PW_TMP/scratch.git
git init -q --bare "$scratch"
if [ "$code" = 200 ] && git --git-dir="$scratch" index-pack --stdin <"$PW_TMP/pack" >"$PW_TMP/ip.out" 2>&1; then
	git verify-pack -v "$(ls "$scratch"/objects/pack/pack-*.idx)" >"$PW_TMP/vp.out" 2>&1
	commits=$(awk '$2 == "commit" { print $1 }' "$PW_TMP/vp.out")
	[ "$commits" = "$tipa" ] && pass b_pack_read_by_git ||
	    fail b_pack_read_by_git "commits in the pack: $commits (want $tipa)"
else
	fail b_pack_read_by_git "$code $(head -c 300 "$PW_TMP/pack") $(cat "$PW_TMP/ip.out" 2>/dev/null)"
fi
code=$(pack "$c1?have=$c1")
[ "$code" = 404 ] && jfield error <"$PW_TMP/pack" | grep -q "is not a series commit" &&
    pass b_tree_commit_404 || fail b_tree_commit_404 "$code $(cat "$PW_TMP/pack")"

# Over http.max_pack (8K): kept as such, 413 on B too.
big=$(head -c 16384 /dev/urandom | base64 -w 0)
PW_URL=$A_URL series_upload app "$SRC" "$c1" large big.txt "$big"
tipb=$TIP
code=$(pack "$tipb?have=$c1")
[ -n "$tipb" ] && [ "$code" = 413 ] && jfield error <"$PW_TMP/pack" | grep -q "larger than http.max_pack" &&
    pass b_over_the_cap_413 || fail b_over_the_cap_413 "$code $(head -c 300 "$PW_TMP/pack")"
finish
