/*
 * The commit page, GET /commit/{sha}, and the two pages drawn the same
 * way from a set of pairs (web/view_commit.c): a series, GET
 * /series/{id}, and a pair, GET /pair/{id}; their JSON mirrors and
 * /api/v1/comparisons.  A pair's row
 * shows the medians, means and standard deviations of both sides
 * computed here and the change between them until the verdict thread
 * (daemon/verdict.c) has filled the comparisons table; its row then wins
 * (medians, means and sds, run counts, Hodges-Lehmann change, interval,
 * p, verdict, min_effect).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/spread.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/kfacts.h"
#include "daemon/series_versus.h"
#include "store/alerts.h"
#include "store/dash.h"
#include "store/jobs.h"
#include "store/mail_commands.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "store/series.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/layout.h"
#include "web/reply.h"
#include "web/rows.h"
#include "web/rows_dash.h"
#include "web/rows_series.h"
#include "web/sides.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- comparisons of a pair ----------------------------------------- */

/* A pair as the store read it: the rows borrow its strings. */
struct pair_read {
	struct store_pair p;
	struct store_values vals;
	struct store_run_metas meta; /* its runs (the sides' kernels) */
};

struct cmp_set {
	struct view_cmp_row *rows;
	size_t n, cap;
	struct view_job_ref *jobs;
	size_t njobs, jcap;
	struct pair_read **reads;
	size_t nreads;
};

static void
cmp_set_free(struct cmp_set *c)
{
	size_t i;

	free(c->rows);
	free(c->jobs);
	for (i = 0; i < c->nreads; i++) {
		store_pair_release(&c->reads[i]->p);
		store_values_release(&c->reads[i]->vals);
		store_run_metas_release(&c->reads[i]->meta);
		free(c->reads[i]);
	}
	free(c->reads);
}

static double
min_effect(struct ctx *x, const char *job, const char *metric)
{
	const struct job_config *jc = job ? dconf_job(x->conf, job) : NULL;
	size_t i;

	for (i = 0; jc && metric && i < jc->nmetrics; i++)
		if (strcmp(jc->metrics[i].name, metric) == 0)
			return jc->metrics[i].min_effect_pct;
	return 1.0;
}

static void
add_job_ref(struct cmp_set *c, const struct store_job *j)
{
	struct view_job_ref *r;

	if (c->njobs == c->jcap) {
		c->jcap = c->jcap ? 2 * c->jcap : 8;
		c->jobs = xreallocarray(c->jobs, c->jcap, sizeof(*c->jobs));
	}
	r = &c->jobs[c->njobs++];
	memset(r, 0, sizeof(*r));
	r->id = j->id;
	r->role = j->role;
	r->host = j->host;
	r->state = j->state;
	r->progress = j->progress;
	r->error = j->error;
	r->runs_done = (int)j->runs_done;
}

static struct view_cmp_row *
new_row(struct cmp_set *c)
{
	struct view_cmp_row *r;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->rows = xreallocarray(c->rows, c->cap, sizeof(*c->rows));
	}
	r = &c->rows[c->n++];
	memset(r, 0, sizeof(*r));
	r->base_median = r->cand_median = r->change_pct = NAN;
	r->base_mean = r->base_sd = r->cand_mean = r->cand_sd = NAN;
	r->ci_low = r->ci_high = r->p = NAN;
	r->memcg_tax_pct = r->memcg_tax_base_pct = NAN;
	r->charge_share_pct = r->charge_share_base_pct = NAN;
	return r;
}

