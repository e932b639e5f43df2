#!/usr/bin/env bash
# The API under concurrent load, for the thread pool and the workers
# (and for make check-tsan, which runs it under ThreadSanitizer): four
# runners upload runs in parallel, each also racing a duplicate of every
# upload, while readers load the dashboard, the JSON lists and /metrics;
# then the jobs finish and the verdict worker judges the pairs while the
# readers go on.  Every upload is stored exactly once, no reply is a 5xx,
# and every pair gets its verdict.
. "$(dirname "$0")/lib.sh"

N=4     # runners, one pair each
RUNS=12 # uploads per job
daemon_config "$PW_TMP/d" r1 r2 r3 r4
cat >>"$PW_TMP/d/daemon.yaml" <<YAML
http:
  threads: 4
YAML
cat >"$PW_DIR/jobs/c.yaml" <<YAML
name: c
parser: keyvalue
command: [echo, "ops=1"]
runs: $RUNS
max_runs: $RUNS
metrics:
  ops: {better: higher}
YAML
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }

# post TOKENFILE PATH BODY OUT: the status code, appended to OUT.
post() {
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -X POST \
	    -H "Authorization: Bearer $(cat "$1")" \
	    -H 'Content-Type: application/json' --data-binary "$3" \
	    "$PW_URL$2" >>"$4"
}

# One pair per runner: a pair's two jobs run on one host, one after the
# other (store/hosts.h), so each runner claims, uploads and finishes
# twice.
for _ in $(seq 1 $N); do
	[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"c"}')" = 201 ] ||
		fail submit "$(cat "$PW_TMP/body")"
done
for i in $(seq 1 $N); do
	http POST /api/v1/runners/register "$PW_TOKENS/r$i.token" \
	    "{\"name\":\"r$i\"}" >/dev/null
done

# Readers: pages and read routes, until the stop file appears.
reader() {
	local out=$1 p
	while [ ! -e "$PW_TMP/stop" ]; do
		for p in / /hosts /jobs /pair/1 /api/v1/jobs /api/v1/hosts \
		    /api/v1/pairs/1 /api/v1/jobs/1 /metrics /healthz; do
			curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 \
			    "$PW_URL$p" >>"$out"
		done
	done
}
reader "$PW_TMP/read1" &
rd1=$!
reader "$PW_TMP/read2" &
rd2=$!

# Writers: each runner claims a job, uploads its runs and heartbeats,
# finishes it, twice; every upload is sent twice at once, so the two race
# in the pool.
writer() {
	local i=$1 tok=$PW_TOKENS/r$1.token k body job round
	for round in 1 2; do
		job=
		for _ in 1 2 3 4 5; do
			job=$(curl -s --max-time 60 -X POST \
			    -H "Authorization: Bearer $(cat "$tok")" \
			    --data-binary '{"wait_s":2}' \
			    "$PW_URL/api/v1/jobs/claim" | jfield job.id)
			[ -n "$job" ] && [ "$job" != None ] && break
		done
		echo "$job" >>"$PW_TMP/claimed"
		for ((k = 0; k < RUNS; k++)); do
			body="{\"index\":$k,\"status\":\"ok\",\"duration_s\":0.1,\"metrics\":[{\"name\":\"ops\",\"value\":$((1000 + k % 7)),\"better\":\"higher\"}]}"
			post "$tok" "/api/v1/jobs/$job/runs" "$body" "$PW_TMP/up$i" &
			post "$tok" "/api/v1/jobs/$job/runs" "$body" "$PW_TMP/up$i"
			wait
			post "$tok" /api/v1/runners/heartbeat "{\"job_id\":$job}" \
			    "$PW_TMP/hb$i"
		done
		post "$tok" "/api/v1/jobs/$job/finish" '{"status":"success"}' \
		    "$PW_TMP/fin$i"
	done
}
wpids=()
for i in $(seq 1 $N); do
	writer "$i" &
	wpids+=($!)
done
for p in "${wpids[@]}"; do wait "$p"; done

# The verdicts are judged while the readers still read.
verdicts() {
	test "$(sql "SELECT count(*) FROM pairs WHERE analysed = 1")" -eq $N
}
wait_for 60 verdicts
vrc=$?
touch "$PW_TMP/stop"
wait "$rd1" "$rd2"

ups=$(cat "$PW_TMP"/up* | sort | uniq -c | tr -s ' ' | tr '\n' ';')
check "uploads_answered_201_once_200_once ($ups)" \
    test "$(cat "$PW_TMP"/up* | grep -c '^201$')" -eq $((2 * N * RUNS)) -a \
    "$(cat "$PW_TMP"/up* | grep -c '^200$')" -eq $((2 * N * RUNS))
check "every_job_claimed_once ($(sort -n "$PW_TMP/claimed" | tr '\n' ' '))" \
    test "$(sort -u "$PW_TMP/claimed" | grep -c '^[0-9][0-9]*$')" -eq $((2 * N))
check each_job_has_each_run_once \
    test "$(sql "SELECT count(*) FROM (SELECT job_id FROM runs GROUP BY job_id HAVING count(*) = $RUNS AND count(DISTINCT idx) = $RUNS) AS j")" -eq $((2 * N))
check heartbeats_and_finish_2xx \
    test -z "$(cat "$PW_TMP"/hb* "$PW_TMP"/fin* | grep -v '^20[0-9]$')"
reads=$(cat "$PW_TMP/read1" "$PW_TMP/read2" | wc -l)
bad=$(cat "$PW_TMP/read1" "$PW_TMP/read2" | grep -v '^[23][0-9][0-9]$\|^404$' | sort | uniq -c | tr -s ' ')
check "reads_never_5xx ($reads reads${bad:+, bad: $bad})" test -z "$bad" -a "$reads" -gt 0
check every_pair_gets_a_verdict test "$vrc" -eq 0
stop_pid "$PW_DAEMON_PID"
check daemon_exits_cleanly test "$?" -eq 0
finish
