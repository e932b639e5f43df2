#ifndef DAEMON_CANARY_H
#define DAEMON_CANARY_H

/*
 * The canary (docs/HOST.md).  A runner entry of the daemon config may
 * name a reference job (`runners[].canary: {job, every}`); every `every`
 * the daemon makes an A/A pair of it pinned to that runner's host: both
 * sides the same job on the host's own kernel, nothing changed between
 * them.  Its verdict is the host's noise check: an A/A pair that comes
 * out a regression, an improvement or unstable, or whose point starts a
 * change point on the canary's history, means the host drifted (thermal,
 * a neighbour, a firmware or tuning change), and the host is quarantined:
 * it claims nothing but its canary until an operator clears it
 * (POST /api/v1/hosts/{id}/clear).  The spread of the canary's runs is
 * the host's noise floor, and from it the smallest effect a job with the
 * canary's runs can detect on that host, published per metric.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct dconf;
struct sched;
struct store;

/* One pass at time now: makes the canary pairs that are due, judges the
 * canary pairs whose verdict is written.  Out (any may be NULL): pairs
 * made, hosts quarantined.  0, or -1 with the store's error set. */
int canary_pass(struct store *, const struct dconf *, int64_t now,
    size_t *out_made, size_t *out_quarantined);

/*
 * The noise floor of one metric from per-job moments (count, sum, sum of
 * squares of each canary job's runs): the pooled within-job standard
 * deviation over the grand mean, in percent (NaN when fewer than two
 * runs in some job or a zero mean); and the smallest change a two-sided
 * test at alpha 0.05 detects with power 0.8 at n runs per side under that
 * noise (Welch, normal approximation): (1.96 + 0.84) sqrt(2 / n) CV.
 */
struct canary_moment {
	int64_t n;
	double sum, sumsq;
};
double canary_cv_pct(const struct canary_moment *, size_t njobs);
double canary_mde_pct(double cv_pct, int64_t runs);

/* The canary part of a host's row in GET /api/v1/hosts and on /hosts:
 * {"job", "every_s", "runs_per_side", "last_pair", "last", "open",
 * "noise": [{"metric",
 * "runs", "jobs", "cv_pct", "mde_pct", "mde_max_runs_pct"}]}, or NULL
 * when the host has no canary. */
json_t *canary_host_json(
    struct store *, const struct dconf *, const char *host, int64_t host_id);

/* One pass of the canary worker (a daemon/worker.h pass): canary_pass()
 * now, then every second or when the scheduler moves. */
int64_t canary_worker_pass(
    struct store *, const struct dconf *, struct sched *, void *arg);

#endif