/* The values of metric on one side of a pair (free them), *n of them. */
static double *
side_values(const struct store_values *vals, const char *metric,
    const char *role, size_t *n)
{
	double *v = NULL;
	size_t i, k = 0, cap = 0;

	for (i = 0; i < vals->n; i++) {
		const char *mn = vals->v[i].metric, *r = vals->v[i].role;

		if (!mn || !r || strcmp(mn, metric) || strcmp(r, role))
			continue;
		if (k == cap) {
			cap = cap ? 2 * cap : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[k++] = vals->v[i].value;
	}
	*n = k;
	return v;
}

/* The median of the values of metric on one side of a pair. */
static double
side_median(const struct store_values *vals, const char *metric,
    const char *role, int *n)
{
	size_t k;
	double *v = side_values(vals, metric, role, &k), m;

	*n = (int)k;
	m = analysis_median_inplace(v, k);
	free(v);
	return m;
}

/* The runner's charge-path metric (runners/profile.h, docs/MEMCG.md). */
#define CHARGE_SHARE_METRIC "memcg.charge_path_share_pct"
/* Charge-path symbols shown side by side on a pair page. */
#define PAIR_SYMBOLS 15
/* The verdicts' memcg tax comparisons (analysis/memcg_tax.h). */
#define TAX_PREFIX "memcg_tax."

/* The memcg tax of row's metric from the pair's comparisons, if any. */
static void
tax_of(struct view_cmp_row *row, const struct store_pair *p)
{
	size_t i, pl = strlen(TAX_PREFIX);

	for (i = 0; i < p->ncmps; i++) {
		const struct store_comparison *o = &p->cmps[i];
		const char *m = o->metric;

		if (m == NULL || strncmp(m, TAX_PREFIX, pl) != 0 ||
		    strcmp(m + pl, row->metric) != 0)
			continue;
		row->memcg_tax_pct = (o->cand_median - 1) * 100;
		row->memcg_tax_base_pct = (o->base_median - 1) * 100;
		row->memcg_tax_verdict = o->verdict;
	}
}

/*
 * The pairs ids[0..n) into c->reads, each with its values and its runs,
 * a read of each kind for all of them: 0, or a store error (ERR_NOTFOUND:
 * a pair is gone).
 */
static int
pairs_read(struct ctx *x, struct cmp_set *c, const int64_t *ids, size_t n)
{
	struct store_pair *p = xcalloc(n + 1, sizeof(*p));
	struct store_values *vals = xcalloc(n + 1, sizeof(*vals));
	struct store_run_metas *meta = xcalloc(n + 1, sizeof(*meta));
	size_t i;
	int r;

	r = store_pair_get_many(x->s, p, ids, n);
	for (i = 0; r == 0 && i < n; i++)
		if (p[i].id == 0) /* gone: the store's error says which */
			r = store_pair_get(x->s, &p[i], ids[i]);
	if (r == 0)
		r = store_pairs_values_runs(x->s, vals, meta, ids, n);
	c->reads =
	    xreallocarray(c->reads, c->nreads + n + 1, sizeof(*c->reads));
	for (i = 0; i < n; i++) {
		struct pair_read *rd = xcalloc(1, sizeof(*rd));

		rd->p = p[i];
		rd->vals = vals[i];
		rd->meta = meta[i];
		c->reads[c->nreads++] = rd;
	}
	free(p);
	free(vals);
	free(meta);
	return r;
}

/* Adds the rows of the pair read rd (one per metric) and its two jobs
 * to c. */
static void
pair_rows(struct ctx *x, struct cmp_set *c, const struct pair_read *rd)
{
	const struct store_pair *pair = &rd->p;
	const struct store_values *vals = &rd->vals;
	int64_t id = pair->id;
	const char *last = NULL;
	size_t i, first = c->n;
	double share = NAN, share_base = NAN;
	int n;

	for (i = 0; i < pair->jobs.n; i++)
		add_job_ref(c, &pair->jobs.v[i]);
	for (i = 0; i < vals->n; i++) {
		const struct store_value *o = &vals->v[i];
		const char *m = o->metric;
		struct view_cmp_row *row;

		if (m == NULL || (last && strcmp(last, m) == 0))
			continue;
		last = m;
		if (strcmp(m, CHARGE_SHARE_METRIC) == 0) {
			/* Its own row too: base and candidate share. */
			share = side_median(vals, m, "candidate", &n);
			share_base = side_median(vals, m, "base", &n);
		}
		row = new_row(c);
		row->metric = m;
		row->unit = o->unit;
		row->better = o->better;
		row->base_median = side_median(vals, m, "base", &row->base_n);
		row->cand_median =
		    side_median(vals, m, "candidate", &row->cand_n);
		/* Until the comparison below: the change as the verdict
		 * defines it (analysis/analysis.h), not a median ratio, and
		 * each side's mean and sd as the verdict stores them. */
		{
			size_t nb, nc;
			double *b = side_values(vals, m, "base", &nb),
			       *cv = side_values(vals, m, "candidate", &nc);
			struct spread sb, sc;

			row->change_pct = analysis_change_pct(b, nb, cv, nc);
			spread_of(&sb, b, nb);
			spread_of(&sc, cv, nc);
			row->base_mean = sb.mean;
			row->base_sd = sb.sd;
			row->cand_mean = sc.mean;
			row->cand_sd = sc.sd;
			free(b);
			free(cv);
		}
	}
	/* What the comparisons table says wins over the local medians. */
	for (i = 0; i < pair->ncmps; i++) {
		const struct store_comparison *o = &pair->cmps[i];
		const char *m = o->metric;
		struct view_cmp_row *row = NULL;
		size_t k;

		for (k = first; m && k < c->n; k++)
			if (strcmp(c->rows[k].metric, m) == 0)
				row = &c->rows[k];
		if (m == NULL)
			continue;
		if (row == NULL) {
			/* A row of the verdict's own (a memcg tax): what the
			 * comparison says about it. */
			row = new_row(c);
			row->metric = m;
			row->unit = o->unit;
			row->better = o->better;
			row->base_n = o->n_base < 0 ? 0 : (int)o->n_base;
			row->cand_n = o->n_cand < 0 ? 0 : (int)o->n_cand;
		}
		if (isfinite(o->base_median))
			row->base_median = o->base_median;
		if (isfinite(o->cand_median))
			row->cand_median = o->cand_median;
		if (isfinite(o->change_pct))
			row->change_pct = o->change_pct;
		/* The verdict's means, sds and run counts are of the values
		 * it compared (the runs below max_runs), as its medians; a
		 * row written before schema v33 has no mean: unknown, not
		 * one of runs that may differ from those it compared. */
		row->base_mean = o->has_spread ? o->base_mean : NAN;
		row->base_sd = o->has_spread ? o->base_sd : NAN;
		row->cand_mean = o->has_spread ? o->cand_mean : NAN;
		row->cand_sd = o->has_spread ? o->cand_sd : NAN;
		if (o->n_base >= 0)
			row->base_n = (int)o->n_base;
		if (o->n_cand >= 0)
			row->cand_n = (int)o->n_cand;
		row->ci_low = o->ci_low;
		row->ci_high = o->ci_high;
		row->p = o->p;
		row->verdict = o->verdict;
		/* The min_effect the verdict used (NAN: the config's). */
		row->min_effect = o->min_effect;
	}
	for (i = first; i < c->n; i++) {
		struct view_cmp_row *row = &c->rows[i];

		row->pair_id = id;
		row->suspect = pair->suspect;
		row->host = pair->host;
		row->bench = pair->name;
		row->point = pair->point;
		if (!isfinite(row->min_effect) || row->min_effect <= 0)
			row->min_effect =
			    min_effect(x, row->bench, row->metric);
		row->base_job = pair->jobs.n == 2 ? pair->jobs.v[0].id : 0;
		row->cand_job = pair->jobs.n == 2 ? pair->jobs.v[1].id : 0;
		if (row->better && strcmp(row->better, "higher") == 0 &&
		    strncmp(row->metric, TAX_PREFIX, strlen(TAX_PREFIX)) != 0) {
			tax_of(row, pair);
			row->charge_share_pct = share;
			row->charge_share_base_pct = share_base;
		}
	}
}

/*
 * Each row's CPU family, from its host's CPU model as the runner
 * registered it (the inventory its pair was read with), when the rows
 * are of two hosts or more (the summary across hosts groups them by
 * family).
 */
static void
rows_families(struct ctx *x, struct cmp_set *c)
{
	struct web_hosts_facts hosts;
	const struct web_host_facts *hf;
	const struct store_pair **pairs;
	size_t i;
	int many = 0;

	for (i = 1; i < c->n && !many; i++)
		many = c->rows[i].host && c->rows[0].host &&
		    strcmp(c->rows[i].host, c->rows[0].host) != 0;
	if (!many)
		return;
	pairs = xcalloc(c->nreads + 1, sizeof(*pairs));
	for (i = 0; i < c->nreads; i++)
		pairs[i] = &c->reads[i]->p;
	web_pairs_hosts_facts(x, &hosts, pairs, c->nreads);
	for (i = 0; i < c->n; i++)
		if ((hf = web_hosts_facts_find(&hosts, c->rows[i].host)))
			c->rows[i].family = hf->family;
	web_hosts_facts_release(&hosts);
	free(pairs);
}

/* Both sides of every pair read (web/sides.h). */
static int
cmp_sides(
    struct ctx *x, const struct cmp_set *c, struct view_side **out, size_t *n)
{
	const struct store_pair **pairs =
	    xcalloc(c->nreads + 1, sizeof(*pairs));
	struct store_run_metas *metas = xcalloc(c->nreads + 1, sizeof(*metas));
	size_t i;
	int r;

	for (i = 0; i < c->nreads; i++) {
		pairs[i] = &c->reads[i]->p;
		metas[i] = c->reads[i]->meta; /* borrowed */
	}
	r = web_sides_get(x, pairs, metas, c->nreads, out, n);
	free(metas);
	free(pairs);
	return r;
}

/* Rows for a list of pair ids ({"pairs": [...]}), at most a page. */
static int
pairs_rows(struct ctx *x, struct cmp_set *c, json_t *pairs)
{
	int64_t ids[PAIRS_PER_PAGE];
	size_t i, n = 0, first = c->nreads;
	json_t *v;
	int r;

	json_array_foreach(pairs, i, v)
	{
		if (i == PAIRS_PER_PAGE)
			break;
		ids[n++] = json_integer_value(v);
	}
	if ((r = pairs_read(x, c, ids, n)) != 0)
		return r;
	for (i = first; i < c->nreads; i++)
		pair_rows(x, c, c->reads[i]);
	rows_families(x, c);
	return 0;
}

static json_t *
rows_json(const struct cmp_set *c)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct view_cmp_row *r = &c->rows[i];
		json_t *o = json_object();

		json_object_set_new(o, "pair_id", json_integer(r->pair_id));
		/* docs/HOST.md: the sides ran under different host states. */
		json_object_set_new(o, "suspect",
		    r->suspect ? json_string(r->suspect) : json_null());
		json_object_set_new(
		    o, "host", r->host ? json_string(r->host) : json_null());
		json_object_set_new(
		    o, "bench", r->bench ? json_string(r->bench) : json_null());
		json_object_set_new(
		    o, "point", r->point ? json_string(r->point) : json_null());
		json_object_set_new(o, "metric", json_string(r->metric));
		json_object_set_new(
		    o, "unit", r->unit ? json_string(r->unit) : json_null());
		json_object_set_new(o, "better",
		    r->better ? json_string(r->better) : json_null());
		json_object_set_new(
		    o, "base_median", web_jnumber(r->base_median));
		json_object_set_new(
		    o, "cand_median", web_jnumber(r->cand_median));
		json_object_set_new(o, "base_mean", web_jnumber(r->base_mean));
		json_object_set_new(o, "base_sd", web_jnumber(r->base_sd));
		json_object_set_new(o, "base_sd_pct",
		    web_jnumber(spread_pct(r->base_mean, r->base_sd)));
		json_object_set_new(o, "cand_mean", web_jnumber(r->cand_mean));
		json_object_set_new(o, "cand_sd", web_jnumber(r->cand_sd));
		json_object_set_new(o, "cand_sd_pct",
		    web_jnumber(spread_pct(r->cand_mean, r->cand_sd)));
		json_object_set_new(
		    o, "change_pct", web_jnumber(r->change_pct));
		json_object_set_new(o, "ci_low", web_jnumber(r->ci_low));
		json_object_set_new(o, "ci_high", web_jnumber(r->ci_high));
		json_object_set_new(o, "p", web_jnumber(r->p));
		json_object_set_new(
		    o, "min_effect_pct", web_jnumber(r->min_effect));
		json_object_set_new(o, "base_n", json_integer(r->base_n));
		json_object_set_new(o, "cand_n", json_integer(r->cand_n));
		json_object_set_new(o, "verdict",
		    json_string(r->verdict ? r->verdict : "unknown"));
		json_object_set_new(
		    o, "memcg_tax_pct", web_jnumber(r->memcg_tax_pct));
		json_object_set_new(o, "memcg_tax_base_pct",
		    web_jnumber(r->memcg_tax_base_pct));
		json_object_set_new(o, "memcg_tax_verdict",
		    r->memcg_tax_verdict ? json_string(r->memcg_tax_verdict)
		                         : json_null());
		json_object_set_new(
		    o, "charge_path_pct", web_jnumber(r->charge_share_pct));
		json_object_set_new(o, "charge_path_base_pct",
		    web_jnumber(r->charge_share_base_pct));
		json_object_set_new(o, "cpu_family",
		    r->family ? json_string(r->family) : json_null());
		json_object_set_new(o, "base_job", json_integer(r->base_job));
		json_object_set_new(o, "cand_job", json_integer(r->cand_job));
		json_array_append_new(arr, o);
	}
	return arr;
}

