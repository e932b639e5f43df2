/*
 * The tests of a shift (compare.c's building blocks, docs/ANALYSIS.md):
 * robust location of a side, the history-calibrated test of the base's
 * and candidate's medians, the bootstrap interval, and the blocked test
 * of runs in rounds.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "common/xalloc.h"

#define BLOCK_MIN_ROUNDS 3 /* rounds with both sides for a blocked test */
#define HUBER_K 2.0        /* history statistic: clip at median +- 2 sigma */

double
analysis_i_median_sorted(const double *x, size_t n)
{
	size_t k = (n - 1) / 2;

	return n % 2 ? x[k] : analysis_i_mid_mean(x[k], x[k + 1]);
}

/*
 * The statistic calibrated on the history: per side, a one-step
 * Huber-type location with hard rejection of gross outliers.  Runs
 * beyond REJECT_K sigma_h of the side's median are dropped; the rest are
 * clipped to their own median +- HUBER_K sigma_h and averaged.  sigma_h
 * is the history's robust sigma.  98 % of the efficiency of the mean on
 * normal noise, and a -15 % outlier run does not move it (taking the
 * median again after the rejection keeps the outlier from pulling the
 * clipping window).  g is sorted.
 */
/* Sorted g: the runs within dist of the median, [*lo, *hi). */
void
analysis_i_reject_range(
    const double *g, size_t n, double dist, size_t *lo, size_t *hi)
{
	double med = analysis_i_median_sorted(g, n);

	*lo = 0;
	*hi = n;
	while (*lo < n && g[*lo] < med - dist)
		(*lo)++;
	while (*hi > *lo && g[*hi - 1] > med + dist)
		(*hi)--;
	/*
	 * With an even count the median lies between the two middle runs,
	 * and when they are far apart (half the runs 15 % low) nothing is
	 * within dist of it: then the far runs are half the sample, a mode
	 * and not outliers, and none is dropped.
	 */
	if (*lo >= *hi) {
		*lo = 0;
		*hi = n;
	}
}

double
analysis_i_clipped_mean(const double *g, size_t n, double sigma_h, double rej)
{
	size_t lo_i, hi_i, i;
	double med, lo, hi, s = 0;

	analysis_i_reject_range(g, n, rej, &lo_i, &hi_i);
	g += lo_i;
	n = hi_i - lo_i;
	med = analysis_i_median_sorted(g, n);
	lo = med - HUBER_K * sigma_h;
	hi = med + HUBER_K * sigma_h;
	for (i = 0; i < n; i++)
		s += g[i] < lo ? lo : g[i] > hi ? hi : g[i];
	return s / (double)n;
}

/*
 * p-value from the baseline's history.  The statistic (difference of
 * clipped means, above) is not studentised by the current runs: its
 * spread under "no change" comes from the history, from random A/A
 * splits of the history into groups of the current sizes.  That is far
 * more precise than two 5-run variances, which is where the power over
 * Welch comes from, and it measures the statistic's real spread under
 * the host's own noise (modes, skew, the clipping).  Two readings of the
 * splits, the larger p-value wins:
 *  - the standardised statistic (over the root mean square of the split
 *    statistics) in a t distribution with m - 1 degrees of freedom, the
 *    uncertainty of a spread estimated from m runs (for normal noise
 *    this is the t-test with a known-df variance);
 *  - the share of split statistics at least as large as the observed
 *    one, turned into a z-score and read in the same t distribution: it
 *    follows the tails of skewed noise, which the first reading
 *    underrates.
 * Each alone was measured at 1.1-1.5 % false alarms for alpha 1 % on
 * some noise model (a finite history has lighter tails than the noise it
 * samples; skewed noise has heavier tails than t); their maximum is at
 * or below alpha on all but outliers (docs/ANALYSIS.md).
 *
 * Gross outliers (beyond REJECT_K sigma_h) are taken out of the history,
 * and the groups drawn have the sizes the current sides have after their
 * own outliers are dropped: the test is conditional on the number of
 * outlier runs.  Drawing them from the history instead would let the
 * rare split with most of a group made of outliers (its median an
 * outlier) dominate, which costs power for nothing.  The caller checked
 * that the current runs are not noisier than the history.
 * hl: the clean history logs; stat: the observed statistic.
 */
