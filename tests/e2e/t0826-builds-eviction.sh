#!/usr/bin/env bash
# check: parallel
# The artifact store's cap (builds.max_size 8K, max_file 4K) with a real
# daemon and curl as the builder and bench host:
#   - an upload over max_file is 413 on its headers;
#   - when every stored artifact belongs to a build whose jobs are still
#     queued, an upload that would pass max_size is 413 naming the cap
#     and the bytes held, and nothing is removed;
#   - once those jobs are done, the least recently used artifacts go to
#     make room, their builds are marked evicted (their downloads 404),
#     and a new pair on an evicted build's key queues a new build;
#   - the artifacts of a build whose jobs are queued are never evicted,
#     however much later uploads need.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"

builds_setup "max_size: 8K" "max_file: 4K"
submit kb "$BASE" "$CAND"
for i in 1 2; do
	claim b1 >/dev/null
	b=$(jfield build.id <"$PW_TMP/body")
	upload_build "$b" b1 || fail "upload_$b" "refused"
	finish_build "$b" b1 success >/dev/null
done
check two_builds_stored test "$(nfiles)" = 8

submit kb "$OTHER" "$OTHER"
claim b1 >/dev/null
b3=$(jfield build.id <"$PW_TMP/body")
mkdir -p "$PW_TMP/files/big" "$PW_TMP/files/$b3"
head -c 5000 /dev/urandom >"$PW_TMP/files/big/bzImage"
code=$(put_file "$b3" bzImage "$PW_TMP/files/big/bzImage" b1)
if [ "$code" = 413 ] && grep -q "builds.max_file (4096)" "$PW_TMP/body"; then
	pass over_max_file_413
else
	fail over_max_file_413 "$code $(cat "$PW_TMP/body")"
fi

# Everything stored is needed by queued jobs: refused, nothing removed.
head -c 3000 /dev/urandom >"$PW_TMP/files/$b3/bzImage"
held=$(sql "SELECT sum(size) FROM artifacts")
code=$(put_file "$b3" bzImage "$PW_TMP/files/$b3/bzImage" b1)
if [ "$code" = 413 ] &&
    grep -q "artifact store full (builds.max_size 8192): $held bytes held by builds that queued jobs need" "$PW_TMP/body" &&
    [ "$(nfiles)" = 8 ] &&
    [ "$(sql "SELECT count(*) FROM builds WHERE evicted = 1")" = 0 ]; then
	pass full_store_refuses_and_keeps_needed
else
	fail full_store_refuses_and_keeps_needed "$code $(cat "$PW_TMP/body") files $(nfiles)"
fi

# The first pair runs; its builds are needed no more.
for i in 1 2; do
	claim h1 false >/dev/null
	j=$(jfield job.id <"$PW_TMP/body")
	rq POST "/api/v1/jobs/$j/finish" h1 -H 'Content-Type: application/json' \
	    -d '{"status": "success"}' >/dev/null
done
check first_pair_done test "$(sql "SELECT count(*) FROM jobs WHERE state = 'success'")" = 2
# The second build's files are used later than the first's.
b1=$(sql "SELECT min(id) FROM builds")
b2=$((b1 + 1))
sleep 1.1
for s in $(sql "SELECT sha256 FROM build_files WHERE build_id = $b2"); do
	rq GET "/api/v1/artifacts/$s" h1 >/dev/null
done
old=$(sql "SELECT group_concat(sha256, ' ') FROM artifacts")
code=$(put_file "$b3" bzImage "$PW_TMP/files/$b3/bzImage" b1)
gone=
for s in $old; do
	[ "$(sql "SELECT count(*) FROM artifacts WHERE sha256 = '$s'")" = 0 ] && gone="$gone $s"
done
evicted=$(sql "SELECT group_concat(CAST(id AS TEXT)) FROM builds WHERE evicted = 1")
if [ "$code" = 201 ] && [ -n "$gone" ] && [ "$evicted" = "$b1" ] &&
    [ "$(sql "SELECT sum(size) FROM artifacts")" -le 8192 ]; then
	pass unneeded_lru_evicted
else
	fail unneeded_lru_evicted "$code $(cat "$PW_TMP/body") gone:$gone evicted:$evicted"
fi
s=$(echo $gone | cut -d' ' -f1)
code=$(rq GET "/api/v1/artifacts/$s" h1)
check evicted_artifact_404 test "$code" = 404
check evicted_file_removed test -z "$(find "$ARTS" -name "$s")"
check evicted_builds_were_not_needed test \
    "$(sql "SELECT count(*) FROM jobs WHERE build_id IN ($evicted)
        AND state IN ('queued', 'running')")" = 0
for n in System.map config meta; do
	printf '%s of build %s\n' "$n" "$b3" >"$PW_TMP/files/$b3/$n"
	put_file "$b3" "$n" "$PW_TMP/files/$b3/$n" b1 >/dev/null
done
code=$(finish_build "$b3" b1 success)
check third_build_done test "$code" = 200
keep=$(sql "SELECT group_concat(sha256, ' ') FROM build_files WHERE build_id = $b3")

# A new pair on the first commits: each evicted build is built again.
nb0=$(sql "SELECT count(*) FROM builds")
submit kb "$BASE" "$CAND"
nb1=$(sql "SELECT count(*) FROM builds")
check evicted_key_queues_a_new_build test \
    "$((nb1 - nb0))" = "$(echo "$evicted" | tr ',' '\n' | wc -l)"

# The new build of the evicted key finds only builds whose jobs are
# queued (the third, and the second, which the new pair reuses):
# refused, and nothing of theirs goes.
code=$(claim b1)
b4=$(jfield build.id <"$PW_TMP/body")
check new_build_claimed test "$code/$(sql "SELECT sha FROM builds WHERE id = $b4")" = "200/$BASE"
code=$(put_file "$b4" bzImage "$PW_TMP/files/$b3/bzImage" b1)
if [ "$code" = 413 ] && grep -q "held by builds that queued jobs need" "$PW_TMP/body"; then
	pass needed_builds_refuse_more
else
	fail needed_builds_refuse_more "$code $(cat "$PW_TMP/body")"
fi
# Every artifact of a build a queued job waits on is still served.
need=$(sql "SELECT group_concat(f.sha256, ' ') FROM build_files f
    JOIN builds b ON b.id = f.build_id WHERE b.state = 'success'
    AND EXISTS (SELECT 1 FROM jobs j WHERE j.build_id = b.id
    AND j.state = 'queued')")
lost=
for s in $keep $need; do
	[ "$(rq GET "/api/v1/artifacts/$s" h1)" = 200 ] || lost="$lost $s"
done
if [ -z "$lost" ] && [ "$(echo $need | wc -w)" = 8 ] &&
    [ "$(sql "SELECT count(*) FROM builds WHERE evicted = 1 AND EXISTS
        (SELECT 1 FROM jobs j WHERE j.build_id = builds.id
        AND j.state = 'queued')")" = 0 ]; then
	pass needed_artifacts_never_evicted
else
	fail needed_artifacts_never_evicted "lost:$lost need: $need"
fi
check store_within_cap test "$(sql "SELECT sum(size) FROM artifacts")" -le 8192
finish
