#!/usr/bin/env bash
# check: parallel
# The reply cache of public GET routes (web/cache.h): a repeated
# request is answered from it (GET /metrics: perfwatch_web_cache_hits_total
# moves, the bytes are the same), and what is committed shows at once,
# not after the cache's second: an uploaded run on the job's JSON and on
# the pair page, a finish on the jobs page, a new host on /hosts.  The
# query is part of the key, a request with a cookie or a token is never
# served from it, and the job and run counts come from the store's counts
# (schema v19), which follow the uploads.  /metrics has each route's
# requests and time by answer (rendered, miss, hit, shared).  A burst of
# one request after a write is rendered once a server thread at most,
# off it, each request answered with the new page.  A heartbeat leaves
# the cached pages be (schema v32), and on one server thread a burst is
# rendered exactly once.
. "$(dirname "$0")/lib.sh"

daemon_config "$PW_TMP/d" r1 r2
cat >"$PW_DIR/jobs/kv.yaml" <<'YAML'
name: kv
parser: keyvalue
command: [echo, "ops=1"]
runs: 2
max_runs: 2
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

hits() {
	curl -s "$PW_URL/metrics" | awk '$1 == "perfwatch_web_cache_hits_total" {print $2}'
}

get() {	# PATH OUT
	curl -s -o "$2" -w '%{http_code}' "$PW_URL$1"
}

[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"kv"}')" = 201 ] ||
	fail submit "$(cat "$PW_TMP/body")"
http POST /api/v1/runners/register "$PW_TOKENS/r1.token" '{"name":"r1"}' >/dev/null
http POST /api/v1/jobs/claim "$PW_TOKENS/r1.token" '{"wait_s":2}' >/dev/null
job=$(jfield job.id <"$PW_TMP/body")
pair=$(jfield job.pair_id <"$PW_TMP/body")
check "claimed_job_$job" test -n "$job" -a "$job" != None

# 1. A repeat is served from the cache: same bytes, the hit counter moves.
# Each server thread has a cache of its own and a new connection may go
# to any of them: 8 requests each, so that at most one per thread misses.
# A write by the daemon's own workers meanwhile, or a turn longer than
# the cache's second (a loaded machine), makes more misses right: SKIP.
ms() { echo $(($(date +%s%N) / 1000000)); }
g0=$(sql 'SELECT n FROM store_gen')
t_a=$(ms)
h0=$(hits)
for k in 1 2 3 4 5 6 7 8; do
	get "/api/v1/jobs/$job" "$PW_TMP/a$k" >/dev/null
	get "/pair/$pair" "$PW_TMP/p$k" >/dev/null
done
h1=$(hits)
t_b=$(ms)
g1=$(sql 'SELECT n FROM store_gen')
if [ "$g0" != "$g1" ]; then
	echo "SKIP repeats_hit_the_cache ($h0 -> $h1): the store's generation moved meanwhile ($g0 -> $g1)"
elif [ $((t_b - t_a)) -ge 900 ]; then
	echo "SKIP repeats_hit_the_cache ($h0 -> $h1): the 16 requests took $((t_b - t_a)) ms, near the cache's second"
else
	check "repeats_hit_the_cache ($h0 -> $h1)" test "$((h1 - h0))" -ge 8
fi
check "some_repeats_hit_the_cache ($h0 -> $h1)" test "$((h1 - h0))" -ge 1
check same_bytes_from_the_cache cmp -s "$PW_TMP/a1" "$PW_TMP/a8"
check same_page_from_the_cache cmp -s "$PW_TMP/p1" "$PW_TMP/p8"
check "a_kept_page_keeps_its_headers" \
    test "$(curl -s -D - -o /dev/null "$PW_URL/pair/$pair" | grep -ci '^content-security-policy:')" = 1

# 2. An upload shows at once (no sleep: the cache lives a second).
runs_of() {
	curl -s "$PW_URL/api/v1/jobs/$job" | jfield runs_done
}
before=$(runs_of)
st=$(http POST "/api/v1/jobs/$job/runs" "$PW_TOKENS/r1.token" \
    '{"index":0,"status":"ok","metrics":[{"name":"ops","value":4242.5,"better":"higher"}]}')
