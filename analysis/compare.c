/*
 * The A/B comparison (analysis.h, docs/ANALYSIS.md): a candidate's runs
 * against its base's (and the history's), sequential looks, the
 * bootstrap interval, the blocked test of runs in rounds, low modes and
 * spread, the verdict, and false-discovery control across metrics.
 */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "analysis/spread.h"
#include "common/xalloc.h"

#define DEFAULT_SEED 0x7065726677617463ULL /* "perfwatc" */
#define WINSOR_K 3.5 /* winsorise at median +- 3.5 robust sigma */
#define MAX_RUNS_SIDE 1000
#define NOISIER_P 0.01       /* runs noisier than history: use Welch */
#define ROUNDS_DIFFER_P 0.25 /* rounds differ: judge within rounds */
/* Other work on the host: adjust when the covariate's slope is this
 * significant and its balance between the sides is not rejected at
 * this level (docs/ANALYSIS.md). */
#define ADJUST_USE_P 0.05
#define ADJUST_BALANCE_P 0.05
/* ... and beyond this the sides differ in it so clearly that the change
 * itself made the other work: no adjustment. */
#define ADJUST_CAUSED_P 1e-4
#define REJECT_K 5.0 /* ... and skip runs beyond 5 sigma */

/*
 * Options and verdicts.
 */

void
analysis_opts_init(struct analysis_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->better = ANALYSIS_HIGHER;
	o->min_effect = 1.0;
	o->alpha = 0.01;
	o->ci_level = 0.95;
	o->n_boot = 2000;
	o->seed = DEFAULT_SEED;
	o->min_history = 60;
	o->spread_ratio = 3.0;
	o->low_mode_pct = 25.0;
}

/* A copy of o with every unset field at its default. */
static struct analysis_opts
opts_fill(const struct analysis_opts *in)
{
	struct analysis_opts o, d;

	analysis_opts_init(&d);
	if (in == NULL)
		return d;
	o = *in;
	if (o.better != ANALYSIS_LOWER)
		o.better = ANALYSIS_HIGHER;
	if (!(o.min_effect > 0))
		o.min_effect = d.min_effect;
	if (!(o.alpha > 0 && o.alpha < 1))
		o.alpha = d.alpha;
	if (!(o.ci_level > 0 && o.ci_level < 1))
		o.ci_level = d.ci_level;
	if (o.n_boot == 0)
		o.n_boot = d.n_boot;
	if (o.seed == 0)
		o.seed = d.seed;
	if (o.min_history == 0)
		o.min_history = d.min_history;
	if (!(o.spread_ratio > 1))
		o.spread_ratio = d.spread_ratio;
	if (!(o.low_mode_pct > 0 && o.low_mode_pct < 100))
		o.low_mode_pct = d.low_mode_pct;
	return o;
}

const char *
analysis_verdict_name(enum analysis_verdict v)
{
	switch (v) {
	case ANALYSIS_UNCHANGED:
		return "unchanged";
	case ANALYSIS_REGRESSION:
		return "regression";
	case ANALYSIS_IMPROVEMENT:
		return "improvement";
	case ANALYSIS_UNSTABLE:
		return "unstable";
	case ANALYSIS_INCONCLUSIVE:
		break;
	}
	return "inconclusive";
}

/* The mean and sample standard deviation of raw values (spread.h). */
static void
raw_moments(const double *x, size_t n, double *mean, double *sd)
{
	struct spread sp;

	spread_of(&sp, x, n);
	*mean = sp.mean;
	*sd = sp.sd;
}

/* The sentence of a low mode, appended to r->note. */
static void
note_mode(struct analysis_result *r, const struct analysis_opts *o)
{
	size_t len = strlen(r->note);
	char hist[48] = "";

	if (isfinite(r->mode_hist_share))
		snprintf(hist, sizeof(hist), ", %.0f%% of history runs",
		    r->mode_hist_share);
	snprintf(r->note + len, sizeof(r->note) - len,
	    "%s%s mode %+.0f%%: %.0f%% of base runs%s, %.0f%% of candidate "
	    "runs",
	    len ? "; " : "", o->better == ANALYSIS_HIGHER ? "low" : "slow",
	    r->mode_pct, r->mode_base_share, hist, r->mode_cand_share);
}

