/*
 * Error control (analysis.h, docs/ANALYSIS.md): how much of alpha each
 * sequential look of a comparison may spend (a group-sequential
 * boundary), how many runs the next look asks for, and the false
 * discovery rate across the metrics of one pair (Benjamini-Hochberg).
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "common/xalloc.h"

/*
 * Adaptive looks: first, ceil(1.5 x) ..., capped at max.  spend(t) is
 * the Pocock-type (Lan-DeMets) spending function ln(1 + (e - 1) t).
 */
static size_t
next_look(size_t s, size_t max_runs)
{
	size_t n = s + (s + 1) / 2;

	if (n <= s)
		n = s + 1;
	return n > max_runs ? max_runs : n;
}

static double
spend(double t)
{
	if (t > 1)
		t = 1;
	return log1p((M_E - 1) * t);
}

/*
 * Group-sequential boundaries (Armitage, McPherson and Rowe's recursion):
 * the statistic at look j is Z_j = S_j / sqrt(n_j), S_j a sum of n_j
 * independent unit-variance terms.  p[] is the sub-density of Z_j over
 * the continuation region (-c_j, c_j) on GS_GRID Simpson points: the
 * probability of having reached look j without stopping.  Each look's
 * boundary c is the one whose exit probability is that look's share of
 * alpha, so the looks together spend exactly alpha.
 */
#define GS_GRID 121 /* odd, for Simpson */

struct gs {
	double z[GS_GRID], w[GS_GRID], p[GS_GRID];
	double n; /* information (runs) at the current look */
};

static void
gs_grid(struct gs *g, double c)
{
	double h = 2 * c / (GS_GRID - 1);
	int i;

	for (i = 0; i < GS_GRID; i++) {
		g->z[i] = -c + h * i;
		g->w[i] = h / 3 *
		    (i == 0 || i == GS_GRID - 1 ? 1
		            : i % 2             ? 4
		                                : 2);
	}
}

/* P(stop at the next look, information n2) with boundary c. */
static double
gs_exit(const struct gs *g, double n2, double c)
{
	double sd = sqrt(n2 - g->n), s = 0, rn = sqrt(g->n), rn2 = sqrt(n2);
	int i;

	for (i = 0; i < GS_GRID; i++)
		s += g->w[i] * g->p[i] *
		    (analysis_i_norm_sf((c * rn2 + g->z[i] * rn) / sd) +
		        analysis_i_norm_sf((c * rn2 - g->z[i] * rn) / sd));
	return s;
}

/* Moves g to the next look (information n2, boundary c). */
static void
gs_step(struct gs *g, double n2, double c)
{
	double old_z[GS_GRID], old_wp[GS_GRID];
	double sd = sqrt(n2 - g->n), rn = sqrt(g->n), rn2 = sqrt(n2);
	int i, j;

	for (i = 0; i < GS_GRID; i++) {
		old_z[i] = g->z[i];
		old_wp[i] = g->w[i] * g->p[i];
	}
	gs_grid(g, c);
	for (j = 0; j < GS_GRID; j++) {
		double s = 0;

		for (i = 0; i < GS_GRID; i++) {
			double u = (g->z[j] * rn2 - old_z[i] * rn) / sd;

			s += old_wp[i] * exp(-0.5 * u * u);
		}
		g->p[j] = s * rn2 / (sd * sqrt(2 * M_PI));
	}
	g->n = n2;
}

/*
 * alpha spent by information t: the Pocock type above, or (late != 0)
 * the O'Brien-Fleming type of Lan and DeMets, 2 - 2 Phi(z_{alpha/2} /
 * sqrt t), which keeps nearly all of alpha for the last looks.
 */
static double
spent_by(double alpha, double t, int late)
{
	if (t > 1)
		t = 1;
	if (!late)
		return alpha * spend(t);
	return 2 *
	    analysis_i_norm_sf(
	        analysis_i_norm_quantile_upper(alpha / 2) / sqrt(t));
}