double
analysis_i_history_p(const double *hl, size_t m, size_t nb, size_t nc,
    double stat, double sigma_h, double rej, const struct analysis_opts *o)
{
	struct analysis_rng rng;
	size_t *idx = xmalloc(m * sizeof(*idx));
	double *ga = xmalloc((nb + nc) * sizeof(*ga)), *gb = ga + nb;
	size_t i, k;
	double ss = 0, sd, p_sd, p_cnt, tol = fabs(stat) * 1e-9;
	double *ts = xmalloc(o->n_boot * sizeof(*ts));

	analysis_rng_seed(&rng, o->seed ^ 0x6869737430727921ULL);
	for (i = 0; i < m; i++)
		idx[i] = i;
	for (k = 0; k < o->n_boot; k++) {
		double t;

		/* Partial Fisher-Yates: idx[0..nb+nc) is a random subset. */
		for (i = 0; i < nb + nc; i++) {
			size_t j = i + analysis_rng_below(&rng, m - i);
			size_t s = idx[i];

			idx[i] = idx[j];
			idx[j] = s;
			ga[i] = hl[idx[i]];
		}
		analysis_i_sort_small(ga, nb);
		analysis_i_sort_small(gb, nc);
		t = analysis_i_clipped_mean(gb, nc, sigma_h, rej) -
		    analysis_i_clipped_mean(ga, nb, sigma_h, rej);
		ss += t * t; /* the split statistic is centred on 0 */
		ts[k] = fabs(t);
	}
	free(idx);
	free(ga);
	sd = sqrt(ss / (double)o->n_boot);
	if (!(sd > 0)) {
		free(ts);
		return stat == 0 ? 1 : 0;
	}
	p_sd = analysis_t_p2(stat / sd, (double)(m - 1));
	for (k = 0, i = 0; k < o->n_boot; k++)
		if (ts[k] >= fabs(stat) - tol)
			i++;
	free(ts);
	p_cnt = (double)(i + 1) / (double)(o->n_boot + 1);
	p_cnt = p_cnt >= 1
	    ? 1
	    : analysis_t_p2(
	          analysis_i_norm_quantile_upper(p_cnt / 2), (double)(m - 1));
	return p_sd > p_cnt ? p_sd : p_cnt;
}

static void
resample_sorted(double *out, const double *x, size_t n, size_t *cnt,
    struct analysis_rng *rng)
{
	size_t i, j, k = 0;

	/* Count the draws per index: sorted x gives a sorted resample. */
	memset(cnt, 0, n * sizeof(*cnt));
	for (i = 0; i < n; i++)
		cnt[analysis_rng_below(rng, n)]++;
	for (i = 0; i < n; i++)
		for (j = 0; j < cnt[i]; j++)
			out[k++] = x[i];
}

struct pairdiff {
	double d;
	uint32_t i, j;
};

static int
cmp_pairdiff(const void *pa, const void *pb)
{
	const struct pairdiff *a = pa, *b = pb;

	return (a->d > b->d) - (a->d < b->d);
}

#define BOOT_PAIRS_MAX 65536

/*
 * One bootstrap statistic per resample in stats[0..n_boot).  A resample
 * of sorted a and b is a count per original run, and its HL shift is the
 * weighted median of the original pairwise differences with weights
 * count_a(i) count_b(j): sort the differences once, then each resample
 * is one walk up to the middle weight, with no comparisons of values.
 * Large samples resample and select directly (hl_sorted).
 */
static void
bootstrap_stats(double *stats, const double *a, size_t na, const double *b,
    size_t nb, const struct analysis_opts *o)
{
	struct analysis_rng rng;
	size_t *ca = xcalloc(na + nb + 4 * na, sizeof(*ca)), *cb = ca + na;
	size_t i, j, k, n = na * nb;

	analysis_rng_seed(&rng, o->seed);
	if (n > BOOT_PAIRS_MAX) {
		double *ra = xmalloc((na + nb) * sizeof(*ra)), *rb = ra + na;

		for (k = 0; k < o->n_boot; k++) {
			resample_sorted(ra, a, na, ca, &rng);
			resample_sorted(rb, b, nb, ca, &rng);
			stats[k] =
			    analysis_i_hl_sorted(ra, na, rb, nb, cb + nb);
		}
		free(ra);
		free(ca);
		return;
	}
	{
		struct pairdiff *pd = xmalloc(n * sizeof(*pd));
		size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;

		k = 0;
		for (i = 0; i < na; i++)
			for (j = 0; j < nb; j++) {
				pd[k].d = b[j] - a[i];
				pd[k].i = (uint32_t)i;
				pd[k].j = (uint32_t)j;
				k++;
			}
		qsort(pd, n, sizeof(*pd), cmp_pairdiff);
		for (k = 0; k < o->n_boot; k++) {
			size_t cum = 0, p = 0;
			double lo;

			memset(ca, 0, (na + nb) * sizeof(*ca));
			for (i = 0; i < na; i++)
				ca[analysis_rng_below(&rng, na)]++;
			for (i = 0; i < nb; i++)
				cb[analysis_rng_below(&rng, nb)]++;
			/* The weights add up to na nb, like the pairs. */
			for (;; p++) {
				cum += ca[pd[p].i] * cb[pd[p].j];
				if (cum > lo_rank)
					break;
			}
			lo = pd[p].d;
			while (cum <= hi_rank) {
				p++;
				cum += ca[pd[p].i] * cb[pd[p].j];
			}
			stats[k] = lo + (pd[p].d - lo) / 2;
		}
		free(pd);
	}
	free(ca);
}

