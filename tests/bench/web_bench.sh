#!/usr/bin/env bash
# Dashboard and read API throughput at scale: wrk at 64 connections against
# every page kind and every read route of a release perfwatchd, side by
# side with nginx serving the same bytes as static files, at 100,000 and
# at 1,000,000 stored runs.
#   tests/bench/web_bench.sh [SECONDS] [SCALES]       (make bench-web)
# SECONDS per measurement (default 5); SCALES the run counts, default
# "100000 1000000".  For each route the two servers take turns in one run
# (nginx, perfwatchd, nginx, perfwatchd: ROUNDS=2 by default), and the
# figures are the medians of each server's rounds, with the 1-minute load
# average beside them: the machine is shared.  Then the daemon's RSS.
# Each daemon turn also reads the daemon's own CPU time per request of
# the route from /metrics (web/api.c route_timed), which the load blurs
# far less than wrk's figures: the table at the end compares each route
# at the largest scale with the smallest by both.
# BENCH_ROUTES="series history ...": only the routes of these names.
# UNCACHED=1 adds a third turn per round, with a cookie, which the reply
# cache (web/cache.h) never answers: what rendering each route costs.
# LIVE=1: every turn (nginx's too) beside a paced fleet writing to the
# daemon: LIVE_RUNNERS simulated runners (default 200, api_load --fleet)
# that heartbeat every 5 s, claim, and upload a run every LIVE_RUN_MS
# (default 5000) with 5 metrics, finishing a job after its 10 runs (the
# verdict worker then compares each finished pair).  Every write moves
# the store's version, which the reply cache keys on: what readers get
# while the fleet works.  Each scale ends with the fleet's uploads and
# finished jobs per second and the cache's hit ratio.
# The -rare routes filter by a branch none of the history or commits is
# on (commit_branches: an index range, empty), history-range by one day
# in the past (read from the time index, not walked to from the top).
# Goals (docs/BENCHMARKS.md): every route >= 25 % of nginx's requests/s, p99 <=
# 10 ms, no route slower at 1M runs than at 100k, RSS <= 64 MB at 1M.
# The report (tests/bench/web_report.sh, from the results file) ends
# with each goal judged, cached and uncached, naming the routes that
# miss it.
#
# BACKEND=pg: the pages of a daemon on PostgreSQL instead, BACKEND=all
# both (the default, sqlite, as above): the store web_gen made is copied
# into a database of a PostgreSQL server of the bench's own
# (tests/lib_pg.sh: initdb in the scratch directory, a Unix socket,
# never the system's cluster) by `perfwatch store copy`, whose rows/s
# and time are printed, and a second perfwatchd serves it; every turn
# of a route then goes nginx, SQLite, PostgreSQL (and each uncached).
# The PostgreSQL figures get a report of their own (the same goals)
# and one against nginx and SQLite (web_report.sh's fourth argument):
# every cached page >= 50 % of nginx's requests/s, every uncached one
# at most twice SQLite's server CPU a request.
#
# The database is made by tests/bench/web_gen.c with the store's own
# functions and verdicts (commits, pairs, runs, finishes, comparisons,
# regressions, history), the alert worker's reports and deliveries
# (mail and webhooks: sent, failed, pending) and the bisect worker's
# bisections with their steps (done, inconclusive, running), in a mktemp
# directory removed at the end; what is measured is the serving path
# only.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-5}
scales=${2:-100000 1000000}
rounds=${ROUNDS:-2}
# UNCACHED=1: also each route with a cookie, which the reply cache
# does not answer (web/cache.h): the cost of rendering it.
uncached=${UNCACHED:-0}
# WEB_BENCH_DBS=DIR: keep each scale's generated database in DIR and use
# it again next time (the daemon migrates a copy), instead of minutes of
# web_gen per run.  The caller removes DIR.
dbs=${WEB_BENCH_DBS:-}
fleet_live=${LIVE:-0}
backend=${BACKEND:-sqlite}
[ "$fleet_live" = 0 ] || [ "$backend" = sqlite ] ||
	{ echo "web_bench: LIVE=1 writes to the SQLite daemon only: BACKEND=sqlite" >&2; exit 2; }
