#!/usr/bin/env bash
# check: parallel
# Shared kernel builds that go wrong, with a real daemon and curl as the
# builder and bench host (scheduler.lease 10s, max_attempts 2):
#   - a failed build fails every job waiting on it, naming the build and
#     the first line of its error, and the job and pair pages link it;
#   - a retried job whose build failed queues a new build;
#   - a builder whose lease expires gets the build requeued (its files
#     forgotten); a heartbeat with build_id extends the lease; after
#     max_attempts the build fails "lease expired 2 times" and its jobs
#     with it;
#   - a bench job failed with an `image:` error is queued again once,
#     and stays failed the second time.
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

# --- a failed build fails its waiting jobs ---
claim b1 >/dev/null
b=$(jfield build.id <"$PW_TMP/body")
check first_build_is_the_base test "$(sql "SELECT build_id FROM jobs WHERE id = $jb")" = "$b"
code=$(finish_build "$b" b1 failed 'build: make bzImage: exit 2: mm/memcontrol.c:1: error\nmore lines')
check failed_build_finishes test "$code/$(jfield jobs_failed <"$PW_TMP/body")" = 200/1
err=$(sql "SELECT state || ' ' || error FROM jobs WHERE id = $jb")
check waiting_job_failed_naming_the_build test \
    "$err" = "failed build failed: build $b: build: make bzImage: exit 2: mm/memcontrol.c:1: error"
check other_side_still_queued test "$(sql "SELECT state FROM jobs WHERE id = $jc")" = queued
page job_page_links_the_build "/jobs/$jb" "href=\"/builds/$b\""
page pair_page_links_the_build "/pair/$pair" "href=\"/builds/$b\""
page failed_build_page "/builds/$b" "mm/memcontrol.c:1: error"

# A retry of that job queues a new build of its key.
code=$(http POST "/api/v1/jobs/$jb/retry" "$PW_ADMIN")
nb=$(sql "SELECT build_id FROM jobs WHERE id = $jb")
if [ "$code" = 200 ] && [ "$nb" != "$b" ] &&
    [ "$(sql "SELECT state || ' ' || key FROM builds WHERE id = $nb")" = \
      "queued $(sql "SELECT key FROM builds WHERE id = $b")" ]; then
	pass retry_queues_a_new_build
else
	fail retry_queues_a_new_build "$code build $b -> $nb"
fi

# --- a builder whose lease expires ---
claim b1 >/dev/null
lb=$(jfield build.id <"$PW_TMP/body")
check lost_builder_claimed test "$(sql "SELECT attempts FROM builds WHERE id = $lb")" = 1
mkdir -p "$PW_TMP/files/lost"
head -c 100 /dev/urandom >"$PW_TMP/files/lost/bzImage"
put_file "$lb" bzImage "$PW_TMP/files/lost/bzImage" b1 >/dev/null
exp0=$(sql "SELECT lease_expires FROM builds WHERE id = $lb")
sleep 1.1
code=$(rq POST /api/v1/runners/heartbeat b1 -H 'Content-Type: application/json' \
    -d "{\"build_id\": $lb}")
exp1=$(jfield lease_expires <"$PW_TMP/body")
check heartbeat_extends_build_lease test "$code" = 200 -a "$exp1" -gt "$exp0"
code=$(rq POST /api/v1/runners/heartbeat h1 -H 'Content-Type: application/json' \
    -d "{\"build_id\": $lb}")
check heartbeat_of_another_runner_cancels test "$code/$(jfield cancel <"$PW_TMP/body")" = 200/true
# No more heartbeats: the lease (10s) expires and the build is queued.
requeued() { [ "$(sql "SELECT state FROM builds WHERE id = $lb")" = queued ]; }
if wait_until 30 requeued &&
    [ "$(sql "SELECT count(*) FROM build_files WHERE build_id = $lb")" = 0 ]; then
	pass expired_build_requeued
else
	fail expired_build_requeued "$(sql "SELECT state, attempts FROM builds WHERE id = $lb")"
fi
code=$(rq POST /api/v1/runners/heartbeat b1 -H 'Content-Type: application/json' \
    -d "{\"build_id\": $lb}")
check lost_lease_heartbeat_cancels test "$code/$(jfield cancel <"$PW_TMP/body")" = 200/true
code=$(put_file "$lb" bzImage "$PW_TMP/files/lost/bzImage" b1)
check lost_lease_upload_409 test "$code" = 409
claim b1 >/dev/null
check requeued_build_claimed_again test \
    "$(jfield build.id <"$PW_TMP/body")/$(jfield build.attempt <"$PW_TMP/body")" = "$lb/2"
waiters=$(sql "SELECT group_concat(CAST(id AS TEXT)) FROM jobs WHERE build_id = $lb AND state = 'queued'")
lease_failed() { [ "$(sql "SELECT state FROM builds WHERE id = $lb")" = failed ]; }
if wait_until 30 lease_failed &&
    [ "$(sql "SELECT error FROM builds WHERE id = $lb")" = "lease expired 2 times" ] &&
    [ -n "$waiters" ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE id IN ($waiters) AND state = 'failed'
        AND error = 'build failed: build $lb: lease expired 2 times'")" = \
      "$(echo "$waiters" | tr ',' '\n' | wc -l)" ]; then
	pass lease_expired_max_attempts_fails_build_and_jobs
else
	fail lease_expired_max_attempts_fails_build_and_jobs \
	    "$(sql "SELECT state, error FROM builds WHERE id = $lb") jobs $waiters"
fi

# --- an image that does not arrive intact: requeued once ---
# The retried job's build and a new pair's: both built.
submit kb "$OTHER" "$OTHER"
for i in 1 2; do
	claim b1 >/dev/null
	ob=$(jfield build.id <"$PW_TMP/body")
	upload_build "$ob" b1 >/dev/null && finish_build "$ob" b1 success >/dev/null
done
check both_built test "$(sql "SELECT count(*) FROM builds WHERE state = 'success'")" = 2
claim h2 false >/dev/null
j=$(jfield job.id <"$PW_TMP/body")
ob=$(sql "SELECT build_id FROM jobs WHERE id = $j")
sha=$(sha256sum "$PW_TMP/files/$ob/bzImage" | cut -d' ' -f1)
msg="image: bzImage: sha256 $(printf 'x' | sha256sum | cut -d' ' -f1), expected $sha (GET /api/v1/artifacts/$sha)"
rq POST "/api/v1/jobs/$j/finish" h2 -H 'Content-Type: application/json' \
    -d "{\"status\": \"failure\", \"error\": \"$msg\"}" >/dev/null
check image_failure_requeued_once test \
    "$(sql "SELECT state || ' ' || image_retries FROM jobs WHERE id = $j")" = "queued 1"
claim h2 false >/dev/null
check image_retry_claimed test "$(jfield job.id <"$PW_TMP/body")" = "$j"
rq POST "/api/v1/jobs/$j/finish" h2 -H 'Content-Type: application/json' \
    -d "{\"status\": \"failure\", \"error\": \"$msg\"}" >/dev/null
check image_failure_twice_stays_failed test \
    "$(sql "SELECT state || ' ' || error FROM jobs WHERE id = $j")" = "failed $msg"
# Any other failure is not requeued.
claim h2 false >/dev/null
j2=$(jfield job.id <"$PW_TMP/body")
rq POST "/api/v1/jobs/$j2/finish" h2 -H 'Content-Type: application/json' \
    -d '{"status": "failure", "error": "wrong kernel: booted x, expected y"}' >/dev/null
check other_failure_not_requeued test "$(sql "SELECT state FROM jobs WHERE id = $j2")" = failed
finish