/*
 * Percentile bootstrap of the HL shift, each side resampled on its own.
 * With few runs the plain percentile interval is too narrow, so the
 * tail probability is widened as in Hesterberg's "expanded percentile"
 * interval: the normal quantile used is sqrt(n / (n - 1)) t(n - 1) for
 * the smaller side.  a and b sorted.
 */
void
analysis_i_bootstrap_ci(double *lo, double *hi, const double *a, size_t na,
    const double *b, size_t nb, const struct analysis_opts *o)
{
	double *stats = xmalloc(o->n_boot * sizeof(*stats));
	size_t n = na < nb ? na : nb, i;
	double tail = (1 - o->ci_level) / 2, z, pos, frac;

	bootstrap_stats(stats, a, na, b, nb, o);
	qsort(stats, o->n_boot, sizeof(*stats), analysis_i_cmp_double);
	z = sqrt((double)n / (double)(n - 1)) *
	    analysis_t_quantile(1 - tail, (double)(n - 1));
	tail = analysis_i_norm_sf(z);
	pos = tail * (double)(o->n_boot - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	*lo = stats[i] +
	    (i + 1 < o->n_boot ? frac * (stats[i + 1] - stats[i]) : 0);
	pos = (1 - tail) * (double)(o->n_boot - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	*hi = stats[i] +
	    (i + 1 < o->n_boot ? frac * (stats[i + 1] - stats[i]) : 0);
	free(stats);
}

/*
 * Rounds: the additive model y = round + delta * candidate on the
 * (winsorised) logs y of the rounds that hold both sides.  delta's
 * estimate is the weighted mean of the within-round contrasts (mean
 * candidate - mean base of a round, weight 1 / (1/nb_r + 1/nc_r)), its
 * variance the model's residual variance over the weights' sum.  The F
 * test of the round term against the one-way model (no rounds) says
 * whether the rounds differ at all: r->rounds_p.  0 and the blocked
 * t-test in *shift, *se, *df, *p; -1 when fewer than BLOCK_MIN_ROUNDS
 * rounds hold both sides or no residual degree of freedom is left.
 */
int
analysis_i_cmp_rrun(const void *pa, const void *pb)
{
	const struct analysis_rrun *a = pa, *b = pb;

	return (a->round > b->round) - (a->round < b->round);
}

int
analysis_i_blocked_test(struct analysis_result *r, double *shift, double *se,
    double *df, double *p, const struct analysis_rrun *x, size_t n)
{
	double sw = 0, swd = 0, ss_res = 0, ss_one = 0, m[2] = { 0, 0 };
	size_t i, j, k, R = 0, N = 0, cnt[2] = { 0, 0 };
	double f;

	/* Pass 1: delta. */
	for (i = 0; i < n; i = j) {
		double s[2] = { 0, 0 };
		size_t c[2] = { 0, 0 };

		for (j = i; j < n && x[j].round == x[i].round; j++) {
			s[x[j].cand] += x[j].y;
			c[x[j].cand]++;
		}
		if (c[0] == 0 || c[1] == 0)
			continue;
		{
			double w = 1 / (1 / (double)c[0] + 1 / (double)c[1]);

			sw += w;
			swd += w * (s[1] / (double)c[1] - s[0] / (double)c[0]);
		}
		R++;
		N += c[0] + c[1];
		for (k = 0; k < 2; k++) {
			m[k] += s[k];
			cnt[k] += c[k];
		}
	}
	r->rounds = R;
	if (R < BLOCK_MIN_ROUNDS || N < R + 2)
		return -1;
	*shift = swd / sw;
	m[0] /= (double)cnt[0];
	m[1] /= (double)cnt[1];
	/* Pass 2: residuals of both models. */
	for (i = 0; i < n; i = j) {
		double s = 0, mu;
		size_t c[2] = { 0, 0 };

		for (j = i; j < n && x[j].round == x[i].round; j++) {
			s += x[j].y - (x[j].cand ? *shift : 0);
			c[x[j].cand]++;
		}
		if (c[0] == 0 || c[1] == 0)
			continue;
		mu = s / (double)(c[0] + c[1]);
		for (k = i; k < j; k++) {
			double e = x[k].y - mu - (x[k].cand ? *shift : 0);
			double e1 = x[k].y - m[x[k].cand];

			ss_res += e * e;
			ss_one += e1 * e1;
		}
	}
	*df = (double)(N - R - 1);
	if (!(ss_res > 0)) {
		/* No residual noise at all: a step is certain, none is
		 * none. */
		*se = 0;
		*p = *shift != 0 ? 0 : 1;
		r->rounds_p = ss_one > 0 ? 0 : 1;
		return 0;
	}
	*se = sqrt(ss_res / *df / sw);
	*p = analysis_t_p2(*shift / *se, *df);
	f = ss_one > ss_res
	    ? ((ss_one - ss_res) / (double)(R - 1)) / (ss_res / *df)
	    : 0;
	r->rounds_p = analysis_f_sf(f, (double)(R - 1), *df);
	return 0;
}

/*
 * Other work on the host (docs/ANALYSIS.md, "Other work on the host"):
 * the blocked model plus the run's covariate z, y = round + delta *
 * candidate + beta * z, fitted by least squares on the deviations from
 * each round's means, over the rounds that hold both sides (all runs in
 * one round when the pair has none).  a->balance_p tests whether z
 * itself differs between the sides within rounds (the blocked t-test on
 * z): a change that moves the covariate would be partly taken away by
 * the adjustment, so the caller does not adjust then.  0 and *a; -1
 * when fewer than N = R + 3 runs are left, z does not vary within the
 * rounds, or it follows the sides exactly.
 */
int
analysis_i_adjusted_test(
    struct analysis_adjust *a, const struct analysis_rrun *x, size_t n)
{
	double scc = 0, scz = 0, szz = 0, scy = 0, szy = 0, syy = 0;
	double det, ss, szr, s2;
	size_t i, j, k, R = 0, N = 0;

	for (i = 0; i < n; i = j) {
		double my = 0, mz = 0, mc = 0;
		size_t c[2] = { 0, 0 }, m;

		for (j = i; j < n && x[j].round == x[i].round; j++) {
			my += x[j].y;
			mz += x[j].z;
			c[x[j].cand]++;
		}
		if (c[0] == 0 || c[1] == 0)
			continue;
		m = j - i;
		my /= (double)m;
		mz /= (double)m;
		mc = (double)c[1] / (double)m;
		for (k = i; k < j; k++) {
			double dy = x[k].y - my, dz = x[k].z - mz;
			double dc = (double)x[k].cand - mc;

			scc += dc * dc;
			scz += dc * dz;
			szz += dz * dz;
			scy += dc * dy;
			szy += dz * dy;
			syy += dy * dy;
		}
		R++;
		N += m;
	}
	if (R == 0 || N < R + 3 || !(scc > 0) || !(szz > 0))
		return -1;
	det = scc * szz - scz * scz;
	if (!(det > 1e-9 * scc * szz))
		return -1;
	a->shift = (szz * scy - scz * szy) / det;
	a->beta = (scc * szy - scz * scy) / det;
	ss = syy - a->shift * scy - a->beta * szy;
	a->df = (double)(N - R - 2);
	s2 = ss > 0 ? ss / a->df : 0;
	a->se = sqrt(s2 * szz / det);
	a->p = a->se > 0    ? analysis_t_p2(a->shift / a->se, a->df)
	    : a->shift != 0 ? 0
	                    : 1;
	a->beta_p =
	    s2 > 0 ? analysis_t_p2(a->beta / sqrt(s2 * scc / det), a->df) : 0;
	/* z on the sides alone: its residual after its own blocked shift. */
	szr = szz - scz * scz / scc;
	a->balance_p = szr > 0
	    ? analysis_t_p2((scz / scc) / sqrt(szr / (double)(N - R - 1) / scc),
	          (double)(N - R - 1))
	    : 0;
	return 0;
}
