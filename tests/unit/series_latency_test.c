/*
 * daemon/series_latency: stages from a series' times, their median and
 * 90th percentile, and the text of the series page.
 */
#include <string.h>

#include "common/buf.h"
#include "daemon/series_latency.h"
#include "tests/unit/test.h"

static struct store_series_latency
lat(int64_t posted, int64_t total)
{
	struct store_series_latency l = { 1, posted, posted + 3, posted + 4,
		posted + 10, posted + 70, posted + 71, posted + total };

	return l;
}

TEST(test_series_latency__stages)
{
	struct store_series_latency l = lat(1000, 90);
	struct buf b = BUF_INIT(1024);

	ASSERT_INTEQ(series_stage_s(&l, 0), 3);  /* pickup */
	ASSERT_INTEQ(series_stage_s(&l, 1), 1);  /* apply */
	ASSERT_INTEQ(series_stage_s(&l, 2), 6);  /* queue */
	ASSERT_INTEQ(series_stage_s(&l, 3), 60); /* measure */
	ASSERT_INTEQ(series_stage_s(&l, 4), 1);  /* verdict */
	ASSERT_INTEQ(series_stage_s(&l, 5), 19); /* mail */
	ASSERT_INTEQ(series_stage_s(&l, 6), 90); /* total */
	ASSERT_INTEQ(series_stage_s(&l, 7), -1);
	series_latency_text(&b, &l);
	ASSERT_STREQ(b.data,
	    "pickup 3 s, apply 1 s, queue 6 s, measure 60 s, "
	    "verdict 1 s, mail 19 s, total 90 s");
	/* Not mailed yet: mail and total unknown; a Date ahead is 0. */
	l.mailed = 0;
	l.seen = l.posted - 5;
	ASSERT_INTEQ(series_stage_s(&l, 5), -1);
	ASSERT_INTEQ(series_stage_s(&l, 6), -1);
	ASSERT_INTEQ(series_stage_s(&l, 0), 0);
	memset(&l, 0, sizeof(l));
	buf_reset(&b);
	series_latency_text(&b, &l);
	ASSERT_STREQ(b.data, "not reported yet");
	buf_release(&b);
}

TEST(test_series_latency__summary)
{
	struct store_series_latency l[10];
	struct series_stage_sum sum[SERIES_STAGES];
	size_t i;

	/* Totals 100, 200, ..., 1000 s; the last series is not mailed. */
	for (i = 0; i < 10; i++)
		l[i] = lat(5000, (int64_t)(i + 1) * 100);
	l[9].mailed = 0;
	series_latency_summary(sum, l, 10);
	ASSERT_INTEQ(sum[6].n, 9);
	/* Nearest rank over 100..900: the 5th and the 9th (ceil 8.1). */
	ASSERT_INTEQ(sum[6].median, 500);
	ASSERT_INTEQ(sum[6].p90, 900);
	ASSERT_INTEQ(sum[0].n, 10);
	ASSERT_INTEQ(sum[0].median, 3);
	series_latency_summary(sum, l, 0);
	ASSERT_INTEQ(sum[6].n, 0);
	ASSERT_INTEQ(sum[6].median, -1);
}

TEST(test_series_latency__histogram)
{
	/* Totals of 90 s, 10 min and 2 days; a third series not mailed. */
	struct store_series_latency l[4] = { lat(1000, 90), lat(2000, 600),
		lat(3000, 2 * 86400), lat(4000, 0) };
	struct series_stage_hist h[SERIES_STAGES];
	size_t j;

	l[3].mailed = 0;
	series_latency_hist(h, l, 4);
	/* total: known for three, each bucket counts those at or below
	 * its bound (5, 15, 60, 300, 900, 3600, 4 h, 1 d, 3 d, 10 d). */
	ASSERT_INTEQ(h[6].count, 3);
	ASSERT_INTEQ(h[6].sum, 90 + 600 + 2 * 86400);
	{
		const uint64_t want[SERIES_NLE] = { 0, 0, 0, 1, 2, 2, 2, 2, 3,
			3 };

		for (j = 0; j < SERIES_NLE; j++)
			ASSERT_INTEQ(h[6].le[j], want[j]);
	}
	/* pickup: 3 s for all four, in every bucket. */
	ASSERT_INTEQ(h[0].count, 4);
	ASSERT_INTEQ(h[0].le[0], 4);
	ASSERT_INTEQ(h[0].sum, 12);
	/* Buckets never shrink with their bound. */
	for (j = 1; j < SERIES_NLE; j++)
		ASSERT(h[5].le[j] >= h[5].le[j - 1]);
	ASSERT_INTEQ(h[5].count, 3);
}
