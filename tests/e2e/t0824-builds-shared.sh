#!/usr/bin/env bash
# check: parallel
# Shared kernel builds with a real daemon, curl as the builder and the
# bench hosts (no runner process: nothing is measured or booted).
#   - two pairs on one commit pair and config -> one build per commit,
#     every job linked; a third pair reuses them (a reuse counted);
#   - bench jobs are not claimable before their build succeeded; a
#     runner that says "builds": false is never handed a build, nor a
#     kernel job it would have to build itself (config: running);
#   - the builder's claim carries the key the contract defines;
#   - an upload with a wrong hash is refused and stores nothing, one
#     without the lease is 409, a finish without the files is refused
#     naming them;
#   - the bench claim carries kernel.image with the stored hashes, and a
#     download resumed with Range gives the exact bytes (416 past the
#     end);
#   - GET /api/v1/builds pages, /builds and /builds/{id} render escaped,
#     /metrics counts builds, reuses and bytes served.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"

builds_setup
submit kb "$BASE" "$CAND"
p1b=$(jfield pairs.0.base_job <"$PW_TMP/body")
p1c=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
submit kb "$BASE" "$CAND"
p2b=$(jfield pairs.0.base_job <"$PW_TMP/body")
check two_pairs_one_build_per_commit \
    test "$(sql "SELECT count(*) FROM builds")" = 2
check every_job_linked test "$(sql "SELECT count(DISTINCT build_id) || '/' ||
    count(*) FROM jobs WHERE build_id IS NOT NULL")" = "2/4"
check same_commit_same_build test "$(sql "SELECT count(DISTINCT build_id)
    FROM jobs WHERE id IN ($p1b, $p2b)")" = 1

# config: running is never shared; a runner that may not build skips it.
submit kr "$BASE" "$CAND"
check running_config_not_shared test "$(sql "SELECT count(*) FROM jobs
    WHERE name = 'kr' AND build_id IS NULL")" = 2

# Bench hosts: nothing to claim while the builds are not done.
code=$(claim h1 false)
check bench_host_waits_for_the_build test "$code" = 204