static double
look_alpha(double alpha, size_t n, size_t first_runs, size_t max_runs, int late)
{
	struct gs g;
	size_t s, prev = 0;
	double spent = 0, c = 0;
	int i;

	if (first_runs == 0 || max_runs <= first_runs)
		return alpha;
	if (n > max_runs)
		n = max_runs;
	if (n < first_runs)
		n = first_runs;
	/*
	 * Looks: the schedule points before n, then n itself (n is off the
	 * schedule when runs failed; the look then spends up to n only).
	 */
	s = first_runs;
	for (;;) {
		size_t look = s < n ? s : n;
		double share =
		    spent_by(alpha, (double)look / (double)max_runs, late) -
		    spent;

		if (prev == 0) {
			c = analysis_i_norm_quantile_upper(share / 2);
			gs_grid(&g, c);
			for (i = 0; i < GS_GRID; i++)
				g.p[i] = exp(-0.5 * g.z[i] * g.z[i]) /
				    sqrt(2 * M_PI);
			g.n = (double)look;
		} else {
			double lo = 0, hi = 12;
			int it;

			/* gs_exit falls as c grows: bisect for the share. */
			for (it = 0; it < 60; it++) {
				c = (lo + hi) / 2;
				if (gs_exit(&g, (double)look, c) > share)
					lo = c;
				else
					hi = c;
			}
			c = (lo + hi) / 2;
			if (look < n)
				gs_step(&g, (double)look, c);
		}
		spent += share;
		if (look >= n)
			break;
		prev = look;
		s = next_look(s, max_runs);
	}
	return 2 * analysis_i_norm_sf(c);
}

double
analysis_look_alpha(double alpha, size_t n, size_t first_runs, size_t max_runs)
{
	return look_alpha(alpha, n, first_runs, max_runs, 0);
}

double
analysis_i_look_alpha_late(
    double alpha, size_t n, size_t first_runs, size_t max_runs)
{
	return look_alpha(alpha, n, first_runs, max_runs, 1);
}

/*
 * Futility (docs/ANALYSIS.md, "Futility"): at an inconclusive look of n
 * runs a side, from half of max_runs and ANALYSIS_FUTILITY_MIN_RUNS on
 * (a z from fewer runs says too little of the trend), the chance that the shift
 * test crosses the last look's boundary c if the runs to come follow the trend
 * seen so far.  With z the look's statistic (from its p-value) and t = n /
 * max_runs the share of the information seen, the B-value z sqrt(t) drifts at z
 * / sqrt(t), so CP = P(B(1) > c) = 1 - Phi((c - z / sqrt(t)) / sqrt(1 - t)).
 * Below ANALYSIS_FUTILITY_CP, and with the interval unable to fit within
 * +-min_effect by max_runs either (its half-width shrinking as sqrt(n /
 * max_runs)), the look stops: no more runs.  Stopping for futility only ever
 * gives a verdict up, so the looks' alpha stays as spent.
 */
void
analysis_i_futility(
    struct analysis_result *r, const struct analysis_opts *o, size_t n)
{
	double t, z, c, mid, half;
	size_t len;

	r->cond_power = NAN;
	r->futile = 0;
	if (r->verdict != ANALYSIS_INCONCLUSIVE ||
	    r->mode == ANALYSIS_MODE_SUSPECTED ||
	    (r->unstable & ANALYSIS_UNSTABLE_SPREAD) || o->first_runs == 0 ||
	    o->max_runs <= o->first_runs || n >= o->max_runs ||
	    2 * n < o->max_runs || n < ANALYSIS_FUTILITY_MIN_RUNS ||
	    !(r->p_value >= 0 && r->p_value <= 1))
		return;
	t = (double)n / (double)o->max_runs;
	z = r->p_value > 0 ? analysis_i_norm_quantile_upper(r->p_value / 2)
	                   : INFINITY;
	c = analysis_i_norm_quantile_upper(
	    analysis_look_alpha(
	        o->alpha, o->max_runs, o->first_runs, o->max_runs) /
	    2);
	r->cond_power = isfinite(z)
	    ? analysis_i_norm_sf((c - z / sqrt(t)) / sqrt(1 - t))
	    : 1;
	if (r->cond_power >= ANALYSIS_FUTILITY_CP)
		return;
	mid = (r->ci_low_pct + r->ci_high_pct) / 2;
	half = (r->ci_high_pct - r->ci_low_pct) / 2 * sqrt(t);
	if (isfinite(mid) && isfinite(half) &&
	    fabs(mid) + half <= o->min_effect)
		return; /* unchanged is still within reach */
	r->futile = 1;
	/* compare.c's "more runs needed" no longer holds. */
	if (strncmp(r->note, "neither significant", 19) == 0)
		snprintf(r->note, sizeof(r->note),
		    "neither significant nor within +-min_effect");
	len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
	    "%sstopped at %zu runs: at this trend, significance by max_runs "
	    "(%zu) is %.0f%% likely and +-%g%% out of reach",
	    len ? "; " : "", n, o->max_runs, 100 * r->cond_power,
	    o->min_effect);
}