static const char no_analysis[] =
    "Verdicts, confidence intervals and p-values appear once the analysis "
    "has compared the runs; until then the medians of both sides and "
    "their change are shown and the verdict is unknown.";

static int
any_unknown(const struct cmp_set *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->rows[i].verdict == NULL)
			return 1;
	return 0;
}

/* ---- commit, series, pair ------------------------------------------ */

/* vN vs vN-1 (daemon/series_versus) into *vs and, as
 * "versus_previous", into o. */
static int
series_versus_add(
    struct ctx *x, json_t *o, struct series_versus *vs, int64_t id)
{
	struct err e = { 0 };
	int r = series_versus(vs, x->s, x->conf, id, &e);

	if (r != 0) {
		log_warnx(
		    "series %lld: vN vs vN-1: %s", (long long)id, err_msg(&e));
		return r == ERR_NOTFOUND ? r : -1;
	}
	json_object_set_new(o, "versus_previous", rows_series_versus_json(vs));
	return 0;
}

/* The commands by mail a commit or series page lists at most (newest). */
#define PAGE_COMMANDS 100

/* The rows of a commit (sha), series (id, its row in *sr and its vN vs
 * vN-1 in *vs) or pair (id); a commit's or series' commands by mail in
 * *mc; all the caller's to release. */
