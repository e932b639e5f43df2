# Fills a daemon started by lib.sh through its real HTTP API, as a runner
# would: registers runner r1 with a hostile inventory, submits pairs of
# job "kv" (see web_job_file), claims each job, uploads runs with metrics
# and raw output, appends a log and finishes.  Sourced by the web tests.
#
#   web_job_file DIR          writes DIR/jobs/kv.yaml (matrix point hostile)
#   web_fill NPAIRS BASE CAND runs NPAIRS pairs; each job uploads 3 runs of
#                             metric ops around BASE ops/s, except the
#                             candidate of the last pair, around CAND, and
#                             latency_p99 (us) the same on every job; so the
#                             daemon's verdicts (made-up values with <= 1.4%
#                             spread, far from the 10% step) are unchanged
#                             but for one regression, on the last pair's ops
#   web_wait_verdicts NPAIRS  waits until pairs 1..NPAIRS have verdicts
#   web_ops_job_file DIR [LINE...]
#                             writes DIR/jobs/kv.yaml: job "kv", 3 runs of
#                             ops (higher is better, min_effect 2%) in one
#                             round, triggered by tree app, each LINE added
#   web_tree_start LINE RUNNER...
#                             a git tree app (SRC, first commit c1) watched
#                             by a daemon with these runners and job kv
#                             (web_ops_job_file with LINE), started and
#                             past c1; ends the test when it cannot be
#   web_register RUNNER MODEL [VENDOR [LABEL]]
#                             registers RUNNER reporting labels [LABEL]
#                             (default test), cgroup v2, CPU model MODEL
#                             and vendor id VENDOR; ends the test on error
#   web_run_queue RUNNER BASE CAND
#                             claims RUNNER's jobs until none is queued and
#                             uploads 3 runs of ops each, a base's around
#                             BASE, a candidate's around CAND
#   web_fill_commit TREE BASE CAND BASEVAL CANDVAL
#                             one pair of job "kv" between two commits of
#                             TREE (recorded by the watcher, so the pair is
#                             the commit's and can be reported); its runs
#                             as web_fill's, around BASEVAL and CANDVAL

web_job_file() {
	cat >"$1/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x={x}"]
matrix:
  x: ["<script>alert(1)</script>"]
runs: 3
max_runs: 3
# The fill plays the runner by hand, one claim a side with all its runs.
rounds: 1
metrics:
  ops: {better: higher, min_effect: 2%}
  latency_p99: {better: lower, min_effect: 3%}
EOF2
}

web_ops_job_file() {
	local f=$1/jobs/kv.yaml l
	shift
	cat >"$f" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "ops=1"]
runs: 3
max_runs: 3
rounds: 1
trigger:
  trees: [app]
metrics:
  ops: {better: higher, min_effect: 2%}
EOF2
	for l in "$@"; do
		echo "$l" >>"$f"
	done
}

web_tree_start() {
	local line=$1
	shift
	SRC=$PW_TMP/app
	src_init "$SRC"
	c1=$(commit "$SRC" README 'mm: base')
	daemon_config "$PW_TMP/d" "$@"
	tree_yaml app "file://$SRC" master
	web_ops_job_file "$PW_DIR" "$line"
	start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
	wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
}

