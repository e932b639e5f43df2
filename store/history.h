#ifndef STORE_HISTORY_H
#define STORE_HISTORY_H

/*
 * Metric history (store/history.c): the change points of a history
 * page and the window of a series around a point; the page's read,
 * store_history_get, is declared in store.h.  Text is the struct's own copy,
 * NULL where the column is NULL; a double that is unknown is NAN.  Errors: 0 or
 * -1 with store_errmsg().
 */
#include <stddef.h>
#include <stdint.h>

struct store;
struct store_history_q;

/* A change point of a history page: the history point (its candidate
 * job and pair) it was found at, and what changed. */
struct store_hist_cp {
	int64_t id, job_id, pair_id;
	double before, after, change_pct, p; /* NAN: unknown */
	char *direction; /* as the JSON rows had it: not UTF-8 is '?' */
};
struct store_hist_cps {
	struct store_hist_cp *v;
	size_t n;
};
/*
 * The change points of the history series q names (job, point, metric;
 * tree, branch and host NULL: any) found at a point of one of the pairs
 * pair_ids[0..n), by series and position: those of
 * store_history_changepoints whose pair is on the page, without the
 * series' other ones, so the read is bounded by the page and not by the
 * history's length.  Caller: store_hist_cps_release.
 */
int store_history_page_cps(struct store *, struct store_hist_cps *out,
    const struct store_history_q *q, const int64_t *pair_ids, size_t n);
void store_hist_cps_release(struct store_hist_cps *); /* NULL ok */

/*
 * History in commit order (store_history_append places a point by its
 * commit's first-parent position).  A point that lands inside a series
 * must have its neighbourhood looked at again: the window of at most max
 * points with seq around in its middle (as far as the series' ends let
 * it), oldest first: *out_values and *out_seqs (caller frees both),
 * *out_n, and *out_total the series' length.
 */
int store_history_window(struct store *, double **out_values,
    int64_t **out_seqs, size_t *out_n, int64_t *out_total, int64_t series,
    int64_t around, size_t max);

#endif
