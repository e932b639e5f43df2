/*
 * Distributions and estimators for perfwatch's statistics (analysis.h,
 * docs/ANALYSIS.md): the PRNG, the special functions (log Gamma,
 * incomplete beta, t, F and normal tails and quantiles), selection and
 * medians, robust scale, the Hodges-Lehmann shift and Welch's test.
 *
 * Everything here is written from the textbook definitions: the special
 * functions and the PRNG (xoshiro256**, splitmix64) are short enough
 * that carrying our own keeps the module free of globals (libm's lgamma
 * writes signgam) and reproducible.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "common/xalloc.h"

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

double
analysis_i_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

double
analysis_i_norm_quantile_upper(double p)
{
	double lo = 0, hi = 40, mid;
	int i;

	/* z with P(Z >= z) = p, 0 < p <= 0.5, by bisection. */
	for (i = 0; i < 200; i++) {
		mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (analysis_i_norm_sf(mid) > p)
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
double
analysis_i_mid_mean(double a, double b)
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
	return analysis_i_mid_mean(lo, hi);
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

double
analysis_i_median_copy(const double *x, size_t n, double *ws)
{
	memcpy(ws, x, n * sizeof(*x));
	return analysis_median_inplace(ws, n);
}

/* Robust sigma: 1.4826 * median |x - median|, with ws of n doubles. */
double
analysis_i_robust_sigma(const double *x, size_t n, double center, double *ws)
{
	size_t i;

	for (i = 0; i < n; i++)
		ws[i] = fabs(x[i] - center);
	return MAD_SCALE * analysis_median_inplace(ws, n);
}

void
analysis_i_mean_var(const double *x, size_t n, double *mean, double *var)
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

int
analysis_i_cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Sorts x[0..n): insertion sort for the small samples of the hot loops. */
void
analysis_i_sort_small(double *x, size_t n)
{
	size_t i, j;

	if (n > 32) {
		qsort(x, n, sizeof(*x), analysis_i_cmp_double);
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
			analysis_i_sort_small(buf, n);
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
double
analysis_i_hl_sorted(
    const double *a, size_t na, const double *b, size_t nb, size_t *ws)
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
	v = analysis_i_pct(analysis_hl_shift(lb, nb, lc, nc));
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
	analysis_i_sort_small(sa, na);
	analysis_i_sort_small(sb, nb);
	v = analysis_i_hl_sorted(sa, na, sb, nb, ws);
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
	analysis_i_mean_var(a, na, &ma, &va);
	analysis_i_mean_var(b, nb, &mb, &vb);
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

double
analysis_i_pct(double logshift)
{
	return expm1(logshift) * 100;
}

int
analysis_i_check_values(
    const double *x, size_t n, const char *what, struct err *e)
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