static void
result_init(struct analysis_result *r, size_t nb, size_t nc)
{
	memset(r, 0, sizeof(*r));
	r->verdict = ANALYSIS_INCONCLUSIVE;
	r->n_base = nb;
	r->n_cand = nc;
	r->base_median = r->cand_median = NAN;
	r->change_pct = r->ci_low_pct = r->ci_high_pct = NAN;
	r->p_value = r->p_adjusted = NAN;
	r->alpha_used = NAN;
	r->welch_t = r->welch_df = NAN;
	r->spread_ratio = NAN;
	r->p_method = ANALYSIS_P_NONE;
	r->base_mean = r->base_sd = r->cand_mean = r->cand_sd = NAN;
	r->rounds_p = NAN;
	r->adjust_base = r->adjust_cand = r->adjust_beta = NAN;
	r->mode = ANALYSIS_MODE_NONE;
	r->mode_pct = r->mode_p = NAN;
	r->mode_base_share = r->mode_cand_share = r->mode_hist_share = NAN;
	r->cond_power = NAN;
}

/* Appends to the note (printf). */
static void len_append(struct analysis_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
len_append(struct analysis_result *r, const char *fmt, ...)
{
	size_t len = strlen(r->note);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note + len, sizeof(r->note) - len, fmt, ap);
	va_end(ap);
}