static int
target_rows(struct ctx *x, enum view_target kind, const char *id,
    struct cmp_set *c, json_t **out_info, struct store_series_row *sr,
    struct series_versus *vs, struct store_mail_commands *mc)
{
	struct store_commit_page cp;
	json_t *o = NULL;
	int64_t n;
	int r;

	*out_info = NULL;
	switch (kind) {
	case VIEW_COMMIT:
		if ((r = store_commit_page_get(x->s, &cp, id)) != 0)
			return r;
		/* The commit's JSON (the API's "commit", "pairs" and
		 * "series"), which the page reads too. */
		o = web_keep(x, rows_commit_page_json(&cp));
		store_commit_page_release(&cp);
		*out_info = o;
		if (store_mail_commands_of_commit(x->s, mc,
		        web_jstr(json_object_get(o, "commit"), "sha"),
		        PAGE_COMMANDS) != 0)
			return -1;
		json_object_set_new(o, "commands", rows_mail_commands_json(mc));
		return pairs_rows(x, c, json_object_get(o, "pairs"));
	case VIEW_SERIES:
		if ((n = web_parse_id(id, NULL)) == 0)
			return ERR_NOTFOUND;
		if ((r = store_series_page_get(x->s, sr, n)) != 0)
			return r;
		o = web_keep(x, rows_series_page_json(sr));
		*out_info = o;
		if ((r = series_versus_add(x, o, vs, n)) != 0)
			return r;
		{
			struct store_series_latency lat;

			if (store_series_latency_get(x->s, &lat, n) != 0)
				return -1;
			json_object_set_new(
			    o, "latency", rows_series_latency_json(&lat));
		}
		if (store_mail_commands_of_series(x->s, mc, n, PAGE_COMMANDS) !=
		    0)
			return -1;
		json_object_set_new(o, "commands", rows_mail_commands_json(mc));
		return pairs_rows(x, c, json_object_get(o, "pairs"));
	case VIEW_PAIR:
		/* The pair itself is c->reads[0]->p. */
		if ((n = web_parse_id(id, NULL)) == 0)
			return ERR_NOTFOUND;
		if ((r = pairs_read(x, c, &n, 1)) != 0)
			return r;
		pair_rows(x, c, c->reads[0]);
		return 0;
	}
	return ERR_NOTFOUND;
}

