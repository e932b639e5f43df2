#!/usr/bin/env bash
# The report of make bench-web (tests/bench/web_bench.sh) from its results
# file: the table of every route and scale, the daemon's RSS, each route
# at the largest scale against the smallest, and the dashboard's goals
# judged, naming the routes that miss each.
#   tests/bench/web_report.sh RESULTS "SCALES" UNCACHED [SQLITE_RESULTS
#       [FLOOR]]
# With SQLITE_RESULTS (make bench-web BACKEND=all) RESULTS are a daemon's
# on PostgreSQL, and the end sets each route beside nginx and beside
# SQLite's figures of the same run, judging PostgreSQL's goals: every
# cached page >= 50 % of nginx's requests/s, every uncached one at most
# twice SQLite's cost, by requests/s (wrk's: the daemon's CPU a request
# leaves out the database server's work for it).  Without it
# (BACKEND=pg) the first of them only.  FLOOR has a line per scale,
# "SCALE TPS": the rate of one read transaction of one statement on the
# same server (web_bench.sh's pg_floor); each route's floor is then
# 1 + SQLite's uncached req/s over TPS, the least its cost could be if
# the page asked the server for nothing more, and the goal's misses say
# how many have a floor above 2 (beyond this machine for any page that
# reads the server once).
# RESULTS has a line per route and scale, "SCALE NAME REQS NGINX_REQS P99
# NGINX_P99 BYTES LOAD ERRORS UNCACHED_REQS UNCACHED_P99 CPU_US
# UNCACHED_CPU_US" ("-" for what was not measured), and per scale
# "SCALE rss KB PEAK_KB".  t0705 runs it on a made-up file.
set -eu
results=$1
scales=$2
uncached=${3:-0}
sqlite=${4:-}
floor=${5:-}
[ -r "$results" ] || { echo "web_report: cannot read $results" >&2; exit 2; }

# The table: one line per route and scale, then the 100k -> 1M change.
echo
echo "| route | runs | req/s | nginx req/s | ratio | p99 ms | nginx p99 ms | server us/req | uncached req/s | uncached p99 ms | uncached server us/req | load | bytes |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '$2 != "rss" {printf "| %s | %s | %.0f | %.0f | %.0f %% | %.2f | %.2f | %s | %s | %s | %s | %s | %d |%s\n",
    $2, $1, $3, $4, ($4 + 0 > 0 ? 100 * $3 / $4 : 0), $5, $6, $12, $10, $11, $13, $8, $7, ($9 > 0 ? " " $9 " errors" : "")}' "$results"
echo
awk '$2 == "rss" {printf "perfwatchd RSS at %s runs: %.1f MB (peak %.1f MB)\n", $1, $3 / 1024, $4 / 1024}' "$results"
first=${scales%% *}
last=${scales##* }
if [ "$first" != "$last" ]; then
	# wrk's figures swing with the shared machine's load; the server
	# thread's CPU time per request (web/api.c route_timed) much less:
	# it says whether a route costs more at scale.  The bytes column
	# says whether it is the same page: a list that is not full at the
	# small scale (bisect.json: 12 bisections at 100k runs, a page of 50
	# at 1M) costs more at the large one for its rows, not for the
	# store's size; such a row is marked, and is compared again with the
	# same rows (?limit=) by hand.
	echo
	echo "at $last runs / at $first runs (above 100 %: slower at scale):"
	echo "| route | nginx ratio | server CPU/req cached | server CPU/req uncached | bytes |"
	echo "|---|---:|---:|---:|---:|"
	awk -v a="$first" -v b="$last" '$2 != "rss" && $4 + 0 > 0 {k = $1 " " $2; r[k] = $3 / $4
	    c[k] = $12; u[k] = $13; by[k] = $7; n[$2] = 1}
	    function pct(x, y) {return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.0f %%", 100 * y / x) : "-"}
	    END {for (k in n) if ((a " " k) in r && (b " " k) in r) {
	        q = by[a " " k] > 0 ? by[b " " k] / by[a " " k] : 1
	        printf "| %s | %s | %s | %s | %s%s |\n", k,
	            pct(r[b " " k], r[a " " k]),
	            pct(c[a " " k], c[b " " k]), pct(u[a " " k], u[b " " k]),
	            pct(by[a " " k], by[b " " k]),
	            (q > 1.1 || q < 0.9) ? " (not the same page)" : ""}}' "$results" | sort
	# The goal "no route slower at 1M runs than at 100k", on the same
	# page: server CPU a request (uncached when measured, else cached)
	# more than 125 % of the small scale's, which is beyond what single
	# turns swing by here; a route under
	# 10 us a request (the overview, made at most once a second) is left
	# out: a microsecond there is 30 %.  Such a route is then timed
	# again alone, alternating the two databases.
	awk -v a="$first" -v b="$last" '$2 != "rss" {k = $1 " " $2
	    c[k] = ($13 + 0 > 0) ? $13 : $12; by[k] = $7; n[$2] = 1}
	    END {for (k in n) if ((a " " k) in c && (b " " k) in c) {
	        q = by[a " " k] > 0 ? by[b " " k] / by[a " " k] : 1
	        if (q <= 1.1 && q >= 0.9 && c[a " " k] >= 10 &&
	            c[b " " k] / c[a " " k] > 1.25)
	            l = l (l == "" ? "" : ", ") k sprintf(" %.0f %%", 100 * c[b " " k] / c[a " " k])}
	        print "slower at " b " runs than at " a " (same page, server CPU > 125 %): " (l == "" ? "none" : l)}' "$results"