/* Sets the note (printf). */
void
analysis_i_set_note(struct analysis_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

/*
 * Clips sorted x to its median +- k sigma (it stays sorted); returns the
 * number of values clipped.
 */
static size_t
clip_sorted(double *x, size_t n, double sigma, double k)
{
	double med = analysis_i_median_sorted(x, n), lo, hi;
	size_t i, c = 0;

	if (!(sigma > 0))
		return 0;
	lo = med - k * sigma;
	hi = med + k * sigma;
	for (i = 0; i < n && x[i] < lo; i++, c++)
		x[i] = lo;
	for (i = n; i-- > 0 && x[i] > hi; c++)
		x[i] = hi;
	return c;
}

/*
 * Welch's test on winsorised samples, with Yuen's correction: a side of
 * n runs of which h were left alone contributes (n - 1) s_w^2 / (h (h -
 * 1)) to the squared standard error and h - 1 degrees of freedom.
 * Clipping shrinks a sample's variance; without the correction the test
 * was measured at 1.2-1.4 % false alarms for alpha 1 % with 5 runs.
 */
static void
welch_yuen(struct analysis_result *r, const double *a, size_t na, size_t ha,
    const double *b, size_t nb, size_t hb)
{
	double ma, va, mb, vb, da, db;

	if (ha < 2 || hb < 2) {
		/* Too much clipped for the correction: plain Welch. */
		analysis_welch(
		    &r->welch_t, &r->welch_df, &r->p_value, a, na, b, nb);
		return;
	}
	analysis_i_mean_var(a, na, &ma, &va);
	analysis_i_mean_var(b, nb, &mb, &vb);
	da = (double)(na - 1) * va / ((double)ha * (double)(ha - 1));
	db = (double)(nb - 1) * vb / ((double)hb * (double)(hb - 1));
	if (!(da + db > 0)) {
		analysis_welch(
		    &r->welch_t, &r->welch_df, &r->p_value, a, na, b, nb);
		return;
	}
	r->welch_t = (mb - ma) / sqrt(da + db);
	r->welch_df = (da + db) * (da + db) /
	    (da * da / (double)(ha - 1) + db * db / (double)(hb - 1));
	r->p_value = analysis_t_p2(r->welch_t, r->welch_df);
}

/*
 * Robust sigma of both sides together.  Small sides: the median of the
 * absolute differences between runs of the same side, over 0.6745 sqrt 2
 * (for normal runs |X - Y| has median 0.6745 sqrt(2) sigma).  Deviations
 * from each side's own median would understate sigma with 5 runs (one
 * of them is 0), winsorising too much.  Large sides: the pooled MAD.
 */
#define PAIR_SIGMA_MAX 64

static double
pooled_sigma(const double *sb, size_t nb, const double *sc, size_t nc)
{
	double *d, v;
	size_t i, j, k = 0;

	if (nb > PAIR_SIGMA_MAX || nc > PAIR_SIGMA_MAX) {
		double mb = nb ? analysis_i_median_sorted(sb, nb) : 0;
		double mc = nc ? analysis_i_median_sorted(sc, nc) : 0;

		d = xmalloc((nb + nc) * sizeof(*d));
		for (i = 0; i < nb; i++)
			d[k++] = fabs(sb[i] - mb);
		for (i = 0; i < nc; i++)
			d[k++] = fabs(sc[i] - mc);
		v = MAD_SCALE * analysis_median_inplace(d, k);
		free(d);
		return v;
	}
	d = xreallocarray(NULL, (nb * nb + nc * nc) / 2 + 1, sizeof(*d));
	for (i = 0; i < nb; i++)
		for (j = i + 1; j < nb; j++)
			d[k++] = sb[j] - sb[i]; /* sorted: >= 0 */
	for (i = 0; i < nc; i++)
		for (j = i + 1; j < nc; j++)
			d[k++] = sc[j] - sc[i];
	v = k ? analysis_median_inplace(d, k) / (0.6744897501960817 * M_SQRT2)
	      : 0;
	free(d);
	return v;
}

/* Robust sigma of one sorted side alone (see pooled_sigma). */
static double
side_sigma(const double *s, size_t n)
{
	return pooled_sigma(s, n, s + n, 0);
}

/* 1 when o has a finite covariate for every run. */
static int
has_cov(const struct analysis_opts *o, size_t nb, size_t nc)
{
	size_t i;

	if (o->base_cov == NULL || o->cand_cov == NULL)
		return 0;
	for (i = 0; i < nb; i++)
		if (!isfinite(o->base_cov[i]))
			return 0;
	for (i = 0; i < nc; i++)
		if (!isfinite(o->cand_cov[i]))
			return 0;
	return 1;
}

/*
 * The adjusted model on the unclipped logs: the covariate explains runs
 * that winsorising would pull in, and a clipped run would no longer sit
 * on the covariate's line.
 */
static int
adjusted_test(struct analysis_adjust *adj, const double *lb, size_t nb,
    const double *lc, size_t nc, const struct analysis_opts *o)
{
	struct analysis_rrun *x = xmalloc((nb + nc) * sizeof(*x));
	size_t i;
	int rc;

	for (i = 0; i < nb + nc; i++) {
		int c = i >= nb;
		size_t k = c ? i - nb : i;

		x[i].round = o->base_round != NULL && o->cand_round != NULL
		    ? (c ? o->cand_round[k] : o->base_round[k])
		    : 0;
		x[i].y = c ? lc[k] : lb[k];
		x[i].z = c ? o->cand_cov[k] : o->base_cov[k];
		x[i].cand = c;
	}
	qsort(x, nb + nc, sizeof(*x), analysis_i_cmp_rrun);
	rc = analysis_i_adjusted_test(adj, x, nb + nc);
	free(x);
	return rc;
}

/*
 * Rounds (docs/ANALYSIS.md, "Rounds"): when the rounds differ (their F
 * test at ROUNDS_DIFFER_P), the change, its interval and its p-value
 * come from the within-round contrasts, so drift between rounds falls
 * out instead of widening the interval.  When they do not, the runs are
 * judged as one sample a side, as without rounds: the round term would
 * only cost degrees of freedom.  With the host's other work as a
 * covariate ("Other work on the host") the same model gains its term
 * when it explains the noise (slope p < ADJUST_USE_P), rounds or not.
 * When the sides differ in it (balance p < ADJUST_BALANCE_P), chance and
 * a change that makes other work itself cannot be told apart: the more
 * cautious of the adjusted and the unadjusted test judges (the larger
 * p-value), so neither an unlucky draw of busy phases nor the
 * adjustment alone makes an alarm; past ADJUST_CAUSED_P the difference
 * is the change's own doing (a patch that wakes kernel threads) and
 * the unadjusted test judges.  clip: the winsorising bounds of the base's
 * and the candidate's logs.
 */
static void
judge_rounds(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const double *clip,
    const struct analysis_opts *o)
{
	struct analysis_rrun *x = xmalloc((nb + nc) * sizeof(*x));
	struct analysis_adjust adj;
	double shift, se, df, p, q, zs[2] = { 0, 0 };
	int cov = has_cov(o, nb, nc);
	int rounds = o->base_round != NULL && o->cand_round != NULL;
	size_t i;

	for (i = 0; i < nb; i++) {
		x[i].round = rounds ? o->base_round[i] : 0;
		x[i].y = fmin(fmax(lb[i], clip[0]), clip[1]);
		x[i].z = cov ? o->base_cov[i] : 0;
		x[i].cand = 0;
		zs[0] += x[i].z;
	}
	for (i = 0; i < nc; i++) {
		x[nb + i].round = rounds ? o->cand_round[i] : 0;
		x[nb + i].y = fmin(fmax(lc[i], clip[2]), clip[3]);
		x[nb + i].z = cov ? o->cand_cov[i] : 0;
		x[nb + i].cand = 1;
		zs[1] += x[nb + i].z;
	}
	qsort(x, nb + nc, sizeof(*x), analysis_i_cmp_rrun);
	if (cov) {
		r->adjust_base = zs[0] / (double)nb;
		r->adjust_cand = zs[1] / (double)nc;
	}
	if (cov && adjusted_test(&adj, lb, nb, lc, nc, o) == 0) {
		r->adjust_beta = analysis_i_pct(adj.beta);
		if (adj.beta_p < ADJUST_USE_P) {
			/* The unadjusted alternative: blocked when the rounds
			 * differ, else what judge_shift found. */
			double up = r->p_value;

			if (rounds &&
			    analysis_i_blocked_test(
			        r, &shift, &se, &df, &p, x, nb + nc) == 0 &&
			    r->rounds_p < ROUNDS_DIFFER_P)
				up = p;
			else
				rounds = 0;
			r->adjust_imbalanced = adj.balance_p < ADJUST_CAUSED_P
			    ? 2
			    : adj.balance_p < ADJUST_BALANCE_P;
			if (r->adjust_imbalanced == 0 ||
			    (r->adjust_imbalanced == 1 && !(adj.p < up))) {
				shift = adj.shift;
				se = adj.se;
				df = adj.df;
				p = adj.p;
				r->adjusted = 1;
				r->p_method = ANALYSIS_P_ADJUSTED;
				goto judged;
			}
			/* The unadjusted: the more cautious of the two, or
			 * the change made the other work. */
			if (!rounds) {
				free(x);
				return;
			}
			r->p_method = ANALYSIS_P_BLOCKED;
			goto judged;
		}
	}
	if (!rounds ||
	    analysis_i_blocked_test(r, &shift, &se, &df, &p, x, nb + nc) != 0 ||
	    r->rounds_p >= ROUNDS_DIFFER_P) {
		free(x);
		return;
	}
	r->p_method = ANALYSIS_P_BLOCKED;
judged:
	q = analysis_t_quantile(1 - (1 - o->ci_level) / 2, df);
	r->change_pct = analysis_i_pct(shift);
	r->ci_low_pct = analysis_i_pct(shift - q * se);
	r->ci_high_pct = analysis_i_pct(shift + q * se);
	r->welch_t = se > 0 ? shift / se : NAN;
	r->welch_df = df;
	r->p_value = p;
	free(x);
}

/*
 * The verdict from the shift test, the low modes and the spread
 * (docs/ANALYSIS.md, step 6).  "unstable" is a confirmed new low mode
 * only; a spread that grew with no significant shift, or a mode only
 * suspected, is inconclusive: more runs, never an alarm.
 */
static void
decide(struct analysis_result *r, const struct analysis_opts *o)
{
	enum analysis_verdict sv = ANALYSIS_INCONCLUSIVE;
	int up = r->change_pct > 0, beyond;

	if (r->p_value <= r->alpha_used && fabs(r->change_pct) >= o->min_effect)
		sv = up == (o->better == ANALYSIS_HIGHER) ? ANALYSIS_IMPROVEMENT
		                                          : ANALYSIS_REGRESSION;
	else if (r->ci_low_pct >= -o->min_effect &&
	    r->ci_high_pct <= o->min_effect)
		sv = ANALYSIS_UNCHANGED;
	if ((sv == ANALYSIS_REGRESSION || sv == ANALYSIS_IMPROVEMENT) &&
	    o->noise_floor_pct > 0 &&
	    fabs(r->change_pct) < o->noise_floor_pct &&
	    r->mode != ANALYSIS_MODE_APPEARED &&
	    r->mode != ANALYSIS_MODE_DISAPPEARED) {
		r->verdict = ANALYSIS_UNCHANGED;
		analysis_i_set_note(r, "below this host's noise floor, %.1f%%",
		    o->noise_floor_pct);
		return;
	}
	beyond =
	    r->ci_low_pct > o->min_effect || r->ci_high_pct < -o->min_effect;
	/* Past max_runs the runs were asked for a suspected mode only: the
	 * shift test spent its alpha at max_runs. */
	if (o->max_runs > 0 && r->n_base > o->max_runs &&
	    r->n_cand > o->max_runs && sv != ANALYSIS_INCONCLUSIVE &&
	    r->mode != ANALYSIS_MODE_APPEARED &&
	    r->mode != ANALYSIS_MODE_DISAPPEARED) {
		r->verdict = ANALYSIS_INCONCLUSIVE;
		r->note[0] = '\0';
		if (r->mode_base_share + r->mode_cand_share > 0)
			note_mode(r, o);
		len_append(r,
		    "%sruns past max_runs (%zu) for a suspected low "
		    "mode that was not confirmed",
		    r->note[0] ? "; " : "", o->max_runs);
		return;
	}

	switch (r->mode) {
	case ANALYSIS_MODE_APPEARED:
		r->verdict = ANALYSIS_UNSTABLE;
		note_mode(r, o);
		return;
	case ANALYSIS_MODE_DISAPPEARED:
		r->verdict =
		    sv == ANALYSIS_REGRESSION ? sv : ANALYSIS_IMPROVEMENT;
		note_mode(r, o);
		return;
	default:
		break;
	}
	if (r->unstable & ANALYSIS_UNSTABLE_SPREAD) {
		if ((sv == ANALYSIS_REGRESSION || sv == ANALYSIS_IMPROVEMENT) &&
		    beyond) {
			r->verdict = sv;
			analysis_i_set_note(
			    r, "the candidate's spread grew too");
		} else {
			r->verdict = ANALYSIS_INCONCLUSIVE;
			analysis_i_set_note(r,
			    "the candidate's spread grew %.1fx with no "
			    "significant shift: more runs, not an alarm",
			    r->spread_ratio);
		}
		return;
	}
	r->verdict = sv;
	if (r->mode == ANALYSIS_MODE_SUSPECTED) {
		if (sv == ANALYSIS_UNCHANGED)
			r->verdict = ANALYSIS_INCONCLUSIVE;
		r->note[0] = '\0';
		note_mode(r, o);
		len_append(r, " (suspected, not confirmed: p %.2g)", r->mode_p);
		return;
	}
	if (r->verdict == ANALYSIS_INCONCLUSIVE && r->note[0] == '\0')
		analysis_i_set_note(r,
		    "neither significant nor within +-min_effect: more "
		    "runs needed");
}

/*
 * The shift of cand against base (steps 1-5 of docs/ANALYSIS.md): the
 * effect, its interval, the p-value (Welch, the history's splits or
 * within rounds) and the spread bits, into r.  o: filled options, whose
 * history and rounds go with these runs.  Both sides hold runs.
 */
static void
judge_shift(struct analysis_result *r, const double *base, size_t nb,
    const double *cand, size_t nc, const struct analysis_opts *op)
{
	struct analysis_opts o = *op;
	double *lb, *lc, *wb, *wc, *ws, *hl = NULL, *hw = NULL;
	double shift, ci_lo, ci_hi, ref_var = 0, ref_df = 0, sigma_w;
	double sigma_h = 0, rej = INFINITY, *sb_u = NULL, *sc_u;
	double clip[4] = { -INFINITY, INFINITY, -INFINITY, INFINITY };
	size_t i, m = 0, mh = 0, hb = nb, hc = nc;

	if (o.history != NULL && o.n_history >= o.min_history &&
	    o.n_history >= nb + nc)
		m = o.n_history;

	/*
	 * lb, lc: logs in run order; wb, wc: sorted and winsorised logs;
	 * ws: scratch; hl: history logs, hw: winsorised history logs.
	 */
	lb = xmalloc(4 * (nb + nc) * sizeof(*lb));
	lc = lb + nb;
	wb = lc + nc;
	wc = wb + nb;
	ws = xmalloc((2 * (nb + nc) + 3 * m + 1) * sizeof(*ws));
	for (i = 0; i < nb; i++)
		lb[i] = log(base[i]);
	for (i = 0; i < nc; i++)
		lc[i] = log(cand[i]);
	memcpy(wb, lb, nb * sizeof(*wb));
	memcpy(wc, lc, nc * sizeof(*wc));
	analysis_i_sort_small(wb, nb);
	analysis_i_sort_small(wc, nc);
	if (m > 0) {
		double med_h, mean_h;

		hl = ws + 2 * (nb + nc) + m;
		hw = hl + m;
		for (i = 0; i < m; i++)
			hl[i] = log(o.history[i]);
		med_h = analysis_i_median_copy(hl, m, ws);
		sigma_h = analysis_i_robust_sigma(hl, m, med_h, ws);
		/*
		 * Gross outliers are runs beyond REJECT_K sigma_h.  When more
		 * than a tenth of the history is that far, they are a mode of
		 * the noise (bimodal runs), not hiccups: nothing is dropped,
		 * and the splits then see the modes as they are.
		 */
		rej = REJECT_K * sigma_h;
		for (i = 0; i < m; i++)
			if (fabs(hl[i] - med_h) > rej)
				mh++;
		if (mh * 10 > m)
			rej = INFINITY;
		/* hw: the history without its gross outliers. */
		mh = 0;
		for (i = 0; i < m; i++)
			if (fabs(hl[i] - med_h) <= rej)
				hw[mh++] = hl[i];
		analysis_i_mean_var(hw, mh, &mean_h, &ref_var);
		ref_df = (double)(mh - 1);
	}
	/*
	 * Winsorise each side at its median +- 3.5 robust sigma, the sigma
	 * from the history when there is one, else pooled over both sides.
	 */
	sigma_w = sigma_h > 0 ? sigma_h : pooled_sigma(wb, nb, wc, nc);
	/*
	 * The spread check reads the sides clipped at sigma_w itself (sb_u,
	 * sc_u): one -15 % run among five must count there as a clipped
	 * outlier, not as a grown spread (with each side's own sigma, 8 % of
	 * A/A comparisons under the outlier model ended "unstable").
	 */
	sb_u = xmalloc((nb + nc) * sizeof(*sb_u));
	sc_u = sb_u + nb;
	memcpy(sb_u, wb, nb * sizeof(*sb_u));
	memcpy(sc_u, wc, nc * sizeof(*sc_u));
	if (nb >= 3 && nc >= 3) {
		clip_sorted(sb_u, nb, sigma_w, WINSOR_K);
		clip_sorted(sc_u, nc, sigma_w, WINSOR_K);
		/*
		 * For the effect, its interval and the test: never below a
		 * side's own spread.  A candidate ten times as noisy as a
		 * tight base would otherwise be clipped to a few runs, and a
		 * 4x shift lose its p-value (seen in CI).
		 */
		double kb = WINSOR_K * fmax(sigma_w, side_sigma(wb, nb));
		double kc = WINSOR_K * fmax(sigma_w, side_sigma(wc, nc));

		clip[0] = analysis_i_median_sorted(wb, nb) - kb;
		clip[1] = analysis_i_median_sorted(wb, nb) + kb;
		clip[2] = analysis_i_median_sorted(wc, nc) - kc;
		clip[3] = analysis_i_median_sorted(wc, nc) + kc;
		hb -= clip_sorted(wb, nb, kb / WINSOR_K, WINSOR_K);
		hc -= clip_sorted(wc, nc, kc / WINSOR_K, WINSOR_K);
	}
	{
		size_t *sw = xmalloc(4 * nb * sizeof(*sw));

		shift = analysis_i_hl_sorted(wb, nb, wc, nc, sw);
		free(sw);
	}
	r->change_pct = analysis_i_pct(shift);
	if (nb < 2 || nc < 2)
		goto out;

	analysis_i_bootstrap_ci(&ci_lo, &ci_hi, wb, nb, wc, nc, &o);
	r->ci_low_pct = analysis_i_pct(ci_lo);
	r->ci_high_pct = analysis_i_pct(ci_hi);
	welch_yuen(r, wb, nb, hb, wc, nc, hc);
	r->p_method = ANALYSIS_P_WELCH;

	if (m > 0 && sigma_h > 0 && ref_var > 0) {
		double *sb = ws, *sc = ws + nb, vb, vc, mb, mc, pooled, stat;
		size_t lob, hib, loc, hic, kb, kc;

		/* Raw logs, sorted; k*: the runs left after rejection. */
		memcpy(sb, lb, nb * sizeof(*sb));
		memcpy(sc, lc, nc * sizeof(*sc));
		analysis_i_sort_small(sb, nb);
		analysis_i_sort_small(sc, nc);
		analysis_i_reject_range(sb, nb, rej, &lob, &hib);
		analysis_i_reject_range(sc, nc, rej, &loc, &hic);
		kb = hib - lob;
		kc = hic - loc;
		analysis_i_mean_var(sb + lob, kb, &mb, &vb);
		analysis_i_mean_var(sc + loc, kc, &mc, &vc);
		pooled = kb + kc > 2
		    ? ((double)(kb - 1) * vb + (double)(kc - 1) * vc) /
		        (double)(kb + kc - 2)
		    : 0;
		if (kb + kc <= 2 || mh < kb + kc) {
			/* Welch stays. */
		} else if (analysis_f_sf(pooled / ref_var,
		               (double)(kb + kc - 2), ref_df) >= NOISIER_P) {
			stat = analysis_i_clipped_mean(sc, nc, sigma_h, rej) -
			    analysis_i_clipped_mean(sb, nb, sigma_h, rej);
			r->p_value = analysis_i_history_p(
			    hw, mh, kb, kc, stat, sigma_h, rej, &o);
			r->p_method = ANALYSIS_P_HISTORY;
		} else {
			analysis_i_set_note(r,
			    "runs noisier than the history: Welch "
			    "p-value");
		}
	}
	if ((o.base_round != NULL && o.cand_round != NULL) ||
	    has_cov(&o, nb, nc))
		judge_rounds(r, lb, nb, lc, nc, clip, &o);

	analysis_i_check_spread(
	    r, lb, nb, lc, nc, sb_u, sc_u, ref_var, ref_df, &o);
out:
	free(lb);
	free(sb_u);
	free(ws);
}

/*
 * The runs of x[0..n) that are not low (their rounds and covariates too,
 * when rin and cin are not NULL), into out, rout and cout; returns their
 * count.
 */
static size_t
bulk_of(const struct analysis_lowref *lr, const double *x, size_t n,
    const int64_t *rin, const double *cin, double *out, int64_t *rout,
    double *cout)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!analysis_i_is_low(lr, log(x[i]))) {
			if (rin != NULL)
				rout[k] = rin[i];
			if (cin != NULL)
				cout[k] = cin[i];
			out[k++] = x[i];
		}
	return k;
}

