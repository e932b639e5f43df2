#ifndef STORE_CANARY_H
#define STORE_CANARY_H

/*
 * The canary's tables (daemon/canary.c, docs/HOST.md): canary pairs
 * (pairs.canary: 1 not judged yet, 2 judged) and host quarantine
 * (hosts.quarantined, the reason, and hosts.quarantined_at).
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* A host's canary state: the newest canary pair of job (0 when none),
 * when it was made, whether it still has a job queued or running, and
 * the quarantine (reason NULL: none). */
struct store_canary_host {
	int64_t host_id, last_pair;
	/* When the last pair's jobs last changed (its end, once none is
	 * open), else its creation. */
	int64_t last_done;
	int open;
	char *quarantined;
	int64_t quarantined_at;
};
void store_canary_host_release(struct store_canary_host *);
/* 0, or ERR_NOTFOUND when no host of that name has registered. */
int store_canary_host_get(struct store *, struct store_canary_host *out,
    const char *host, const char *job);

/* Canary pairs whose verdict is written and that are not judged yet:
 * *out (free it) of *out_n pair ids, oldest first. */
int store_canary_unjudged(
    struct store *, int64_t **out, size_t *out_n, size_t max);

/* What a canary pair found: its judged metrics' final verdicts, and the
 * change points its points are part of. */
struct store_canary_finding {
	char *metric, *verdict; /* verdict "change point" for those */
	double change_pct;
};
void store_canary_findings_release(struct store_canary_finding *, size_t n);
int store_canary_finding_list(struct store *, struct store_canary_finding **out,
    size_t *out_n, int64_t *out_host, int64_t pair_id);

/* Marks the pair judged; why != NULL quarantines its host (an earlier
 * quarantine's reason is kept). */
int store_canary_judge(
    struct store *, int64_t pair_id, const char *why, int64_t now);

/* The operator clears a host's quarantine.  0, or ERR_NOTFOUND. */
int store_host_clear(struct store *, const char *host);

/* Per job and metric, the measured runs of the newest `pairs` canary
 * pairs of job on host (both sides): count, sum and sum of squares,
 * ordered by metric. */
struct store_canary_moment {
	char *metric;
	int64_t job_id, n;
	double sum, sumsq;
};
void store_canary_moments_release(struct store_canary_moment *, size_t n);
int store_canary_moment_list(struct store *, struct store_canary_moment **out,
    size_t *out_n, int64_t host_id, const char *job, size_t pairs);

/*
 * The noise floor of pair_id's metric (docs/ANALYSIS.md, "Noise
 * floor"): the largest |change| that the newest `pairs` canary A/A pairs
 * of the pair's host measured for a metric of that name, in percent.
 * *out_pct is 0 (no floor) when the pair is a canary itself, has no host
 * yet, or its host has fewer than `least` such pairs.  0 or -1.
 */
int store_canary_floor(struct store *, double *out_pct, int64_t pair_id,
    const char *metric, size_t pairs, size_t least);

#endif
