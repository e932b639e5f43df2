/*
 * vN vs vN-1 (series_versus.h).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/series_versus.h"
#include "store/series.h"
#include "store/store.h"

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

void
series_versus_release(struct series_versus *v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < v->nrows; i++) {
		struct series_versus_row *r = &v->rows[i];

		free(r->host);
		free(r->job);
		free(r->point);
		free(r->metric);
		free(r->unit);
		free(r->better);
	}
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

/* The row of one metric both tips measured: a (old) against b (new). */
static void
row_fill(struct series_versus_row *w, const struct store_tip_runs *b,
    const struct analysis_result *res)
{
	w->host = xstrdup(b->host);
	w->job = xstrdup(b->job);
	w->point = xstrdup(b->point);
	w->metric = xstrdup(b->metric);
	w->unit = xstrdup(b->unit);
	w->better = xstrdup(b->better);
	w->prev_median = res->base_median;
	w->median = res->cand_median;
	w->change_pct = res->change_pct;
	w->ci_low = res->ci_low_pct;
	w->ci_high = res->ci_high_pct;
	w->p = res->p_value;
	w->verdict = analysis_verdict_name(res->verdict);
	w->n_prev = (int64_t)res->n_base;
	w->n = (int64_t)res->n_cand;
}

int
series_versus(struct series_versus *out, struct store *s,
    const struct dconf *conf, int64_t id, struct err *e)
{
	struct store_tip_runs *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, i, j;
	int64_t prev = 0, version = 0, pprev = 0, pversion = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = series_ids(s, id, &prev, &version, e)) != 0)
		return r;
	if (prev > 0) {
		if ((r = series_ids(s, prev, &pprev, &pversion, e)) != 0 ||
		    store_series_tip_run_list(s, &a, &na, prev) != 0 ||
		    store_series_tip_run_list(s, &b, &nb, id) != 0) {
			store_tip_runs_release(a, na);
			return r != 0 ? r : err_set(e, "%s", store_errmsg(s));
		}
	}
	out->version = version;
	out->prev_id = prev > 0 ? prev : 0;
	out->prev_version = prev > 0 ? pversion : 0;
	out->rows = xcalloc(nb ? nb : 1, sizeof(*out->rows));
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
		row_fill(&out->rows[out->nrows++], &b[i], &res);
	}
	store_tip_runs_release(a, na);
	store_tip_runs_release(b, nb);
	return 0;
}
