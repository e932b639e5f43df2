/*
 * Low modes and spread (analysis.h, docs/ANALYSIS.md, "Low modes"): a
 * share of runs far below a side's bulk, estimated per side and from the
 * history and judged both ways with Fisher's exact test, and a spread
 * that grew with no shift.
 */

#include <math.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "analysis/spread.h"
#include "common/xalloc.h"

/* Candidate variance vc "a lot" (ratio and F test) above ref. */
static int
spread_grew(double vc, size_t nc, double ref, double ref_df,
    const struct analysis_opts *o)
{
	if (!(vc > 0))
		return 0;
	if (!(ref > 0))
		return 1;
	return sqrt(vc / ref) >= o->spread_ratio &&
	    analysis_f_sf(vc / ref, (double)(nc - 1), ref_df) < UNSTABLE_P;
}

/* log C(n, k) */
static double
log_choose(double n, double k)
{
	return analysis_lgamma(n + 1) - analysis_lgamma(k + 1) -
	    analysis_lgamma(n - k + 1);
}

/*
 * One-sided Fisher exact test: P(X >= k) for X hypergeometric, n draws
 * (the candidate runs) from N runs of which K are bad.
 */
static double
fisher_upper(size_t k, size_t n, size_t K, size_t N)
{
	double p = 0, lden = log_choose((double)N, (double)n);
	size_t x, hi = n < K ? n : K;

	for (x = k; x <= hi; x++)
		if (n - x <= N - K)
			p += exp(log_choose((double)K, (double)x) +
			    log_choose((double)(N - K), (double)(n - x)) -
			    lden);
	return p < 1 ? p : 1;
}

/* One-sided Fisher exact test the other way: P(X <= k). */
static double
fisher_lower(size_t k, size_t n, size_t K, size_t N)
{
	double p = 0, lden = log_choose((double)N, (double)n);
	size_t x;

	for (x = 0; x <= k && x <= K && x <= n; x++)
		if (n - x <= N - K)
			p += exp(log_choose((double)K, (double)x) +
			    log_choose((double)(N - K), (double)(n - x)) -
			    lden);
	return p < 1 ? p : 1;
}

/* The runs of x[0..n) more than thr worse (sign) than ref: their count,
 * the low ones copied to low (may be NULL) and the rest to rest. */
static size_t
split_low(const double *x, size_t n, double ref, double thr, double sign,
    double *low, double *rest, size_t *nrest)
{
	size_t i, k = 0;

	*nrest = 0;
	for (i = 0; i < n; i++)
		if (sign * (x[i] - ref) > thr) {
			if (low != NULL)
				low[k] = x[i];
			k++;
		} else if (rest != NULL)
			rest[(*nrest)++] = x[i];
		else
			(*nrest)++;
	return k;
}

/*
 * The reference of the low modes: the bulk of the better side, its median
 * and its robust sigma.  A run is low when it is at least low_mode_pct
 * worse than that and LOWMODE_SIGMAS sigma away (a side with two modes
 * of about equal weight has a huge sigma and counts none: it cannot tell
 * which is its bulk).
 */
void
analysis_i_low_ref(struct analysis_lowref *lr, const double *lb, size_t nb,
    const double *lc, size_t nc, const struct analysis_opts *o)
{
	double *ws = xmalloc((nb + nc + 1) * sizeof(*ws));
	double mb, mc, sig;
	int cand_worse;

	lr->sign = o->better == ANALYSIS_HIGHER ? -1 : 1;
	mb = analysis_i_median_copy(lb, nb, ws);
	mc = analysis_i_median_copy(lc, nc, ws);
	cand_worse = lr->sign * (mc - mb) >= 0;
	lr->ref = cand_worse ? mb : mc;
	sig = analysis_i_robust_sigma(
	    cand_worse ? lb : lc, cand_worse ? nb : nc, lr->ref, ws);
	lr->least = lr->thr = -log1p(-o->low_mode_pct / 100);
	if (LOWMODE_SIGMAS * sig > lr->thr)
		lr->thr = LOWMODE_SIGMAS * sig;
	free(ws);
}