web_register() {
	local r=$1 inv="\"cgroup\":\"v2\",\"cpu_model\":\"$2\""
	[ -n "${3:-}" ] && inv="$inv,\"cpu_vendor\":\"$3\""
	[ "$(http POST /api/v1/runners/register "$(token_of "$r")" \
	    "{\"name\":\"$r\",\"labels\":[\"${4:-test}\"],\"inventory\":{$inv}}")" = 200 ] ||
		{ fail "register_$r" "$(cat "$PW_TMP/body")"; finish; }
}

web_run_queue() {
	local r=$1 code j role v i
	while code=$(http POST /api/v1/jobs/claim "$(token_of "$r")" '{"wait_s":1}') &&
	    [ "$code" = 200 ]; do
		j=$(jfield job.id <"$PW_TMP/body")
		role=$(jfield job.role <"$PW_TMP/body")
		for i in 0 1 2; do
			if [ "$role" = base ]; then v=$(($2 + i)); else v=$(($3 + i)); fi
			http POST "/api/v1/jobs/$j/runs" "$(token_of "$r")" \
			    "{\"index\":$i,\"status\":\"ok\",\"duration_s\":1,\"metrics\":[{\"name\":\"ops\",\"value\":$v,\"unit\":\"ops/s\",\"better\":\"higher\"}],\"raw\":\"ops=$v\"}" >/dev/null
		done
		http POST "/api/v1/jobs/$j/finish" "$(token_of "$r")" '{"status":"success"}' >/dev/null
	done
	[ "$code" = 204 ]
}

# Posts one job's runs; $1 job id, $2 central ops value.
web_runs() {
	local j=$1 v=$2 i val lat
	for i in 0 1 2; do
		val=$((v + i * 7))
		lat=$((5000 + i))
		http POST "/api/v1/jobs/$j/runs" "$(token_of r1)" \
		    "{\"index\":$i,\"status\":\"ok\",\"duration_s\":1.5,\"metrics\":[{\"name\":\"ops\",\"value\":$val,\"unit\":\"ops/s\",\"better\":\"higher\"},{\"name\":\"latency_p99\",\"value\":$lat,\"unit\":\"us\",\"better\":\"lower\"}],\"raw\":\"ops=$val\\n<script>alert(1)</script>\\u0001\"}" \
		    >/dev/null || return 1
	done
	# Two entries, neither ending its line: each is a line of the log.
	http POST "/api/v1/jobs/$j/log" "$(token_of r1)" \
	    '{"text":"build ok <b>bold</b> \u001b[31m\r\nrun 0 <i>done</i>"}' >/dev/null
	http POST "/api/v1/jobs/$j/log" "$(token_of r1)" \
	    '{"text":"all done"}' >/dev/null
	[ "$(http POST "/api/v1/jobs/$j/finish" "$(token_of r1)" \
	    '{"status":"success"}')" = 200 ]
}

web_fill() {
	local n=$1 base=$2 cand=$3 k j role
	[ "$(http POST /api/v1/runners/register "$(token_of r1)" \
	    '{"name":"r1","labels":["test"],"inventory":{"cpu_model":"AMD EPYC 7702 <script>alert(1)</script>","cpu_vendor":"AuthenticAMD","sockets":2,"cores":128,"threads":256,"numa_nodes":8,"memory_bytes":540000000000,"kernel":"6.1.0-18-amd64","cgroup":"v2"}}')" = 200 ] ||
		return 1
	for ((k = 0; k < n; k++)); do
		[ "$(http POST /api/v1/submit "$(token_of admin)" \
		    '{"job":"kv","base":{"params":{"v":"a"}},"candidate":{"params":{"v":"b"}}}')" = 201 ] ||
			return 1
		for role in base candidate; do
			[ "$(http POST /api/v1/jobs/claim "$(token_of r1)" \
			    '{"wait_s":1}')" = 200 ] || return 1
			j=$(jfield job.id <"$PW_TMP/body")
			if [ "$role" = candidate ] && ((k == n - 1)); then
				web_runs "$j" "$cand" || return 1
			else
				web_runs "$j" "$base" || return 1
			fi
		done
	done
}

web_fill_commit() {
	local role j code
	[ "$(http POST /api/v1/submit "$(token_of admin)" \
	    "{\"job\":\"kv\",\"base\":{\"tree\":\"$1\",\"commit\":\"$2\"},\"candidate\":{\"tree\":\"$1\",\"commit\":\"$3\"}}")" = 201 ] ||
		return 1
	# Until the queue is empty: a base job may be shared with an
	# earlier pair (baseline reuse) and need no runs of its own.
	while code=$(http POST /api/v1/jobs/claim "$(token_of r1)" \
	    '{"wait_s":1}') && [ "$code" = 200 ]; do
		role=$(jfield job.role <"$PW_TMP/body")
		j=$(jfield job.id <"$PW_TMP/body")
		if [ "$role" = candidate ]; then
			web_runs "$j" "$5" || return 1
		else
			web_runs "$j" "$4" || return 1
		fi
	done
	[ "$code" = 204 ] # the queue is empty, not a failed claim
}

# An idle heartbeat from r1, so it shows online (seen within 3 heartbeats).
web_heartbeat() {
	http POST /api/v1/runners/heartbeat "$(token_of r1)" '{}' >/dev/null
}

# True when pair $1's comparisons all carry a verdict from the daemon.
web_has_verdicts() {
	[ "$(http GET "/api/v1/comparisons?pair=$1")" = 200 ] &&
	    grep -q '"verdict"' "$PW_TMP/body" &&
	    ! grep -q '"verdict": *"unknown"' "$PW_TMP/body"
}

web_wait_verdicts() {
	local k
	for ((k = 1; k <= $1; k++)); do
		wait_for 30 web_has_verdicts "$k" || return 1
	done
}
