#ifndef STORE_HISTORY_H
#define STORE_HISTORY_H

/*
 * Metric history: the history page and its change points are read in
 * store/history.c; the points appended as verdicts are made, the change
 * points replaced and the tails and windows the change point search
 * reads are in store/history_points.c.  Text is the struct's own copy,
 * NULL where the column is NULL; a double that is unknown is NAN.
 * Errors: 0 or -1 with store_errmsg().
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * A metric's history: the jobs named job at point, on host (NULL any), on
 * commits of tree and branch (NULL: any; with both NULL, jobs without a
 * commit are included too), with a time in [from, to] (0 = open) and a
 * stored value of metric in a run with status ok.  At most limit jobs,
 * the newest before cursor (a job id), returned oldest first (by time,
 * then id).  Text is as the JSON rows had it: bytes that are not UTF-8
 * are '?'.  A job whose pair has its verdict comes with its stored
 * summary, another with its values.  A range of dates with fewer of the
 * series' jobs than the scan budget is read from its own index (schema
 * v30) and never partial.
 */
struct store_history_q {
	const char *tree, *branch, *host, *job, *point, *metric;
	int64_t from, to, limit, cursor;
	/* At most this many of the series' jobs are examined for a page
	 * (0: STORE_HISTORY_SCAN): filters that pass few of them end the
	 * page early, with a cursor to go on (store_history.capped). */
	int64_t scan;
};
/* ~8 ms of a core at 1M runs, when the filters pass none. */
#define STORE_HISTORY_SCAN 10000
struct store_hist_job {
	int64_t job_id, pair_id, time; /* time: commit date, else created */
	char *role, *sha, *subject;    /* sha and subject NULL: no commit */
	/* The triage state when the pair's comparison of metric is a
	 * regression and this is its candidate job, else NULL. */
	char *regression;
	/* Its stored summary (schema v20, when its pair got its verdict):
	 * values NULL.  Else values (nvalues of them, in run order) are
	 * what to summarise, and n and the rest 0. */
	int64_t n;
	double median, lo, hi;
	double *values;
	size_t nvalues;
};
struct store_history {
	struct store_hist_job *v;
	size_t n;
	char *unit, *better; /* the metric's, NULL when no job has it */
	/* The cursor of the next page (jobs below it), 0 at the end: the
	 * page is in time order, so its least job id, as
	 * store_i_next_cursor has it for lists paging downwards. */
	int64_t next_cursor;
	/* 1 when the page stopped at its scan budget before it was full:
	 * next_cursor goes on below the jobs it examined. */
	int capped;
};
int store_history_list(
    struct store *, struct store_history *out, const struct store_history_q *);
void store_history_release(struct store_history *);

/* A history series: tree and branch "" for submitted pairs. */
struct store_series_key {
	const char *tree, *branch;
	int64_t host_id;
	const char *job, *point, *metric, *better;
};

/*
 * Adds the candidate median of a pair to its series (created on first
 * use); adding the same pair again changes nothing.  The point goes where
 * its candidate commit's first-parent position puts it among the points
 * that have one (a late verdict lands before later commits, which move
 * up one seq with their change points); a point without a position
 * (submitted pairs, commits recorded before schema v9) goes last.
 * *out_series and *out_seq (0-based position) may be NULL.
 */
int store_history_append(struct store *, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now);
/*
 * The last max points of a series, oldest first: *out_values and
 * *out_seqs (caller frees both), *out_n.
 */
int store_history_tail(struct store *, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t series, size_t max);

struct store_change_point {
	int64_t seq;            /* first point after the change */
	int64_t lo_seq, hi_seq; /* the change lies in [lo, hi] */
	double before, after, change_pct, p;
	const char *direction; /* regression | improvement */
};

/* Replaces the series' change points at seq >= from_seq by cps. */
int store_changepoints_replace(struct store *, int64_t series, int64_t from_seq,
    const struct store_change_point *cps, size_t n, int64_t now);
/* The same for from_seq <= seq <= to_seq (cps outside are dropped). */
int store_changepoints_replace_range(struct store *, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now);
/*
 * Change points for a history page, filtered like store_history_list
 * (NULL: any; tree and branch NULL include submitted pairs), by series
 * and seq (a typed read; the caller releases).  The job ids are
 * the candidate jobs of the points at seq, lo_seq and hi_seq.
 */
struct store_cp_row {
	int64_t id, series_id;
	char *tree, *branch, *host; /* the series'; host NULL: none */
	int64_t seq;
	int64_t job_id, lo_job_id, hi_job_id, pair_id; /* 0: no such point */
	double before, after, change_pct, p;           /* NAN: unknown */
	char *direction; /* regression | improvement */
};
struct store_cp_rows {
	struct store_cp_row *v;
	size_t n;
};
int store_history_changepoint_list(struct store *, struct store_cp_rows *out,
    const char *tree, const char *branch, const char *host, const char *job,
    const char *point, const char *metric);
void store_cp_rows_release(struct store_cp_rows *); /* NULL ok */

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
 * store_history_changepoint_list whose pair is on the page, without the
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
