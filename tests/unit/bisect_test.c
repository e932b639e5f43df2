/*
 * Tests of the pure parts of daemon/bisect.c: a step's class from its
 * two comparisons, and the next commit of a search (with skips, the
 * step count of 64 commits, regressions in two parts).
 */
#include <math.h>
#include <string.h>

#include "daemon/bisect.h"
#include "tests/unit/test.h"

/* A 2.5x regression of a lower-is-better metric: +150%. */
#define R 150.0

TEST(test_bisect__classify)
{
	/* Like the good end, far better than the bad end. */
	ASSERT_INTEQ(
	    bisect_classify("unchanged", 0.4, "improvement", -60, 5, R),
	    BISECT_GOOD);
	/* Undecided against the good end but near it: good. */
	ASSERT_INTEQ(
	    bisect_classify("inconclusive", -7.6, "improvement", -59, 5, R),
	    BISECT_GOOD);
	/* Bad: worse than the good end, like the bad end. */
	ASSERT_INTEQ(
	    bisect_classify("regression", 149, "unchanged", -0.3, 5, R),
	    BISECT_BAD);
	ASSERT_INTEQ(
	    bisect_classify("regression", 156, "inconclusive", 3, 5, R),
	    BISECT_BAD);
	/* Between both ends with two clear verdicts: partial. */
	ASSERT_INTEQ(
	    bisect_classify("regression", 60, "improvement", -37, 5, R),
	    BISECT_PARTIAL);
	ASSERT_STREQ(bisect_class_name(BISECT_PARTIAL), "bad");
	/* ...but an unstable side there is no evidence of a level. */
	ASSERT_INTEQ(bisect_classify("unstable", 66, "improvement", -60, 5, R),
	    BISECT_INCONCLUSIVE);
	/* Undecided and leaning a third of the way to the bad end. */
	ASSERT_INTEQ(
	    bisect_classify("inconclusive", 52.9, "improvement", -37, 5, R),
	    BISECT_INCONCLUSIVE);
	/* Unstable with a level shift beyond half the regression counts;
	 * within it, not. */
	ASSERT_INTEQ(
	    bisect_classify("unstable", 140, "unchanged", 1, 5, R), BISECT_BAD);
	ASSERT_INTEQ(bisect_classify("unstable", 0.5, "improvement", -59, 5, R),
	    BISECT_GOOD);
	ASSERT_INTEQ(bisect_classify("unstable", 20, "unstable", -30, 5, R),
	    BISECT_INCONCLUSIVE);
	/* Told apart from neither end, or better than the good end. */
	ASSERT_INTEQ(bisect_classify("unchanged", 0, "unchanged", 0, 5, R),
	    BISECT_INCONCLUSIVE);
	ASSERT_INTEQ(
	    bisect_classify("improvement", -30, "improvement", -70, 5, R),
	    BISECT_INCONCLUSIVE);
	ASSERT_INTEQ(
	    bisect_classify(NULL, NAN, "improvement", -60, 5, R), BISECT_GOOD);
	ASSERT_INTEQ(
	    bisect_classify(NULL, NAN, NULL, NAN, 5, R), BISECT_INCONCLUSIVE);
	/* A higher-is-better metric (throughput fell by half): the
	 * verdicts carry the direction, unstable goes by the sign. */
	ASSERT_INTEQ(bisect_classify("unstable", -45, "unchanged", 2, 5, -50),
	    BISECT_BAD);
	ASSERT_INTEQ(bisect_classify("unchanged", 1, "unstable", 95, 5, -50),
	    BISECT_GOOD);
}

/* Bisects n candidates whose first bad one is k with a perfect oracle;
 * skip (may be -1) is skipped.  Returns the steps, or -1. */
static int
search(size_t n, long k, long skip, long *out_found)
{
	enum bisect_class cls[128];
	size_t i, next, steps = 0;
	long lo, hi;
	int r;

	for (i = 0; i < n; i++)
		cls[i] = BISECT_MEASURING;
	cls[n - 1] = BISECT_BAD;
	while ((r = bisect_next(cls, n, &lo, &hi, &next)) == 1) {
		/* Never twice, never outside (lo, hi). */
		if (cls[next] != BISECT_MEASURING || (long)next <= lo ||
		    (long)next >= hi)
			return -1;
		steps++;
		if ((long)next == skip)
			cls[next] = BISECT_SKIP;
		else
			cls[next] = (long)next < k ? BISECT_GOOD : BISECT_BAD;
		if (steps > n)
			return -1;
	}
	*out_found = r == 0 ? hi : -1;
	return (int)steps;
}

