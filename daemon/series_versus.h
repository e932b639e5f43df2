#ifndef DAEMON_SERIES_VERSUS_H
#define DAEMON_SERIES_VERSUS_H

/*
 * "vN vs vN-1": a new version of a series compared with the version it
 * supersedes (store: series.supersedes), on the same host, job, matrix
 * point and metric.  The candidate runs of the two tips are the two
 * sides of an A/B comparison (analysis/analysis: the same statistics as
 * "vN vs base"), so the series page and the alerts can say what the
 * new version changed against the old one, not only against the base.
 * Only what both tips were measured on is compared.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct store;
struct dconf;

/* One metric both tips measured on one (host, job, point): the old tip
 * (vN-1) is the A side, the new one the B side. */
struct series_versus_row {
	/* Never NULL (the store's metric columns are NOT NULL). */
	char *host, *job, *point, *metric, *unit, *better;
	/* The analysis' figures; NAN (or another non-finite value) when
	 * unknown. */
	double prev_median, median, change_pct, ci_low, ci_high, p;
	const char *verdict; /* analysis_verdict_name's: static */
	int64_t n_prev, n;   /* values on each side */
};

struct series_versus {
	int64_t version;
	/* The version it supersedes: prev_id 0 when none. */
	int64_t prev_id, prev_version;
	/* Ordered by (host, job, point, metric); none when it supersedes
	 * nothing or either tip has no runs. */
	struct series_versus_row *rows;
	size_t nrows;
};

/*
 * vN vs vN-1 of series id into *out (the caller's, released with
 * series_versus_release).  conf (may be NULL) gives each metric's
 * min_effect.  0, ERR_NOTFOUND, or -1 with e set; *out is empty on
 * failure.  web/rows_series.c makes its JSON ("versus_previous").
 */
int series_versus(struct series_versus *out, struct store *,
    const struct dconf *conf, int64_t id, struct err *e);
/* NULL-safe; leaves *v empty. */
void series_versus_release(struct series_versus *v);

#endif
