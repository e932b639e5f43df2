/*
 * Statistics for perfwatch (see analysis.h and docs/ANALYSIS.md).
 *
 * Everything here is written from the textbook definitions: the special
 * functions (log Gamma, incomplete beta) and the PRNG (xoshiro256**,
 * splitmix64) are short enough that carrying our own keeps the module
 * free of globals (libm's lgamma writes signgam) and reproducible.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/spread.h"
#include "common/xalloc.h"

#define DEFAULT_SEED 0x7065726677617463ULL /* "perfwatc" */
#define WINSOR_K 3.5     /* winsorise at median +- 3.5 robust sigma */
#define MAD_SCALE 1.4826 /* MAD to sigma for normal data */
#define MAX_RUNS_SIDE 1000
#define UNSTABLE_P 0.001       /* spread test level */
#define LOWMODE_SIGMAS 8.0     /* a low run is also this many sigmas away */
#define LOWMODE_P 0.002        /* low mode, confirmed: Fisher level a look */
#define LOWMODE_SUSPECT_P 0.1  /* low mode, suspected: more runs */
#define LOWMODE_HIST_P 0.01    /* history's share far above the base's */
#define LOWMODE_MIN_HISTORY 20 /* history runs for that test */
#define NOISIER_P 0.01         /* runs noisier than history: use Welch */
#define BLOCK_MIN_ROUNDS 3     /* rounds with both sides for a blocked test */
#define ROUNDS_DIFFER_P 0.25   /* rounds differ: judge within rounds */
#define HUBER_K 2.0         /* history statistic: clip at median +- 2 sigma */
#define REJECT_K 5.0        /* ... and skip runs beyond 5 sigma */
#define CP_CLIP_SIGMAS 3.0  /* clip to running median +- 3 sigma */
#define CP_DROP_SIGMAS 4.5  /* beyond: replace by the running median */
#define CP_MEDIAN_HALF 3    /* running median window 7 */
#define CP_SIGMA_FLOOR 1e-6 /* logs: 0.0001 %, for exactly flat series */
#define CP_PASSES 4         /* segmentations, re-estimating the noise */
#define CP_PHI_PRIOR 20     /* residuals' worth of phi = 0 in its estimate */

/*
 * PRNG: xoshiro256** (Blackman and Vigna), state filled by splitmix64 so
 * that any 64-bit seed, 0 included, gives a good state.
 */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z;

	*x += 0x9e3779b97f4a7c15ULL;
	z = *x;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
