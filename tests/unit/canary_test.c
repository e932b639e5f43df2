/*
 * daemon/canary: the noise floor and the smallest detectable effect.
 */
#include <math.h>

#include "daemon/canary.h"
#include "tests/unit/test.h"

/* Moments of one job's runs. */
static struct canary_moment
moments(const double *v, int n)
{
	struct canary_moment m = { 0, 0, 0 };
	int i;

	for (i = 0; i < n; i++) {
		m.n++;
		m.sum += v[i];
		m.sumsq += v[i] * v[i];
	}
	return m;
}

TEST(test_canary__cv_pooled_within_jobs)
{
	/* Two jobs at different levels: the spread is the one inside each
	 * job (sd 1 around 99 and around 101), not the step between them. */
	static const double a[] = { 98, 99, 100 }, b[] = { 100, 101, 102 };
	struct canary_moment m[2];
	double cv;

	m[0] = moments(a, 3);
	m[1] = moments(b, 3);
	cv = canary_cv_pct(m, 2);
	ASSERT_MSG(fabs(cv - 1.0) < 1e-9, "cv %g", cv);
	/* One job alone: its own sample sd over its mean. */
	cv = canary_cv_pct(m, 1);
	ASSERT_MSG(fabs(cv - 100.0 / 99.0) < 1e-9, "cv %g", cv);
}

TEST(test_canary__cv_unknown)
{
	static const double one[] = { 5 }, zero[] = { -1, 0, 1 };
	struct canary_moment m[1] = { { 0, 0, 0 } };

	ASSERT(isnan(canary_cv_pct(m, 0)));
	m[0] = moments(one, 1); /* no degree of freedom */
	ASSERT(isnan(canary_cv_pct(m, 1)));
	m[0] = moments(zero, 3); /* a zero mean has no relative spread */
	ASSERT(isnan(canary_cv_pct(m, 1)));
}

TEST(test_canary__mde)
{
	/* (1.96 + 0.84) sqrt(2/n) CV: 2% noise at 8 runs per side is
	 * 2.80 * 0.5 * 2 = 2.80% detectable. */
	double d = canary_mde_pct(2.0, 8);

	ASSERT_MSG(fabs(d - 2.801585) < 1e-5, "mde %g", d);
	/* Four times the runs halve it. */
	ASSERT(fabs(canary_mde_pct(2.0, 32) - d / 2) < 1e-9);
	ASSERT(isnan(canary_mde_pct(NAN, 8)));
	ASSERT(isnan(canary_mde_pct(2.0, 1)));
}
