/*
 * The store: typed reads of the history, job and series pages
 * (store/pages.h).  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "store/pages.h"
#include "store/store.h"
#include "store/store_int.h"

static int
id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
hist_cp_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_hist_cp *c = row;

	(void)arg;
	c->id = sqlite3_column_int64(st, 0);
	c->job_id = sqlite3_column_int64(st, 1);
	c->pair_id = sqlite3_column_int64(st, 2);
	c->before = store_i_col_num(st, 3);
	c->after = store_i_col_num(st, 4);
	c->change_pct = store_i_col_num(st, 5);
	c->p = store_i_col_num(st, 6);
	c->direction = store_i_web_text(st, 7);
}

int
store_history_page_cps(struct store *s, struct store_hist_cps *out,
    const struct store_history_q *q, const int64_t *pair_ids, size_t n)
{
	/*
	 * From the page's pairs to their points (history_points is keyed
	 * by series and pair too) and on to a change point at the same
	 * position: a few lookups a pair on the page.
	 */
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT cp.id, hp.job_id, hp.pair_id, cp.before, cp.after,"
	    " cp.change_pct, cp.p, cp.direction"
	    " FROM history_series hs"
	    " LEFT JOIN hosts h ON h.id = hs.host_id"
	    /* CROSS: in this order, never a scan of a series' points */
	    " CROSS JOIN json_each(?7) je"
	    " CROSS JOIN history_points hp ON hp.series_id = hs.id"
	    "  AND hp.pair_id = je.value"
	    " CROSS JOIN change_points cp ON cp.series_id = hs.id"
	    "  AND cp.seq = hp.seq"
	    " WHERE hs.job = ?1 AND hs.point = ?2 AND hs.metric = ?3"
	    " AND (?4 IS NULL OR hs.tree = ?4)"
	    " AND (?5 IS NULL OR hs.branch = ?5)"
	    " AND (?6 IS NULL OR h.name = ?6)"
	    " ORDER BY cp.series_id, cp.seq");
	struct buf ids = BUF_INIT(CAP_LINE);
	int64_t *sorted;
	void *v;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	/* Each pair once (a page shows both jobs of a pair). */
	sorted = xcalloc(n + 1, sizeof(*sorted));
	memcpy(sorted, pair_ids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), id_cmp);
	buf_putc(&ids, '[');
	for (i = 0; i < n; i++)
		if (sorted[i] > 0 && (i == 0 || sorted[i] != sorted[i - 1]))
			buf_printf(&ids, "%s%" PRId64, ids.len > 1 ? "," : "",
			    sorted[i]);
	buf_putc(&ids, ']');
	free(sorted);
	store_i_bind_text(st, 1, q->job);
	store_i_bind_text(st, 2, q->point ? q->point : "");
	store_i_bind_text(st, 3, q->metric);
	store_i_bind_text(st, 4, q->tree);
	store_i_bind_text(st, 5, q->branch);
	store_i_bind_text(st, 6, q->host);
	store_i_bind_text(st, 7, ids.data);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), hist_cp_scan,
	    NULL, "change points");
	out->v = v;
	buf_release(&ids);
	if (r != 0)
		store_hist_cps_release(out);
	return r;
}

void
store_hist_cps_release(struct store_hist_cps *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].direction);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
