/*
 * The series page, GET /series: the list GET /api/v1/series gives, from
 * the same typed read (store_series_list), under the time to report of
 * the last days' series that GET /api/v1/latency gives (api_latency_sum).
 */
#include <stdlib.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "daemon/series_latency.h"
#include "store/mail_skipped.h"
#include "store/series.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* Patch mail taken into no series, listed on the first page. */
#define SKIPPED_ROWS 50

/* The days of series whose time to report the page sums up, as GET
 * /api/v1/latency's default. */
#define LATENCY_DAYS 30

void
web_series_list(struct ctx *x)
{
	struct view_series_list v = { 0 };
	struct view_series_item *rows;
	struct store_series_list l;
	struct store_mail_skipped_list sk = { 0 };
	struct view_mail_skipped *skipped = NULL;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor = web_q_cursor(x);
	struct series_stage_sum sum[SERIES_STAGES];
	struct view_latency_stage stages[SERIES_STAGES];
	char next[32];
	size_t i, k, nseries = 0;
	int r;

	if ((r = store_series_list(x->s, &l, PAGE_ROWS, cursor)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		const struct store_series_row *o = &l.v[i];
		struct view_series_item *g = &rows[i];

		g->id = o->id;
		g->version = o->version;
		g->total = o->total;
		g->title = o->title;
		g->author = o->author;
		g->inbox = o->inbox;
		g->tree = o->tree;
		g->branch = o->branch;
		g->state = o->state;
		g->error = o->error;
		g->commit = o->commit_sha;
		g->verdicts = o->verdicts;
		g->time = o->has_time ? o->time : 0;
	}
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	v.latency_days = LATENCY_DAYS;
	if ((r = api_latency_sum(
	         x->s, x->now - LATENCY_DAYS * 86400, sum, &nseries)) != 0) {
		free(rows);
		store_series_list_release(&l);
		reply_page_store_err(x, r);
		return;
	}
	for (k = 0; k < SERIES_STAGES; k++) {
		stages[k].name = series_stages[k].name;
		stages[k].from = series_stages[k].from;
		stages[k].to = series_stages[k].to;
		stages[k].n = (int64_t)sum[k].n;
		stages[k].median_s = sum[k].median;
		stages[k].p90_s = sum[k].p90;
	}
	if (cursor == 0 &&
	    (r = store_mail_skipped_list(x->s, &sk, SKIPPED_ROWS)) != 0) {
		free(rows);
		store_series_list_release(&l);
		reply_page_store_err(x, r);
		return;
	}
	skipped = xcalloc(sk.n + 1, sizeof(*skipped));
	for (i = 0; i < sk.n; i++) {
		skipped[i].inbox = sk.v[i].inbox;
		skipped[i].message_id = sk.v[i].message_id;
		skipped[i].subject = sk.v[i].subject;
		skipped[i].reason = sk.v[i].reason;
		skipped[i].at = sk.v[i].created;
	}
	v.skipped = skipped;
	v.nskipped = sk.n;
	v.latency_series = (int64_t)nseries;
	v.stages = stages;
	v.nstages = SERIES_STAGES;
	view_series_list_render(&b, &v);
	free(skipped);
	store_mail_skipped_release(&sk);
	free(rows);
	store_series_list_release(&l);
	reply_page(x, 200, &b);
}
