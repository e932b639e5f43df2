#ifndef DAEMON_BISECT_H
#define DAEMON_BISECT_H

/*
 * Bisection of a regression (docs/BISECT.md): the first bad commit
 * between the regression's base (the good end) and candidate (the bad
 * end), found by measuring midpoints as ordinary job pairs on the same
 * host, benchmark and matrix point (the scheduler, leases, adaptive runs
 * and verdicts of every pair), tagged with the bisection so their
 * verdicts make no regression, history point or alert of their own.
 *
 * A step measures commit M twice: M against the good end and M against
 * the bad end, both fresh on the same host.  Its class, for the
 * regression's metric (bisect_classify):
 *
 *   better than the bad end, not worse than the good end: good;
 *   worse than the good end, not better than the bad end: bad;
 *   worse than the good end and better than the bad end: bad, "partial"
 *     (the regression has more than one part: the bisection finds the
 *     first commit that crosses from the good end, and says so);
 *   told apart from neither end (inconclusive after max_runs, unstable
 *     within half the regression): inconclusive;
 *   the candidate job failed (a build failure): skip, as `git bisect
 *     skip`; a job whose lease expired max_attempts times, or a host not
 *     seen for bisect.host_timeout while the step waits: the bisection
 *     lost its host and ends inconclusive.
 *
 * An inconclusive step is set aside like a skipped commit; more than
 * bisect.max_inconclusive of them, the step limit, or only skipped
 * commits left end the bisection `inconclusive` with the narrowed range
 * (lo: the newest commit known good, hi: the oldest known bad), never a
 * guess.  Once one commit is left it is verified: the culprit against
 * its first parent must show the regression, and the culprit reverted
 * on the bad end (a commit made in the mirror, when the revert applies
 * cleanly) must show the recovery; both results are stored.
 *
 * No SQL here (store/bisect.c), no HTML (web/).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct dconf;
struct sched;
struct store;
struct store_bisect;

/* ---- pure parts (tests/unit/bisect_test.c) ---- */

enum bisect_class {
	BISECT_MEASURING = 0,
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_PARTIAL, /* bad, between both ends */
	BISECT_SKIP,
	BISECT_INCONCLUSIVE
};
const char *bisect_class_name(enum bisect_class); /* partial: "bad" */

/*
 * The class of a step from its two comparisons of the regression's
 * metric: vs_good (the commit as candidate, the good end as base) and
 * vs_bad (the bad end as base), each a verdict word and a change in
 * percent (NAN unknown); min_effect in percent; regression_pct: the
 * regression's own change (its sign says which way is worse).  A step
 * is told apart from an end by a regression or improvement verdict, or
 * by an unstable one whose median moved by at least half the regression
 * (in log ratio; at least min_effect).  Told apart from the bad end
 * only (better), it is good; from the good end only (worse), bad; from
 * both, partial; from neither, inconclusive.  Like the end it is not
 * told apart from need not be shown ("unchanged" needs a confidence
 * interval inside +-min_effect, which a few noisy runs seldom give):
 * being far from one end is the evidence, unless the undecided side's
 * median leans 30% or more of the regression (in log ratio) towards the
 * other end: then it is inconclusive (and measured once more).
 */
enum bisect_class bisect_classify(const char *vs_good, double good_pct,
    const char *vs_bad, double bad_pct, double min_effect,
    double regression_pct);

/*
 * The regression as the bisection measures it: each step compares its
 * commit M with both ends on one host, so (1 + vs_good) / (1 + vs_bad)
 * is bad end / good end.  Returns the median of those n readings (NAN
 * pairs left out) in percent, the size steps are judged against; or
 * origin_pct (the pair that started it) when no step has both, or when
 * the steps move the other way (the regression did not reproduce: the
 * steps come out inconclusive against either).  The origin is one
 * noisy pair: a 2.5x step once read "unstable +28.6%" there, and its
 * culprit, "regression +156%" against the good end and "-8%" against
 * the bad end, leaned a third of that towards the bad end and was
 * called inconclusive.
 */
double bisect_range_pct(const double *vs_good_pct, const double *vs_bad_pct,
    size_t n, double origin_pct);

/*
 * The next commit to measure.  cls[0..n) are the classes of the range's
 * candidates in order (the last is the bad end, known bad); the good end
 * is before cls[0].  BISECT_MEASURING means not measured yet.  Sets *lo
 * (the newest good, -1 for the good end) and *hi (the oldest bad at or
 * after lo + 1) and returns:
 *   1 and *next: measure candidate *next (the untested middle of
 *     (lo, hi), the one nearest the middle when the middle was skipped);
 *   0: found: candidate *hi is the first bad one;
 *   -1: only skipped or inconclusive candidates are left in (lo, hi).
 */
int bisect_next(
    const enum bisect_class *cls, size_t n, long *lo, long *hi, size_t *next);

/*
 * The note a classified step stores (out, size n: 600 holds any): its
 * two readings, "against the good end: regression +9.8%; against the
 * bad end: unchanged -0.2%" (a verdict NULL reads "none", a change NAN
 * "unknown"), and for BISECT_PARTIAL "; partial: between both ends",
 * which bisect_step_class() reads back.
 */