case $backend in
sqlite) on_sqlite=1 on_pg=0 ;;
pg) on_sqlite=0 on_pg=1 ;;
all) on_sqlite=1 on_pg=1 ;;
*) echo "web_bench: BACKEND=$backend: sqlite, pg or all" >&2; exit 2 ;;
esac
live_runners=${LIVE_RUNNERS:-200}
live_run_ms=${LIVE_RUN_MS:-5000}
# The newest pairs of each scale get the real verdict (daemon/verdict.c,
# ~20 ms of analysis a pair here), the older ones web_gen's quick one.
real=${WEB_GEN_REAL:-2000}
# A kept database is used again only if the same generator made it: its
# name has a hash of web_gen.c and of the daemon's code it runs (alert
# reports, bisections, verdicts) and REAL (pw-SCALE-HASH-rREAL.db), so
# one that an older web_gen made (without alerts or bisections, say) is
# made again, not measured as if it were current.
gen_key=$(cat "$top"/tests/bench/web_gen.c "$top"/daemon/alert*.c \
	"$top"/daemon/bisect.c "$top"/daemon/verdict.c "$top"/analysis/*.c |
	sha256sum | cut -c1-12)-r$real
conns=64
runs_per_job=10
cd "$top"
for t in wrk nginx sqlite3 curl; do
	command -v $t >/dev/null || [ -x /usr/sbin/$t ] ||
		{ echo "web_bench: $t missing (make deps)" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
out=$(cd "$top" && mkdir -p "${OUT:-build}" && cd "${OUT:-build}" && pwd)
GEN=$out/rel/bin/web_gen
[ -x "$GEN" ] || { echo "web_bench: $GEN missing (make bench-web builds it)" >&2; exit 1; }
LOAD=$out/rel/bench/api_load
[ "$fleet_live" = 0 ] || [ -x "$LOAD" ] ||
	{ echo "web_bench: $LOAD missing (make bench-web builds it)" >&2; exit 1; }
PERFWATCH_BIN=$out/bin
export PERFWATCH_BIN
# The SQLite store is web_gen's, and sql reads it: lib.sh goes to
# PostgreSQL only with PW_TEST_PG set when sourced.
unset PW_TEST_PG
. tests/e2e/lib.sh
. tests/lib_pg.sh
echo "# scratch $PW_TMP ($(df -h --output=avail "$PW_TMP" | tail -1 | tr -d ' ') free)"
D=$PW_TMP/d
fleet=()
if [ "$fleet_live" != 0 ]; then
	for ((i = 1; i <= live_runners; i++)); do fleet+=("r$i"); done
fi
daemon_config "$D" epyc-1 "${fleet[@]}"
cat >>"$D/daemon.yaml" <<'EOF2'
http:
  threads: 2
  per_ip: 2048
  max_connections: 2048
EOF2
if [ "$fleet_live" != 0 ]; then
	# One submit: 64 pairs (one per matrix point) of 10 runs a side.
	cat >"$D/jobs/fleet.yaml" <<EOF2
name: fleet
parser: keyvalue
command: [echo, "x=1"]
matrix:
  k: [$(seq -s, 1 64)]
runs: 10
max_runs: 10
EOF2
fi

www=$PW_TMP/www
mkdir -p "$www" "$PW_TMP/nginx"
chmod 755 "$www"
# nginx's workers run as an unprivileged user: let them read the files.
chmod 755 "$PW_TMP"
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
  types { text/html html; application/json json; }
  server {
    listen 127.0.0.1:$nport;
    root $www;
  }
}
EOF2
nginx_pid=
load_pid=
pg_pid=
pg_url=
stop_pgd() {
	[ -n "$pg_pid" ] || return 0
	stop_pid "$pg_pid"
	pg_pid=
}
# pg_serve SCALE: the SQLite store (as the daemon has left it) copied
# into a new database of the bench's server, timed, and a second
# perfwatchd on it at $pg_url.
pg_serve() {
	local P=$PW_TMP/p conn db t0 t1 rows
	stop_pgd
	db=pw_bench_$1
	conn=$(PW_TEST_PG=$PG_CONNINFO pg_createdb "$db") || return 1
	PGOPTIONS='-c client_min_messages=warning' "$(pg_bindir)/psql" -X -q \
	    "$PG_CONNINFO" -c "ALTER DATABASE $db SET synchronous_commit = on" || return 1
	t0=$(date +%s.%N)
	"$PERFWATCH_BIN/perfwatch" store copy "$D/pw.db" "$conn" >"$PW_TMP/copy.out" 2>&1 ||
		{ echo "web_bench: store copy failed: $(tail -3 "$PW_TMP/copy.out")" >&2; return 1; }
	t1=$(date +%s.%N)
	rows=$(sed -n 's/^copied \([0-9]*\) rows.*/\1/p' "$PW_TMP/copy.out")
	echo "# $1: perfwatch store copy into PostgreSQL: $rows rows of" \
	    "$(sed -n 's/^copied [0-9]* rows of \([0-9]*\) tables.*/\1/p' "$PW_TMP/copy.out") tables in" \
	    "$(awk -v a="$t0" -v b="$t1" -v n="$rows" 'BEGIN {printf "%.1f s = %.0f rows/s", b - a, n / (b - a)}')" \
	    "(runs $(awk '$1 == "runs" {print $2}' "$PW_TMP/copy.out"), load average $(load1))"
	mkdir -p "$P"
	sed -e "s|^database: .*|database: \"$conn\"|" -e "s|^mirrors: .*|mirrors: $P/git|" \
	    "$D/daemon.yaml" >"$P/daemon.yaml"
	rm -f "$P/port"
	spawn "$P/daemon.log" "$PERFWATCH_BIN/perfwatchd" -c "$P/daemon.yaml" \
	    --port-file "$P/port"
	pg_pid=$!
	wait_for 60 test -s "$P/port" ||
		{ echo "web_bench: the daemon on PostgreSQL did not start:" >&2; tail -5 "$P/daemon.log" >&2; return 1; }
	pg_url=http://127.0.0.1:$(cat "$P/port")
	pg_floor "$1" "$conn"
}
# pg_floor SCALE CONNINFO: the reference the uncached pages on
# PostgreSQL are judged beside, in the same run: pgbench running the
# least a page can ask of the server, one read transaction of one
# statement (BEGIN ISOLATION LEVEL REPEATABLE READ, a host by id,
# COMMIT; prepared), from as many connections as the daemon's render
# pool has (8 on 2 CPUs), for SECONDS.  Its rate, "SCALE TPS" in
# $results.floor, bounds a page's: the report's floor for a route is
# 1 + SQLite's uncached req/s over it, what the page would cost against
# SQLite if its only extra work were that one transaction.
pg_floor() {
	local f=$PW_TMP/floor.sql tps
	printf '%s\n' 'BEGIN ISOLATION LEVEL REPEATABLE READ;' \
	    'SELECT id, name FROM hosts ORDER BY id LIMIT 1;' 'COMMIT;' >"$f"
	tps=$("$(pg_bindir)/pgbench" -n -M prepared -c 8 -j 2 -T "$secs" \
	    -f "$f" "$2" 2>&1 | sed -n 's/^tps = \([0-9]*\).*/\1/p')
	echo "$1 ${tps:-unknown}" >>"$results.floor"
	echo "# $1: one read transaction of one statement on this server" \
	    "(pgbench, 8 connections): ${tps:-unknown}/s (load average $(load1))"
}
stop_fleet() {
	[ -n "$load_pid" ] || return 0
	kill -TERM "$load_pid" 2>/dev/null
	wait "$load_pid" 2>/dev/null || true
	load_pid=
}
stop_nginx() {
	[ -n "$nginx_pid" ] || return 0
	kill -TERM "$nginx_pid" 2>/dev/null
	wait "$nginx_pid" 2>/dev/null
}
# set -e must not stop the cleanup at the first killed process's status.
trap 'set +e; stop_fleet; stop_nginx; stop_pgd; pg_stop; pw_cleanup' EXIT
# Not through spawn: nginx must get TERM (its master then stops the
# workers); KILL would orphan them.
"$NGINX" -p "$PW_TMP/nginx" -c "$PW_TMP/nginx/nginx.conf" \
    >"$PW_TMP/nginx/out.log" 2>&1 &