/*
 * The level of the mode test at a look of n runs a side, one direction:
 * its share of alpha, spent over the looks up to the runs a suspected
 * mode may take (the shift test's spending function and boundaries), so
 * that the looks together keep it.
 */
static double
mode_level(const struct analysis_opts *o, size_t n)
{
	double a = 2 * LOWMODE_ALPHA_SHARE * o->alpha;
	size_t cap = o->max_runs > ANALYSIS_MODE_MAX_RUNS
	    ? o->max_runs
	    : ANALYSIS_MODE_MAX_RUNS;

	if (o->first_runs > 0 && o->max_runs > o->first_runs)
		a = analysis_i_look_alpha_late(a, n, o->first_runs, cap);
	return a / 2;
}

int
analysis_compare(struct analysis_result *r, const double *base, size_t nb,
    const double *cand, size_t nc, const struct analysis_opts *oin,
    struct err *e)
{
	struct analysis_opts o = opts_fill(oin), os;
	struct analysis_lowref lr;
	double *lb, *lc, *ws, *fb = NULL, *fc, *fh, *fzb = NULL, *fzc;
	int64_t *frb = NULL, *frc;
	size_t i, n = nb < nc ? nb : nc, nbs = nb, ncs = nc;
	int rc, bulk = 0;

	result_init(r, nb, nc);
	raw_moments(base, nb, &r->base_mean, &r->base_sd);
	raw_moments(cand, nc, &r->cand_mean, &r->cand_sd);
	if ((rc = analysis_i_check_values(base, nb, "base", e)) != 0 ||
	    (rc = analysis_i_check_values(cand, nc, "candidate", e)) != 0)
		return rc;
	if (o.history != NULL && o.n_history > 0 &&
	    (rc = analysis_i_check_values(
	         o.history, o.n_history, "history", e)) != 0)
		return rc;
	if (nb > MAX_RUNS_SIDE || nc > MAX_RUNS_SIDE)
		return err_setc(e, ERR_TOOBIG, "more than %d runs on a side",
		    MAX_RUNS_SIDE);
	if (nb == 0 || nc == 0) {
		double *t = xmalloc((nb + nc + 1) * sizeof(*t));

		if (nb > 0)
			r->base_median = analysis_i_median_copy(base, nb, t);
		if (nc > 0)
			r->cand_median = analysis_i_median_copy(cand, nc, t);
		free(t);
		analysis_i_set_note(r, "no runs on one side");
		return 0;
	}
	lb = xmalloc(2 * (nb + nc) * sizeof(*lb));
	lc = lb + nb;
	ws = lc + nc;
	for (i = 0; i < nb; i++)
		lb[i] = log(base[i]);
	for (i = 0; i < nc; i++)
		lc[i] = log(cand[i]);
	r->base_median = analysis_i_median_copy(base, nb, ws);
	r->cand_median = analysis_i_median_copy(cand, nc, ws);

