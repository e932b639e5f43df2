/*
 * The public reads of patch series (docs/API.md): the series list and
 * the time to report over recent series.
 */
#include <stdlib.h>

#include "common/json.h"
#include "daemon/series_latency.h"
#include "store/mail_skipped.h"
#include "store/series.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/rows_series.h"

/* Patch mail taken into no series that the first page lists. */
#define API_SERIES_SKIPPED 50

void
api_read_series(struct ctx *x)
{
	struct store_series_list l;
	int64_t limit, cursor;
	json_t *out;
	int r;

	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = store_series_list(x->s, &l, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	out = rows_series_list_json(&l);
	store_series_list_release(&l);
	/* The first page also says which patch mail joined no series. */
	if (cursor == 0) {
		struct store_mail_skipped_list sk;

		if ((r = store_mail_skipped_list(
		         x->s, &sk, API_SERIES_SKIPPED)) != 0) {
			json_decref(out);
			reply_store_err(x, r);
			return;
		}
		json_object_set_new(
		    out, "skipped", rows_mail_skipped_json(&sk));
		store_mail_skipped_release(&sk);
	}
	reply_json(x, 200, out);
}

int
api_latency_sum(struct store *s, int64_t since, struct series_stage_sum *sum,
    size_t *nseries)
{
	struct store_series_latency *l;
	int r;

	if ((r = store_series_latency_list(s, &l, nseries, since, 1000)) != 0)
		return r;
	series_latency_summary(sum, l, *nseries);
	free(l);
	return 0;
}

/*
 * GET /api/v1/latency[?days=N]: time to report over the series seen in
 * the last N days (default 30, the newest 1000): per stage, the median
 * and 90th percentile (daemon/series_latency.h).
 */
void
api_read_latency(struct ctx *x)
{
	struct series_stage_sum sum[SERIES_STAGES];
	int64_t days, since;
	size_t n;
	int r;

	if (api_query_int(x, &days, "days", 30, 1, 3650) == -1)
		return;
	since = api_now_s() - days * 86400;
	if ((r = api_latency_sum(x->s, since, sum, &n)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, rows_latency_summary_json(sum, n, since));
}