nginx_pid=$!
echo ok >"$www/ping.html"
chmod a+r "$www/ping.html"
wait_for 10 curl -sf -o /dev/null "http://127.0.0.1:$nport/ping.html" ||
	{ echo "nginx did not start" >&2; cat "$PW_TMP/nginx/error.log" >&2; exit 1; }

# measure URL [wrk options] -> "rps p99_ms errors"
measure() {
	local out rps p99 bad url=$1
	shift
	out=$(wrk -t2 -c$conns -d"${secs}s" --latency "$@" "$url")
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us/, "", v); v /= 1000}
	    else if (v ~ /ms$/) sub(/ms/, "", v); else if (v ~ /s$/) {sub(/s/, "", v);
	    v *= 1000}; print v}' <<<"$out")
	bad=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(/,/, ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<<"$out")
	echo "${rps:-0} ${p99:-0} $bad"
}

# The daemon's own counters of the routes asked (web/api.c route_timed,
# /metrics of the daemon at BASE), /metrics itself left out ->
# "requests cpu_s wall_s".
srv_times() {
	curl -s "$1/metrics" | awk '
	    /^perfwatch_http_route_/ && !/route="\/metrics"/ {
		if ($1 ~ /^perfwatch_http_route_requests_total/) n += $2
		else if ($1 ~ /^perfwatch_http_route_cpu_seconds_total/) c += $2
		else if ($1 ~ /^perfwatch_http_route_seconds_total/) w += $2 }
	    END {printf "%d %.6f %.6f\n", n, c, w}'
}