size_t
analysis_next_runs(const struct analysis_result *r, size_t n_now,
    size_t first_runs, size_t max_runs)
{
	size_t s, cap = max_runs;

	/* A suspected mode may need more runs than a shift: N clean runs
	 * miss a mode of share q with probability (1 - q)^N, and crediting
	 * a 30 % mode's fix at a look's LOWMODE_P takes about 18 clean runs
	 * beside a flaky base and history.  Past max_runs only on some
	 * evidence (p < LOWMODE_SUSPECT_P, not one far run against none),
	 * up to ANALYSIS_MODE_MAX_RUNS. */
	if (r->mode == ANALYSIS_MODE_SUSPECTED &&
	    r->mode_p < LOWMODE_SUSPECT_P && max_runs < ANALYSIS_MODE_MAX_RUNS)
		cap = ANALYSIS_MODE_MAX_RUNS;
	if (r->verdict != ANALYSIS_INCONCLUSIVE || r->futile || n_now >= cap)
		return 0;
	if (first_runs == 0)
		first_runs = 5;
	if (first_runs > max_runs)
		first_runs = max_runs;
	s = first_runs;
	while (s <= n_now)
		s = next_look(s, s < max_runs ? max_runs : cap);
	return s;
}

/* Median of sorted x. */
/*
 * Benjamini-Hochberg: sort the p-values, adjusted p(i) = min over j >= i
 * of p(j) m / j, capped at 1.
 */
struct pidx {
	double p;
	size_t i;
};

static int
cmp_pidx(const void *pa, const void *pb)
{
	const struct pidx *a = pa, *b = pb;

	if (a->p != b->p)
		return (a->p > b->p) - (a->p < b->p);
	return (a->i > b->i) - (a->i < b->i);
}

void
analysis_bh_adjust(double *out, const double *p, size_t n)
{
	struct pidx *v;
	size_t i, m = 0;
	double run = 1;

	if (n == 0)
		return;
	v = xmalloc(n * sizeof(*v));
	for (i = 0; i < n; i++) {
		out[i] = NAN;
		if (!isnan(p[i])) {
			v[m].p = p[i];
			v[m].i = i;
			m++;
		}
	}
	qsort(v, m, sizeof(*v), cmp_pidx);
	for (i = m; i-- > 0;) {
		double adj = v[i].p * (double)m / (double)(i + 1);

		if (adj < run)
			run = adj;
		out[v[i].i] = run;
	}
	free(v);
}

void
analysis_fdr(struct analysis_result *res, size_t n, double q)
{
	double *p, *adj;
	size_t i;

	if (n == 0)
		return;
	if (!(q > 0 && q < 1))
		q = 0.05;
	p = xmalloc(2 * n * sizeof(*p));
	adj = p + n;
	/* A verdict that a low mode made stands on the mode's test. */
	for (i = 0; i < n; i++)
		p[i] = res[i].mode == ANALYSIS_MODE_DISAPPEARED ||
		        res[i].mode == ANALYSIS_MODE_APPEARED
		    ? res[i].mode_p
		    : res[i].p_value;
	analysis_bh_adjust(adj, p, n);
	for (i = 0; i < n; i++) {
		res[i].p_adjusted = adj[i];
		if ((res[i].verdict == ANALYSIS_REGRESSION ||
		        res[i].verdict == ANALYSIS_IMPROVEMENT) &&
		    !(adj[i] <= q)) {
			res[i].verdict = ANALYSIS_INCONCLUSIVE;
			analysis_i_set_note(&res[i],
			    "not significant after false "
			    "discovery rate control across metrics");
		}
	}
	free(p);
}