fi

# The goals, judged from the figures above: which routes miss each, so a
# reader does not have to scan the table.  Cached is how the daemon
# serves a route (web/cache.h); uncached (UNCACHED=1) is what rendering
# it costs, each time the store changes.
echo
echo "goals, at each scale:"
awk -v un="$uncached" '
    function miss(lst, k, v) {return lst (lst == "" ? "" : ", ") k " " v}
    $2 == "rss" {rss[$1] = $3 / 1024; next}
    {if (!($1 in sc)) order[ns++] = $1; sc[$1] = 1
     if ($4 + 0 <= 0) {lo[$1] = miss(lo[$1], $2, "(no nginx figure)"); next}
     r = 100 * $3 / $4
     if (r < 25) lo[$1] = miss(lo[$1], $2, sprintf("%.0f %%", r))
     if ($5 > 10) p9[$1] = miss(p9[$1], $2, $5 " ms")
     if (un == 1) { ur = 100 * $10 / $4
        if (ur < 25) ulo[$1] = miss(ulo[$1], $2, sprintf("%.0f %%", ur))
        if ($11 > 10) up9[$1] = miss(up9[$1], $2, $11 " ms") }}
    function say(w, lst) {printf "  %-34s %s\n", w, lst == "" ? "met" : "missed by " lst}
    END {for (i = 0; i < ns; i++) { k = order[i]
        printf "%s runs:\n", k
        say("cached >= 25 % of nginx:", lo[k])
        say("cached p99 <= 10 ms:", p9[k])
        if (un == 1) {
            say("uncached >= 25 % of nginx:", ulo[k])
            say("uncached p99 <= 10 ms:", up9[k]) }
        if (!(k in rss)) m = "unknown"
        else m = sprintf("%s (%.1f MB)", rss[k] <= 64 ? "met" : "missed", rss[k])
        printf "  %-34s %s\n", "RSS <= 64 MB:", m}}' \
    "$results"

[ "$#" -ge 4 ] || exit 0
# PostgreSQL beside nginx and SQLite: this file's figures (a daemon on
# PostgreSQL) against the SQLite file's of the same run, if any.
echo
echo "PostgreSQL against nginx and SQLite (cost: SQLite's uncached req/s over PostgreSQL's; us/req: the daemon's CPU a request, without the database server's):"
echo "| route | runs | PG req/s | nginx req/s | PG / nginx | SQLite req/s | PG uncached req/s | SQLite uncached req/s | PG uncached daemon us/req | SQLite uncached us/req | PG / SQLite uncached cost | floor |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -v un="$uncached" -v sf="$sqlite" -v ff="$floor" '
    function miss(lst, k, v) {return lst (lst == "" ? "" : ", ") k " " v}
    ff != "" && FILENAME == ff {if ($2 + 0 > 0) tps[$1] = $2; next}
    sf != "" && FILENAME == sf {if ($2 != "rss") {k = $1 " " $2; sr[k] = $3; su[k] = $10; sc[k] = $13}; next}
    $2 == "rss" {next}
    {k = $1 " " $2; if (!($1 in seen)) order[ns++] = $1; seen[$1] = 1
     r = $4 + 0 > 0 ? $3 / $4 : 0
     c = (k in su && su[k] + 0 > 0 && $10 + 0 > 0) ? su[k] / $10 : -1
     f = (k in su && su[k] + 0 > 0 && ($1 in tps)) ? 1 + su[k] / tps[$1] : -1
     printf "| %s | %s | %.0f | %.0f | %.0f %% | %s | %s | %s | %s | %s | %s | %s |\n", $2, $1, $3, $4,
         100 * r, (k in sr) ? sprintf("%.0f", sr[k]) : "-", $10, (k in su) ? su[k] : "-",
         $13, (k in sc) ? sc[k] : "-", c < 0 ? "-" : sprintf("%.2f", c),
         f < 0 ? "-" : sprintf("%.2f", f)
     if (r < 0.5) lo[$1] = miss(lo[$1], $2, sprintf("%.0f %%", 100 * r))
     if (un == 1 && c > 2) { hi[$1] = miss(hi[$1], $2, sprintf("%.2fx", c)); nhi[$1]++
         if (f > 2) { fl[$1] = miss(fl[$1], $2, sprintf("%.2f", f)); nfl[$1]++ } }
     if (un == 1 && c < 0) nc[$1] = 1}
    function say(w, lst) {printf "  %-44s %s\n", w, lst == "" ? "met" : "missed by " lst}
    END {print ""; print "PostgreSQL goals, at each scale:"
        for (i = 0; i < ns; i++) { k = order[i]; printf "%s runs:\n", k
        say("cached >= 50 % of nginx:", lo[k])
        if (un != 1) printf "  %-44s %s\n", "uncached <= 2x SQLite cost:", "not measured (UNCACHED=1)"
        else if (k in nc) printf "  %-44s %s\n", "uncached <= 2x SQLite cost:", "no SQLite figure (BACKEND=all)"
        else {
            say("uncached <= 2x SQLite cost:", hi[k])
            if (!(k in tps)) printf "  %-44s %s\n", "  of them with a floor above 2:", "unknown (no reference rate)"
            else if (k in hi) printf "  %-44s %d of %d (one read transaction: %d/s): %s\n",
                "  of them with a floor above 2:", nfl[k], nhi[k], tps[k], fl[k] == "" ? "none" : fl[k] } }}' \
    $floor $sqlite "$results"