# measure_srv BASE PATH [wrk options] -> measure's figures, then the
# server's CPU and wall microseconds per request of that turn.
measure_srv() {
	local a b m base=$1 path=$2
	shift 2
	a=$(srv_times "$base")
	m=$(measure "$base$path" "$@")
	b=$(srv_times "$base")
	echo "$m $(echo "$a $b" | awk '{n = $4 - $1; if (n < 1) n = 1;
	    printf "%.1f %.1f", 1e6 * ($5 - $2) / n, 1e6 * ($6 - $3) / n}')"
}

# route_figures LABEL CACHED UNCACHED BYTES RESULTS: the medians of a
# daemon's turns of the route (and nginx's, n.txt) as a line of
# RESULTS (web_report.sh) and a line of progress.
route_figures() {
	local label=$1 dr dp dc nr np ur=- up=- uc=- bad
	nr=$(cut -d' ' -f1 "$PW_TMP/n.txt" | median)
	np=$(cut -d' ' -f2 "$PW_TMP/n.txt" | median)
	dr=$(cut -d' ' -f1 "$2" | median)
	dp=$(cut -d' ' -f2 "$2" | median)
	dc=$(cut -d' ' -f4 "$2" | median)
	if [ "$uncached" = 1 ]; then
		ur=$(cut -d' ' -f1 "$3" | median)
		up=$(cut -d' ' -f2 "$3" | median)
		uc=$(cut -d' ' -f4 "$3" | median)
	fi
	bad=$(awk '{n += $3} END {print n + 0}' "$PW_TMP/n.txt" "$2" "$3")
	echo "$scale $name $dr $nr $dp $np $4 $ld $bad $ur $up $dc $uc" >>"$5"
	printf '# %-8s %-17s %-10s %9.0f req/s %8.2f ms p99 %7s us cpu | nginx %9.0f %8.2f | %4.0f%% | uncached %s %s %s us cpu | load %s | %d bytes%s\n' \
	    "$scale" "$name" "$label" "$dr" "$dp" "$dc" "$nr" "$np" \
	    "$(awk -v a="$dr" -v b="$nr" 'BEGIN {print 100 * a / b}')" "$ur" "$up" "$uc" "$ld" "$4" \
	    "$([ "$bad" = 0 ] || echo " | $bad errors")"
}

median() {
	sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2];
	    else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