	/*
	 * Low runs beside an unmoved bulk are a mode, judged by the mode
	 * test (their shares, both ways); the shift test judges the bulk
	 * without them, base, candidate and history alike, or a mode on
	 * both sides would read as a shift whenever its counts differ by
	 * chance.  The two tests then split alpha: the mode test's share
	 * each way, the shift test the rest (docs/ANALYSIS.md, "Low
	 * modes").
	 */
	os = o;
	if (!o.no_low_modes && nb >= 2 && nc >= 2) {
		analysis_i_low_ref(&lr, lb, nb, lc, nc, &o);
		bulk = analysis_i_low_is_mode(&lr, lb, nb, lc, nc);
	}
	if (bulk) {
		fb = xmalloc((nb + nc + o.n_history + 1) * sizeof(*fb));
		fc = fb + nb;
		fh = fc + nc;
		frb = xmalloc((nb + nc + 1) * sizeof(*frb));
		frc = frb + nb;
		fzb = xmalloc((nb + nc + 1) * sizeof(*fzb));
		fzc = fzb + nb;
		nbs = bulk_of(
		    &lr, base, nb, o.base_round, o.base_cov, fb, frb, fzb);
		ncs = bulk_of(
		    &lr, cand, nc, o.cand_round, o.cand_cov, fc, frc, fzc);
		if (o.history != NULL) {
			os.history = fh;
			os.n_history = bulk_of(&lr, o.history, o.n_history,
			    NULL, NULL, fh, NULL, NULL);
		}
		if (o.base_round != NULL && o.cand_round != NULL) {
			os.base_round = frb;
			os.cand_round = frc;
		}
		if (o.base_cov != NULL && o.cand_cov != NULL) {
			os.base_cov = fzb;
			os.cand_cov = fzc;
		}
		os.alpha = o.alpha * (1 - 2 * LOWMODE_ALPHA_SHARE);
	}
	r->alpha_used =
	    analysis_look_alpha(os.alpha, n, o.first_runs, o.max_runs);
	if (bulk)
		judge_shift(r, fb, nbs, fc, ncs, &os);
	else
		judge_shift(r, base, nb, cand, nc, &o);
	if (nb < 2 || nc < 2) {
		analysis_i_set_note(r,
		    "fewer than 2 runs on a side: no interval or "
		    "p-value");
		goto out;
	}
	if (!o.no_low_modes)
		analysis_i_check_modes(
		    r, lb, nb, lc, nc, &o, mode_level(&o, n));
	decide(r, &o);
	analysis_i_futility(r, &os, n);
out:
	r->p_adjusted = r->p_value;
	free(lb);
	free(fb);
	free(frb);
	free(fzb);
	return 0;
}
