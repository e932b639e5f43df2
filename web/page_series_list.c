/*
 * The series page, GET /series: the list GET /api/v1/series gives, from
 * the same typed read (store_series_list).
 */
#include <stdlib.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "store/series.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

void
web_series_list(struct ctx *x)
{
	struct view_series_list v = { 0 };
	struct view_series_item *rows;
	struct store_series_list l;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor = web_q_cursor(x);
	char next[32];
	size_t i;
	int r;

	if ((r = store_series_list(x->s, &l, PAGE_ROWS, cursor)) != 0) {
		web_page_store_err(x, r);
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
	view_series_list_render(&b, &v);
	free(rows);
	store_series_list_release(&l);
	web_reply_page(x, 200, &b);
}