analysis_rng_seed(struct analysis_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

uint64_t
analysis_rng_next(struct analysis_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double
analysis_rng_uniform(struct analysis_rng *r)
{
	return (double)(analysis_rng_next(r) >> 11) * 0x1.0p-53;
}

size_t
analysis_rng_below(struct analysis_rng *r, size_t n)
{
	uint64_t lim, x;

	if (n <= 1)
		return 0;
	/* Reject the low 2^64 mod n values so that x % n is uniform. */
	lim = (0 - (uint64_t)n) % (uint64_t)n;
	do
		x = analysis_rng_next(r);
	while (x < lim);
	return (size_t)(x % (uint64_t)n);
}

/*
 * Special functions.
 */

double
analysis_lgamma(double x)
{
	double shift = 0, x2, s;

	if (!(x > 0))
		return NAN;
	/* Move x up to where the Stirling series is accurate to 1e-15. */
	while (x < 10) {
		shift += log(x);
		x += 1;
	}
	x2 = x * x;
	/* Stirling: the Bernoulli-number series up to x^-13. */
	s = (1.0 / 12 -
	        (1.0 / 360 -
	            (1.0 / 1260 -
	                (1.0 / 1680 -
	                    (1.0 / 1188 -
	                        (691.0 / 360360 - 1.0 / 156 / x2) / x2) /
	                        x2) /
	                    x2) /
	                x2) /
	            x2) /
	    x;
	return (x - 0.5) * log(x) - x + 0.5 * log(2 * M_PI) + s - shift;
}

/*
 * The continued fraction for I_x(a, b) (Abramowitz & Stegun 26.5.8):
 * I = front * 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
 *   d(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
 *   d(2m)   = m (b - m) x / ((a + 2m - 1)(a + 2m)),
 * evaluated forwards by the modified Lentz method.  It converges fast
 * for x < (a + 1) / (a + b + 2); the caller uses the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a) otherwise.
 */
static double
cf_coef(double a, double b, double x, int k)
{
	double m = (double)(k / 2);

	if (k % 2 == 1)
		return -(a + m) * (a + b + m) * x /
		    ((a + 2 * m) * (a + 2 * m + 1));
	return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
}

static double
beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double f, c, d, delta;
	int k;

	/* f = 1 / (1 + d1 / (1 + ...)): start Lentz on the tail 1 + ... */
	f = 1;
	c = 1;
	d = 0;
	for (k = 1; k <= 1000; k++) {
		double dk = cf_coef(a, b, x, k);

		d = 1 + dk * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + dk / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		delta = c * d;
		f *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	/* f is 1 + d1/(1 + d2/...)); the fraction wanted is its inverse. */
	return 1 / f;
}

double
analysis_betai(double a, double b, double x)
{
	double lfront;

	if (!(a > 0) || !(b > 0) || isnan(x))
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lfront = analysis_lgamma(a + b) - analysis_lgamma(a) -
	    analysis_lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lfront) * beta_cf(a, b, x) / a;
	return 1 - exp(lfront) * beta_cf(b, a, 1 - x) / b;
}

double
analysis_t_p2(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	return analysis_betai(df / 2, 0.5, df / (df + t * t));
}

static double
t_cdf(double t, double df)
{
	double p = 0.5 * analysis_t_p2(t, df);

	return t >= 0 ? 1 - p : p;
}

double
analysis_t_quantile(double p, double df)
{
	double lo, hi, mid;
	int i;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -analysis_t_quantile(1 - p, df);
	lo = 0;
	hi = 1;
	while (t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (i = 0; i < 200; i++) {
		mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

double
analysis_f_sf(double f, double d1, double d2)
{
	if (isnan(f) || !(d1 > 0) || !(d2 > 0))
		return NAN;
	if (f <= 0)
		return 1;
	if (isinf(f))
		return 0;
	return analysis_betai(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}

static double
norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

static double
norm_quantile_upper(double p)
{
	double lo = 0, hi = 40, mid;
	int i;

	/* z with P(Z >= z) = p, 0 < p <= 0.5, by bisection. */
	for (i = 0; i < 200; i++) {
		mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (norm_sf(mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

/*
 * Order statistics.
 */

static void
swapd(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/* Puts the k-th smallest of x[0..n) at x[k] (Hoare partitioning). */
static double
select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double pivot;

		/* Median of three as the pivot, kept at x[mid]. */
		if (x[mid] < x[lo])
			swapd(&x[mid], &x[lo]);
		if (x[hi] < x[lo])
			swapd(&x[hi], &x[lo]);
		if (x[hi] < x[mid])
			swapd(&x[hi], &x[mid]);
		pivot = x[mid];
		i = lo;
		j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				swapd(&x[i], &x[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

/*
 * The mean of the two middle values of an even count: (a + b) / 2, the
 * correctly rounded mean, which the store's job summaries (SQL,
 * STORE_I_JOB_VALUES_FILL) compute alike, so a median is the same bits
 * wherever it is taken.
 */
static double
mid_mean(double a, double b)
{
	return (a + b) / 2;
}

double
analysis_median_inplace(double *x, size_t n)
{
	size_t k, i;
	double lo, hi;

	if (n == 0)
		return NAN;
	k = (n - 1) / 2;
	lo = select_kth(x, n, k);
	if (n % 2 == 1)
		return lo;
	/* Even: the smallest of the upper part is the other middle value. */
	hi = x[k + 1];
	for (i = k + 2; i < n; i++)
		if (x[i] < hi)
			hi = x[i];
	return mid_mean(lo, hi);
}

double
analysis_median(const double *x, size_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, x, n * sizeof(*c));
	m = analysis_median_inplace(c, n);
	free(c);
	return m;
}

static double
median_copy(const double *x, size_t n, double *ws)
{
	memcpy(ws, x, n * sizeof(*x));
	return analysis_median_inplace(ws, n);
}

/* Robust sigma: 1.4826 * median |x - median|, with ws of n doubles. */
static double
robust_sigma(const double *x, size_t n, double center, double *ws)
{
	size_t i;

	for (i = 0; i < n; i++)
		ws[i] = fabs(x[i] - center);
	return MAD_SCALE * analysis_median_inplace(ws, n);
}

static void
mean_var(const double *x, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	for (i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

static int
cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Sorts x[0..n): insertion sort for the small samples of the hot loops. */
static void
sort_small(double *x, size_t n)
{
	size_t i, j;

	if (n > 32) {
		qsort(x, n, sizeof(*x), cmp_double);
		return;
	}
	for (i = 1; i < n; i++) {
		double v = x[i];

		for (j = i; j > 0 && x[j - 1] > v; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
}

/*
 * Hodges-Lehmann on sorted samples: the k-th smallest of the differences
 * D(i, j) = b[j] - a[i] without forming them.  Each row i is increasing
 * in j, and the threshold b[j] < v + a[i] grows with i, so the number of
 * differences below a value v is counted in O(na + nb) with one pointer.
 * Each row keeps a window [L, R) of columns that may still hold the
 * answer; a random candidate is the pivot and every count discards the
 * side that cannot hold it (selection in a sorted matrix, as in Monahan's
 * HL algorithm): O((na + nb) log(na nb)) expected, without the branch
 * misses of a quickselect over all na nb differences.
 */
#define HL_GATHER 16

struct hlsel {
	const double *a, *b;
	size_t na, nb;
	size_t *L, *R, *P, *Q;
	uint64_t rs; /* local xorshift state for pivots */
};

static double
hl_kth(struct hlsel *h, size_t k)
{
	size_t i, j, c, below, less, le, r;
	double v, buf[HL_GATHER];

	for (i = 0; i < h->na; i++) {
		h->L[i] = 0;
		h->R[i] = h->nb;
	}
	for (;;) {
		c = below = 0;
		for (i = 0; i < h->na; i++) {
			c += h->R[i] - h->L[i];
			below += h->L[i];
		}
		if (c <= HL_GATHER) {
			size_t n = 0;

			for (i = 0; i < h->na; i++)
				for (j = h->L[i]; j < h->R[i]; j++)
					buf[n++] = h->b[j] - h->a[i];
			sort_small(buf, n);
			return buf[k - below];
		}
		h->rs ^= h->rs << 13;
		h->rs ^= h->rs >> 7;
		h->rs ^= h->rs << 17;
		r = (size_t)(h->rs % c);
		for (i = 0; r >= h->R[i] - h->L[i]; i++)
			r -= h->R[i] - h->L[i];
		v = h->b[h->L[i] + r] - h->a[i];
		/* P[i]: columns with D < v; Q[i]: with D <= v. */
		less = le = 0;
		{
			size_t p = 0, q = 0;

			for (i = 0; i < h->na; i++) {
				while (p < h->nb && h->b[p] - h->a[i] < v)
					p++;
				if (q < p)
					q = p;
				while (q < h->nb && h->b[q] - h->a[i] <= v)
					q++;
				h->P[i] = p;
				h->Q[i] = q;
				less += p;
				le += q;
			}
		}
		if (k < less) {
			for (i = 0; i < h->na; i++)
				if (h->R[i] > h->P[i])
					h->R[i] = h->P[i];
		} else if (k >= le) {
			for (i = 0; i < h->na; i++)
				if (h->L[i] < h->Q[i])
					h->L[i] = h->Q[i];
		} else {
			return v;
		}
		for (i = 0; i < h->na; i++)
			if (h->L[i] > h->R[i])
				h->L[i] = h->R[i];
	}
}

/* ws holds 4 * na sizes' worth of doubles (as size_t). */
static double
hl_sorted(const double *a, size_t na, const double *b, size_t nb, size_t *ws)
{
	struct hlsel h = { a, b, na, nb, ws, ws + na, ws + 2 * na, ws + 3 * na,
		0x9e3779b97f4a7c15ULL };
	size_t total = na * nb, k = (total - 1) / 2;
	double v;

	v = hl_kth(&h, k);
	if (total % 2 == 0)
		v = v + (hl_kth(&h, k + 1) - v) / 2;
	return v;
}

#define HL_DIRECT_MAX 4096

static double pct(double logshift);

double
analysis_change_pct(
    const double *base, size_t nb, const double *cand, size_t nc)
{
	double *lb, *lc, v;
	size_t i;

	if (nb == 0 || nc == 0)
		return NAN;
	lb = xmalloc((nb + nc) * sizeof(*lb));
	lc = lb + nb;
	for (i = 0; i < nb + nc; i++) {
		double x = i < nb ? base[i] : cand[i - nb];

		if (!(x > 0) || !isfinite(x)) {
			free(lb);
			return NAN;
		}
		lb[i] = log(x);
	}
	v = pct(analysis_hl_shift(lb, nb, lc, nc));
	free(lb);
	return v;
}

double
analysis_hl_shift(const double *a, size_t na, const double *b, size_t nb)
{
	double *sa, *sb, v;
	size_t *ws, i, j, k = 0;

	if (na == 0 || nb == 0)
		return NAN;
	if (na * nb <= HL_DIRECT_MAX) {
		/* Small: all differences and one selection. */
		sa = xmalloc(na * nb * sizeof(*sa));
		for (i = 0; i < na; i++)
			for (j = 0; j < nb; j++)
				sa[k++] = b[j] - a[i];
		v = analysis_median_inplace(sa, k);
		free(sa);
		return v;
	}
	sa = xmalloc((na + nb) * sizeof(*sa));
	sb = sa + na;
	ws = xmalloc(4 * na * sizeof(*ws));
	memcpy(sa, a, na * sizeof(*sa));
	memcpy(sb, b, nb * sizeof(*sb));
	sort_small(sa, na);
	sort_small(sb, nb);
	v = hl_sorted(sa, na, sb, nb, ws);
	free(sa);
	free(ws);
	return v;
}

int
analysis_welch(double *t, double *df, double *p, const double *a, size_t na,
    const double *b, size_t nb)
{
	double ma, va, mb, vb, qa, qb, se2;

	if (na < 2 || nb < 2)
		return -1;
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	qa = va / (double)na;
	qb = vb / (double)nb;
	se2 = qa + qb;
	if (!(se2 > 0)) {
		/* No spread at all: any difference is exact. */
		*df = (double)(na + nb - 2);
		if (mb == ma) {
			*t = 0;
			*p = 1;
		} else {
			*t = mb > ma ? INFINITY : -INFINITY;
			*p = 0;
		}
		return 0;
	}
	*t = (mb - ma) / sqrt(se2);
	*df = se2 * se2 /
	    (qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	*p = analysis_t_p2(*t, *df);
	return 0;
}

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

static double
pct(double logshift)
{
	return expm1(logshift) * 100;
}

static int
check_values(const double *x, size_t n, const char *what, struct err *e)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return err_setc(e, ERR_INVALID,
			    "%s value %zu is not a finite number", what, i + 1);
		if (!(x[i] > 0))
			return err_setc(e, ERR_INVALID,
			    "%s value %zu (%g) is not positive: "
			    "cannot take its logarithm",
			    what, i + 1, x[i]);
	}
	return 0;
}

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
		    (norm_sf((c * rn2 + g->z[i] * rn) / sd) +
		        norm_sf((c * rn2 - g->z[i] * rn) / sd));
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

double
analysis_look_alpha(double alpha, size_t n, size_t first_runs, size_t max_runs)
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
		    alpha * spend((double)look / (double)max_runs) - spent;

		if (prev == 0) {
			c = norm_quantile_upper(share / 2);
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
	return 2 * norm_sf(c);
}

size_t
analysis_next_runs(const struct analysis_result *r, size_t n_now,
    size_t first_runs, size_t max_runs)
{
	size_t s, cap = max_runs;

	/* A suspected mode may need more runs than a shift: N clean runs
	 * miss a mode of share q with probability (1 - q)^N.  Past max_runs
	 * only on some evidence (p < LOWMODE_SUSPECT_P, not one far run
	 * against none), up to twice max_runs and ANALYSIS_MODE_MAX_RUNS. */
	if (r->mode == ANALYSIS_MODE_SUSPECTED &&
	    r->mode_p < LOWMODE_SUSPECT_P) {
		cap = 2 * max_runs;
		if (cap > ANALYSIS_MODE_MAX_RUNS)
			cap = ANALYSIS_MODE_MAX_RUNS;
		if (cap < max_runs)
			cap = max_runs;
	}
	if (r->verdict != ANALYSIS_INCONCLUSIVE || n_now >= cap)
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
static double
median_sorted(const double *x, size_t n)
{
	size_t k = (n - 1) / 2;

	return n % 2 ? x[k] : mid_mean(x[k], x[k + 1]);
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
static void
reject_range(const double *g, size_t n, double dist, size_t *lo, size_t *hi)
{
	double med = median_sorted(g, n);

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

static double
clipped_mean(const double *g, size_t n, double sigma_h, double rej)
{
	size_t lo_i, hi_i, i;
	double med, lo, hi, s = 0;

	reject_range(g, n, rej, &lo_i, &hi_i);
	g += lo_i;
	n = hi_i - lo_i;
	med = median_sorted(g, n);
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
static double
history_p(const double *hl, size_t m, size_t nb, size_t nc, double stat,
    double sigma_h, double rej, const struct analysis_opts *o)
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
		sort_small(ga, nb);
		sort_small(gb, nc);
		t = clipped_mean(gb, nc, sigma_h, rej) -
		    clipped_mean(ga, nb, sigma_h, rej);
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
	    : analysis_t_p2(norm_quantile_upper(p_cnt / 2), (double)(m - 1));
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
			stats[k] = hl_sorted(ra, na, rb, nb, cb + nb);
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
static void
bootstrap_ci(double *lo, double *hi, const double *a, size_t na,
    const double *b, size_t nb, const struct analysis_opts *o)
{
	double *stats = xmalloc(o->n_boot * sizeof(*stats));
	size_t n = na < nb ? na : nb, i;
	double tail = (1 - o->ci_level) / 2, z, pos, frac;

	bootstrap_stats(stats, a, na, b, nb, o);
	qsort(stats, o->n_boot, sizeof(*stats), cmp_double);
	z = sqrt((double)n / (double)(n - 1)) *
	    analysis_t_quantile(1 - tail, (double)(n - 1));
	tail = norm_sf(z);
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
 * Low modes, both ways: the "flaky ~50 % throughput drop" shape, a share
 * of runs far worse than the rest, appearing in the candidate or going
 * away in it (docs/ANALYSIS.md, "Low modes").
 *
 * The reference is the bulk of the better side: its median, and its
 * robust sigma.  A run is low when it is at least low_mode_pct worse
 * than that and LOWMODE_SIGMAS sigma away (a side with two modes of
 * about equal weight has a huge sigma and counts none: it cannot tell
 * which is its bulk).  The side that holds low runs must have the rest
 * of its runs where the reference is, else its bulk moved: a shift, not
 * a mode.
 *
 * Each side's share is judged against the other's by a one-sided Fisher
 * exact test; the base side is the base runs and, with a history, the
 * history's runs too: this VM's CPU time has two modes 1.7x apart, so a
 * base of 5 runs all in the fast mode and a candidate with one slow run
 * is the host, not the candidate.  p < LOWMODE_P with at least two low
 * runs on the side that has more is a confirmed mode; p <
 * LOWMODE_SUSPECT_P, or one low run against none, is suspected: more
 * runs are asked for.
 */
static void
check_modes(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const struct analysis_opts *o)
{
	double sign = o->better == ANALYSIS_HIGHER ? -1 : 1;
	double mb, mc, ref, sig, least, thr, p;
	const double *ls;
	size_t ns, kb, kc, kh = 0, nh = 0, nrest, i, nlow;
	size_t all = nb + nc + o->n_history;
	double *ws = xmalloc((2 * all + 1) * sizeof(*ws));
	double *low = ws, *rest = ws + all;
	int cand_worse;

	r->mode = ANALYSIS_MODE_NONE;
	r->mode_pct = r->mode_p = NAN;
	r->mode_hist_share = NAN;
	mb = median_copy(lb, nb, ws);
	mc = median_copy(lc, nc, ws);
	cand_worse = sign * (mc - mb) >= 0;
	ls = cand_worse ? lb : lc;
	ns = cand_worse ? nb : nc;
	ref = cand_worse ? mb : mc;
	sig = robust_sigma(ls, ns, ref, ws);
	least = thr = -log1p(-o->low_mode_pct / 100);
	if (LOWMODE_SIGMAS * sig > thr)
		thr = LOWMODE_SIGMAS * sig;

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
	r->mode_pct = pct(analysis_median_inplace(low, nlow) - ref);

	if ((double)kc * (double)(nb + nh) > (double)(kb + kh) * (double)nc) {
		/* The candidate has more: its rest must sit at the base. */
		split_low(lc, nc, ref, thr, sign, NULL, rest, &nrest);
		if (nrest < 2 ||
		    fabs(analysis_median_inplace(rest, nrest) - ref) > least)
			goto out;
		p = fisher_upper(kc, nc, kb + kh + kc, nb + nh + nc);
		r->mode_p = p;
		if (p < LOWMODE_P && kc >= 2) {
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
		if (p < LOWMODE_P && kb >= 2)
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
static void
check_spread(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const double *wb, const double *wc,
    double ref_var, double ref_df, const struct analysis_opts *o)
{
	double mb, vb, mc, vc;

	mean_var(wb, nb, &mb, &vb);
	mean_var(wc, nc, &mc, &vc);
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

		mean_var(lb, nb, &rmb, &rvb);
		mean_var(lc, nc, &rmc, &rvc);
		if (spread_grew(vc, nc, vb, (double)(nb - 1), o) &&
		    spread_grew(rvc, nc, rvb, (double)(nb - 1), o))
			r->unstable |= ANALYSIS_UNSTABLE_SPREAD;
	}
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
struct rrun {
	int64_t round;
	double y;
	int cand;
};

static int
cmp_rrun(const void *pa, const void *pb)
{
	const struct rrun *a = pa, *b = pb;

	return (a->round > b->round) - (a->round < b->round);
}

static int
blocked_test(struct analysis_result *r, double *shift, double *se, double *df,
    double *p, const struct rrun *x, size_t n)
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
	r->mode = ANALYSIS_MODE_NONE;
	r->mode_pct = r->mode_p = NAN;
	r->mode_base_share = r->mode_cand_share = r->mode_hist_share = NAN;
}

/* Appends to the note (printf). */
static void len_append(struct analysis_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_note(struct analysis_result *r, const char *fmt, ...)
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
static void
set_note(struct analysis_result *r, const char *fmt, ...)
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
	double med = median_sorted(x, n), lo, hi;
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
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
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
		double mb = nb ? median_sorted(sb, nb) : 0;
		double mc = nc ? median_sorted(sc, nc) : 0;

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

/*
 * Rounds (docs/ANALYSIS.md, "Rounds"): when the rounds differ (their F
 * test at ROUNDS_DIFFER_P), the change, its interval and its p-value
 * come from the within-round contrasts, so drift between rounds falls
 * out instead of widening the interval.  When they do not, the runs are
 * judged as one sample a side, as without rounds: the round term would
 * only cost degrees of freedom.  clip: the winsorising bounds of the
 * base's and the candidate's logs.
 */
static void
judge_rounds(struct analysis_result *r, const double *lb, size_t nb,
    const double *lc, size_t nc, const double *clip,
    const struct analysis_opts *o)
{
	struct rrun *x = xmalloc((nb + nc) * sizeof(*x));
	double shift, se, df, p, q;
	size_t i;

	for (i = 0; i < nb; i++) {
		x[i].round = o->base_round[i];
		x[i].y = fmin(fmax(lb[i], clip[0]), clip[1]);
		x[i].cand = 0;
	}
	for (i = 0; i < nc; i++) {
		x[nb + i].round = o->cand_round[i];
		x[nb + i].y = fmin(fmax(lc[i], clip[2]), clip[3]);
		x[nb + i].cand = 1;
	}
	qsort(x, nb + nc, sizeof(*x), cmp_rrun);
	if (blocked_test(r, &shift, &se, &df, &p, x, nb + nc) == 0 &&
	    r->rounds_p < ROUNDS_DIFFER_P) {
		q = analysis_t_quantile(1 - (1 - o->ci_level) / 2, df);
		r->change_pct = pct(shift);
		r->ci_low_pct = pct(shift - q * se);
		r->ci_high_pct = pct(shift + q * se);
		r->welch_t = se > 0 ? shift / se : NAN;
		r->welch_df = df;
		r->p_value = p;
		r->p_method = ANALYSIS_P_BLOCKED;
	}
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
		set_note(r, "below this host's noise floor, %.1f%%",
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
			set_note(r, "the candidate's spread grew too");
		} else {
			r->verdict = ANALYSIS_INCONCLUSIVE;
			set_note(r,
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
		set_note(r,
		    "neither significant nor within +-min_effect: more "
		    "runs needed");
}

int
analysis_compare(struct analysis_result *r, const double *base, size_t nb,
    const double *cand, size_t nc, const struct analysis_opts *oin,
    struct err *e)
{
	struct analysis_opts o = opts_fill(oin);
	double *lb, *lc, *wb, *wc, *ws, *hl = NULL, *hw = NULL;
	double shift, ci_lo, ci_hi, ref_var = 0, ref_df = 0, sigma_w;
	double sigma_h = 0, rej = INFINITY, *sb_u = NULL, *sc_u;
	double clip[4] = { -INFINITY, INFINITY, -INFINITY, INFINITY };
	size_t i, m = 0, mh = 0, hb = nb, hc = nc;
	int rc;

	result_init(r, nb, nc);
	raw_moments(base, nb, &r->base_mean, &r->base_sd);
	raw_moments(cand, nc, &r->cand_mean, &r->cand_sd);
	if ((rc = check_values(base, nb, "base", e)) != 0 ||
	    (rc = check_values(cand, nc, "candidate", e)) != 0)
		return rc;
	if (o.history != NULL && o.n_history > 0 &&
	    (rc = check_values(o.history, o.n_history, "history", e)) != 0)
		return rc;
	if (nb > MAX_RUNS_SIDE || nc > MAX_RUNS_SIDE)
		return err_setc(e, ERR_TOOBIG, "more than %d runs on a side",
		    MAX_RUNS_SIDE);
	if (nb == 0 || nc == 0) {
		double *t = xmalloc((nb + nc + 1) * sizeof(*t));

		if (nb > 0)
			r->base_median = median_copy(base, nb, t);
		if (nc > 0)
			r->cand_median = median_copy(cand, nc, t);
		free(t);
		set_note(r, "no runs on one side");
		return 0;
	}
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
	r->base_median = median_copy(base, nb, ws);
	r->cand_median = median_copy(cand, nc, ws);
	memcpy(wb, lb, nb * sizeof(*wb));
	memcpy(wc, lc, nc * sizeof(*wc));
	sort_small(wb, nb);
	sort_small(wc, nc);
	if (m > 0) {
		double med_h, mean_h;

		hl = ws + 2 * (nb + nc) + m;
		hw = hl + m;
		for (i = 0; i < m; i++)
			hl[i] = log(o.history[i]);
		med_h = median_copy(hl, m, ws);
		sigma_h = robust_sigma(hl, m, med_h, ws);
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
		mean_var(hw, mh, &mean_h, &ref_var);
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

		clip[0] = median_sorted(wb, nb) - kb;
		clip[1] = median_sorted(wb, nb) + kb;
		clip[2] = median_sorted(wc, nc) - kc;
		clip[3] = median_sorted(wc, nc) + kc;
		hb -= clip_sorted(wb, nb, kb / WINSOR_K, WINSOR_K);
		hc -= clip_sorted(wc, nc, kc / WINSOR_K, WINSOR_K);
	}
	{
		size_t *sw = xmalloc(4 * nb * sizeof(*sw));

		shift = hl_sorted(wb, nb, wc, nc, sw);
		free(sw);
	}
	r->change_pct = pct(shift);
	if (nb < 2 || nc < 2) {
		set_note(r,
		    "fewer than 2 runs on a side: no interval or "
		    "p-value");
		goto out;
	}

	bootstrap_ci(&ci_lo, &ci_hi, wb, nb, wc, nc, &o);
	r->ci_low_pct = pct(ci_lo);
	r->ci_high_pct = pct(ci_hi);
	welch_yuen(r, wb, nb, hb, wc, nc, hc);
	r->p_method = ANALYSIS_P_WELCH;

	if (m > 0 && sigma_h > 0 && ref_var > 0) {
		double *sb = ws, *sc = ws + nb, vb, vc, mb, mc, pooled, stat;
		size_t lob, hib, loc, hic, kb, kc;

		/* Raw logs, sorted; k*: the runs left after rejection. */
		memcpy(sb, lb, nb * sizeof(*sb));
		memcpy(sc, lc, nc * sizeof(*sc));
		sort_small(sb, nb);
		sort_small(sc, nc);
		reject_range(sb, nb, rej, &lob, &hib);
		reject_range(sc, nc, rej, &loc, &hic);
		kb = hib - lob;
		kc = hic - loc;
		mean_var(sb + lob, kb, &mb, &vb);
		mean_var(sc + loc, kc, &mc, &vc);
		pooled = kb + kc > 2
		    ? ((double)(kb - 1) * vb + (double)(kc - 1) * vc) /
		        (double)(kb + kc - 2)
		    : 0;
		if (kb + kc <= 2 || mh < kb + kc) {
			/* Welch stays. */
		} else if (analysis_f_sf(pooled / ref_var,
		               (double)(kb + kc - 2), ref_df) >= NOISIER_P) {
			stat = clipped_mean(sc, nc, sigma_h, rej) -
			    clipped_mean(sb, nb, sigma_h, rej);
			r->p_value =
			    history_p(hw, mh, kb, kc, stat, sigma_h, rej, &o);
			r->p_method = ANALYSIS_P_HISTORY;
		} else {
			set_note(r,
			    "runs noisier than the history: Welch "
			    "p-value");
		}
	}
	r->alpha_used = analysis_look_alpha(
	    o.alpha, nb < nc ? nb : nc, o.first_runs, o.max_runs);
	if (o.base_round != NULL && o.cand_round != NULL)
		judge_rounds(r, lb, nb, lc, nc, clip, &o);

	if (!o.no_low_modes)
		check_modes(r, lb, nb, lc, nc, &o);
	check_spread(r, lb, nb, lc, nc, sb_u, sc_u, ref_var, ref_df, &o);
	decide(r, &o);
out:
	r->p_adjusted = r->p_value;
	free(lb);
	free(sb_u);
	free(ws);
	return 0;
}

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
			set_note(&res[i],
			    "not significant after false "
			    "discovery rate control across metrics");
		}
	}
	free(p);
}

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

	mean_var(y + a, na, &ma, &va);
	mean_var(y + m, nb, &mb, &vb);
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
	return robust_sigma(ws, n - lag, 0, ws + n) / M_SQRT2;
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
	mean_var(q, n, &mean, &var);
	stride = (n + CP_KDE_MAX - 1) / CP_KDE_MAX;
	for (i = 0; i < n; i += stride)
		r[m++] = q[i];
	qsort(q, n, sizeof(*q), cmp_double);
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
	if ((rc = check_values(x, n, "series", e)) != 0)
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

		med = median_copy(y + a, b - a, ws);
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
		c->before = median_copy(x + a, cps[i] - a, ws + n + 1);
		c->after = median_copy(x + cps[i], b - cps[i], ws + n + 1);
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