int
analysis_i_is_low(const struct analysis_lowref *lr, double x)
{
	return lr->sign * (x - lr->ref) > lr->thr;
}

/* 1 when x[0..n) holds no low run, or its runs that are not low are at
 * least 2 with their median at the reference: low runs beside an
 * unmoved bulk.  ws: n doubles. */
static int
bulk_at_ref(
    const struct analysis_lowref *lr, const double *x, size_t n, double *ws)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!analysis_i_is_low(lr, x[i]))
			ws[k++] = x[i];
	if (k == n)
		return 1;
	return k >= 2 &&
	    fabs(analysis_median_inplace(ws, k) - lr->ref) <= lr->least;
}

int
analysis_i_low_is_mode(const struct analysis_lowref *lr, const double *lb,
    size_t nb, const double *lc, size_t nc)
{
	double *ws = xmalloc((nb + nc + 1) * sizeof(*ws));
	size_t i, k = 0;
	int ok;

	for (i = 0; i < nb; i++)
		k += (size_t)analysis_i_is_low(lr, lb[i]);
	for (i = 0; i < nc; i++)
		k += (size_t)analysis_i_is_low(lr, lc[i]);
	ok =
	    k > 0 && bulk_at_ref(lr, lb, nb, ws) && bulk_at_ref(lr, lc, nc, ws);
	free(ws);
	return ok;
}

/*
 * Low modes, both ways: the "flaky ~50 % throughput drop" shape, a share
 * of runs far worse than the rest, appearing in the candidate or going
 * away in it (docs/ANALYSIS.md, "Low modes").
 *
 * Low runs are those of analysis_i_low_ref.  The side that holds low
 * runs must have the rest of its runs where the reference is, else its
 * bulk moved: a shift, not a mode.
 *
 * Each side's share is judged against the other's by a one-sided Fisher
 * exact test; the base side is the base runs and, with a history, the
 * history's runs too: this VM's CPU time has two modes 1.7x apart, so a
 * base of 5 runs all in the fast mode and a candidate with one slow run
 * is the host, not the candidate.  p below level (a look's share of the
 * mode test's alpha, one direction) with at least two low runs on the
 * side that has more is a confirmed mode; p < LOWMODE_SUSPECT_P, or one
 * low run against none, is suspected: more runs are asked for.
 */
