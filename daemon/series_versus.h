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
#include <stdint.h>

#include "common/err.h"
#include "common/json.h"

struct store;
struct dconf;

/*
 * {"previous": {"id", "version"} | null, "version", "rows": [{"host",
 * "job", "point", "metric", "unit", "better", "previous_median",
 * "median", "change_pct", "ci_low", "ci_high", "p", "verdict", "n_previous",
 * "n"}]} for series id (no rows when it supersedes nothing or either tip
 * has no runs).  conf (may be NULL) gives each metric's min_effect.
 * 0 and *out (json_decref), ERR_NOTFOUND, or -1 with e set.
 */
int series_versus(json_t **out, struct store *, const struct dconf *conf,
    int64_t id, struct err *e);

#endif
