/*
 * Change points in a metric's history (analysis.h, docs/ANALYSIS.md):
 * PELT segmentation on a robustly cleaned series, each step tested
 * against the noise left around the segments (with its AR(1)
 * correlation), and each change point refined.
 */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "common/xalloc.h"

#define CP_CLIP_SIGMAS 3.0  /* clip to running median +- 3 sigma */
#define CP_DROP_SIGMAS 4.5  /* beyond: replace by the running median */
#define CP_MEDIAN_HALF 3    /* running median window 7 */
#define CP_SIGMA_FLOOR 1e-6 /* logs: 0.0001 %, for exactly flat series */
#define CP_PASSES 4         /* segmentations, re-estimating the noise */
#define CP_PHI_PRIOR 20     /* residuals' worth of phi = 0 in its estimate */

/*
 * Change points.
 */

void
analysis_cp_opts_init(struct analysis_cp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->better = ANALYSIS_HIGHER;
	o->min_effect = 1.0;
	o->alpha = 0.001;
	o->min_segment = 5;
	o->penalty = 0;
}

void
analysis_cps_release(struct analysis_cps *c)
{
	if (c == NULL)
		return;
	free(c->cp);
	c->cp = NULL;
	c->n = 0;
}

/* Prefix sums of a centred series, for O(1) segment costs. */
struct segsum {
	const double *s1, *s2;
	double inv_var;
};

static double
seg_mean(const struct segsum *ss, size_t a, size_t b)
{
	return (ss->s1[b] - ss->s1[a]) / (double)(b - a);
}

/* Gaussian cost of y[a..b): residual sum of squares / variance. */
static double
seg_cost(const struct segsum *ss, size_t a, size_t b)
{
	double n = (double)(b - a), s1 = ss->s1[b] - ss->s1[a];
	double rss = ss->s2[b] - ss->s2[a] - s1 * s1 / n;

	return (rss > 0 ? rss : 0) * ss->inv_var;
}

/*
 * PELT (Killick, Fearnhead and Eckley 2012) with a minimum segment
 * length.  F[t] = min over admissible s of F[s] + C(s, t) + beta.  A
 * candidate s is pruned at time t when F[s] + C(s, t') >= F[t'] with
 * t' = t - minseg: then t' beats s for every later end T >= t (the
 * segment t'..T is long enough), by C(s, T) >= C(s, t') + C(t', T).
 * Returns the change points (ascending) in cps, their count in *ncp.
 */
static void
pelt(size_t *cps, size_t *ncp, const struct segsum *ss, size_t n, size_t minseg,
    double beta)
{
	double *F = xmalloc((n + 1) * sizeof(*F));
	size_t *last = xmalloc((n + 1) * sizeof(*last));
	size_t *cand = xmalloc((n + 1) * sizeof(*cand));
	size_t nc = 0, t, i, k, tmp;

	for (t = 0; t <= n; t++) {
		F[t] = INFINITY;
		last[t] = 0;
	}
	F[0] = -beta;
	cand[nc++] = 0;
	for (t = minseg; t <= n; t++) {
		double best = INFINITY;
		size_t arg = 0;

		/* A new candidate s = t - minseg becomes admissible. */
		if (t - minseg >= minseg && isfinite(F[t - minseg]))
			cand[nc++] = t - minseg;
		for (i = 0; i < nc; i++) {
			size_t s = cand[i];
			double v;

			if (t - s < minseg)
				continue;
			v = F[s] + seg_cost(ss, s, t) + beta;
			if (v < best) {
				best = v;
				arg = s;
			}
		}
		F[t] = best;
		last[t] = arg;
		if (t >= 2 * minseg && isfinite(F[t - minseg])) {
			size_t tp = t - minseg;

			for (i = 0, k = 0; i < nc; i++) {
				size_t s = cand[i];

				if (s < tp &&
				    F[s] + seg_cost(ss, s, tp) >= F[tp])
					continue;
				cand[k++] = s;
			}
			nc = k;
		}
	}
	k = 0;
	for (t = last[n]; t > 0; t = last[t])
		cps[k++] = t;
	for (i = 0; i < k / 2; i++) {
		tmp = cps[i];
		cps[i] = cps[k - 1 - i];
		cps[k - 1 - i] = tmp;
	}
	*ncp = k;
	free(F);
	free(last);
	free(cand);
}