# The builder gets the base's build, with the contract's key.
code=$(claim b1)
build=$(jfield build.id <"$PW_TMP/body")
key=$(jfield build.key <"$PW_TMP/body")
want_key=$(python3 -c '
import hashlib
m = b"pw-build-2\0tinyconfig\0CONFIG_MEMCG=y\nCONFIG_PSI=y\0gcc\0-falign-functions=64\0x86_64"
print(hashlib.sha256(m).hexdigest()[:16])')
if [ "$code" = 200 ] && [ "$key" = "$want_key" ] &&
    [ "$(jfield build.tree.commit <"$PW_TMP/body")" = "$BASE" ] &&
    [[ $(jfield build.build_id <"$PW_TMP/body") == -pwb$build-* ]] &&
    [ "$(jfield build.kernel.config <"$PW_TMP/body")" = tinyconfig ]; then
	pass builder_claims_the_build
else
	fail builder_claims_the_build "$code $(cat "$PW_TMP/body") want key $want_key"
fi
check build_running test "$(sql "SELECT state FROM builds WHERE id = $build")" = running

# Uploads: a wrong hash stores nothing; another runner has no lease.
mkdir -p "$PW_TMP/files/x"
head -c 5000 /dev/urandom >"$PW_TMP/files/x/bzImage"
before=$(nfiles)
code=$(put_file "$build" bzImage "$PW_TMP/files/x/bzImage" b1 \
    "$(printf 'x' | sha256sum | cut -d' ' -f1)")
if [ "$code" = 400 ] && grep -q "does not match X-Perfwatch-Sha256" "$PW_TMP/body" &&
    [ "$(nfiles)" = "$before" ] &&
    [ "$(sql "SELECT count(*) FROM build_files")" = 0 ] &&
    [ -z "$(ls -A "$ARTS/tmp" 2>/dev/null)" ]; then
	pass wrong_hash_refused_nothing_stored
else
	fail wrong_hash_refused_nothing_stored "$code $(cat "$PW_TMP/body") files $before -> $(nfiles)"
fi
code=$(put_file "$build" bzImage "$PW_TMP/files/x/bzImage" h1)
check upload_without_lease_409 test "$code" = 409
# Decided on the headers: the reply comes with no body byte sent.
head_only() {	# head_only RUNNER SHA LENGTH: the status line
	python3 - "$PW_PORT" "$(cat "$PW_TOKENS/$1.token")" "$build" "$2" "$3" <<'PY'
import socket, sys
port, tok, build, sha, n = sys.argv[1:]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
s.sendall(("PUT /api/v1/builds/%s/files/bzImage HTTP/1.1\r\nHost: x\r\n"
           "Authorization: Bearer %s\r\nX-Perfwatch-Sha256: %s\r\n"
           "Content-Length: %s\r\n\r\n" % (build, tok, sha, n)).encode())
try:
    print(s.recv(4096).decode(errors="replace").split("\r\n")[0])
except socket.timeout:
    print("no reply before the body")
PY
}
sha=$(sha256sum <"$PW_TMP/files/x/bzImage" | cut -d' ' -f1)
check no_lease_refused_before_the_body test "$(head_only h1 "$sha" 5000 | cut -c1-12)" = "HTTP/1.1 409"
check too_large_refused_before_the_body test \
    "$(head_only b1 "$sha" $((600 << 20)) | cut -c1-12)" = "HTTP/1.1 413"
check held_upload_waits_for_its_body test "$(head_only b1 "$sha" 5000)" = "no reply before the body"
code=$(put_file "$build" vmlinux "$PW_TMP/files/x/bzImage" b1)
check upload_bad_name_400 test "$code" = 400
code=$(rq PUT "/api/v1/builds/$build/files/bzImage" b1 \
    -H "X-Perfwatch-Sha256: $(sha256sum <"$PW_TMP/files/x/bzImage" | cut -d' ' -f1)" \
    -H 'Transfer-Encoding: chunked' --data-binary "@$PW_TMP/files/x/bzImage")
check upload_without_length_411 test "$code" = 411

# A finish without the files is refused, naming them.
code=$(finish_build "$build" b1 success)
if [ "$code" = 400 ] && grep -q "missing: bzImage, config, System.map, meta" "$PW_TMP/body"; then
	pass finish_needs_the_files
else
	fail finish_needs_the_files "$code $(cat "$PW_TMP/body")"
fi
check builder_uploads upload_build "$build" b1
# The same content twice is stored once.
n=$(nfiles)
code=$(put_file "$build" bzImage "$PW_TMP/files/$build/bzImage" b1)
check same_content_stored_once test "$code/$(nfiles)" = "201/$n"
rq POST "/api/v1/builds/$build/log" b1 -H 'Content-Type: text/plain' \
    --data-binary 'make bzImage <done>' >/dev/null
code=$(finish_build "$build" b1 success)
check builder_finishes test "$code" = 200

# The other build (the candidate's) is not done: the base jobs are
# claimable, the candidates are not.
code=$(claim h1 false)
job=$(jfield job.id <"$PW_TMP/body")
python3 - "$PW_TMP/body" "$PW_TMP/files/$build" "$build" <<'PY' &&
import hashlib, json, os, sys
c = json.load(open(sys.argv[1]))
img = c["job"]["kernel"]["image"]
assert img["build"] == int(sys.argv[3]), img
assert img["build_id"].startswith("-pwb%s-" % sys.argv[3]), img
assert img["release"] == "6.1.0-pwb%s" % sys.argv[3], img
for n in ("bzImage", "System.map", "config", "meta"):
    data = open(os.path.join(sys.argv[2], n), "rb").read()
    assert img["files"][n] == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}, (n, img["files"][n])
assert "gen_init_cpio" not in img["files"], img
PY
    pass bench_claim_carries_the_image || fail bench_claim_carries_the_image "$code $(cat "$PW_TMP/body")"
check bench_claim_is_a_base test "$(sql "SELECT role FROM jobs WHERE id = $job")" = base
# A runner that holds a job gets it back, not the queued build.
code=$(claim h1 true)
check held_job_before_a_build test "$code/$(jfield job.id <"$PW_TMP/body")" = "200/$job"