check "upload_stored ($st)" test "$st" = 201
after=$(runs_of)
check "the_job_shows_the_new_run_at_once ($before -> $after)" \
    test "$before" = 0 -a "$after" = 1
check "the_pair_page_shows_it_at_once" \
    grep -q '4242' <(curl -s "$PW_URL/pair/$pair")
check "the_old_pair_page_had_it_not" bash -c "! grep -q 4242 '$PW_TMP/p1'"

# 3. A finish shows on the jobs page and in the overview's counts, the
# overview being kept by the same cache as every page.
get "/jobs?state=success" "$PW_TMP/j1" >/dev/null
get "/jobs?state=success" "$PW_TMP/j1b" >/dev/null
for k in 1 2; do
	get / "$PW_TMP/o$k.html" >/dev/null
	get /api/v1/overview "$PW_TMP/o$k.json" >/dev/null
done
http POST "/api/v1/jobs/$job/runs" "$PW_TOKENS/r1.token" \
    '{"index":1,"status":"ok","metrics":[{"name":"ops","value":4242.5,"better":"higher"}]}' >/dev/null
http POST "/api/v1/jobs/$job/finish" "$PW_TOKENS/r1.token" '{"status":"success"}' >/dev/null
get "/jobs?state=success" "$PW_TMP/j2" >/dev/null
check "the_jobs_page_before_the_finish_lists_no_job" \
    bash -c "! grep -q 'href=\"/jobs/$job\"' '$PW_TMP/j1'"
check "the_jobs_page_lists_the_finished_job_at_once" \
    grep -q "href=\"/jobs/$job\"" "$PW_TMP/j2"
get / "$PW_TMP/o3.html" >/dev/null
get /api/v1/overview "$PW_TMP/o3.json" >/dev/null
check "the_overview_before_the_finish_counts_it_running" \
    grep -qF 'running: <b>1</b>' "$PW_TMP/o1.html"
check "the_overview_counts_the_finish_at_once" \
    grep -qF 'running: <b>0</b>' "$PW_TMP/o3.html"
check "the_overview_json_counts_the_finish_at_once" \
    test "$(jfield running <"$PW_TMP/o1.json") $(jfield running <"$PW_TMP/o3.json")" = "1 0"
