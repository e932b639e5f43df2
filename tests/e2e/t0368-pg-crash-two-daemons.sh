#!/usr/bin/env bash
# make check-pg: two perfwatchd on one PostgreSQL database under the
# load of 200 simulated runners spread over both (api_load --crash with
# both ports: a runner fails over to the other daemon and goes back to
# its own once it listens again), one of them killed with SIGKILL ten
# times at random moments and started again (tests/bench/crash_bench.sh
# with PW_TEST_PG; make check-crash is its SQLite one-daemon form).
# Each kill: the other daemon holds every worker lease within the lease
# (3 s) and a few seconds, by worker_leases and by its /metrics, and
# verdicts go on being made while the first is dead.  At the end every
# acknowledged upload is stored once with all its metrics, every
# acknowledged finish once with all its runs, a claim whose answer was
# lost with a killed daemon gets its job back, sent again with its claim
# id, as the same attempt (no extra attempt), no pair is lost, the
# pairs' queue counts are right, and `perfwatch store check` finds the
# store consistent.  Two metrics a run, to keep check-pg's time; needs
# the load generator (make build/rel/bench/api_load, which make
# check-pg builds).
if [ -z "${PW_TEST_PG:-}" ]; then
	echo "SKIP pg_crash_two_daemons: make check-pg runs it"
	exit 0
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
SUBMITS=${SUBMITS:-12} RUNS=${RUNS:-20} exec bash "$top/tests/bench/crash_bench.sh" 200 10 2