# Downloads: whole, then resumed with Range; 416 past the end.
sha=$(sha256sum "$PW_TMP/files/$build/bzImage" | cut -d' ' -f1)
curl -s -o "$PW_TMP/dl.part" -H "Authorization: Bearer $(cat "$PW_TOKENS/h1.token")" \
    -r 0-999 "$PW_URL/api/v1/artifacts/$sha"
code=$(rq GET "/api/v1/artifacts/$sha" h1 -H 'Range: bytes=1000-' -D "$PW_TMP/hdr")
cat "$PW_TMP/dl.part" "$PW_TMP/body" >"$PW_TMP/dl"
if [ "$code" = 206 ] && cmp -s "$PW_TMP/dl" "$PW_TMP/files/$build/bzImage" &&
    grep -qi "^Content-Range: bytes 1000-2999/3000" "$PW_TMP/hdr" &&
    grep -qi "^ETag: \"$sha\"" "$PW_TMP/hdr"; then
	pass range_resume_exact_bytes
else
	fail range_resume_exact_bytes "$code $(cat "$PW_TMP/hdr")"
fi
code=$(rq GET "/api/v1/artifacts/$sha" h1 -H 'Range: bytes=3000-')
check range_past_the_end_416 test "$code" = 416
code=$(rq GET "/api/v1/artifacts/$sha" h1)
check full_download test "$code" = 200
cmp -s "$PW_TMP/body" "$PW_TMP/files/$build/bzImage" && pass full_download_bytes || fail full_download_bytes "differs"
code=$(rq GET "/api/v1/artifacts/$(printf 0%.0s {1..64})" h1)
check unknown_artifact_404 test "$code" = 404
code=$(http GET "/api/v1/artifacts/$sha")
check download_needs_a_runner_token test "$code" = 401

# A third pair on the same commits reuses both builds.
submit kb "$BASE" "$CAND"
check third_pair_reuses test "$(sql "SELECT count(*) FROM builds")" = 2

# Reads.
code=$(http GET "/api/v1/builds/$build")
python3 - "$PW_TMP/body" "$BASE" <<'PY' && pass build_read || fail build_read "$code $(head -c 600 "$PW_TMP/body")"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["state"] == "success" and b["commit"] == sys.argv[2], b
assert b["builder"] == "b1" and b["size"] > 3000 and b["build_s"] == 1.5, b
assert set(b["files"]) == {"bzImage", "System.map", "config", "meta"}, b["files"]
assert len(b["jobs"]) == 3 and all(j["role"] == "base" for j in b["jobs"]), b["jobs"]
assert "make bzImage <done>" in b["log"], b["log"]
PY
ids=$(python3 - "$PW_URL" <<'PY'
import json, sys, urllib.request
ids, cur = [], None
for _ in range(5):
    q = "limit=1" + ("" if cur is None else "&cursor=%d" % cur)
    o = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/builds?" + q))
    ids += [b["id"] for b in o["builds"]]
    cur = o["next_cursor"]
    if cur is None:
        break
print(" ".join(map(str, ids)))
PY
)
check builds_paged test "$ids" = "2 1"
code=$(http GET "/api/v1/builds?state=nope")
check builds_bad_state_400 test "$code" = 400
page builds_page /builds "/builds/$build" success tinyconfig
page build_page "/builds/$build" "make bzImage &lt;done&gt;" bzImage "/jobs/$p1b"
code=$(http GET /metrics)
if grep -q '^perfwatch_builds_total{state="success"} 1$' "$PW_TMP/body" &&
    grep -q '^perfwatch_builds_total{state="queued"} 1$' "$PW_TMP/body" &&
    grep -q '^perfwatch_build_reuses_total 4$' "$PW_TMP/body" &&
    grep -q '^perfwatch_artifact_bytes_served_total 6000$' "$PW_TMP/body" &&
    grep -q '^perfwatch_artifact_store_bytes [1-9]' "$PW_TMP/body"; then
	pass metrics
else
	fail metrics "$(grep -E 'build|artifact' "$PW_TMP/body")"
fi
finish