load1() {
	cut -d' ' -f1 /proc/loadavg
}

rss_kb() {
	awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"
}

# The routes: "name path", where path may hold @PAIR@ and the like
# (the objects picked below; @ASHA@ a commit with alerts and a bisection).
routes=(
	"overview /"
	"overview.json /api/v1/overview"
	"pair /pair/@PAIR@"
	"pair.json /api/v1/pairs/@PAIR@"
	"commit /commit/@SHA@"
	"commit.json /api/v1/commits/@SHA@"
	"series /series/@SERIES@"
	"series.json /api/v1/series/@SERIES@"
	"comparisons.json /api/v1/comparisons?commit=@SHA@"
	"history /history?tree=bench&branch=master&host=epyc-1&job=kv&point=x%3D1&metric=ops"
	"history.json /api/v1/history?tree=bench&branch=master&host=epyc-1&job=kv&point=x%3D1&metric=ops"
	"regressions /regressions"
	"regressions.json /api/v1/regressions"
	"hosts /hosts"
	"hosts.json /api/v1/hosts"
	"jobs /jobs"
	"jobs.json /api/v1/jobs"
	"job.json /api/v1/jobs/@JOB@"
	"trees.json /api/v1/trees"
	"commits.json /api/v1/commits?tree=bench&branch=master"
	"series-list.json /api/v1/series"
	"alerts.json /api/v1/alerts"
	"bisect.json /api/v1/bisect"
	"commit-alerts /commit/@ASHA@"
	"alerts-commit.json /api/v1/alerts?commit=@ASHA@"
	"alerts-pending.json /api/v1/alerts?state=pending"
	"alerts-failed.json /api/v1/alerts?state=failed"
	"alerts-email.json /api/v1/alerts?kind=email"
	"alerts-failed-hook.json /api/v1/alerts?state=failed&kind=webhook"
	"alerts-older.json /api/v1/alerts?cursor=@ACURSOR@"
	"alert.json /api/v1/alerts/@ALERT@"
	"bisect /bisect/@BISECT@"
	"bisect-one.json /api/v1/bisect/@BISECT@"
	"history-rare.json /api/v1/history?tree=bench&branch=nosuch&job=kv&point=x%3D1&metric=ops"
	"history-range.json /api/v1/history?tree=bench&job=kv&point=x%3D1&metric=ops&from=2023-11-15&to=2023-11-15"
	"commits-rare.json /api/v1/commits?branch=nosuch"
)

results=$PW_TMP/results
: >"$results"
: >"$results.pg"
: >"$results.floor"
if [ "$on_pg" = 1 ]; then
	pg_start "$PW_TMP" || exit 1
	PG_CONNINFO=$PW_TEST_PG
	unset PW_TEST_PG
