#ifndef DAEMON_SERIES_LATENCY_H
#define DAEMON_SERIES_LATENCY_H

/*
 * Time to report: how long a posted series takes to its report mail,
 * stage by stage, from the times the store keeps
 * (store_series_latency).  Pure.
 *
 *   pickup   posted (the mail's Date) to seen (recorded)
 *   apply    seen to applied (its pairs made)
 *   queue    applied to the first run started
 *   measure  the first run started to the last run uploaded
 *   verdict  the last run to the last final verdict
 *   mail     the verdict to the first report mail sent
 *   total    posted to the first report mail sent
 *
 * A stage is known when both its ends happened; a negative span (a
 * mail's Date ahead of our clock) counts as 0.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "store/series.h"

#define SERIES_STAGES 7

struct series_stage {
	const char *name, *from, *to; /* "pickup", "posted", "seen" */
};
extern const struct series_stage series_stages[SERIES_STAGES];

/* Stage k of l in seconds, or -1 when not known. */
int64_t series_stage_s(const struct store_series_latency *l, size_t k);

/* Over many series: per stage, how many know it, median and 90th
 * percentile (nearest rank) in seconds; -1 when none does. */
struct series_stage_sum {
	size_t n;
	int64_t median, p90;
};
void series_latency_summary(struct series_stage_sum out[SERIES_STAGES],
    const struct store_series_latency *l, size_t n);

/*
 * The same as histograms for /metrics: per stage, how many of l know
 * it within each bound of series_le_s (cumulative, as Prometheus
 * buckets are), how many know it at all, and the sum of their seconds.
 * The bounds span a poll interval's seconds to the days a list's
 * performance verdicts take elsewhere.
 */
#define SERIES_NLE 10
extern const int64_t series_le_s[SERIES_NLE];
struct series_stage_hist {
	uint64_t le[SERIES_NLE], count;
	int64_t sum;
};
void series_latency_hist(struct series_stage_hist out[SERIES_STAGES],
    const struct store_series_latency *l, size_t n);

/* "pickup 3 s, apply 1 s, ..., total 1 min 20 s" (known stages), or
 * "not reported yet" when none is known. */
void series_latency_text(struct buf *, const struct store_series_latency *);

#endif