/* The page's unknown (NAN) for any figure that is not finite, as the
 * JSON's null read back gave before. */
static double
known(double v)
{
	return isfinite(v) ? v : NAN;
}

/* The rows of vN vs vN-1 for the page (they point into vs); *out is the
 * caller's. */
static void
versus_view(struct view_commit *v, const struct series_versus *vs,
    struct view_versus_row **out)
{
	size_t k;

	*out = NULL;
	if (vs->prev_id == 0)
		return;
	v->prev_id = vs->prev_id;
	v->prev_version = vs->prev_version;
	*out = xcalloc(vs->nrows ? vs->nrows : 1, sizeof(**out));
	for (k = 0; k < vs->nrows; k++) {
		const struct series_versus_row *r = &vs->rows[k];
		struct view_versus_row *w = &(*out)[k];

		w->host = r->host;
		w->job = r->job;
		w->point = r->point;
		w->metric = r->metric;
		w->unit = r->unit;
		w->prev_median = known(r->prev_median);
		w->median = known(r->median);
		w->change_pct = known(r->change_pct);
		w->ci_low = known(r->ci_low);
		w->ci_high = known(r->ci_high);
		w->verdict = r->verdict;
	}
	v->versus = *out;
	v->nversus = vs->nrows;
}

/* The commands by mail for the page (they point into mc); *out is the
 * caller's to free. */
