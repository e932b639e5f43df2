#!/usr/bin/env bash
# check: parallel
# Shared builds seen from the jobs, cancelled by the operator, and keyed
# by compiler, with a real daemon and curl as the builder:
#   - GET /api/v1/jobs/{id} and GET /api/v1/pairs/{id} name the build
#     each job waits on (id, state, build_id); a job that waits on none
#     says null;
#   - the job kernel.compiler is in the build key: a pair that differs
#     from another only in compiler gets builds of its own, handed to
#     the builder with that compiler; naming gcc is naming none;
#   - POST /api/v1/builds/{id}/cancel needs the admin token; it cancels
#     a running build (the builder's heartbeat is told to stop, its
#     uploads are 409) and a queued one, failing the jobs waiting on
#     them "build cancelled: build B: cancelled by the operator"; an
#     ended build is 409, an unknown one 404; a retried job gets a new
#     build;
#   - the dashboard's nav has Builds, and a job failed by a cancelled
#     build links /builds/B.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/lib_kstandin.sh"
. "$(dirname "$0")/lib_builds.sh"

builds_setup
submit kb "$BASE" "$CAND"
pair=$(jfield pairs.0.pair_id <"$PW_TMP/body")
jb=$(jfield pairs.0.base_job <"$PW_TMP/body")
jc=$(jfield pairs.0.candidate_job <"$PW_TMP/body")
bb=$(sql "SELECT build_id FROM jobs WHERE id = $jb")
bc=$(sql "SELECT build_id FROM jobs WHERE id = $jc")

# The job and the pair name their builds.
code=$(http GET "/api/v1/jobs/$jb")
python3 - "$PW_TMP/body" "$bb" <<'PY' && pass job_names_its_build || fail job_names_its_build "$code $(head -c 400 "$PW_TMP/body")"
import json, sys
b = json.load(open(sys.argv[1]))["build"]
assert b["id"] == int(sys.argv[2]) and b["state"] == "queued", b
assert b["build_id"].startswith("-pwb%s-" % sys.argv[2]) and b["error"] is None, b
PY
code=$(http GET "/api/v1/pairs/$pair")
python3 - "$PW_TMP/body" "$bb" "$bc" <<'PY' && pass pair_names_its_builds || fail pair_names_its_builds "$code $(head -c 400 "$PW_TMP/body")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["base"]["build"]["id"] == int(sys.argv[2]), p["base"]
assert p["candidate"]["build"]["id"] == int(sys.argv[3]), p["candidate"]
assert p["candidate"]["build"]["state"] == "queued", p["candidate"]
PY
submit kr "$BASE" "$CAND"
jr=$(jfield pairs.0.base_job <"$PW_TMP/body")
code=$(http GET "/api/v1/jobs/$jr")
check unshared_job_build_null test "$code/$(jfield build <"$PW_TMP/body")" = 200/null

# The compiler is in the key.
cc_yaml() {	# cc_yaml COMPILER: kb's job file with kernel.compiler, as JSON
	sed "s/^  config: tinyconfig/  config: tinyconfig\n  compiler: $1/" \
	    "$PW_DIR/jobs/kb.yaml" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'
}
submit_cc() {	# submit_cc COMPILER: a pair of that job; the status
	http POST /api/v1/submit "$PW_ADMIN" "{\"job_yaml\": $(cc_yaml "$1"),
	    \"base\": {\"tree\": \"$K\", \"commit\": \"$BASE\"},
	    \"candidate\": {\"tree\": \"$K\", \"commit\": \"$CAND\"}}"
}
n0=$(sql "SELECT count(*) FROM builds")
code=$(submit_cc gcc)
check gcc_named_reuses test "$code/$(sql "SELECT count(*) FROM builds")" = "201/$n0"
code=$(submit_cc clang-17)
check other_compiler_other_builds test "$code/$(sql "SELECT count(*) FROM builds")" = "201/$((n0 + 2))"
cl=$(sql "SELECT max(id) FROM builds")
code=$(http GET "/api/v1/builds/$cl")
check build_read_names_cc test "$code/$(jfield cc <"$PW_TMP/body")" = 200/clang-17
code=$(submit_cc "'gcc; rm'")
if [ "$code" = 400 ] && grep -q "kernel.compiler" "$PW_TMP/body"; then
	pass bad_compiler_refused
