/*
 * Verdicts, the memcg tax (docs/MEMCG.md): a pair measured in a nested
 * cgroup and its root sibling on one host give each metric's tax
 * (nested against root) for base and candidate, judged like a metric
 * with its own FDR, and written with the pair's comparisons.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/memcg_tax.h"
#include "common/xalloc.h"
#include "daemon/verdict_int.h"
#include "store/pairs.h"
#include "store/runs.h"

/* ---- memcg tax (docs/MEMCG.md) ---- */

/* A pair that may be a memcg-tax sibling. */
struct sib {
	int64_t id;
	int analysed;
	const char *cg; /* params.cgroup of both specs, or NULL */
	json_t *spec;   /* the candidate's spec (owned) */
	json_t *key;    /* both specs without the cgroup (owned) */
	long chunk;
};

/* A spec without what differs between the points of a cgroup axis. */
static json_t *
spec_key(json_t *spec)
{
	json_t *k = json_deep_copy(spec);

	json_object_del(k, "point");
	json_object_del(json_object_get(k, "params"), "cgroup");
	json_object_del(json_object_get(k, "cgroup"), "path");
	return k;
}

static json_t *
parse_spec(const char *text)
{
	struct err e = { 0 };
	json_t *v = text ? pwjson_parse(text, strlen(text), &e) : NULL;

	if (!json_is_object(v)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

static void
sib_load(struct sib *x, const struct store_vsib *row)
{
	json_t *b = parse_spec(row->base_spec_json);
	const char *bcg, *ccg;

	memset(x, 0, sizeof(*x));
	x->id = row->pair_id;
	x->analysed = row->analysed;
	x->chunk = -1;
	x->spec = parse_spec(row->cand_spec_json);
	if (b == NULL || x->spec == NULL) {
		json_decref(b);
		return;
	}
	bcg = verdict_i_jstr(json_object_get(b, "params"), "cgroup");
	ccg = verdict_i_jstr(json_object_get(x->spec, "params"), "cgroup");
	/* Only a cgroup axis (both sides placed alike) makes a tax. */
	if (bcg != NULL && ccg != NULL && strcmp(bcg, ccg) == 0) {
		x->cg = ccg;
		x->key = json_pack("{s:o, s:o}", "base", spec_key(b), "cand",
		    spec_key(x->spec));
	}
	json_decref(b);
}

/* The value rows of one role and metric as runs; *n of them. */
static struct memcg_tax_run *
runs_of(const struct store_values *vals, const char *role, const char *metric,
    size_t *n)
{
	struct memcg_tax_run *v = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < vals->n; i++) {
		const struct store_value *o = &vals->v[i];

		if (o->metric == NULL || o->role == NULL ||
		    strcmp(o->metric, metric) || strcmp(o->role, role))
			continue;
		v = xreallocarray(v, *n + 1, sizeof(*v));
		v[*n].idx = (long long)o->run;
		v[*n].value = o->value;
		(*n)++;
	}
	return v;
}

/* The ratios nested/root of one role; 0 when a side has no run. */
static size_t
tax_side(struct vec *out, const struct store_values *nv,
    const struct store_values *rv, const char *role, const char *metric)
{
	size_t nn, nr, k;
	struct memcg_tax_run *n = runs_of(nv, role, metric, &nn);
	struct memcg_tax_run *r = runs_of(rv, role, metric, &nr);

	out->v = xreallocarray(NULL, nn + 1, sizeof(double));
	out->cap = nn + 1;
	out->n = k = nn && nr ? memcg_tax_ratios(out->v, n, nn, r, nr) : 0;
	free(n);
	free(r);
	return k;
}

/* The effective direction of metric: the job config's, else uploaded. */
static const char *
cfg_better(json_t *spec, const char *metric, const char *uploaded)
{
	const char *b = verdict_i_jstr(
	    json_object_get(json_object_get(spec, "metrics"), metric),
	    "better");

	return b ? b : uploaded;
}

/* Whether the job config names some higher-is-better metric (options
 * of a tax itself do not count). */
static int
cfg_lists_higher(json_t *spec)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(spec, "metrics"), k, v)
	{
		const char *b = verdict_i_jstr(v, "better");

		if (b && strcmp(b, "higher") == 0 &&
		    strncmp(k, MEMCG_TAX_PREFIX, strlen(MEMCG_TAX_PREFIX)) != 0)
			return 1;
	}
	return 0;
}

