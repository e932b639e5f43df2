#!/usr/bin/env bash
# The pack route (GET /api/v1/packs/{sha}?have=) and a runner taking a
# series' commits from it, on 127.0.0.1.  The runner reaches the daemon
# through a small forwarding proxy (api_proxy.py) that can damage the
# packs on the way, as a bad link or disk could.
#
# Checked:
#  1. a damaged pack fails the job with an error naming the commit, the
#     pack route and what was wrong, and leaves the runner's clone as it
#     was (no scratch directory, no pack, the commit absent, fsck clean);
#  2. the same job retried with the pack intact succeeds from the pack;
#     a series commit submitted by hand (POST /api/v1/submit) gets the
#     pack route in its spec too;
#  3. the route's bad input: a tree commit (404), a base that is not the
#     series' own (400: an unknown commit, or an older commit of the
#     tree, whose pack would hold the tree's history), a malformed id
#     (400), no or a malformed base (400), no token (401),
#     the admin token (403); a good pack is one real git reads (index-pack,
#     verify-pack): the series commits, not the base;
#  4. a series whose pack is over http.max_pack (4K here): 413 naming the
#     cap, and the runner's job fails saying so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"

PROXY=$(cd "$(dirname "$0")" && pwd)/api_proxy.py
SRC=$PW_TMP/app
src_init "$SRC"
c0=$(g "$SRC" rev-parse HEAD)
c1=$(commit "$SRC" mm/a.c "mm: a second commit")

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
http:
  max_pack: 4K
YAML
cat >"$PW_DIR/jobs/packjob.yaml" <<'YAML'
name: packjob
parser: keyvalue
command: [sh, -c, 'echo ops=1000']
trigger:
  trees: [app]
metrics:
  ops: {better: higher, min_effect: 20%}
runs: 1
max_runs: 1
timeout: 30s
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "tip not seen"; show_logs; finish; }

mkdir -p "$PW_TMP/proxy"
touch "$PW_TMP/proxy/corrupt"
spawn "$PW_TMP/proxy/log" python3 "$PROXY" "$PW_URL" "$PW_TMP/proxy"
wait_for 10 test -s "$PW_TMP/proxy/port" || { fail proxy_starts "$(cat "$PW_TMP/proxy/log")"; finish; }
runner_config r1
sed -i "s|^server: .*|server: http://127.0.0.1:$(cat "$PW_TMP/proxy/port")|" \
    "$PW_TMP/r1/runner.yaml"
start_runner r1

cand_job() {	# cand_job SHA: the candidate job measuring SHA
	sql "SELECT j.id FROM jobs j JOIN commits c ON c.id = j.commit_id
	    WHERE c.sha = '$1' AND j.role = 'candidate'"
}
job_is() { [ "$(job_state "$1")" = "$2" ]; }

# ---- 1. a damaged pack ----
series_upload app "$SRC" "$c1" small s1 "a small change"
tipa=$TIP
ja=$(cand_job "$tipa")
if [ -n "$ja" ] && wait_until 60 job_is "$ja" failed; then
	err=$(sql "SELECT error FROM jobs WHERE id = $ja")
	echo "# job $ja: $err"
	check damaged_pack_fails_the_job grep -q corrupted "$PW_TMP/proxy/packs.log"
	case $err in
	*"series commit $tipa: the pack from /api/v1/packs/$tipa?have=$c1 ("*"bytes): "*"indexing the pack"*)
		pass damaged_pack_error_is_clear ;;
	*) fail damaged_pack_error_is_clear "$err" ;;
	esac
else
	fail damaged_pack_fails_the_job "job '$ja': $(job_state "$ja"); $(cat "$PW_TMP/proxy/packs.log" 2>&1)"
	show_logs
fi
clone=$(ls -d "$PW_TMP"/r1/work/trees/u-*.git 2>/dev/null | head -1)
if [ -n "$clone" ] && ! git --git-dir="$clone" cat-file -e "$tipa" 2>/dev/null &&
    [ -z "$(find "$clone" -maxdepth 1 -name 'pack-in-*')" ] &&
    git --git-dir="$clone" fsck --no-progress --connectivity-only 2>"$PW_TMP/fsck.err"; then
	pass damaged_pack_leaves_clone_as_it_was
else
	fail damaged_pack_leaves_clone_as_it_was "clone '$clone': $(ls -la "$clone" "$clone/objects/pack" 2>&1 | head -20) $(cat "$PW_TMP/fsck.err" 2>/dev/null)"
fi

# ---- 2. retried with the pack intact ----
rm -f "$PW_TMP/proxy/corrupt"
code=$(http POST "/api/v1/jobs/$ja/retry" "$PW_ADMIN")
[ "$code" = 200 ] || fail retry "$code $(cat "$PW_TMP/body")"
if wait_until 60 job_is "$ja" success; then
	[ "$(sql "SELECT count(*) FROM job_logs WHERE job_id = $ja
	    AND text LIKE 'series commit $tipa from the daemon''s pack%'")" = 1 ] &&
	    [ "$(git --git-dir="$clone" cat-file -t "$tipa")" = commit ] &&
	    pass intact_pack_measured ||
	    fail intact_pack_measured "$(sql "SELECT text FROM job_logs WHERE job_id = $ja")"
else
	fail intact_pack_measured "job $ja: $(job_state "$ja"): $(sql "SELECT error FROM jobs WHERE id = $ja")"
	show_logs
fi

# A series commit submitted by hand gets the pack route too.
code=$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"packjob\",
    \"base\": {\"tree\": \"app\", \"commit\": \"$c1\"},
    \"candidate\": {\"tree\": \"app\", \"commit\": \"$tipa\"}}")