/*
 * Variance of the mean of n consecutive AR(1) points with coefficient
 * phi, in units of sigma^2 / n: 1 + 2 sum_{k<n} (1 - k/n) phi^k.  The
 * asymptotic (1 + phi) / (1 - phi) overstates it for a segment not much
 * longer than 1 / (1 - phi): the mean of 5 points with phi = 0.84 is
 * 3.9 times as variable as independent points, not 11.5.
 */
static double
ar1_mean_factor(size_t n, double phi)
{
	double f = 1, pk = 1;
	size_t k;

	for (k = 1; k < n && pk > 1e-12; k++) {
		pk *= phi;
		f += 2 * (1 - (double)k / (double)n) * pk;
	}
	return f;
}

/*
 * Welch test on y[a..m) vs y[m..b), the runs AR(1) with coefficient phi:
 * each mean's variance grows by its finite-length factor, and the
 * variances' degrees of freedom shrink by (1 - phi^2) / (1 + phi^2), the
 * efficiency of a sample variance of AR(1) data.
 */
static double
seg_test(
    const double *y, size_t a, size_t m, size_t b, double phi, double sigma2)
{
	double t, df, ma, va, mb, vb, qa, qb;
	size_t na = m - a, nb = b - m;

	analysis_i_mean_var(y + a, na, &ma, &va);
	analysis_i_mean_var(y + m, nb, &mb, &vb);
	/*
	 * Floor each variance at the series' noise level: a short quiet
	 * stretch must not look infinitely precise.
	 */
	if (va < sigma2)
		va = sigma2;
	if (vb < sigma2)
		vb = sigma2;
	qa = va / (double)na * ar1_mean_factor(na, phi);
	qb = vb / (double)nb * ar1_mean_factor(nb, phi);
	t = (mb - ma) / sqrt(qa + qb);
	df = (qa + qb) * (qa + qb) /
	    (qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	df *= (1 - phi * phi) / (1 + phi * phi);
	if (df < 1)
		df = 1;
	return analysis_t_p2(t, df);
}

static double
diff_mad_sigma(const double *y, size_t n, size_t lag, double *ws)
{
	size_t i;

	for (i = 0; i + lag < n; i++)
		ws[i] = y[i + lag] - y[i];
	/* Differences of a mean-shift series centre on 0 (a few steps). */
	return analysis_i_robust_sigma(ws, n - lag, 0, ws + n) / M_SQRT2;
}

/* PELT, then confirmation: the change points that pass, in cps. */
static void
segment(size_t *cps, size_t *ncp, double *pv, const double *y,
    struct segsum *ss, size_t n, double lrv, double sigma2, double phi,
    const struct analysis_cp_opts *o)
{
	double beta = (o->penalty > 0 ? o->penalty : 3.0) * log((double)n);
	size_t i;

	ss->inv_var = 1 / lrv;
	pelt(cps, ncp, ss, n, o->min_segment, beta);
	/*
	 * Confirm: each change must pass a Welch test against its
	 * neighbouring segments and be at least min_effect; the weakest
	 * failing one is merged away and its neighbours re-tested.
	 */
	for (;;) {
		size_t worst = SIZE_MAX;
		double worst_score = -1;

		for (i = 0; i < *ncp; i++) {
			size_t a = i > 0 ? cps[i - 1] : 0;
			size_t b = i + 1 < *ncp ? cps[i + 1] : n;
			double d =
			    seg_mean(ss, cps[i], b) - seg_mean(ss, a, cps[i]);
			double score;

			pv[i] = seg_test(y, a, cps[i], b, phi, sigma2);
			if (pv[i] < o->alpha &&
			    fabs(expm1(d)) * 100 >= o->min_effect)
				continue;
			/* Fails: rank by how far from passing. */
			score = pv[i] / o->alpha +
			    o->min_effect / (fabs(expm1(d)) * 100 + 1e-300);
			if (score > worst_score) {
				worst_score = score;
				worst = i;
			}
		}
		if (worst == SIZE_MAX)
			break;
		memmove(cps + worst, cps + worst + 1,
		    (*ncp - worst - 1) * sizeof(*cps));
		(*ncp)--;
	}
}

/*
 * Residual variance and lag-1 autocorrelation within the segments, the
 * autocorrelation corrected for the bias of estimating each segment's
 * mean (about -(1 + 3 rho) / length per segment), then shrunk towards 0
 * as if CP_PHI_PRIOR independent residuals had been seen as well.  On a
 * short series the estimate is mostly noise (its standard error is about
 * 1 / sqrt(n)) and the bias correction is large: 13 points of a 4x step
 * under drift read 0.47, corrected 0.84, and that alone hid the step.
 * With 120 points the shrinkage takes a sixth off.
 */
static void
residual_noise(double *var, double *rho, const double *y, size_t n,
    const size_t *cps, size_t ncp)
{
	double ss = 0, sp = 0;
	size_t k, i, a, b;

	for (k = 0; k <= ncp; k++) {
		double m = 0;

		a = k > 0 ? cps[k - 1] : 0;
		b = k < ncp ? cps[k] : n;
		for (i = a; i < b; i++)
			m += y[i];
		m /= (double)(b - a);
		for (i = a; i < b; i++) {
			ss += (y[i] - m) * (y[i] - m);
			if (i + 1 < b)
				sp += (y[i] - m) * (y[i + 1] - m);
		}
	}
	*var = ss / (double)(n - ncp - 1);
	*rho = ss > 0 ? sp / ss : 0;
	*rho += (1 + 3 * *rho) * (double)(ncp + 1) / (double)n;
	*rho *= (double)(n - ncp - 1) / (double)(n - ncp - 1 + CP_PHI_PRIOR);
}

/*
 * Position refinement.  PELT's Gaussian cost places a change where the
 * squared residuals are smallest, which is the maximum-likelihood
 * position only for normal noise.  With the segmentation fixed, each
 * change is moved, between its neighbours (keeping the minimum segment
 * length), to the position that maximises the likelihood under the
 * series' own noise shape: a Gaussian kernel density estimate of the
 * residuals (each point minus its segment's mean; Silverman's bandwidth
 * 0.9 min(sd, IQR / 1.349) m^(-1/5); at most CP_KDE_MAX of them, evenly
 * spaced), with the neighbouring segments' means as the levels.  Moving
 * the change from j to j + 1 changes the log-likelihood by
 * log f(y_j - m_before) - log f(y_j - m_after), so the window is one
 * cumulative sum.  For normal noise this is the least-squares position
 * again; for two modes it tells a run of the high mode before the change
 * from the change itself.
 */
#define CP_KDE_MAX 256

static double
kde_log(const double *r, size_t m, double h, double v)
{
	double s = 0;
	size_t i;

	for (i = 0; i < m; i++) {
		double u = (v - r[i]) / h;

		s += exp(-0.5 * u * u);
	}
	return log(s / ((double)m * h * sqrt(2 * M_PI)) + DBL_MIN);
}

static double
seg_mean_raw(const double *y, size_t a, size_t b)
{
	double s = 0;
	size_t i;

	for (i = a; i < b; i++)
		s += y[i];
	return s / (double)(b - a);
}

void
analysis_cp_refine(
    size_t *cps, size_t ncp, const double *y, size_t n, size_t minseg)
{
	double *r, *q, h, mean, var, iqr, spread;
	size_t k, i, m = 0, stride;

	if (ncp == 0)
		return;
	r = xmalloc(2 * n * sizeof(*r));
	q = r + n;
	for (k = 0; k <= ncp; k++) {
		size_t a = k > 0 ? cps[k - 1] : 0, b = k < ncp ? cps[k] : n;
		double mk = seg_mean_raw(y, a, b);

		for (i = a; i < b; i++)
			q[i] = y[i] - mk;
	}
	analysis_i_mean_var(q, n, &mean, &var);
	stride = (n + CP_KDE_MAX - 1) / CP_KDE_MAX;
	for (i = 0; i < n; i += stride)
		r[m++] = q[i];
	qsort(q, n, sizeof(*q), analysis_i_cmp_double);
	iqr = (q[(3 * (n - 1)) / 4] - q[(n - 1) / 4]) / 1.349;
	spread = iqr > 0 && iqr < sqrt(var) ? iqr : sqrt(var);
	h = 0.9 * spread * pow((double)m, -0.2);
	if (!(h > 0)) {
		free(r);
		return;
	}
	for (k = 0; k < ncp; k++) {
		size_t a = k > 0 ? cps[k - 1] : 0,
		       b = k + 1 < ncp ? cps[k + 1] : n;
		size_t lo = a + minseg, hi = b - minseg, j, arg = cps[k];
		double m1 = seg_mean_raw(y, a, cps[k]);
		double m2 = seg_mean_raw(y, cps[k], b);
		double acc = 0, best = 0;

		if (lo > cps[k] || hi < cps[k])
			continue;
		/* acc: log-likelihood at j minus that at cps[k]. */
		for (j = cps[k]; j < hi; j++) {
			acc += kde_log(r, m, h, y[j] - m1) -
			    kde_log(r, m, h, y[j] - m2);
			if (acc > best) {
				best = acc;
				arg = j + 1;
			}
		}
		acc = 0;
		for (j = cps[k]; j > lo; j--) {
			acc += kde_log(r, m, h, y[j - 1] - m2) -
			    kde_log(r, m, h, y[j - 1] - m1);
			if (acc > best) {
				best = acc;
				arg = j - 1;
			}
		}
		cps[k] = arg;
	}
	free(r);
}

static int
changepoints(struct analysis_cps *out, const double *x, size_t n, size_t offset,
    const struct analysis_cp_opts *oin, struct err *e)
{
	struct analysis_cp_opts o;
	struct segsum ss;
	double *y, *ws, *s1, *s2, *pv, sig1, sigma2, lrv;
	double mean = 0, phi, r, var2, rho2;
	size_t *cps, ncp = 0, i, j, minseg;
	int pass;
	int rc;

	analysis_cp_opts_init(&o);
	if (oin != NULL) {
		o = *oin;
		if (o.better != ANALYSIS_LOWER)
			o.better = ANALYSIS_HIGHER;
		if (!(o.min_effect > 0))
			o.min_effect = 1.0;
		if (!(o.alpha > 0 && o.alpha < 1))
			o.alpha = 0.001;
		if (o.min_segment < 2)
			o.min_segment = 5;
	}
	memset(out, 0, sizeof(*out));
	if ((rc = analysis_i_check_values(x, n, "series", e)) != 0)
		return rc;
	minseg = o.min_segment;
	if (n < 2 * minseg)
		return 0;

	y = xmalloc(n * sizeof(*y));
	ws = xmalloc(3 * (n + 1) * sizeof(*ws));
	s1 = xmalloc(2 * (n + 1) * sizeof(*s1));
	s2 = s1 + n + 1;
	cps = xmalloc((n / minseg + 2) * sizeof(*cps));
	for (i = 0; i < n; i++)
		y[i] = log(x[i]);

	/*
	 * Noise: sigma from the MAD of lag-1 differences (a step touches
	 * only one of them), first taken as independent; the passes below
	 * measure autocorrelation and non-normal spread from residuals.
	 */
	sig1 = diff_mad_sigma(y, n, 1, ws);
	if (sig1 < CP_SIGMA_FLOOR)
		sig1 = CP_SIGMA_FLOOR;
	phi = 0;
	sigma2 = sig1 * sig1;
	lrv = sigma2;

	/*
	 * Isolated outliers: beyond 4.5 sigma of a running median (window
	 * 7) a run takes the median's value, beyond 3 sigma it is clipped
	 * there.  A centred odd window keeps a step intact: on either side
	 * of it the majority of the window is on the point's own side.
	 */
	for (i = 0; i < n; i++) {
		size_t a = i >= CP_MEDIAN_HALF ? i - CP_MEDIAN_HALF : 0;
		size_t b =
		    i + CP_MEDIAN_HALF + 1 < n ? i + CP_MEDIAN_HALF + 1 : n;
		double med, sigma = sqrt(sigma2), lim = CP_CLIP_SIGMAS * sigma;

		med = analysis_i_median_copy(y + a, b - a, ws);
		r = y[i];
		/* Gross outliers take the median's value, others are clipped.
		 */
		if (r > med + CP_DROP_SIGMAS * sigma ||
		    r < med - CP_DROP_SIGMAS * sigma)
			r = med;
		else if (r > med + lim)
			r = med + lim;
		else if (r < med - lim)
			r = med - lim;
		ws[n + 1 + i] = r;
	}
	memcpy(y, ws + n + 1, n * sizeof(*y));
	for (i = 0; i < n; i++)
		mean += y[i];
	mean /= (double)n;
	s1[0] = s2[0] = 0;
	for (i = 0; i < n; i++) {
		double d = y[i] - mean;

		s1[i + 1] = s1[i] + d;
		s2[i + 1] = s2[i] + d * d;
	}
	ss.s1 = s1;
	ss.s2 = s2;
	pv = ws;
	segment(cps, &ncp, pv, y, &ss, n, lrv, sigma2, phi, &o);

	/*
	 * Further passes: the robust sigma understates noise that is not
	 * normal (two modes), and runs may be autocorrelated (AR(1) with
	 * coefficient phi inflates the variance of a segment mean by
	 * (1 + phi) / (1 - phi)); the residuals of the last segmentation
	 * measure both.  Only a larger noise estimate is taken, so the
	 * passes only ever drop change points; at most CP_PASSES of them.
	 */
	for (pass = 1; pass < CP_PASSES; pass++) {
		double phi2, s2m, infl2;

		residual_noise(&var2, &rho2, y, n, cps, ncp);
		phi2 = rho2 > phi ? (rho2 > 0.9 ? 0.9 : rho2) : phi;
		s2m = var2 > sigma2 ? var2 : sigma2;
		infl2 = (1 + phi2) / (1 - phi2);
		if (!(s2m * infl2 > lrv * 1.01))
			break;
		sigma2 = s2m;
		lrv = s2m * infl2;
		phi = phi2;
		segment(cps, &ncp, pv, y, &ss, n, lrv, sigma2, phi, &o);
	}
	analysis_cp_refine(cps, ncp, y, n, minseg);
	out->sigma = sqrt(sigma2);
	out->phi = phi;

	out->cp = xcalloc(ncp ? ncp : 1, sizeof(*out->cp));
	out->n = ncp;
	for (i = 0; i < ncp; i++) {
		struct analysis_cp *c = &out->cp[i];
		size_t a = i > 0 ? cps[i - 1] : 0;
		size_t b = i + 1 < ncp ? cps[i + 1] : n;
		double best = INFINITY, v;

		c->index = cps[i] + offset;
		/* The test again: refinement may have moved the change. */
		c->p_value = seg_test(y, a, cps[i], b, phi, sigma2);
		c->before =
		    analysis_i_median_copy(x + a, cps[i] - a, ws + n + 1);
		c->after =
		    analysis_i_median_copy(x + cps[i], b - cps[i], ws + n + 1);
		c->change_pct = (c->after / c->before - 1) * 100;
		c->direction =
		    ((c->after > c->before) == (o.better == ANALYSIS_HIGHER))
		    ? ANALYSIS_IMPROVEMENT
		    : ANALYSIS_REGRESSION;
		/*
		 * Where the change could be: positions whose two-segment
		 * cost is within 3.84 (chi-square 1 df, 95%) of the best.
		 */
		for (j = a + minseg; j + minseg <= b; j++) {
			v = seg_cost(&ss, a, j) + seg_cost(&ss, j, b);
			if (v < best)
				best = v;
		}
		c->lo = c->hi = cps[i];
		for (j = a + minseg; j + minseg <= b; j++) {
			v = seg_cost(&ss, a, j) + seg_cost(&ss, j, b);
			if (v <= best + 3.84) {
				if (j < c->lo)
					c->lo = j;
				if (j > c->hi)
					c->hi = j;
			}
		}
		c->lo += offset;
		c->hi += offset;
	}
	free(y);
	free(ws);
	free(s1);
	free(cps);
	return 0;
}

int
analysis_changepoints(struct analysis_cps *out, const double *x, size_t n,
    const struct analysis_cp_opts *o, struct err *e)
{
	return changepoints(out, x, n, 0, o, e);
}

int
analysis_changepoints_tail(struct analysis_cps *out, const double *x, size_t n,
    size_t window, const struct analysis_cp_opts *o, struct err *e)
{
	size_t start = n > window && window > 0 ? n - window : 0;

	return changepoints(out, x + start, n - start, start, o, e);
}