static struct view_mail_command *
commands_view(struct view_commit *v, const struct store_mail_commands *mc)
{
	struct view_mail_command *out =
	    xcalloc(mc->n ? mc->n : 1, sizeof(*out));
	size_t k;

	for (k = 0; k < mc->n; k++) {
		const struct store_mail_command *c = &mc->v[k];

		out[k].sender = c->sender;
		out[k].command = c->command;
		out[k].parsed = c->parsed;
		out[k].outcome = c->outcome;
		out[k].reason = c->reason;
		out[k].job = c->job;
		out[k].commit = c->commit_sha;
		out[k].line = c->line;
		out[k].at = c->created;
		out[k].made_series = c->made_series_id;
		out[k].pairs = c->pairs;
		out[k].npairs = c->npairs;
	}
	v->commands = out;
	v->ncommands = mc->n;
	return out;
}

static int
valid_id(enum view_target kind, const char *id, const char **end)
{
	const char *p = id;

	if (kind == VIEW_COMMIT)
		while (isxdigit((unsigned char)*p))
			p++;
	else
		while (isdigit((unsigned char)*p))
			p++;
	*end = p;
	return p > id && p - id <= 64;
}

/* Pair page: the kernel each side ran and the same-build warning
 * (daemon/kfacts.h), kept alive with the page's other JSON. */
static void
pair_kernels(struct ctx *x, struct view_commit *v,
    const struct store_pair *pair, const struct store_run_metas *rows)
{
	struct kfacts_pair k;
	struct buf b = BUF_INIT(CAP_ERRMSG);
	int i;

	kfacts_pair(&k, rows, pair->jobs.n == 2 ? pair->jobs.v[0].commit : NULL,
	    pair->jobs.n == 2 ? pair->jobs.v[1].commit : NULL);
	for (i = 0; i < 2; i++) {
		buf_reset(&b);
		kfacts_line(&b, &k.side[i]);
		v->kernel[i] =
		    json_string_value(web_keep(x, json_string(b.data)));
	}
	if (k.warning[0] != '\0')
		v->kernel_warning =
		    json_string_value(web_keep(x, json_string(k.warning)));
	buf_release(&b);
}

/*
 * What the page compared: the distinct base commits of its pairs, in the
 * order read (the newest pair's first), into v->bases (free the array;
 * its strings are the pairs'), and on a pair page the candidate's.
 */
static struct view_commit_ref *
compared_commits(const struct cmp_set *c, struct view_commit *v)
{
	struct view_commit_ref *out =
	    xcalloc(c->nreads ? c->nreads : 1, sizeof(*out));
	size_t i, k, n = 0;

	for (i = 0; i < c->nreads; i++) {
		const struct store_jobs *j = &c->reads[i]->p.jobs;
		const char *sha = j->n == 2 ? j->v[0].commit : NULL;

		if (sha == NULL)
			continue;
		for (k = 0; k < n && strcmp(out[k].sha, sha) != 0; k++)
			;
		if (k < n)
			continue;
		out[n].sha = sha;
		out[n++].subject = j->v[0].subject;
	}
	v->bases = out;
	v->nbases = n;
	if (v->kind == VIEW_PAIR && c->nreads && c->reads[0]->p.jobs.n == 2) {
		v->cand.sha = c->reads[0]->p.jobs.v[1].commit;
		v->cand.subject = c->reads[0]->p.jobs.v[1].subject;
	}
	return out;
}

int
web_target_html(
    struct ctx *x, enum view_target kind, const char *rest, struct buf *out)
{
	struct cmp_set c = { 0 };
	struct view_commit v = { 0 };
	struct store_series_row sr = { 0 };
	struct series_versus vs = { 0 };
	struct store_mail_commands mc = { 0 };
	struct view_mail_command *vc = NULL;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	json_t *info, *ci, *se;
	char id[72];
	char title[512], note[CAP_ERRMSG + 64];
	struct view_patch *pv = NULL;
	struct view_versus_row *vv = NULL;
	struct store_alert *al = NULL;
	struct view_alert *va = NULL;
	char **shown = NULL; /* the alerts' targets and errors, redacted */
	size_t nal = 0;
	struct chargepath_sym syms[PAIR_SYMBOLS];
	json_t *blobs = NULL;
	const struct store_run_metas *prof;
	const struct store_pair *pr;
	struct view_commit_ref *bases;
	struct view_side *sides = NULL;
	size_t np = 0, k;
	int r;

