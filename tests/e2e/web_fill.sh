# Fills a daemon started by lib.sh through its real HTTP API, as a runner
# would: registers runner r1 with a hostile inventory, submits pairs of
# job "kv" (see web_job_file), claims each job, uploads runs with metrics
# and raw output, appends a log and finishes.  Sourced by the web tests.
#
#   web_job_file DIR          writes DIR/jobs/kv.yaml (matrix point hostile)
#   web_fill NPAIRS BASE CAND runs NPAIRS pairs; each job uploads 3 runs of
#                             metric ops around BASE (base) and CAND
#                             (candidate) ops/s, and latency_p99 in us

web_job_file() {
	cat >"$1/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x={x}"]
matrix:
  x: ["<script>alert(1)</script>"]
runs: 3
max_runs: 3
metrics:
  ops: {better: higher, min_effect: 2%}
  latency_p99: {better: lower, min_effect: 3%}
EOF2
}

# Posts one job's runs; $1 job id, $2 central ops value.
web_runs() {
	local j=$1 v=$2 i val lat
	for i in 0 1 2; do
		val=$((v + i * 7))
		lat=$((50000000 / v + i))
		http POST "/api/v1/jobs/$j/runs" "$(token_of r1)" \
		    "{\"index\":$i,\"status\":\"ok\",\"duration_s\":1.5,\"metrics\":[{\"name\":\"ops\",\"value\":$val,\"unit\":\"ops/s\",\"better\":\"higher\"},{\"name\":\"latency_p99\",\"value\":$lat,\"unit\":\"us\",\"better\":\"lower\"}],\"raw\":\"ops=$val\\n<script>alert(1)</script>\\u0001\"}" \
		    >/dev/null || return 1
	done
	http POST "/api/v1/jobs/$j/log" "$(token_of r1)" \
	    '{"text":"build ok <b>bold</b> \u001b[31m\n"}' >/dev/null
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
			if [ "$role" = base ]; then
				web_runs "$j" "$base" || return 1
			else
				web_runs "$j" "$cand" || return 1
			fi
		done
	done
}

# An idle heartbeat from r1, so it shows online (seen within 3 heartbeats).
web_heartbeat() {
	http POST /api/v1/runners/heartbeat "$(token_of r1)" '{}' >/dev/null
}