TEST(test_bisect__next_64_commits)
{
	long k, found;
	int steps, most = 0;

	/* Every culprit position of 64 candidates (the bad end is 63). */
	for (k = 0; k < 64; k++) {
		steps = search(64, k, -1, &found);
		ASSERT_MSG(found == k, "culprit %ld found as %ld", k, found);
		if (steps > most)
			most = steps;
	}
	ASSERT_INTEQ(most, 6); /* log2(64) */
	/* The first midpoint skipped: its neighbour is taken, one more
	 * step, the same answer. */
	ASSERT(search(64, 45, 31, &found) == 7 && found == 45);
	/* The culprit itself skipped: only skipped commits are left in
	 * the narrowed range, and nothing is named. */
	ASSERT(search(64, 31, 31, &found) >= 0);
	ASSERT_INTEQ(found, -1);
}

TEST(test_bisect__next_only_skipped_left)
{
	enum bisect_class cls[5] = { BISECT_GOOD, BISECT_SKIP,
		BISECT_INCONCLUSIVE, BISECT_MEASURING, BISECT_BAD };
	size_t next = 99;
	long lo, hi;

	/* 3 is untested: it is next. */
	ASSERT_INTEQ(bisect_next(cls, 5, &lo, &hi, &next), 1);
	ASSERT_INTEQ(next, 3);
	ASSERT_INTEQ(lo, 0);
	ASSERT_INTEQ(hi, 4);
	/* 3 bad: 1 and 2 are left, neither measurable: -1, the range
	 * (0, 3] stays. */
	cls[3] = BISECT_BAD;
	ASSERT_INTEQ(bisect_next(cls, 5, &lo, &hi, &next), -1);
	ASSERT_INTEQ(lo, 0);
	ASSERT_INTEQ(hi, 3);
	/* A partial step counts as bad: the first crossing. */
	cls[1] = BISECT_PARTIAL;
	ASSERT_INTEQ(bisect_next(cls, 5, &lo, &hi, &next), 0);
	ASSERT_INTEQ(hi, 1);
	/* One candidate (the bad end alone): found at once. */
	{
		enum bisect_class one[1] = { BISECT_BAD };

		ASSERT_INTEQ(bisect_next(one, 1, &lo, &hi, &next), 0);
		ASSERT_INTEQ(lo, -1);
		ASSERT_INTEQ(hi, 0);
	}
}

/* Two parts: 20 and 40 each add half; steps between them are partial.
 * The search ends at the first crossing. */
TEST(test_bisect__two_parts_first_crossing)
{
	enum bisect_class cls[64];
	size_t i, next;
	long lo, hi;
	int r, steps = 0;

	for (i = 0; i < 64; i++)
		cls[i] = BISECT_MEASURING;
	cls[63] = BISECT_BAD;
	while ((r = bisect_next(cls, 64, &lo, &hi, &next)) == 1 && steps < 64) {
		steps++;
		cls[next] = next < 20 ? BISECT_GOOD
		    : next < 40       ? BISECT_PARTIAL
		                      : BISECT_BAD;
	}
	ASSERT_INTEQ(r, 0);
	ASSERT_INTEQ(hi, 20);
}

/* docs/BISECT.md: a step measured on a suspect pair or a quarantined
 * host is not classified; it says why and is measured again. */
TEST(test_bisect__suspect_or_quarantined_is_not_classified)
{
	char why[300];

	ASSERT(bisect_untrusted(why, sizeof(why), NULL, NULL, NULL) == 0);
	ASSERT(bisect_untrusted(why, sizeof(why), "", "", "") == 0);
	ASSERT(bisect_untrusted(why, sizeof(why),
	           "pair 3 is suspect: thp "
	           "always vs never",
	           NULL, NULL) == 1);
	ASSERT_STREQ(why,
	    "not classified: pair 3 is suspect: thp always vs never; "
	    "measured again");
	ASSERT(bisect_untrusted(
	           why, sizeof(why), "", "pair 4 is suspect: x", NULL) == 1);
	ASSERT(strstr(why, "pair 4 is suspect: x") != NULL);
	ASSERT(bisect_untrusted(why, sizeof(why), NULL, NULL,
	           "the host is quarantined: canary pair 9") == 1);
	ASSERT(strstr(why, "the host is quarantined: canary pair 9") != NULL);
	/* A suspect step is "measuring" again: the search picks the same
	 * commit, not its neighbour. */
	{
		enum bisect_class c[8] = { 0 };
		long lo, hi;
		size_t next = 0;

		c[7] = BISECT_BAD;
		ASSERT(bisect_next(c, 8, &lo, &hi, &next) == 1);
		ASSERT_INTEQ(next, 3);
		ASSERT(bisect_next(c, 8, &lo, &hi, &next) == 1);
		ASSERT_INTEQ(next, 3);
	}
}