void
analysis_i_check_modes(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const struct analysis_opts *o, double level)
{
	struct analysis_lowref lr;
	double sign, ref, thr, least, p;
	size_t kb, kc, kh = 0, nh = 0, nrest, i, nlow;
	size_t all = nb + nc + o->n_history;
	double *ws = xmalloc((2 * all + 1) * sizeof(*ws));
	double *low = ws, *rest = ws + all;

	r->mode = ANALYSIS_MODE_NONE;
	r->mode_pct = r->mode_p = NAN;
	r->mode_hist_share = NAN;
	analysis_i_low_ref(&lr, lb, nb, lc, nc, o);
	sign = lr.sign;
	ref = lr.ref;
	thr = lr.thr;
	least = lr.least;

	kb = split_low(lb, nb, ref, thr, sign, low, NULL, &nrest);
	kc = split_low(lc, nc, ref, thr, sign, low + kb, NULL, &nrest);
	if (o->n_history >= LOWMODE_MIN_HISTORY) {
		double *hl = rest;

		nh = o->n_history;
		for (i = 0; i < nh; i++)
			hl[i] = log(o->history[i]);
		kh = split_low(
		    hl, nh, ref, thr, sign, low + kb + kc, NULL, &nrest);
		r->mode_hist_share = 100.0 * (double)kh / (double)nh;
	}
	r->mode_base_share = 100.0 * (double)kb / (double)nb;
	r->mode_cand_share = 100.0 * (double)kc / (double)nc;
	nlow = kb + kc + kh;
	if (nlow == 0)
		goto out;
	r->mode_pct = analysis_i_pct(analysis_median_inplace(low, nlow) - ref);

	if ((double)kc * (double)(nb + nh) > (double)(kb + kh) * (double)nc) {
		/* The candidate has more: its rest must sit at the base. */
		split_low(lc, nc, ref, thr, sign, NULL, rest, &nrest);
		if (nrest < 2 ||
		    fabs(analysis_median_inplace(rest, nrest) - ref) > least)
			goto out;
		p = fisher_upper(kc, nc, kb + kh + kc, nb + nh + nc);
		r->mode_p = p;
		if (p < level && kc >= 2) {
			r->mode = ANALYSIS_MODE_APPEARED;
			r->unstable |= ANALYSIS_UNSTABLE_LOWMODE;
			r->low_mode_runs = kc;
		} else if (p < LOWMODE_SUSPECT_P || kb + kh == 0)
			r->mode = ANALYSIS_MODE_SUSPECTED;
	} else if ((double)kc * (double)(nb + nh) <
	    (double)(kb + kh) * (double)nc) {
		/*
		 * The base side has more.  The history counts only when its
		 * share is not far above the base's: a history from before a
		 * level shift (all of it "far" from a base at the new level)
		 * is another state of the host, not a mode of this base.  A
		 * confirmed mode also needs two low runs of the base's own.
		 */
		if (nh > 0 &&
		    fisher_lower(kb, nb, kb + kh, nb + nh) < LOWMODE_HIST_P) {
			kh = nh = 0;
			r->mode_hist_share = NAN;
		}
		if (kb + kh == 0)
			goto out;
		/* The base's rest must sit at the candidate. */
		split_low(lb, nb, ref, thr, sign, NULL, rest, &nrest);
		if (nrest < 2 ||
		    fabs(analysis_median_inplace(rest, nrest) - ref) > least)
			goto out;
		p = fisher_lower(kc, nc, kb + kh + kc, nb + nh + nc);
		r->mode_p = p;
		if (p < level && kb >= 2)
			r->mode = ANALYSIS_MODE_DISAPPEARED;
		else if (p < LOWMODE_SUSPECT_P)
			r->mode = ANALYSIS_MODE_SUSPECTED;
	}
out:
	free(ws);
}

/*
 * Unstable spread: a candidate spread many times the reference spread,
 * significantly so (F test at UNSTABLE_P).  The reference is the history
 * when there is one (ref_df > 0), else the base.
 */
void
analysis_i_check_spread(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const double *wb, const double *wc,
    double ref_var, double ref_df, const struct analysis_opts *o)
{
	double mb, vb, mc, vc;

	analysis_i_mean_var(wb, nb, &mb, &vb);
	analysis_i_mean_var(wc, nc, &mc, &vc);
	if (ref_df > 0) {
		/* Against the history: a precise reference. */
		r->spread_ratio = ref_var > 0 ? sqrt(vc / ref_var)
		    : vc > 0                  ? INFINITY
		                              : 1;
		if (spread_grew(vc, nc, ref_var, ref_df, o))
			r->unstable |= ANALYSIS_UNSTABLE_SPREAD;
		return;
	}
	/*
	 * Base against candidate, both of a few runs: winsorising can make
	 * a 5-run spread look tiny (three close values give a small MAD),
	 * and raw spreads react to a single outlier, so both the raw and
	 * the winsorised spreads must have grown.
	 */
	r->spread_ratio = vb > 0 ? sqrt(vc / vb) : vc > 0 ? INFINITY : 1;
	{
		double rmb, rvb, rmc, rvc;

		analysis_i_mean_var(lb, nb, &rmb, &rvb);
		analysis_i_mean_var(lc, nc, &rmc, &rvc);
		if (spread_grew(vc, nc, vb, (double)(nb - 1), o) &&
		    spread_grew(rvc, nc, rvb, (double)(nb - 1), o))
			r->unstable |= ANALYSIS_UNSTABLE_SPREAD;
	}
}
