#include <math.h>

#include "analysis/spread.h"
#include "tests/unit/test.h"

/* 10, 12, 14: mean 12, sample sd 2 (n - 1), 16.7% of the mean. */
TEST(test_spread__mean_sd_and_pct)
{
	const double x[] = { 14, 10, 12 };
	struct spread s;

	spread_of(&s, x, 3);
	ASSERT_INTEQ((long long)s.n, 3);
	ASSERT_NEAR(s.mean, 12, 1e-12);
	ASSERT_NEAR(s.sd, 2, 1e-12);
	ASSERT_NEAR(spread_pct(s.mean, s.sd), 100.0 / 6, 1e-9);
	/* A negative mean's %stddev is of its size. */
	ASSERT_NEAR(spread_pct(-12, 2), 100.0 / 6, 1e-9);
}

/* Fewer than two values have no sd; none have no mean: unknown, not 0. */
TEST(test_spread__too_few_values_unknown)
{
	const double x[] = { 7.5 };
	struct spread s;

	spread_of(&s, x, 1);
	ASSERT_NEAR(s.mean, 7.5, 0);
	ASSERT(isnan(s.sd));
	ASSERT(isnan(spread_pct(s.mean, s.sd)));
	spread_of(&s, NULL, 0);
	ASSERT_INTEQ((long long)s.n, 0);
	ASSERT(isnan(s.mean) && isnan(s.sd));
	ASSERT(isnan(spread_pct(0, 1)));
	ASSERT(isnan(spread_pct(NAN, 1)));
}

/* Large values with a small spread keep their digits (a sum of squares
 * in one pass would lose them), equal values have sd 0, and a value
 * that is not finite makes both unknown. */
TEST(test_spread__large_equal_and_bad_values)
{
	const double big[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
	const double same[] = { 5, 5, 5, 5 };
	const double bad[] = { 1, NAN, 3 };
	struct spread s;

	spread_of(&s, big, 3);
	ASSERT_NEAR(s.mean, 1e9 + 2, 1e-6);
	ASSERT_NEAR(s.sd, 1, 1e-9);
	spread_of(&s, same, 4);
	ASSERT_NEAR(s.sd, 0, 0);
	ASSERT_NEAR(spread_pct(s.mean, s.sd), 0, 0);
	spread_of(&s, bad, 3);
	ASSERT(isnan(s.mean) && isnan(s.sd));
}