	snprintf(id, sizeof(id), "%s", rest);
	if ((r = target_rows(x, kind, id, &c, &info, &sr, &vs, &mc)) != 0 ||
	    (r = cmp_sides(x, &c, &sides, &v.nsides)) != 0) {
		free(sides);
		cmp_set_free(&c);
		store_series_release(&sr);
		series_versus_release(&vs);
		store_mail_commands_release(&mc);
		return r;
	}
	v.kind = kind;
	v.id = id;
	v.sides = sides;
	switch (kind) {
	case VIEW_COMMIT:
		ci = json_object_get(info, "commit");
		se = json_object_get(info, "series");
		v.id = web_jstr(ci, "sha");
		v.title = web_jstr(ci, "subject");
		v.author = web_jstr(ci, "author");
		v.tree = web_jstr(ci, "tree");
		v.branch = web_jstr(ci, "branches");
		v.base = "the parent commit (or the job's baseline)";
		v.time = web_jint(ci, "time");
		if (json_is_object(se)) {
			v.series_id = web_jint(se, "id");
			v.series_title = web_jstr(se, "title");
		}
		if (v.id != NULL) {
			struct store_alert_filter f = { 0 };

			f.sha = v.id;
			f.limit = 50;
			if (store_alert_list(x->s, &al, &nal, &f, NULL) != 0)
				nal = 0;
			va = xcalloc(nal + 1, sizeof(*va));
			shown = xcalloc(2 * nal + 1, sizeof(*shown));
			for (k = 0; k < nal; k++) {
				web_alert_row(&va[k], &al[k], &shown[2 * k]);
				va[k].sha = NULL; /* the page's own commit */
			}
			v.alerts = va;
			v.nalerts = nal;
		}
		vc = commands_view(&v, &mc);
		break;
	case VIEW_SERIES:
		v.title = sr.title;
		v.author = sr.author;
		v.tree = sr.tree ? sr.tree : sr.inbox;
		v.branch = sr.branch ? sr.branch : "";
		v.base = sr.base_sha ? sr.base_sha : "the series' base commit";
		v.time = sr.has_time ? sr.time : 0;
		np = sr.npatches;
		pv = xcalloc(np ? np : 1, sizeof(*pv));
		for (k = 0; k < np; k++) {
			const struct store_series_patch_row *p = &sr.patches[k];

			pv[k].seq = p->seq;
			pv[k].subject = p->subject;
			pv[k].author = p->author;
			pv[k].commit = p->sha;
			pv[k].verdict = layout_worst_verdict(p->verdicts);
		}
		v.patches = pv;
		v.npatches = np;
		v.branch_tag = sr.branch_tag;
		v.fallback = sr.fallback;
		v.latency = json_string_value(json_object_get(
		    json_object_get(info, "latency"), "summary"));
		v.version = sr.version < 0 ? 0 : sr.version;
		versus_view(&v, &vs, &vv);
		vc = commands_view(&v, &mc);
		if (sr.error != NULL) {
			snprintf(note, sizeof(note), "series %s: %s",
			    sr.state ? sr.state : "?", sr.error);
			v.note = note;
		} else if (sr.state != NULL &&
		    strcmp(sr.state, "applied") != 0) {
			snprintf(note, sizeof(note), "series %s", sr.state);
			v.note = note;
		}
		break;
	case VIEW_PAIR:
		pr = &c.reads[0]->p;
		snprintf(title, sizeof(title), "%s %s",
		    pr->name ? pr->name : "pair", pr->point ? pr->point : "");
		v.title = title;
		v.time = pr->created;
		v.suspect = pr->suspect;
		/* What the pair cost: rounds, and boots of kernel jobs. */
		v.has_cost = pr->jobs.n == 2;
		for (k = 0; k < 2; k++) {
			v.rounds[k] = pr->rounds[k];
			v.boots[k] = pr->boots[k];
			v.kernel_job[k] = pr->kernel[k];
		}
		prof = &c.reads[0]->meta;
		v.nsymbols = chargepath_diff(
		    syms, PAIR_SYMBOLS, v.profiled_runs, prof, &blobs);
		web_keep(x, blobs);
		v.symbols = syms;
		pair_kernels(x, &v, pr, prof);
		break;
	}
	bases = compared_commits(&c, &v);
	v.rows = c.rows;
	v.nrows = c.n;
	v.jobs = c.jobs;
	v.njobs = c.njobs;
	/* The series tip is what was measured: its patch row shows the
	 * worst verdict of the comparisons; the patches below it were not
	 * measured on their own. */
	for (k = 0; kind == VIEW_SERIES && k < np; k++) {
		const char *tip = sr.commit_sha;
		size_t i;

		if (pv[k].commit == NULL || tip == NULL ||
		    strcmp(pv[k].commit, tip) != 0) {
			continue;
		}
		for (i = 0; i < c.n; i++)
			if (strcmp(c.rows[i].verdict ? c.rows[i].verdict : "",
			        "info") != 0 &&
			    (pv[k].verdict == NULL ||
			        layout_verdict_rank(c.rows[i].verdict) <
			            layout_verdict_rank(pv[k].verdict)))
				pv[k].verdict = c.rows[i].verdict;
	}
	if (v.note == NULL && any_unknown(&c))
		v.note = no_analysis;
	view_commit_render(&b, &v);
	free(bases);
	free(sides);
	for (k = 0; shown != NULL && k < 2 * nal; k++)
		free(shown[k]);
	free(shown);
	free(va);
	store_alerts_release(al, nal);
	free(pv);
	free(vv);
	free(vc);
	cmp_set_free(&c);
	store_series_release(&sr);
	series_versus_release(&vs);
	store_mail_commands_release(&mc);
	*out = b;
	return 0;
}

