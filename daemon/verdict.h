#ifndef DAEMON_VERDICT_H
#define DAEMON_VERDICT_H

/*
 * Verdicts: the glue between the store and the analysis module.  When both
 * jobs of a pair have succeeded, each metric's base and candidate runs
 * (status ok) are compared (analysis_compare), the false discovery rate
 * is controlled across the pair's metrics (q = VERDICT_FDR_Q), and then
 * either
 *
 *  - some metric is inconclusive and analysis_next_runs() wants more runs
 *    (5 -> 8 -> 12, bounded by the job's max_runs): both jobs are
 *    re-opened with the larger run count, on the same host, keeping their
 *    runs, and the comparisons are stored as interim rows (verdict
 *    inconclusive, final 0, note "more runs requested (8); ..."); or
 *  - the verdicts are final: one comparison row per metric, a regressions
 *    row (state new) for each regression and each unstable metric, the
 *    candidate medians appended to their history series and the change
 *    points of those series recomputed on their recent tail.
 *
 * Options come from the job spec stored with the candidate job (`metrics:`
 * better and min_effect of the job config; else the better direction
 * uploaded with the metric and min_effect 1%).  Metrics whose better is
 * "info" are never judged: their row has verdict "info" and no regression
 * can come of them.  A metric that cannot be analysed (present on one
 * side only, or a value <= 0 where logs are needed) is inconclusive with
 * a note saying why, and does not ask for more runs (more runs would not
 * change that).
 *
 * memcg tax (docs/MEMCG.md): when a pair's verdict is final, the nested
 * pairs of its cgroup-axis group whose root sibling is final too get
 * memcg_tax.<metric> rows (per-run nested/root ratios of base against
 * candidate), with regressions and history like any metric, in the same
 * transaction.
 *
 * The baseline history given to the analysis is every earlier ok run of
 * base jobs with the same job name and point on the pair's host (the
 * newest VERDICT_HISTORY_JOBS jobs), from the last confirmed shift of
 * those jobs' medians on (a change point at the metric's min_effect): the
 * history is the host's noise, not the levels of the commits measured.
 *
 * Everything one pair's verdict writes is one transaction, and a pair is
 * marked analysed in it: a daemon killed half-way finds the pair pending
 * again at start (verdict_pending) and redoes it.  No SQL here; all of it
 * is in store/store.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define VERDICT_FDR_Q 0.05
#define VERDICT_HISTORY_JOBS 200 /* base jobs of history per comparison */
/* The noise floor: the newest canary pairs of the host read, and how many
 * it takes (store_canary_floor). */
#define VERDICT_FLOOR_PAIRS 10
#define VERDICT_FLOOR_LEAST 3
#define VERDICT_CP_WINDOW 240 /* series tail re-examined on append */
#define VERDICT_BATCH 16      /* pairs per verdict_pending call */
#define VERDICT_NICE 10       /* the worker thread's nice, above the daemon's */

struct sched;
struct store;

enum verdict_state {
	VERDICT_NOT_READY = 0, /* a job has not succeeded, or already final */
	VERDICT_FINAL,         /* final comparisons stored */
	VERDICT_MORE_RUNS      /* interim comparisons; jobs re-queued */
};

struct verdict_outcome {
	enum verdict_state state;
	size_t metrics;       /* comparison rows stored */
	size_t regressions;   /* final regression verdicts */
	size_t unstable;      /* final unstable verdicts */
	size_t improvements;  /* final improvement verdicts */
	size_t inconclusive;  /* inconclusive rows (interim ones included) */
	int64_t runs;         /* VERDICT_MORE_RUNS: the new run count */
	size_t change_points; /* in the series this pair appended to */
	/* memcg tax rows stored with this final verdict (on this pair or
	 * its nested siblings), and how many are regression or unstable */
	size_t tax, tax_regressions;
};

/*
 * The verdict of one pair.  0 and *out (state NOT_READY when there is
 * nothing to do), or -1 (store error: store_errmsg()); nothing is
 * written then.
 */
int verdict_pair(
    struct store *, struct verdict_outcome *out, int64_t pair_id, int64_t now);

/*
 * Verdicts of up to max pending pairs (both jobs succeeded, no final
 * verdict: after a finish, or left over by a crash), oldest first; each
 * is logged.  *out_done counts pairs given final verdicts, *out_more
 * pairs re-queued for more runs (both may be NULL).  A pair that fails
 * does not stop the others: -1 at the end with the first message.
 */
int verdict_pending(struct store *, size_t *out_done, size_t *out_more,
    size_t max, int64_t now);

/*
 * The daemon's verdict thread: with its own connection to dbpath it runs
 * verdict_pending at start (recovery) and whenever the scheduler's
 * generation moves (a job finished), and wakes the scheduler's waiters
 * (sched_notify) when it re-queued jobs or stored verdicts: the claims,
 * and the workers that read verdicts (bisect, alerts).  It runs only
 * while leases holds LEASE_VERDICT (daemon/leases.h; NULL: always).  0,
 * or -1 with e set.
 */
struct leases;
struct verdict_worker;
int verdict_start(struct verdict_worker **out, struct sched *,
    const char *dbpath, struct leases *leases, struct err *e);
void verdict_stop(struct verdict_worker *); /* joins; NULL ok */

#endif
