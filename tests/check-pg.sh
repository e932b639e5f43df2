#!/usr/bin/env bash
# make check-pg: the store's tests on PostgreSQL.  Starts a server of its
# own in a temporary directory (tests/lib_pg.sh: initdb, pg_ctl, a Unix
# socket there, as an unprivileged user; never the system's cluster),
# then runs with PW_TEST_PG set the unit suites that make their stores
# with test_store_where and the end-to-end tests that exercise the store
# (claims, uploads, verdicts, alerts, series, bisection, the watcher's
# commits, shared builds), each daemon on
# a database of its own, and t0368: two daemons on one database, one
# killed ten times under 200 runners' load (tests/bench/crash_bench.sh;
# its load generator build/rel/bench/api_load, which make check-pg
# builds), t0376: a runner of one daemon gets a series commit the
# watcher of the other made, and t0382: a claim whose answer was lost
# with its daemon, sent again with its claim id to the other, gets the
# same job as the same attempt, t0380: uncached pages render in the
# pool sized for PostgreSQL, and t0713: the pages of a pair measured in
# rounds.  Ends with tests/run's "N passed, N failed".
#   tests/check-pg.sh [PATTERN...]   other tests than the default set
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib_pg.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/pwpg.XXXXXX")
cleanup() {
	pg_stop
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
pg_start "$dir" || exit 1
export PW_PG_TRACE=1

if [ $# -eq 0 ]; then
	set -- store_ t0010 t0300 t0307 t0315 t0316 t0317 t0318 t0351 t0356 t0360 t0361 t0367 t0412 t0420 t0430 \
	    t0431 t0510 t0511 t0512 t0672 t0800 t0801 t0803 t0806 t0850 t0853 \
	    t0851 t0363 t0364 t0368 t0372 t0376 t0382 t0410 t0828 \
	    t0380 t0713
fi
cd "$top" && tests/run "$@"
