/*
 * vN vs vN-1 (series_versus.h).
 */
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "daemon/dconf.h"
#include "daemon/series_versus.h"
#include "daemon/store.h"
#include "daemon/store_series2.h"

/* A number, or null when unknown (NAN). */
static json_t *
num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double
min_effect(const struct dconf *conf, const char *job, const char *metric)
{
	const struct job_config *j = conf ? dconf_job(conf, job) : NULL;
	size_t i;

	for (i = 0; j != NULL && i < j->nmetrics; i++)
		if (strcmp(j->metrics[i].name, metric) == 0)
			return j->metrics[i].min_effect_pct;
	return 1.0;
}

static int
same_key(const struct store_tip_runs *a, const struct store_tip_runs *b)
{
	return strcmp(a->host, b->host) == 0 && strcmp(a->job, b->job) == 0 &&
	    strcmp(a->point, b->point) == 0 &&
	    strcmp(a->metric, b->metric) == 0;
}

/* The series' "supersedes" and "version": 0 or ERR_NOTFOUND / -1. */
static int
series_ids(
    struct store *s, int64_t id, int64_t *prev, int64_t *version, struct err *e)
{
	int r = store_series_head(s, version, prev, id);

	if (r != 0)
		return r == ERR_NOTFOUND
		    ? err_setc(e, ERR_NOTFOUND, "series %lld not found",
		          (long long)id)
		    : err_set(e, "%s", store_errmsg(s));
	return 0;
}

int
series_versus(json_t **out, struct store *s, const struct dconf *conf,
    int64_t id, struct err *e)
{
	struct store_tip_runs *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, i, j;
	int64_t prev = 0, version = 0, pprev = 0, pversion = 0;
	json_t *rows;
	int r;

	*out = NULL;
	if ((r = series_ids(s, id, &prev, &version, e)) != 0)
		return r;
	rows = json_array();
	if (prev > 0) {
		if ((r = series_ids(s, prev, &pprev, &pversion, e)) != 0 ||
		    store_series_tip_runs(s, &a, &na, prev) != 0 ||
		    store_series_tip_runs(s, &b, &nb, id) != 0) {
			json_decref(rows);
			store_tip_runs_free(a, na);
			return r != 0 ? r : err_set(e, "%s", store_errmsg(s));
		}
	}
	/* Both lists are ordered by (host, job, point, metric). */
	for (i = 0; i < nb; i++) {
		struct analysis_opts o;
		struct analysis_result res;
		struct err ae = { 0 };

		for (j = 0; j < na && !same_key(&a[j], &b[i]); j++)
			;
		if (j == na)
			continue;
		analysis_opts_init(&o);
		o.better = strcmp(b[i].better, "lower") == 0 ? ANALYSIS_LOWER
		                                             : ANALYSIS_HIGHER;
		o.min_effect = min_effect(conf, b[i].job, b[i].metric);
		if (analysis_compare(&res, a[j].values, a[j].n, b[i].values,
		        b[i].n, &o, &ae) != 0)
			continue; /* a value analysis refuses: no row */
		json_array_append_new(rows,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, "
		              "s:o, s:o, s:o, s:s, s:I, s:I}",
		        "host", b[i].host, "job", b[i].job, "point", b[i].point,
		        "metric", b[i].metric, "unit", b[i].unit, "better",
		        b[i].better, "previous_median", num(res.base_median),
		        "median", num(res.cand_median), "change_pct",
		        num(res.change_pct), "ci_low", num(res.ci_low_pct),
		        "ci_high", num(res.ci_high_pct), "p", num(res.p_value),
		        "verdict", analysis_verdict_name(res.verdict),
		        "n_previous", (json_int_t)res.n_base, "n",
		        (json_int_t)res.n_cand));
	}
	store_tip_runs_free(a, na);
	store_tip_runs_free(b, nb);
	*out = json_pack("{s:o, s:I, s:o}", "previous",
	    prev > 0 ? json_pack("{s:I, s:I}", "id", (json_int_t)prev,
	                   "version", (json_int_t)pversion)
	             : json_null(),
	    "version", (json_int_t)version, "rows", rows);
	return 0;
}