/* Whether the job config names metric, or options for its tax. */
static int
cfg_names(json_t *spec, const char *metric)
{
	json_t *ms = json_object_get(spec, "metrics");
	char *tax = xasprintf("%s%s", MEMCG_TAX_PREFIX, metric);
	int r = json_object_get(ms, metric) != NULL ||
	    json_object_get(ms, tax) != NULL;

	free(tax);
	return r;
}

static double
cfg_min_effect(json_t *spec, const char *metric)
{
	json_t *me = json_object_get(
	    json_object_get(json_object_get(spec, "metrics"), metric),
	    "min_effect_pct");

	return json_is_number(me) && json_number_value(me) > 0
	    ? json_number_value(me)
	    : 0;
}

/*
 * Benjamini-Hochberg over the nested pair's family: its stored judged
 * comparisons (decided already; they keep their verdicts) and the taxes.
 */
static void
tax_fdr(struct work *w, const struct store_pair *stored)
{
	struct analysis_result *r =
	    xreallocarray(NULL, w->n + stored->ncmps + 1, sizeof(*r));
	size_t i, k = 0, nt;

	for (i = 0; i < w->n; i++)
		if (w->m[i].kind == K_JUDGED)
			r[k++] = w->m[i].res;
	nt = k;
	for (i = 0; i < stored->ncmps; i++) {
		const char *m = stored->cmps[i].metric;
		double p = stored->cmps[i].p;

		if (m == NULL || isnan(p) ||
		    strncmp(m, MEMCG_TAX_PREFIX, strlen(MEMCG_TAX_PREFIX)) == 0)
			continue;
		memset(&r[k], 0, sizeof(r[k]));
		r[k].verdict = ANALYSIS_INCONCLUSIVE;
		r[k].p_value = r[k].p_adjusted = p;
		k++;
	}
	analysis_fdr(r, k, VERDICT_FDR_Q);
	for (i = 0, k = 0; i < w->n && k < nt; i++) {
		if (w->m[i].kind != K_JUDGED)
			continue;
		w->m[i].res = r[k++];
	}
	free(r);
}