else
	fail bad_compiler_refused "$code $(cat "$PW_TMP/body")"
fi

# Cancel: admin only.
code=$(rq POST "/api/v1/builds/$bb/cancel" b1)
check cancel_needs_admin test "$code" = 403
code=$(http POST "/api/v1/builds/$bb/cancel")
check cancel_needs_a_token test "$code" = 401
# A running build: the builder is told to stop.
code=$(claim b1)
check builder_claims_the_base test "$code/$(jfield build.id <"$PW_TMP/body")" = "200/$bb"
code=$(http POST "/api/v1/builds/$bb/cancel" "$PW_ADMIN" '{}')
if [ "$code" = 200 ] && [ "$(jfield state <"$PW_TMP/body")" = cancelled ] &&
    [ "$(jfield jobs_failed <"$PW_TMP/body")" = 2 ]; then
	pass running_build_cancelled
else
	fail running_build_cancelled "$code $(cat "$PW_TMP/body")"
fi
err=$(sql "SELECT error FROM jobs WHERE id = $jb")
check waiting_job_failed_saying_so test "$(sql "SELECT state FROM jobs WHERE id = $jb")/$err" = \
    "failed/build cancelled: build $bb: cancelled by the operator"
code=$(rq POST /api/v1/runners/heartbeat b1 -H 'Content-Type: application/json' \
    -d "{\"build_id\": $bb}")
check builder_told_to_stop test "$code/$(jfield cancel <"$PW_TMP/body")" = 200/true
mkdir -p "$PW_TMP/files/x"
echo bytes >"$PW_TMP/files/x/meta"
code=$(put_file "$bb" meta "$PW_TMP/files/x/meta" b1)
check upload_after_cancel_409 test "$code" = 409
code=$(http POST "/api/v1/builds/$bb/cancel" "$PW_ADMIN" '{}')
if [ "$code" = 409 ] && grep -q "build $bb is cancelled" "$PW_TMP/body"; then
	pass ended_build_cancel_409
else
	fail ended_build_cancel_409 "$code $(cat "$PW_TMP/body")"
fi
code=$(http POST /api/v1/builds/9999/cancel "$PW_ADMIN" '{}')
check unknown_build_cancel_404 test "$code" = 404
# A queued build.
code=$(http POST "/api/v1/builds/$bc/cancel" "$PW_ADMIN" '{}')
check queued_build_cancelled test "$code/$(sql "SELECT state FROM builds WHERE id = $bc")" = 200/cancelled
code=$(http GET "/api/v1/jobs/$jc")
check job_shows_the_cancelled_build test "$(jfield build.state <"$PW_TMP/body")/$(jfield build.error <"$PW_TMP/body")" = \
    "cancelled/cancelled by the operator"
check candidate_failed test "$(jfield state <"$PW_TMP/body")" = failed

# The dashboard: the nav, and the failed job's link to its build.
page nav_has_builds / '<a href="/builds">Builds</a>'
page builds_nav_on /builds '<a href="/builds" class="on">Builds</a>'
page job_links_cancelled_build "/jobs/$jb" "href=\"/builds/$bb\""

# A retried job gets a new build.
code=$(http POST "/api/v1/jobs/$jb/retry" "$PW_ADMIN" '{}')
nb=$(sql "SELECT build_id FROM jobs WHERE id = $jb")
check retried_job_new_build test "$code/$(sql "SELECT state FROM builds WHERE id = $nb")" = 200/queued
[ "$nb" != "$bb" ] && pass retried_job_not_on_the_cancelled || fail retried_job_not_on_the_cancelled "still $bb"
# The next build is clang's, and its builder is told so.
code=$(claim b1)
check builder_told_the_compiler test \
    "$code/$(jfield build.id <"$PW_TMP/body")/$(jfield build.kernel.compiler <"$PW_TMP/body")" = \
    "200/$((cl - 1))/clang-17"
finish