void bisect_step_note(char *out, size_t n, const char *vs_good, double good_pct,
    const char *vs_bad, double bad_pct, enum bisect_class);
/*
 * The class of a stored step from its class name and note (what
 * bisect_class_name() and bisect_step_note() wrote): good, bad, partial,
 * skip, inconclusive; BISECT_MEASURING for none yet (NULL) and for
 * "suspect" (measured again).
 */
enum bisect_class bisect_step_class(const char *cls, const char *note);
/*
 * The result a verification stores (out, size n: 300 holds any): the
 * culprit against its parent (revert 0), "shows the regression: ..." or
 * "does not show the regression: ...", or its revert on the bad end
 * (revert 1), "shows the recovery: ..." or "does not show the recovery:
 * ...", then the verdict (NULL: "none"), the change (NAN: "unknown")
 * and what it was measured against.  bisect_advance() reads the first
 * words back: a culprit is named only when it shows the regression.
 */
void bisect_verify_note(char *out, size_t n, int revert, int shows,
    const char *verdict, double pct);

/* ---- the machine ---- */

/*
 * Starts a bisection of a regression (manual: started_by "manual").
 * 0 and *out_id; ERR_NOTFOUND (no regression), ERR_EXISTS (one is
 * running: *out_id), ERR_INVALID (the regression has no commits to
 * bisect, or is itself a bisection's), or -1; e says why.
 */
int bisect_begin(struct store *, const struct dconf *, int64_t *out_id,
    int64_t regression_id, const char *started_by, int64_t now, struct err *e);
/*
 * Starts a bisection of a history change point (docs/BISECT.md): the
 * good end the commit of the last point before the change, the bad end
 * that of its last point, on the series' host, job, point and metric.
 * 0 and *out_id; ERR_NOTFOUND (no such change point: they are
 * recomputed as points arrive), ERR_EXISTS (that range is being
 * bisected: *out_id), ERR_INVALID (an improvement, or no commit range
 * of a tree), or -1; e says why.
 */
int bisect_begin_cp(struct store *, const struct dconf *, int64_t *out_id,
    int64_t change_point_id, const char *started_by, int64_t now,
    struct err *e);

/*
 * Whether a step's finished pairs may classify it: not when a pair is
 * suspect (its sides ran under different host states, docs/HOST.md) or
 * the host is quarantined (the canary found it drifting): each argument
 * a reason, NULL or "" for none.  1 and why (size n: "not classified:
 * REASON; measured again"), or 0.
 */
int bisect_untrusted(char *why, size_t n, const char *suspect_good,
    const char *suspect_bad, const char *quarantined);

/*
 * A pair of bisection b (a step's or a verification's): base against
 * cand, with the regression's candidate job spec (same benchmark, point,
 * build, kernel, runs; the commit replaced), on b's host, tagged with b.
 * A commit the watcher has not recorded (a revert made in the mirror)
 * gets a stub row.  url: where runners fetch cand from (NULL: the
 * spec's).  0 and *out (the pair id), or -1; e says why.
 */
int bisect_make_pair(struct store *, int64_t *out, const struct store_bisect *b,
    const char *base, const char *cand, const char *url, int64_t now,
    struct err *e);

/*
 * Ends bisection b at now: its jobs still queued cancelled, its state
 * ("done" or "inconclusive"), culprit ("": none) and reason stored.  An
 * inconclusive one's reason is why and the range narrowed so far (b's
 * lo..hi, else its ends); a done one's is why.  0 or -1; e says why.
 */
int bisect_finish(struct store *, const struct store_bisect *b,
    const char *state, const char *culprit, const char *why, int64_t now,
    struct err *e);

/* Cancels it and its queued jobs.  ERR_NOTFOUND, ERR_CONFLICT (it has
 * ended), -1. */
int bisect_cancel(struct store *, int64_t id, int64_t now, struct err *e);

/*
 * One look at a queued or running bisection: classifies finished steps,
 * schedules the next, verifies, ends it.  *out_changed is 1 when jobs
 * were made (wake the runners).  0 or -1 (e).
 */
int bisect_advance(struct store *, const struct dconf *, int64_t id,
    int64_t now, int *out_changed, struct err *e);
/* The last regression and change point the automatic start looked at. */
struct bisect_cursor {
	int64_t regression, change_point, change_point_at;
};
/* Starts bisections of new confirmed regressions, and of new change
 * points in the regression direction, over more than one commit whose
 * job has bisect.auto; a change point's range overlapping a bisection
 * of the same job, host, point and metric is left alone. */
int bisect_auto(struct store *, const struct dconf *,
    struct bisect_cursor *after, int64_t now, struct err *e);

/*
 * One pass of the bisect worker (a daemon/worker.h pass; arg: a struct
 * bisect_cursor the pass keeps): starts automatic
 * bisections and advances the live ones, every time the scheduler's
 * generation moves (a job finished) and every few seconds.
 */
int64_t bisect_worker_pass(
    struct store *, const struct dconf *, struct sched *, void *arg);

#endif