static void
target_page(struct ctx *x, enum view_target kind)
{
	struct buf b;
	const char *end;
	int r;

	if (!valid_id(kind, x->rest, &end) || *end != '\0') {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	if ((r = web_target_html(x, kind, x->rest, &b)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	reply_page(x, 200, &b);
}

void
web_commit(struct ctx *x)
{
	target_page(x, VIEW_COMMIT);
}

void
web_series(struct ctx *x)
{
	target_page(x, VIEW_SERIES);
}

void
web_pair(struct ctx *x)
{
	target_page(x, VIEW_PAIR);
}

int
web_target_json(
    struct ctx *x, enum view_target kind, const char *id, json_t **out)
{
	struct cmp_set c = { 0 };
	struct store_series_row sr = { 0 };
	struct series_versus vs = { 0 };
	struct store_mail_commands mc = { 0 };
	struct view_side *sides = NULL;
	size_t nsides = 0;
	json_t *info;
	int r;

	*out = NULL;
	r = target_rows(x, kind, id, &c, &info, &sr, &vs, &mc);
	if (r == 0)
		r = cmp_sides(x, &c, &sides, &nsides);
	store_series_release(&sr);
	series_versus_release(&vs);
	store_mail_commands_release(&mc);
	if (r != 0) {
		free(sides);
		cmp_set_free(&c);
		return r;
	}
	*out = kind == VIEW_PAIR ? json_object() : json_deep_copy(info);
	json_object_set_new(*out, "sides", web_sides_json(sides, nsides));
	json_object_set_new(*out, "comparisons", rows_json(&c));
	free(sides);
	cmp_set_free(&c);
	return 0;
}

static void
target_json(struct ctx *x, enum view_target kind, const char *id)
{
	json_t *o;
	const char *end;
	int r;

	if (id == NULL || !valid_id(kind, id, &end) || *end != '\0') {
		reply_err(x, 404, "expected a commit sha or a numeric id");
		return;
	}
	if ((r = web_target_json(x, kind, id, &o)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, o);
}

void
web_commit_json(struct ctx *x)
{
	target_json(x, VIEW_COMMIT, x->rest);
}

void
web_series_json(struct ctx *x)
{
	target_json(x, VIEW_SERIES, x->rest);
}

void
web_comparisons_json(struct ctx *x)
{
	if (web_q(x, "commit"))
		target_json(x, VIEW_COMMIT, web_q(x, "commit"));
	else if (web_q(x, "series"))
		target_json(x, VIEW_SERIES, web_q(x, "series"));
	else if (web_q(x, "pair"))
		target_json(x, VIEW_PAIR, web_q(x, "pair"));
	else
		reply_err(x, 400,
		    "parameter 'commit', 'series' or 'pair' is required");
}