fi
have_pairs=0
for scale in $scales; do
	pairs=$((scale / (2 * runs_per_job)))
	stop_fleet
	if [ -n "$PW_DAEMON_PID" ]; then
		stop_pid "$PW_DAEMON_PID"
		PW_DAEMON_PID=
	fi
	t0=$(date +%s.%N)
	if [ -n "$dbs" ] && [ -s "$dbs/pw-$scale-$gen_key.db" ]; then
		cp "$dbs/pw-$scale-$gen_key.db" "$D/pw.db"
		rm -f "$D/pw.db-wal" "$D/pw.db-shm"
		cp "$dbs/gen-$scale-$gen_key.out" "$PW_TMP/gen.out"
	else
		# Grow the history of a smaller kept scale, as a run of
		# both scales would.
		for k in $scales; do
			if [ "$have_pairs" = 0 ] && [ "$k" -lt "$scale" ] &&
			    [ -n "$dbs" ] && [ -s "$dbs/pw-$k-$gen_key.db" ]; then
				cp "$dbs/pw-$k-$gen_key.db" "$D/pw.db"
				rm -f "$D/pw.db-wal" "$D/pw.db-shm"
				have_pairs=$((k / (2 * runs_per_job)))
			fi
		done
		# The alert worker's code web_gen runs logs a line for each
		# report it sends (20,000 at a million runs): left out, its
		# own lines (progress, errors) shown.
		"$GEN" "$D/pw.db" "$have_pairs" "$pairs" "$runs_per_job" \
		    "$real" >"$PW_TMP/gen.out" 2> >(grep --line-buffered -v \
		    '^[^ ]* web_gen\[[0-9]*\]: alert .* deliveries queued$' >&2)
		if [ -n "$dbs" ]; then
			sqlite3 "$D/pw.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
			cp "$D/pw.db" "$dbs/pw-$scale-$gen_key.db"
			cp "$PW_TMP/gen.out" "$dbs/gen-$scale-$gen_key.out"
		fi
	fi
	have_pairs=$pairs
	t1=$(date +%s.%N)
	live="SELECT count(*) FROM bisections WHERE state IN ('queued', 'running')"
	running=$(sqlite3 "$D/pw.db" "$live")
	start_daemon "$D" || { echo "daemon did not start" >&2; exit 1; }
	echo "# $scale: $(cat "$PW_TMP/gen.out") (web_gen $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') s;" \
	    "database $(du -m "$D/pw.db" | cut -f1) MB)"
	# An older store the daemon migrated has every pair due for the
	# alert worker (alert_due; web_gen's reports leave none), which
	# drains them at about a third of a core for minutes, and the
	# bisections web_gen left running are ended by the bisect worker
	# (this daemon has no tree "bench" to bisect in), which makes their
	# pairs due again: measured beside that, every turn is blurred.
	# Wait for both (at most 15 minutes).
	t2=$(date +%s)
	due=$(sql 'SELECT count(*) FROM alert_due')
	while [ "$(sql "SELECT (SELECT count(*) FROM alert_due) + ($live)")" -gt 0 ] &&
	    [ $(($(date +%s) - t2)) -lt 900 ]; do
		sleep 2
	done
	echo "# alert backlog: $due due pairs, $running running bisections;" \
	    "$(sql 'SELECT count(*) FROM alert_due') and $(sql "$live") left after $(($(date +%s) - t2)) s"
	echo "# stored: $(sql 'SELECT count(*) FROM runs') runs, $(sql 'SELECT count(*) FROM jobs') jobs," \
	    "$(sql 'SELECT count(*) FROM regressions') regressions, $(sql 'SELECT count(*) FROM history_points') history points," \
	    "$(sql 'SELECT count(*) FROM alert_reports') alert reports, $(sql 'SELECT count(*) FROM alerts') deliveries" \
	    "($(sql "SELECT group_concat(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM alerts GROUP BY state)"))," \
	    "$(sql 'SELECT count(*) FROM bisections') bisections, $(sql 'SELECT count(*) FROM bisect_steps') bisection steps"
	if [ "$on_pg" = 1 ]; then
		pg_serve "$scale" || exit 1
	fi
	# The objects: the middle pair of the history (neither newest nor
	# oldest; not a bisection's), its commit and candidate job, the
	# middle series; the bisection with a culprit nearest the middle,
	# the commit it bisected (reported, followed up: its alerts) and
	# that commit's newest mail; the middle of the alerts' list.
	pair=$(sql "SELECT id FROM pairs WHERE bisect_id IS NULL ORDER BY id
	    LIMIT 1 OFFSET (SELECT count(*) / 2 FROM pairs WHERE bisect_id IS NULL)")
	sha=$(sql "SELECT c.sha FROM pairs p JOIN jobs j ON j.id = p.cand_job_id
	    JOIN commits c ON c.id = j.commit_id WHERE p.id = $pair")
	job=$(sql "SELECT cand_job_id FROM pairs WHERE id = $pair")
	series=$(sql "SELECT id FROM series ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM series)")
	bisect=$(sql "SELECT id FROM bisections WHERE state = 'done'
	    ORDER BY abs(pair_id - $pair), id LIMIT 1")
	asha=$(sql "SELECT c.sha FROM bisections b JOIN pairs p ON p.id = b.pair_id
	    JOIN jobs j ON j.id = p.cand_job_id JOIN commits c ON c.id = j.commit_id
	    WHERE b.id = ${bisect:-0}")
	alert=$(sql "SELECT a.id FROM alerts a JOIN alert_reports r ON r.id = a.report_id
	    JOIN commits c ON c.id = r.commit_id WHERE c.sha = '$asha'
	    AND a.kind = 'email' ORDER BY a.id DESC LIMIT 1")
	acursor=$(sql "SELECT id FROM alerts ORDER BY id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM alerts)")
	if [ "$fleet_live" != 0 ]; then
		# Work for the whole bench: the fleet uploads at most
		# live_runners * 1000 / live_run_ms runs a second; a submit
		# is 1,280 runs.
		nroutes=${#routes[@]}
		[ -z "${BENCH_ROUTES:-}" ] || nroutes=$(wc -w <<<"$BENCH_ROUTES")
		turns=$((uncached == 1 ? 3 : 2))
		want=$((nroutes * rounds * turns * (secs + 1) * live_runners * 1000 / live_run_ms))
		for ((i = 0; i < want / 1280 + 1; i++)); do
			[ "$(http POST /api/v1/submit "$(token_of admin)" '{"job":"fleet"}')" = 201 ] ||
				{ echo "submit failed: $(cat "$PW_TMP/body")" >&2; exit 1; }
		done
		l_runs=$(sql 'SELECT count(*) FROM runs')
		l_done=$(sql "SELECT count(*) FROM jobs WHERE state = 'success'")
		l_t0=$(date +%s.%N)
		l_cache=$(curl -s "$PW_URL/metrics" | awk '/^perfwatch_web_cache_(hits|misses)_total/ {printf "%s ", $2}')
		FLEET_RUN_MS=$live_run_ms "$LOAD" --fleet "$PW_PORT" "$D" "$live_runners" 100000 5 \
		    >"$PW_TMP/fleet.out" 2>&1 &
		load_pid=$!
		# Let every runner register and claim.
		sleep 5
		echo "# live fleet: $live_runners runners, a run every $live_run_ms ms each," \
		    "$((want / 1280 + 1)) submits ($(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") jobs queued)"
	fi
	n=0
	for r in "${routes[@]}"; do
		n=$((n + 1))
		name=${r%% *}
		path=${r#* }
		case " ${BENCH_ROUTES:-$name} " in *" $name "*) ;; *) continue ;; esac
		# A small scale may have no bisection (or alert) to read.
		none=
		case $path in *@BISECT@* | *@ASHA@*) [ -n "$bisect" ] || none=1 ;; esac
		case $path in *@ALERT@*) [ -n "$alert" ] || none=1 ;; esac
		if [ -n "$none" ]; then
			echo "# $name: nothing to read at $scale runs, left out"
			continue
		fi
		path=${path//@PAIR@/$pair}
		path=${path//@SHA@/$sha}
		path=${path//@SERIES@/$series}
		path=${path//@JOB@/$job}
		path=${path//@BISECT@/$bisect}
		path=${path//@ASHA@/$asha}
		path=${path//@ALERT@/$alert}
		path=${path//@ACURSOR@/$acursor}
		case $name in *.json) ext=json ;; *) ext=html ;; esac
		file=r$n.$ext
		code=$(curl -s -o "$www/$file" -w '%{http_code}' "$PW_URL$path")
		chmod a+r "$www/$file"
		if [ "$code" != 200 ]; then
			echo "# $name $path: HTTP $code: $(head -c 200 "$www/$file")" >&2
			exit 1
		fi
		bytes=$(wc -c <"$www/$file")
		pbytes=
		if [ "$on_pg" = 1 ]; then
			code=$(curl -s -o "$PW_TMP/pg.body" -w '%{http_code}' "$pg_url$path")
			if [ "$code" != 200 ]; then
				echo "# $name $path on PostgreSQL: HTTP $code: $(head -c 200 "$PW_TMP/pg.body")" >&2
				exit 1
			fi
			pbytes=$(wc -c <"$PW_TMP/pg.body")
		fi
		rm -f "$PW_TMP"/[ndupq].txt
		touch "$PW_TMP"/[ndupq].txt
		loads=
		for ((k = 0; k < rounds; k++)); do
			loads="$loads $(load1)"
			measure "http://127.0.0.1:$nport/$file" >>"$PW_TMP/n.txt"
			# A cookie keeps the reply cache out (web/cache.h):
			# what rendering the page costs.
			if [ "$on_sqlite" = 1 ]; then
				measure_srv "$PW_URL" "$path" >>"$PW_TMP/d.txt"
				[ "$uncached" = 1 ] &&
					measure_srv "$PW_URL" "$path" -H 'Cookie: pw_bench=1' >>"$PW_TMP/u.txt"
			fi
			if [ "$on_pg" = 1 ]; then
				measure_srv "$pg_url" "$path" >>"$PW_TMP/p.txt"
				[ "$uncached" = 1 ] &&
					measure_srv "$pg_url" "$path" -H 'Cookie: pw_bench=1' >>"$PW_TMP/q.txt"
			fi
		done
		ld=$(tr ' ' '\n' <<<"$loads" | grep . | median)
		[ "$on_sqlite" = 0 ] ||
			route_figures SQLite "$PW_TMP/d.txt" "$PW_TMP/u.txt" "$bytes" "$results"
		[ "$on_pg" = 0 ] ||
			route_figures PostgreSQL "$PW_TMP/p.txt" "$PW_TMP/q.txt" "$pbytes" "$results.pg"
	done
	if [ "$fleet_live" != 0 ]; then
		l_t1=$(date +%s.%N)
		kill -0 "$load_pid" 2>/dev/null ||
			{ echo "web_bench: the fleet stopped: $(tail -3 "$PW_TMP/fleet.out")" >&2; exit 1; }
		stop_fleet
		echo "# $scale: live fleet wrote $(awk -v a="$l_t0" -v b="$l_t1" -v r0="$l_runs" \
		    -v r1="$(sql 'SELECT count(*) FROM runs')" -v d0="$l_done" \
		    -v d1="$(sql "SELECT count(*) FROM jobs WHERE state = 'success'")" \
		    'BEGIN {printf "%.1f uploads/s and finished %.2f jobs/s", (r1 - r0) / (b - a), (d1 - d0) / (b - a)}')" \
		    "over $(awk -v a="$l_t0" -v b="$l_t1" 'BEGIN {printf "%.0f", b - a}') s;" \
		    "$(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") jobs still queued;" \
		    "reply cache $(curl -s "$PW_URL/metrics" | awk -v c="$l_cache" '
			/^perfwatch_web_cache_hits_total/ {h = $2} /^perfwatch_web_cache_misses_total/ {m = $2}
			END {split(c, v, " "); h -= v[1]; m -= v[2];
			    printf "%d hits, %d misses (%.1f %% hits)", h, m, h + m ? 100 * h / (h + m) : 0}')"
	fi
	echo "$scale rss $(rss_kb "$PW_DAEMON_PID" VmRSS) $(rss_kb "$PW_DAEMON_PID" VmHWM)" >>"$results"
	echo "# $scale: perfwatchd RSS $(rss_kb "$PW_DAEMON_PID" VmRSS) kB now, peak $(rss_kb "$PW_DAEMON_PID" VmHWM) kB"
	if [ "$on_pg" = 1 ]; then
		echo "$scale rss $(rss_kb "$pg_pid" VmRSS) $(rss_kb "$pg_pid" VmHWM)" >>"$results.pg"
		echo "# $scale: perfwatchd on PostgreSQL RSS $(rss_kb "$pg_pid" VmRSS) kB now, peak $(rss_kb "$pg_pid" VmHWM) kB"
	fi
done

if [ "$on_sqlite" = 1 ]; then
	"$top"/tests/bench/web_report.sh "$results" "$scales" "$uncached"
fi
if [ "$on_pg" = 1 ]; then
	echo
	echo "## PostgreSQL"
	"$top"/tests/bench/web_report.sh "$results.pg" "$scales" "$uncached" \
	    "$([ "$on_sqlite" = 1 ] && echo "$results")" "$results.floor"
fi

set +e
trap - EXIT
stop_nginx
pw_cleanup
exit 0
