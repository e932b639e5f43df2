#!/usr/bin/env bash
# Dashboard throughput: wrk at 64 connections against the overview page
# and a JSON endpoint of a release perfwatchd holding 100,000 runs, side by
# side with nginx serving the same bytes as static files in the same run.
#   tests/bench/web_bench.sh [SECONDS]     (make bench-web)
# Prints one line per target: requests/s, p99 latency, and the ratio to
# nginx.  Goal: >= 50% of nginx's requests/s and p99 <= 10 ms.
#
# The runs are written with sqlite3 into the daemon's own schema (made by
# the daemon at start), because 100,000 uploads through the runner API
# would take minutes; what is measured is the serving path only.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-10}
conns=64
cd "$top"
for t in wrk nginx sqlite3 curl; do
	command -v $t >/dev/null || [ -x /usr/sbin/$t ] ||
		{ echo "web_bench: $t missing (make deps)" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
make -s all >/dev/null
PW_BIN=$top/build/bin PERFWATCH_BIN=$top/build/bin
export PERFWATCH_BIN
. tests/e2e/lib.sh
D=$PW_TMP/d
daemon_config "$D" r1
cat >>"$D/daemon.yaml" <<'EOF2'
http:
  threads: 2
  per_ip: 256
  max_connections: 512
EOF2
cat >"$D/jobs/kv.yaml" <<'EOF2'
name: kv
parser: keyvalue
command: [echo, "x={x}"]
matrix:
  x: [1]
runs: 5
max_runs: 5
EOF2
start_daemon "$D" || { echo "daemon did not start" >&2; exit 1; }

# 10,000 pairs x 2 jobs x 5 runs = 100,000 runs, 2 metrics each.
sql "
PRAGMA foreign_keys = OFF;
BEGIN;
INSERT INTO hosts (name, labels, inventory, registered, last_seen)
  VALUES ('r1', '[\"test\"]', '{\"cpu_model\":\"bench\"}', 1, strftime('%s','now'));
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
INSERT INTO pairs (id, name, point, host_id, created)
  SELECT i, 'kv', 'x=1', 1, 1700000000 + i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO jobs (id, pair_id, role, name, point, state, host_id, attempts,
    runs, max_runs, created, updated)
  SELECT i, (i + 1) / 2, CASE i % 2 WHEN 1 THEN 'base' ELSE 'candidate' END,
    'kv', 'x=1', 'success', 1, 1, 5, 5, 1700000000 + i, 1700000000 + i FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
INSERT INTO runs (id, job_id, idx, host_id, status, duration_s, created)
  SELECT i + 1, i / 5 + 1, i % 5, 1, 'ok', 1.0, 1700000000 + i FROM n;
INSERT INTO metrics (run_id, name, value, unit, better)
  SELECT id, 'ops', 1000 + (id * 7919) % 50, 'ops/s', 'higher' FROM runs;
INSERT INTO metrics (run_id, name, value, unit, better)
  SELECT id, 'latency_p99', 500 + (id * 104729) % 40, 'us', 'lower' FROM runs;
COMMIT;"
echo "# $(sql 'SELECT count(*) FROM runs') runs, $(sql 'SELECT count(*) FROM jobs') jobs stored"

www=$PW_TMP/www
mkdir -p "$www/api/v1" "$PW_TMP/nginx"
curl -sf -o "$www/index.html" "$PW_URL/"
curl -sf -o "$www/api/v1/overview" "$PW_URL/api/v1/overview"
curl -sf -o "$www/pair.html" "$PW_URL/pair/10000"
# nginx's workers run as an unprivileged user: let them read the files.
chmod 755 "$PW_TMP"
chmod -R a+rX "$www"
nport=$((20000 + RANDOM % 20000))
cat >"$PW_TMP/nginx/nginx.conf" <<EOF2
worker_processes 2;
daemon off;
pid $PW_TMP/nginx/nginx.pid;
error_log $PW_TMP/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $PW_TMP/nginx/body;
  proxy_temp_path $PW_TMP/nginx/proxy;
  fastcgi_temp_path $PW_TMP/nginx/fcgi;
  uwsgi_temp_path $PW_TMP/nginx/uwsgi;
  scgi_temp_path $PW_TMP/nginx/scgi;
  types { text/html html; application/json overview; }
  server {
    listen 127.0.0.1:$nport;
    root $www;
    index index.html;
  }
}
EOF2
# Not through spawn: nginx must get TERM (its master then stops the
# workers); KILL would orphan them.
"$NGINX" -p "$PW_TMP/nginx" -c "$PW_TMP/nginx/nginx.conf" \
    >"$PW_TMP/nginx/out.log" 2>&1 &
nginx_pid=$!
stop_nginx() {
	kill -TERM "$nginx_pid" 2>/dev/null
	wait "$nginx_pid" 2>/dev/null
}
# set -e must not stop the cleanup at the first killed process's status.
trap 'set +e; stop_nginx; pw_cleanup' EXIT
wait_for 10 curl -sf -o /dev/null "http://127.0.0.1:$nport/" ||
	{ echo "nginx did not start" >&2; cat "$PW_TMP/nginx/error.log" >&2; exit 1; }

# run NAME URL -> "rps p99_ms"
run() {
	local out rps p99
	out=$(wrk -t2 -c$conns -d"${secs}s" --latency "$2")
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us/, "", v); v /= 1000}
	    else if (v ~ /ms$/) sub(/ms/, "", v); else if (v ~ /s$/) {sub(/s/, "", v);
	    v *= 1000}; print v}' <<<"$out")
	if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
		echo "# $1: $(grep 'Non-2xx\|Socket errors' <<<"$out")" >&2
	fi
	echo "$rps $p99"
}

printf '%-28s %10s %10s %8s %12s\n' target 'req/s' 'p99 ms' bytes 'vs nginx'
for t in "overview /:/" "json /api/v1/overview:/api/v1/overview" \
    "pair /pair/10000:/pair.html"; do
	name=${t%% *}
	paths=${t#* }
	dpath=${paths%%:*}
	npath=${paths#*:}
	read -r nr np < <(run "nginx $name" "http://127.0.0.1:$nport$npath")
	read -r dr dp < <(run "perfwatchd $name" "$PW_URL$dpath")
	bytes=$(curl -s "$PW_URL$dpath" | wc -c)
	printf '%-28s %10.0f %10.2f %8d\n' "nginx $npath" "$nr" "$np" "$bytes"
	printf '%-28s %10.0f %10.2f %8d %11.0f%%\n' "perfwatchd $dpath" "$dr" \
	    "$dp" "$bytes" "$(awk -v a="$dr" -v b="$nr" 'BEGIN {print 100 * a / b}')"
done

set +e
trap - EXIT
stop_nginx
pw_cleanup
exit 0