# The counts (the store's counts table, kept by triggers) follow.
m=$(curl -s "$PW_URL/metrics")
check "counts_follow ($(grep -E '^perfwatch_(runs|jobs)' <<<"$m" | tr '\n' ' '))" \
    test "$(awk '$1 == "perfwatch_jobs{state=\"success\"}" {print $2}' <<<"$m")" = 1 -a \
    "$(awk '$1 == "perfwatch_jobs{state=\"queued\"}" {print $2}' <<<"$m")" = 1 -a \
    "$(awk '$1 == "perfwatch_runs" {print $2}' <<<"$m")" = 2

# 4. The query is part of the key.
a=$(curl -s "$PW_URL/api/v1/jobs?limit=1" | jfield jobs | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
b=$(curl -s "$PW_URL/api/v1/jobs?limit=2" | jfield jobs | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
check "the_query_is_part_of_the_key ($a, $b)" test "$a" = 1 -a "$b" = 2

# 5. A new host shows on /hosts at once.
get /hosts "$PW_TMP/h1" >/dev/null
get /hosts "$PW_TMP/h1" >/dev/null
http POST /api/v1/runners/register "$PW_TOKENS/r2.token" '{"name":"r2"}' >/dev/null
check "a_new_host_shows_at_once" grep -q '>r2<' <(curl -s "$PW_URL/hosts")

# 6. A cookie or a token: never from the cache.
h0=$(hits)
for k in 1 2 3 4 5 6 7 8; do
	curl -s -o /dev/null -H 'Cookie: pw_session=x' "$PW_URL/pair/$pair"
	curl -s -o /dev/null -H "Authorization: Bearer $(cat "$PW_TOKENS/r1.token")" "$PW_URL/api/v1/jobs/$job"
done
h1=$(hits)
check "cookies_and_tokens_bypass_the_cache ($h0 -> $h1)" test "$h0" = "$h1"

# 7. Each route's requests and time, by how they were answered (GET
# /metrics, perfwatch_http_route_*): the 8 cookie requests of 6 were
# rendered, the repeats of 1 were hits.
route_m() {	# NAME ROUTE ANSWER
	curl -s "$PW_URL/metrics" | awk -v k="perfwatch_http_route_$1{method=\"GET\",route=\"$2\",answer=\"$3\"}" \
	    '$1 == k {print $2; f = 1} END {if (!f) print 0}'
}
r0=$(route_m requests_total /pair/ rendered)
c0=$(route_m cpu_seconds_total /pair/ rendered)
for k in 1 2 3 4 5 6 7 8; do
	curl -s -o /dev/null -H 'Cookie: pw_session=x' "$PW_URL/pair/$pair"
done
r1=$(route_m requests_total /pair/ rendered)
c1=$(route_m cpu_seconds_total /pair/ rendered)
check "route_counts_its_rendered_requests ($r0 -> $r1)" test "$((r1 - r0))" = 8
check "route_time_grows ($c0 -> $c1)" \
    awk -v a="$c0" -v b="$c1" 'BEGIN {exit !(b > a)}'
m=$(curl -s "$PW_URL/metrics")
rh=$(awk '/^perfwatch_http_route_requests_total\{.*answer="hit"\}/ {n += $2} END {print n + 0}' <<<"$m")
ch=$(awk '$1 == "perfwatch_web_cache_hits_total" {print $2}' <<<"$m")
check "the_routes_hits_add_up_to_the_cache_hits ($rh, $ch)" \
    test "$rh" = "$ch" -a "$rh" -ge 8
check "route_wall_time_is_there" \
    awk -v a="$(route_m seconds_total /pair/ rendered)" 'BEGIN {exit !(a > 0)}'

# 8. A burst of the same request after a write (web/render_pool.c):
# the misses render off the server threads, and the requests that come
# while a render is under way wait for it (answer "shared") instead of
# rendering again.  Every request gets the new page, and the answers add
# up: at most one render a server thread (4), the rest hits or shared.
# The write: a submit (the job's page is the same, the store's version
# is not).
[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"kv"}')" = 201 ] ||
	fail submit_again "$(cat "$PW_TMP/body")"
# burst JOB NAME: 40 parallel requests of the job's JSON; sets n0 n1
# (misses), s0 s1 (shared), t0 t1 (hits) before and after, and same, how
# many replies equal a fresh render made with a cookie.
burst() {
	local k urls=()
	n0=$(route_m requests_total /api/v1/jobs/# miss)
	s0=$(route_m requests_total /api/v1/jobs/# shared)
	t0=$(route_m requests_total /api/v1/jobs/# hit)
	for k in $(seq 1 40); do urls+=(-o "$PW_TMP/$2$k" "$PW_URL/api/v1/jobs/$1"); done
	curl -s -Z --parallel-immediate --parallel-max 40 "${urls[@]}"
	n1=$(route_m requests_total /api/v1/jobs/# miss)
	s1=$(route_m requests_total /api/v1/jobs/# shared)
	t1=$(route_m requests_total /api/v1/jobs/# hit)
	curl -s -H 'Cookie: pw_bench=1' -o "$PW_TMP/$2-fresh" "$PW_URL/api/v1/jobs/$1"
	same=0
	for k in $(seq 1 40); do cmp -s "$PW_TMP/$2$k" "$PW_TMP/$2-fresh" && same=$((same + 1)); done
}
burst "$job" burst
check "a_burst_gets_the_page_as_rendered_afresh ($same of 40)" test "$same" = 40
check "a_burst_renders_at_most_once_a_thread (miss $((n1 - n0)), shared $((s1 - s0)), hit $((t1 - t0)))" \
    test "$((n1 - n0))" -ge 0 -a "$((n1 - n0))" -le 4 -a "$((n1 - n0 + s1 - s0 + t1 - t0))" = 40

# 9. A heartbeat does not move the store's generation (schema v32): the
# job's page stays cached (with a fleet heartbeating every few seconds,
# a page used to live a few milliseconds).  What the heartbeat wrote
# shows once the cached page is a second old; an upload shows at once.
# One server thread (one cache) from here, so that one request warms it;
# the requests of a turn must come within the cache's second of the
# first for the hit check to mean anything: past it, SKIP.
stop_pid "$PW_DAEMON_PID"
printf 'http:\n  threads: 1\n' >>"$PW_DIR/daemon.yaml"
start_daemon "$PW_DIR" || { fail daemon_restarts "see log"; finish; }
http POST /api/v1/jobs/claim "$PW_TOKENS/r1.token" '{"wait_s":2}' >/dev/null
job2=$(jfield job.id <"$PW_TMP/body")
check "claimed_job2_$job2" test -n "$job2" -a "$job2" != None
for turn in 1 2 3; do
	t_a=$(ms)
	get "/api/v1/jobs/$job2" /dev/null >/dev/null
	n0=$(route_m requests_total /api/v1/jobs/# miss)
	hb=$(http POST /api/v1/runners/heartbeat "$PW_TOKENS/r1.token" \
	    "{\"job_id\":$job2,\"progress\":\"turn $turn of 3\"}")
	http POST /api/v1/runners/heartbeat "$PW_TOKENS/r1.token" '{}' >/dev/null
	curl -s -Z -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
	    "$PW_URL/api/v1/jobs/$job2" "$PW_URL/api/v1/jobs/$job2" \
	    "$PW_URL/api/v1/jobs/$job2" "$PW_URL/api/v1/jobs/$job2"
	n1=$(route_m requests_total /api/v1/jobs/# miss)
	t_b=$(ms)
	[ $((t_b - t_a)) -lt 900 ] && break
done
check "heartbeat_accepted ($hb)" test "$hb" = 200
if [ $((t_b - t_a)) -lt 900 ]; then
	check "a_heartbeat_leaves_pages_cached (misses $n0 -> $n1)" test "$n1" = "$n0"
else
	echo "SKIP a_heartbeat_leaves_pages_cached: the turns took $((t_b - t_a)) ms, past the cache's second"
fi
sleep 1.1
check "the_heartbeat_shows_within_the_cache_second" \
    grep -q "\"turn $turn of 3\"" <(curl -s "$PW_URL/api/v1/jobs/$job2")
get "/api/v1/jobs/$job2" /dev/null >/dev/null
st=$(http POST "/api/v1/jobs/$job2/runs" "$PW_TOKENS/r1.token" \
    '{"index":0,"status":"ok","metrics":[{"name":"ops","value":777.5,"better":"higher"}]}')
check "an_upload_shows_at_once ($st)" \
    test "$st" = 201 -a "$(curl -s "$PW_URL/api/v1/jobs/$job2" | jfield runs_done)" = 1

# 10. The burst of 8 again, on the one server thread: exactly one render;
# every other request waited for it (shared) or came after it (hit).
# Without the sharing each request that came during the render would
# render too (10-33 renders when the sharing was switched off).  All 40
# arrive together, so some usually come during it: when none did (all 39
# hits), the sharing was not exercised: SKIP.
[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"kv"}')" = 201 ] ||
	fail submit_for_burst "$(cat "$PW_TMP/body")"
g0=$(sql 'SELECT n FROM store_gen')
burst "$job2" one
g1=$(sql 'SELECT n FROM store_gen')
check "one_thread_burst_gets_the_fresh_page ($same of 40)" test "$same" = 40
# A write by the daemon's own workers meanwhile would make a second
# render right: then SKIP.
if [ "$g1" = "$g0" ]; then
	check "one_thread_burst_renders_once (miss $((n1 - n0)), shared $((s1 - s0)), hit $((t1 - t0)))" \
	    test "$((n1 - n0))" = 1 -a "$((n1 - n0 + s1 - s0 + t1 - t0))" = 40
else
	echo "SKIP one_thread_burst_renders_once: the store's generation moved during the burst ($g0 -> $g1)"
fi
if [ "$((s1 - s0))" -gt 0 ]; then
	pass "one_thread_burst_shared_the_render ($((s1 - s0)) waited for it)"
else
	echo "SKIP one_thread_burst_shared_the_render: all 39 came after the render"
fi
finish