sj=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
bj=$(jfield pairs.0.base_job <"$PW_TMP/body")
[ "$code" = 201 ] &&
    sql "SELECT params FROM jobs WHERE id = $sj" | grep -q "\"pack\": *\"/api/v1/packs/$tipa?have=$c1\"" &&
    ! sql "SELECT params FROM jobs WHERE id = $bj" | grep -q '"pack"' &&
    pass submitted_series_commit_has_pack ||
    fail submitted_series_commit_has_pack "$code $(cat "$PW_TMP/body") $(sql "SELECT params FROM jobs WHERE id = ${sj:-0}")"

# ---- 3. the route's bad input ----
pack() {	# pack PATH [TOKEN]: status; body in $PW_TMP/pack, type in $PW_TMP/ctype
	local tok=${2:-$PW_TOKENS/r1.token} args=()
	[ "$tok" != - ] && args=(-H "Authorization: Bearer $(cat "$tok")")
	curl -s -o "$PW_TMP/pack" -w '%{http_code} %{content_type}' --max-time 30 \
	    "${args[@]}" "$PW_URL/api/v1/packs/$1" >"$PW_TMP/ctype"
	cut -d' ' -f1 "$PW_TMP/ctype"
}
errtext() { jfield error <"$PW_TMP/pack"; }
code=$(pack "$c1?have=$c1")
[ "$code" = 404 ] && errtext | grep -q "is not a series commit" &&
    pass pack_tree_commit_404 || fail pack_tree_commit_404 "$code $(cat "$PW_TMP/pack")"
code=$(pack "$tipa?have=0123456789abcdef0123456789abcdef01234567")
[ "$code" = 400 ] && errtext | grep -q "^query 'have': 0123456789abcdef0123456789abcdef01234567 is neither the base of the series of $tipa ($c1)" &&
    pass pack_other_base_400 || fail pack_other_base_400 "$code $(cat "$PW_TMP/pack")"
# An older commit of the tree as the base would make a pack of its whole
# history: refused too.
code=$(pack "$tipa?have=$c0")
[ "$code" = 400 ] && errtext | grep -q "is neither the base of the series" &&
    pass pack_older_base_400 || fail pack_older_base_400 "$code $(cat "$PW_TMP/pack")"
code=$(pack "xyz?have=$c1")
[ "$code" = 400 ] && errtext | grep -q "^path: 'xyz' is not a commit id" &&
    pass pack_bad_id_400 || fail pack_bad_id_400 "$code $(cat "$PW_TMP/pack")"
code=$(pack "$tipa")
[ "$code" = 400 ] && errtext | grep -q "^query 'have': required" &&
    pass pack_no_base_400 || fail pack_no_base_400 "$code $(cat "$PW_TMP/pack")"
code=$(pack "$tipa?have=HEAD")
[ "$code" = 400 ] && errtext | grep -q "^query 'have': 'HEAD' is not a commit id" &&
    pass pack_bad_base_400 || fail pack_bad_base_400 "$code $(cat "$PW_TMP/pack")"
code=$(pack "$tipa?have=$c1" -)
check pack_no_token_401 [ "$code" = 401 ]
code=$(pack "$tipa?have=$c1" "$PW_ADMIN")
check pack_admin_token_403 [ "$code" = 403 ]
code=$(pack "$tipa?have=$c1")
scratch=$PW_TMP/scratch.git
git init -q --bare "$scratch"
if [ "$code" = 200 ] && grep -q " application/x-git-packfile$" "$PW_TMP/ctype" &&
    git --git-dir="$scratch" index-pack --stdin <"$PW_TMP/pack" >"$PW_TMP/ip.out" 2>&1; then
	idx=$(ls "$scratch"/objects/pack/pack-*.idx)
	git verify-pack -v "$idx" >"$PW_TMP/vp.out" 2>&1
	commits=$(awk '$2 == "commit" { print $1 }' "$PW_TMP/vp.out")
	[ "$commits" = "$tipa" ] && pass pack_read_by_git ||
	    fail pack_read_by_git "commits in the pack: $commits (want only $tipa): $(cat "$PW_TMP/vp.out")"
else
	fail pack_read_by_git "$(cat "$PW_TMP/ctype") $(cat "$PW_TMP/ip.out" 2>/dev/null)"
fi

# ---- 4. over http.max_pack ----
# 16 KiB of incompressible text: its pack cannot fit in 4K.
big=$(head -c 12288 /dev/urandom | base64 -w 0)
series_upload app "$SRC" "$c1" large big.txt "$big"
tipb=$TIP
code=$(pack "$tipb?have=$c1")
[ "$code" = 413 ] && errtext | grep -q "larger than 4096 bytes (http.max_pack)" &&
    pass pack_over_the_cap_413 || fail pack_over_the_cap_413 "$code $(head -c 300 "$PW_TMP/pack")"
jb=$(cand_job "$tipb")
if [ -n "$jb" ] && wait_until 60 job_is "$jb" failed; then
	err=$(sql "SELECT error FROM jobs WHERE id = $jb")
	case $err in
	*"series commit ${tipb:0:12}: GET /api/v1/packs/$tipb?have=$c1: HTTP 413: "*"http.max_pack"*)
		pass job_over_the_cap_fails ;;
	*) fail job_over_the_cap_fails "$err" ;;
	esac
else
	fail job_over_the_cap_fails "job '$jb': $(job_state "$jb")"
	show_logs
fi
finish