/* The memcg tax of nested pair n against root pair r, both final. */
static int
tax_pair(struct store *s, struct verdict_outcome *out, const struct sib *n,
    const struct sib *root, int64_t now)
{
	struct work w;
	struct store_pair stored = { 0 };
	struct store_values rv = { NULL, 0 };
	const char *last = NULL;
	int listed = cfg_lists_higher(n->spec), r = 0;
	size_t i;

	memset(&w, 0, sizeof(w));
	if (store_verdict_pair_get(s, &w.pair, n->id) != 0 ||
	    store_verdict_value_list(s, &w.vals, n->id) != 0 ||
	    store_verdict_value_list(s, &rv, root->id) != 0 ||
	    store_pair_get(s, &stored, n->id) != 0) {
		r = -1;
		goto out;
	}
	for (i = 0; i < w.vals.n; i++) {
		const char *name = w.vals.v[i].metric, *better;
		struct metric *m;
		struct vec b = { NULL, 0, 0 }, c = { NULL, 0, 0 };
		double me;

		if (name == NULL || (last && strcmp(last, name) == 0))
			continue;
		last = name;
		better = cfg_better(n->spec, name, w.vals.v[i].better);
		if (!memcg_tax_taxed(
		        name, better, listed ? cfg_names(n->spec, name) : -1))
			continue;
		/* Unknown (no row) unless all four jobs measured it. */
		if (tax_side(&b, &w.vals, &rv, "base", name) == 0 ||
		    tax_side(&c, &w.vals, &rv, "candidate", name) == 0) {
			free(b.v);
			free(c.v);
			continue;
		}
		if (w.n == w.cap) {
			w.cap = w.cap ? 2 * w.cap : 8;
			w.m = xreallocarray(w.m, w.cap, sizeof(*w.m));
		}
		m = &w.m[w.n++];
		memset(m, 0, sizeof(*m));
		m->own_name = xasprintf("%s%s", MEMCG_TAX_PREFIX, name);
		m->name = m->own_name;
		m->unit = "ratio";
		m->better = "higher";
		m->base = b;
		m->cand = c;
		me = cfg_min_effect(n->spec, m->name);
		if (me <= 0)
			me = cfg_min_effect(n->spec, name);
		m->min_effect = me > 0 ? me : 1.0;
		/* Fixed design: no more runs come for a tax. */
		verdict_i_analyse_metric(&w, m);
	}
	if (w.n == 0)
		goto out;
	tax_fdr(&w, &stored);
	for (i = 0; i < w.n; i++) {
		struct metric *m = &w.m[i];
		char note[sizeof(m->note)];

		if (m->kind == K_JUDGED)
			snprintf(m->note, sizeof(m->note), "%s", m->res.note);
		snprintf(note, sizeof(note),
		    "nested/root per run, runs paired by index with pair "
		    "%lld%s%.160s",
		    (long long)root->id, m->note[0] ? "; " : "", m->note);
		memcpy(m->note, note, sizeof(note));
	}
	{
		struct verdict_outcome t;

		memset(&t, 0, sizeof(t));
		r = verdict_i_write_rows(s, &t, &w, 0, now);
		out->tax += t.metrics;
		out->tax_regressions += t.regressions + t.unstable;
		out->change_points += t.change_points;
	}
out:
	store_values_release(&rv);
	store_pair_release(&stored);
	verdict_i_work_release(&w);
	return r;
}

/*
 * After pair_id went final (in the open transaction): the memcg tax of
 * each nested pair of its group whose root pair is final too.  A group:
 * the siblings the store offers (same job, creation time and host) whose
 * specs differ only in the cgroup, cut in id order into runs where no
 * cgroup repeats (two identical submits in one second stay apart).
 */
int
verdict_i_memcg_tax_after(
    struct store *s, struct verdict_outcome *out, int64_t pair_id, int64_t now)
{
	struct store_vsibs rows;
	struct sib *x = NULL, *self = NULL, *root = NULL;
	size_t n, i, j, start = 0;
	long chunk = 0;
	int r = 0;

	if (store_verdict_sibling_list(s, &rows, pair_id) != 0)
		return -1;
	n = rows.n;
	x = xcalloc(n + 1, sizeof(*x));
	for (i = 0; i < n; i++) {
		sib_load(&x[i], &rows.v[i]);
		if (x[i].id == pair_id)
			self = &x[i];
	}
	if (self == NULL || self->cg == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (x[i].cg == NULL || !json_equal(x[i].key, self->key))
			continue;
		for (j = start; j < i; j++)
			if (x[j].chunk == chunk &&
			    strcmp(x[j].cg, x[i].cg) == 0)
				break;
		if (j < i) {
			chunk++;
			start = i;
		}
		x[i].chunk = chunk;
	}
	for (i = 0; i < n; i++)
		if (x[i].chunk == self->chunk &&
		    strcmp(x[i].cg, MEMCG_TAX_ROOT) == 0)
			root = &x[i];
	if (root == NULL || !root->analysed || !self->analysed)
		goto out;
	for (i = 0; i < n && r == 0; i++) {
		if (x[i].chunk != self->chunk || &x[i] == root ||
		    !x[i].analysed)
			continue;
		/* The pair that just went final brings its own tax, or, as
		 * the root, those of its final nested siblings. */
		if (self == root || &x[i] == self)
			r = tax_pair(s, out, &x[i], root, now);
	}
out:
	for (i = 0; i < n; i++) {
		json_decref(x[i].spec);
		json_decref(x[i].key);
	}
	free(x);
	store_vsibs_release(&rows);
	return r;
}
