/*
 * A pair's value rows grouped by metric for the verdict: each side's
 * values with their runs and rounds, the host's other work during each
 * run (docs/ANALYSIS.md, "Other work on the host") and each metric's
 * history since its last shift.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/run_metrics.h"
#include "common/xalloc.h"
#include "daemon/verdict_int.h"

void
verdict_i_vec_add(struct vec *x, double v)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		x->v = xreallocarray(x->v, x->cap, sizeof(*x->v));
	}
	x->v[x->n++] = v;
}

static void
rvec_add(struct rvec *x, int64_t v)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		x->v = xreallocarray(x->v, x->cap, sizeof(*x->v));
	}
	x->v[x->n++] = v;
}

/* Groups the value rows (ordered by metric, role) into w->m. */
static void
group_values(struct work *w)
{
	size_t i;

	for (i = 0; i < w->vals.n; i++) {
		const struct store_value *o = &w->vals.v[i];
		const char *name = o->metric, *role = o->role;
		struct metric *m;

		if (name == NULL || role == NULL)
			continue;
		if (w->n == 0 || strcmp(w->m[w->n - 1].name, name) != 0) {
			if (w->n == w->cap) {
				w->cap = w->cap ? 2 * w->cap : 16;
				w->m =
				    xreallocarray(w->m, w->cap, sizeof(*w->m));
			}
			m = &w->m[w->n++];
			memset(m, 0, sizeof(*m));
			m->name = name;
		}
		m = &w->m[w->n - 1];
		/* The candidate's unit and direction win: it is what is
		 * judged. */
		if (m->unit == NULL || strcmp(role, "candidate") == 0)
			m->unit = o->unit;
		if (m->better == NULL || strcmp(role, "candidate") == 0)
			m->better = o->better;
		verdict_i_vec_add(
		    strcmp(role, "base") == 0 ? &m->base : &m->cand, o->value);
		if (w->round_size > 0)
			rvec_add(
			    strcmp(role, "base") == 0 ? &m->base_r : &m->cand_r,
			    o->run / w->round_size);
		rvec_add(strcmp(role, "base") == 0 ? &m->base_i : &m->cand_i,
		    o->run);
	}
}

/* z: the covariate c of each run in idx; empty when one run has none. */
static void
side_cov(struct vec *z, const struct rvec *idx, const struct vec *c,
    const struct rvec *cidx)
{
	size_t i, j;

	for (i = 0; i < idx->n; i++) {
		for (j = 0; j < cidx->n && cidx->v[j] != idx->v[i]; j++)
			;
		if (j == cidx->n || j >= c->n) {
			z->n = 0;
			return;
		}
		verdict_i_vec_add(z, c->v[j]);
	}
}

/*
 * Other work on the host (docs/ANALYSIS.md): every metric's runs get the
 * share of the host's CPU that other work used during them, the
 * runner's OTHER_CPU_METRIC of the same run, unless the job says
 * adjust_other_work: false.  A metric with a run that lacks it gets
 * none.
 */
static void
attach_other_work(struct work *w)
{
	const struct metric *c = NULL;
	size_t i;

	if (json_is_false(json_object_get(w->spec, "adjust_other_work")))
		return;
	for (i = 0; i < w->n; i++)
		if (strcmp(w->m[i].name, OTHER_CPU_METRIC) == 0)
			c = &w->m[i];
	if (c == NULL)
		return;
	for (i = 0; i < w->n; i++) {
		if (&w->m[i] == c)
			continue;
		side_cov(
		    &w->m[i].base_z, &w->m[i].base_i, &c->base, &c->base_i);
		side_cov(
		    &w->m[i].cand_z, &w->m[i].cand_i, &c->cand, &c->cand_i);
	}
}

/* One base job's runs in a metric's history: hist.v[off, off + n). */
struct hjob {
	size_t off, n;
	double median;
};

struct hjobs {
	struct hjob *j;
	size_t n, cap;
};

static void
hjob_add(struct hjobs *js, const struct vec *h, size_t off)
{
	if (h->n == off)
		return;
	if (js->n == js->cap) {
		js->cap = js->cap ? 2 * js->cap : 16;
		js->j = xreallocarray(js->j, js->cap, sizeof(*js->j));
	}
	js->j[js->n].off = off;
	js->j[js->n].n = h->n - off;
	js->j[js->n].median = analysis_median(h->v + off, h->n - off);
	js->n++;
}

/*
 * The history is the noise of this host, not the level of the commits its
 * bases measured: where the base jobs' medians shift (a branch that got 7x
 * faster), only the jobs after the last confirmed shift are kept.  Pooled
 * across the shift, a clean 7x regression after a 7x improvement came out
 * inconclusive (p 0.09): the step looked like noise.  The shift is found
 * by the change-point detector on the job medians, at the metric's
 * min_effect; run-to-run and job-to-job variation within a level stays in.
 */
static void
history_since_shift(struct metric *m, const struct hjobs *js)
{
	struct analysis_cp_opts o;
	struct analysis_cps cps = { NULL, 0, 0, 0 };
	struct err e = { 0 };
	double *med;
	size_t i, from;

	analysis_cp_opts_init(&o);
	if (js->n < 2 * o.min_segment)
		return;
	med = xreallocarray(NULL, js->n, sizeof(*med));
	for (i = 0; i < js->n; i++) {
		if (!(js->j[i].median > 0) || !isfinite(js->j[i].median)) {
			free(med);
			return; /* the analysis will say what is wrong */
		}
		med[i] = js->j[i].median;
	}
	o.min_effect = m->min_effect;
	if (analysis_changepoints(&cps, med, js->n, &o, &e) == 0 && cps.n > 0) {
		from = js->j[cps.cp[cps.n - 1].index].off;
		memmove(m->hist.v, m->hist.v + from,
		    (m->hist.n - from) * sizeof(*m->hist.v));
		m->hist.n -= from;
	}
	analysis_cps_release(&cps);
	free(med);
}

/* Both lists are sorted by metric name (SQLite's BINARY = strcmp); the
 * history's rows of one metric by job, oldest first. */
static void
group_history(struct work *w)
{
	struct hjobs js = { NULL, 0, 0 };
	struct metric *cur = NULL;
	int64_t cur_job = 0;
	size_t i, k = 0, off = 0;

	for (i = 0; i < w->hist.n; i++) {
		const char *name = w->hist.v[i].metric;
		struct metric *m = NULL;
		int64_t id = w->hist.v[i].job;

		if (name == NULL)
			continue;
		while (k < w->n && strcmp(w->m[k].name, name) < 0)
			k++;
		if (k < w->n && strcmp(w->m[k].name, name) == 0)
			m = &w->m[k];
		if (m != cur || id != cur_job) {
			if (cur != NULL)
				hjob_add(&js, &cur->hist, off);
			if (m != cur) {
				if (cur != NULL)
					history_since_shift(cur, &js);
				js.n = 0;
			}
			cur = m;
			cur_job = id;
			off = m ? m->hist.n : 0;
		}
		if (m != NULL)
			verdict_i_vec_add(&m->hist, w->hist.v[i].value);
	}
	if (cur != NULL) {
		hjob_add(&js, &cur->hist, off);
		history_since_shift(cur, &js);
	}
	free(js.j);
}

/* Direction and min_effect from the job spec's metrics, else defaults. */

void
verdict_i_group(struct work *w)
{
	group_values(w);
	attach_other_work(w);
	group_history(w);
}
