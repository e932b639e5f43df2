/*
 * Metric history, its reads: the history page (store_history_list) and
 * its change points.  The writes (points appended as verdicts are made,
 * change points replaced) and the windows the change point search
 * reads are in history_points.c.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xalloc.h"
#include "store/history.h"
#include "store/store_int.h"

/* One job's row of the history read into j: its summary when stored. */
static void
hist_job_scan(struct store_hist_job *j, struct db_stmt *st)
{
	memset(j, 0, sizeof(*j));
	j->job_id = db_col_int64(st, 0);
	j->pair_id = db_col_int64(st, 1);
	j->role = store_i_web_text(st, 2);
	j->sha = store_i_web_text(st, 3);
	j->subject = store_i_web_text(st, 4);
	j->time = db_col_int64(st, 5);
	j->regression = store_i_web_text(st, 6);
	if (db_col_type(st, 7) != DB_NULL) {
		j->n = db_col_int64(st, 7);
		j->median = db_col_double(st, 8);
		j->lo = db_col_double(st, 9);
		j->hi = db_col_double(st, 10);
	}
}

/*
 * The history read (store_history_list) is one statement per kind of
 * page: of one host, or of every host.  Both list the page's jobs from
 * history_jobs (schema v21: the jobs with an ok run, by name, point and
 * their pair's host) newest first, the cursor a range of the index, so
 * the work is bounded by the page, not by the history's length or the
 * page's depth.  A row a job, its summary (schema v20) beside it when
 * stored: one seek a table a job, no second pass over the page and no
 * sort (the caller puts the page in time order).  The tree is looked up
 * once, not joined a row.  The filters of a row (tree, branch, time) are
 * no range of the index, so the page reads windows of it (hist_window),
 * within its scan budget (store_history_q.scan).
 */
#define HIST_COLS                                                    \
	"SELECT j.id, j.pair_id, j.role, c.sha, c.subject,"          \
	" coalesce(c.commit_date, j.created),"                       \
	" CASE WHEN j.role = 'candidate' THEN"                       \
	" (SELECT rg.state FROM comparisons cm JOIN regressions rg"  \
	"  ON rg.comparison_id = cm.id WHERE cm.pair_id = j.pair_id" \
	"  AND cm.metric = ?6) END,"                                 \
	" jv.n, jv.median, jv.lo, jv.hi, jv.unit, jv.better"
/* After the page's list hj: its jobs, their commits and summaries, the
 * filters (CROSS: in this order, never a scan of all jobs). */
#define HIST_REST(where)                                                    \
	" CROSS JOIN jobs j ON j.id = hj.job_id"                            \
	" LEFT JOIN commits c ON c.id = j.commit_id"                        \
	" LEFT JOIN job_values jv ON jv.job_id = j.id AND jv.metric = ?6"   \
	" WHERE hj.name = ?1 AND hj.point = ?2" where                       \
	" AND hj.job_id < ?10 AND hj.job_id >= ?11"                         \
	" AND (CAST(?3 AS TEXT) IS NULL OR c.tree_id ="                     \
	"  (SELECT id FROM trees WHERE name = ?3))"                         \
	" AND (CAST(?4 AS TEXT) IS NULL OR instr(',' || c.branches || ','," \
	"  ',' || ?4 || ',') > 0)"                                          \
	" AND (?7 = 0 OR coalesce(c.commit_date, j.created) >= ?7)"         \
	" AND (?8 = 0 OR coalesce(c.commit_date, j.created) <= ?8)"         \
	" ORDER BY hj.job_id DESC LIMIT ?9"

/*
 * The values of metric in the ok runs of a job whose summary is not
 * stored (a pair without its verdict yet), in run order, into j; the
 * first one's unit and direction into *unit and *better when NULL.
 */
static int
hist_job_values(struct store *s, struct store_hist_job *j, const char *metric,
    char **unit, char **better)
{
	struct db_stmt *st = store_i_cached(s, S_HISTORY_RUNS,
	    "SELECT m.value, m.unit, m.better FROM runs r"
	    " CROSS JOIN metrics m ON m.run_id = r.id AND m.name = ?2"
	    " WHERE r.job_id = ?1 AND r.status = 'ok' ORDER BY r.idx");
	size_t cap = 0;
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, j->job_id);
	store_i_bind_text(st, 2, metric);
	while ((rc = db_step(st)) == DB_ROW) {
		if (j->nvalues == cap) {
			cap = cap ? 2 * cap : 16;
			j->values =
			    xreallocarray(j->values, cap, sizeof(*j->values));
		}
		j->values[j->nvalues++] = db_col_double(st, 0);
		if (*unit == NULL) {
			*unit = store_i_web_text(st, 1);
			*better = store_i_web_text(st, 2);
		}
	}
	store_i_count_steps(s, st);
	db_reset(st); /* a cached statement */
	if (rc != DB_DONE)
		return store_i_dberr(s, "history values");
	return 0;
}

static void
hist_job_release(struct store_hist_job *j)
{
	free(j->role);
	free(j->sha);
	free(j->subject);
	free(j->regression);
	free(j->values);
}

/* Time order, then job order: the page as drawn. */
static int
hist_job_cmp(const void *a, const void *b)
{
	const struct store_hist_job *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

/*
 * The least job id of the next window of the series: at most w of its
 * jobs below `below`, newest first (the index alone), into *floor, and
 * how many there were into *n (fewer than w: the series ends there).
 */
/* A page's read in windows (store_i_scan_page). */
struct hist_scan {
	struct store *s;
	struct store_history *out;
	const struct store_history_q *q;
	size_t cap;      /* of out->v */
	int64_t least;   /* the last job read */
	const char *ids; /* the ids read, a JSON array (hist_ids_page) */
};

/*
 * Where a page's jobs come from: the series' index (name, point, job)
 * or, narrowed to a host's, a tree's (schema v29) or both, that index's
 * range (none of another host's or tree's is read).  CROSS: in this
 * order, the names looked up first.  Each is a FROM clause and what it
 * adds to the WHERE.
 */
enum hist_from { HF_ALL, HF_HOST, HF_TREE, HF_TREE_HOST };
#define HF_DRIVES(stmt)                                                    \
	{                                                                  \
		[HF_ALL] = stmt(" FROM history_jobs hj"                    \
		                " INDEXED BY history_jobs_name",           \
		    ""),                                                   \
		[HF_HOST] = stmt(" FROM hosts h CROSS JOIN history_jobs"   \
		                 " hj INDEXED BY history_jobs_host"        \
		                 " ON hj.host_id = h.id AND h.name = ?5",  \
		    ""),                                                   \
		[HF_TREE] = stmt(" FROM trees t CROSS JOIN history_jobs"   \
		                 " hj INDEXED BY history_jobs_tree"        \
		                 " ON hj.tree_id = t.id AND t.name = ?3",  \
		    ""),                                                   \
		[HF_TREE_HOST] = stmt(" FROM trees t CROSS JOIN hosts h"   \
		                      " CROSS JOIN history_jobs hj"        \
		                      " INDEXED BY history_jobs_tree_host" \
		                      " ON hj.tree_id = t.id"              \
		                      " AND hj.host_id = h.id"             \
		                      " AND t.name = ?3 AND h.name = ?5",  \
		    ""),                                                   \
	}
/*
 * PostgreSQL's: the tree's and the host's ids looked up first (values,
 * not joins), so that the series' index (of the tree, the host or both)
 * is read in job order and stops at the window or the page.  Joined to
 * the names, its plan sorted all 2,700 jobs of a host's series for a
 * window of 400, and joined all 400 of the window for a page of 200
 * (4,500 buffers a page at 100,000 runs, 2,300 this way).
 */
#define HF_TREE_ID " AND hj.tree_id = (SELECT id FROM trees WHERE name = ?3)"
#define HF_HOST_ID " AND hj.host_id = (SELECT id FROM hosts WHERE name = ?5)"
#define HF_DRIVES_PG(stmt)                                                \
	{                                                                 \
		[HF_ALL] = stmt(" FROM history_jobs hj", ""),             \
		[HF_HOST] = stmt(" FROM history_jobs hj", HF_HOST_ID),    \
		[HF_TREE] = stmt(" FROM history_jobs hj", HF_TREE_ID),    \
		[HF_TREE_HOST] =                                          \
		    stmt(" FROM history_jobs hj", HF_TREE_ID HF_HOST_ID), \
	}
/*
 * Or the ids a rare filter found (hist_ids): the rows of those ids, a
 * JSON array in ?13.
 */
#define HF_IDS_FROM                                           \
	" FROM json_each(?13) ids CROSS JOIN history_jobs hj" \
	" ON hj.job_id = CAST(ids.value AS BIGINT)"
#define HF_HOST_WHERE                                    \
	" AND (CAST(?5 AS TEXT) IS NULL OR hj.host_id =" \
	"  (SELECT id FROM hosts WHERE name = ?5))"
#define HIST_WINDOW(from, where)                                   \
	"SELECT min(job_id), count(*) FROM (SELECT hj.job_id" from \
	" WHERE hj.name = ?1 AND hj.point = ?2" where              \
	" AND hj.job_id < ?10 ORDER BY hj.job_id DESC LIMIT ?12) AS w"
#define HIST_ROWS(from, where) HIST_COLS from HIST_REST(where)

static enum hist_from
hist_from(const struct hist_scan *h)
{
	return (h->q->host != NULL ? HF_HOST : HF_ALL) +
	    (h->q->tree != NULL ? HF_TREE : HF_ALL);
}

/* ?1 to ?8 of a page's statements. */
static void
hist_bind(struct db_stmt *st, const struct store_history_q *q)
{
	store_i_bind_text(st, 1, q->job);
	store_i_bind_text(st, 2, q->point ? q->point : "");
	store_i_bind_text(st, 3, q->tree);
	store_i_bind_text(st, 4, q->branch);
	store_i_bind_text(st, 5, q->host);
	store_i_bind_text(st, 6, q->metric);
	db_bind_int64(st, 7, q->from);
	db_bind_int64(st, 8, q->to);
}

static int
hist_window(void *arg, int64_t below, int64_t w, int64_t *floor, int64_t *n)
{
	static const char *const sql[] = HF_DRIVES(HIST_WINDOW);
	static const char *const sql_pg[] = HF_DRIVES_PG(HIST_WINDOW);
	struct hist_scan *h = arg;
	struct store *s = h->s;
	enum hist_from f = hist_from(h);
	struct db_stmt *st = store_i_cached(s, S_HISTORY_WIN + f,
	    db_backend(s->db) == DB_PG ? sql_pg[f] : sql[f]);
	int rc;

	if (st == NULL)
		return -1;
	hist_bind(st, h->q);
	db_bind_int64(st, 10, below);
	db_bind_int64(st, 12, w);
	rc = store_i_scan_window(s, st, floor, n, "history window");
	db_reset(st); /* a cached statement */
	return rc;
}
/*
 * The page's rows in the window [floor, below) of the series, at most
 * want of them, appended to h->out; *n of them.
 */
static int
hist_rows(void *arg, int64_t floor, int64_t below, int64_t want, int64_t *n)
{
	struct hist_scan *h = arg;
	struct store *s = h->s;
	struct store_history *out = h->out;
	const struct store_history_q *q = h->q;
	static const char *const sql[] = HF_DRIVES(HIST_ROWS);
	static const char *const sql_pg[] = HF_DRIVES_PG(HIST_ROWS);
	enum hist_from f = hist_from(h);
	struct db_stmt *st = h->ids != NULL
	    ? store_i_cached(
	          s, S_HISTORY_IDS, HIST_ROWS(HF_IDS_FROM, HF_HOST_WHERE))
	    : store_i_cached(s, S_HISTORY + f,
	          db_backend(s->db) == DB_PG ? sql_pg[f] : sql[f]);
	int rc;

	if (st == NULL)
		return -1;
	hist_bind(st, q);
	if (h->ids != NULL)
		store_i_bind_text(st, 13, h->ids);
	db_bind_int64(st, 9, want);
	db_bind_int64(st, 10, below);
	db_bind_int64(st, 11, floor);
	*n = 0;
	while ((rc = db_step(st)) == DB_ROW) {
		if (out->n == h->cap) {
			h->cap = h->cap ? 2 * h->cap : 64;
			out->v = xreallocarray(out->v, h->cap, sizeof(*out->v));
		}
		hist_job_scan(&out->v[out->n], st);
		/* Newest first: the last read is the page's least. */
		h->least = out->v[out->n].job_id;
		(*n)++;
		if (db_col_type(st, 7) != DB_NULL && out->unit == NULL) {
			out->unit = store_i_web_text(st, 11);
			out->better = store_i_web_text(st, 12);
		}
		out->n++;
	}
	store_i_count_steps(s, st);
	db_reset(st); /* ends the read: a cached statement */
	return rc == DB_DONE ? 0 : store_i_dberr(s, "history");
}

/*
 * A page whose filter is rare is read from that filter's own index, not
 * by walking the series: a range of dates (schema v30: the time index,
 * which covers tree and host) or a branch (v31: its commits, of the tree
 * or of every tree, and their jobs).  hist_ids examines at most budget
 * entries for the candidates' ids; when that is all of them, the page is
 * theirs, newest first (sorted here), and never partial.  Else (no such
 * filter, or a common one: its jobs are many) the page walks the series
 * newest first within its budget, and a range months back or a branch
 * seldom measured may still spend it before its first point.
 */
enum hist_kind { HI_TIME, HI_TREE_BRANCH, HI_BRANCH };
#define HI_SERIES_JOB                                    \
	" LEFT JOIN history_jobs hj ON hj.job_id = j.id" \
	" AND hj.name = ?1 AND hj.point = ?2" HF_HOST_WHERE
static const char *const hist_ids_sql[] = {
	[HI_TIME] = "SELECT hj.job_id, 1 FROM history_jobs hj"
	            " INDEXED BY history_jobs_time"
	            " WHERE hj.name = ?1 AND hj.point = ?2"
	            " AND hj.time >= ?7"
	            " AND hj.time <= CASE WHEN ?8 = 0 THEN 9223372036854775807 "
	            "ELSE ?8 END"
	            " AND (CAST(?3 AS TEXT) IS NULL OR hj.tree_id ="
	            "  (SELECT id FROM trees WHERE name = ?3))" HF_HOST_WHERE
	            " AND hj.job_id < ?10 LIMIT ?11",
	/* Each job of the branch's commits examined, the series' marked. */
	[HI_TREE_BRANCH] = "SELECT j.id, hj.job_id IS NOT NULL FROM trees t"
	                   " CROSS JOIN commit_branches cb"
	                   " ON cb.tree_id = t.id AND cb.branch = ?4"
	                   " CROSS JOIN jobs j INDEXED BY jobs_commit"
	                   " ON j.commit_id = cb.commit_id" HI_SERIES_JOB
	                   " WHERE t.name = ?3 AND j.id < ?10 LIMIT ?11",
	[HI_BRANCH] = "SELECT j.id, hj.job_id IS NOT NULL"
	              " FROM commit_branches cb"
	              " INDEXED BY commit_branches_branch"
	              " CROSS JOIN jobs j INDEXED BY jobs_commit"
	              " ON j.commit_id = cb.commit_id" HI_SERIES_JOB
	              " WHERE cb.branch = ?4 AND j.id < ?10 LIMIT ?11",
};

static int
id_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/* The series' ids below the cursor by the index of kind, into *ids (*n
 * of them, maybe none), newest first; *ids NULL when budget entries were
 * examined before the end. */
static int
hist_ids_of(struct store *s, const struct store_history_q *q,
    enum hist_kind kind, int64_t budget, int64_t **ids, size_t *n)
{
	struct db_stmt *st =
	    store_i_cached(s, S_HISTORY_IDS_TIME + kind, hist_ids_sql[kind]);
	size_t cap = 256;
	int64_t seen = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	*ids = xreallocarray(NULL, cap, sizeof(**ids));
	hist_bind(st, q);
	db_bind_int64(st, 10, store_i_below(q->cursor));
	db_bind_int64(st, 11, budget);
	while ((rc = db_step(st)) == DB_ROW) {
		seen++;
		if (db_col_int(st, 1) == 0)
			continue; /* a job of another series */
		if (*n == cap) {
			cap *= 2;
			*ids = xreallocarray(*ids, cap, sizeof(**ids));
		}
		(*ids)[(*n)++] = db_col_int64(st, 0);
	}
	store_i_count_steps(s, st);
	db_reset(st); /* a cached statement */
	if (rc != DB_DONE || seen >= budget) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc == DB_DONE ? 0 : store_i_dberr(s, "history filter");
	}
	if (*n > 1)
		qsort(*ids, *n, sizeof(**ids), id_desc);
	return 0;
}

/*
 * 1 when the branch is on fewer than an eighth of the commits of its tree
 * (of every tree without one): worth reading from its commits.  A branch
 * most commits are on is walked: most of the series' jobs pass, and its
 * commits' jobs would be a budget's worth of reading for nothing (master
 * at 1M runs: 4 ms a page).  A watched branch's count is kept
 * (tree_branches.commits); another's is counted in its index, to an
 * eighth of the commits at most.
 */
/*
 * Each: the branch's commits of the tree (of every tree), read from its
 * index; SQLite's, and PostgreSQL's in the index's order: a generic
 * plan takes a branch for half the commits (two branches known) and
 * counted a rare one by a scan of them all (8 ms at 1M runs), where
 * read in order to a limit the index it is.
 */
#define HB_TREE(on)                                                            \
	"SELECT coalesce((SELECT tb.commits FROM trees t"                      \
	" JOIN tree_branches tb ON tb.tree_id = t.id"                          \
	" AND tb.branch = ?4 WHERE t.name = ?3),"                              \
	" (SELECT count(*) FROM (SELECT 1 FROM " on " LIMIT coalesce((SELECT"  \
	" min(?11, ncommits / 8 + 1) FROM trees WHERE name = ?3), 0)) AS w))," \
	" (SELECT ncommits FROM trees WHERE name = ?3)"
#define HB_ALL(on)                                                           \
	"SELECT (SELECT count(*) FROM (SELECT 1 FROM commit_branches" on     \
	" LIMIT (SELECT min(?11, sum(ncommits) / 8 + 1) FROM trees)) AS w)," \
	" (SELECT sum(ncommits) FROM trees)"
static const char *const hist_branch_n_sql[2][2] = {
	{ HB_TREE("trees t CROSS JOIN commit_branches cb"
	          " ON cb.tree_id = t.id AND cb.branch = ?4 WHERE t.name = ?3"),
	    HB_ALL(" INDEXED BY commit_branches_branch WHERE branch = ?4") },
	{ HB_TREE("commit_branches cb WHERE cb.tree_id ="
	          " (SELECT id FROM trees WHERE name = ?3)"
	          " AND cb.branch = ?4 ORDER BY cb.commit_id"),
	    HB_ALL(" WHERE branch = ?4 ORDER BY commit_id") },
};

static int
hist_branch_rare(
    struct store *s, const struct store_history_q *q, int64_t budget, int *rare)
{
	int pg = db_backend(s->db) == DB_PG;
	struct db_stmt *st = q->tree != NULL
	    ? store_i_cached(s, S_HISTORY_BRANCH_N, hist_branch_n_sql[pg][0])
	    : store_i_cached(
	          s, S_HISTORY_BRANCH_N_ALL, hist_branch_n_sql[pg][1]);
	int64_t on, all;
	int rc;

	*rare = 0;
	if (st == NULL)
		return -1;
	hist_bind(st, q);
	db_bind_int64(st, 11, budget);
	if ((rc = db_step(st)) == DB_ROW) {
		on = db_col_int64(st, 0);
		all = db_col_int64(st, 1);
		/* 2: the branch has no commit, so the page has no job. */
		*rare = on == 0 ? 2 : on < budget && on * 8 < all;
	}
	store_i_count_steps(s, st);
	db_reset(st); /* a cached statement */
	return rc == DB_ROW ? 0 : store_i_dberr(s, "history branch");
}

/*
 * How many of a range's jobs are worth reading from the time index: a
 * range open at the top (no `to`, or one after the series' newest time)
 * has its jobs at the top of the walk, which fills a page at once when
 * they are more than a page (from=a month ago): only a few (from=
 * yesterday) are read from the index.  A range in the past, up to the
 * budget.
 */
static int
hist_time_cap(struct store *s, const struct store_history_q *q, int64_t budget,
    int64_t *cap)
{
	struct db_stmt *st;
	int rc, past = 0;

	if (q->to != 0) {
		st = store_i_cached(s, S_HISTORY_NEWEST,
		    "SELECT max(time) FROM history_jobs"
		    " INDEXED BY history_jobs_time"
		    " WHERE name = ?1 AND point = ?2");
		if (st == NULL)
			return -1;
		hist_bind(st, q);
		if ((rc = db_step(st)) == DB_ROW)
			past = db_col_int64(st, 0) > q->to;
		store_i_count_steps(s, st);
		db_reset(st); /* a cached statement */
		if (rc != DB_ROW)
			return store_i_dberr(s, "history newest");
	}
	*cap = past || 2 * q->limit >= budget ? budget : 2 * q->limit;
	return 0;
}

/* The ids of the page's rare filter, as hist_ids_of; none such: NULL. */
static int
hist_ids(struct store *s, const struct store_history_q *q, int64_t budget,
    int64_t **ids, size_t *n)
{
	int64_t cap = 0;
	int rare = 0;

	*ids = NULL;
	*n = 0;
	if ((q->from != 0 || q->to != 0) &&
	    (hist_time_cap(s, q, budget, &cap) != 0 ||
	        hist_ids_of(s, q, HI_TIME, cap, ids, n) != 0))
		return -1;
	if (*ids == NULL && q->branch != NULL &&
	    (hist_branch_rare(s, q, budget, &rare) != 0 ||
	        (rare == 1 &&
	            hist_ids_of(s, q, q->tree ? HI_TREE_BRANCH : HI_BRANCH,
	                budget, ids, n) != 0)))
		return -1;
	if (rare == 2)
		*ids = xcalloc(1, sizeof(**ids)); /* none: an empty page */
	return 0;
}

/*
 * The page from ids (newest first): the rows of the next ones the page
 * still wants, until it is full (a row's other filters may leave it
 * out).  *end: no id is left.
 */
static int
hist_ids_page(
    struct hist_scan *h, const int64_t *ids, size_t n, int64_t *read, int *end)
{
	size_t at = 0, k, i, len;
	int64_t got;
	char *json = xreallocarray(NULL, (size_t)h->q->limit + 1, 24);
	int r = 0;

	*read = 0;
	while (r == 0 && at < n && *read < h->q->limit) {
		k = (size_t)(h->q->limit - *read);
		if (k > n - at)
			k = n - at;
		len = 0;
		for (i = 0; i < k; i++)
			len += (size_t)snprintf(json + len, 24, "%c%lld",
			    i ? ',' : '[', (long long)ids[at + i]);
		snprintf(json + len, 24, "]");
		h->ids = json;
		r = hist_rows(
		    h, ids[at + k - 1], ids[at] + 1, h->q->limit - *read, &got);
		h->ids = NULL;
		*read += got;
		at += k;
	}
	free(json);
	*end = at == n;
	return r;
}

int
store_history_list(
    struct store *s, struct store_history *out, const struct store_history_q *q)
{
	struct hist_scan h = { s, out, q, 0, 0, NULL };
	struct store_i_scan sc = { hist_window, hist_rows, &h };
	int64_t floor = 0, budget = q->scan > 0 ? q->scan : STORE_HISTORY_SCAN;
	int64_t *ids, got;
	size_t i, k, read, nids;
	int r, end = 0;

	memset(out, 0, sizeof(*out));
	if (hist_ids(s, q, budget, &ids, &nids) != 0) {
		store_history_release(out);
		return -1;
	}
	r = ids != NULL ? hist_ids_page(&h, ids, nids, &got, &end)
	                : store_i_scan_page(&sc, q->cursor, q->limit, budget,
	                      &out->capped, &floor);
	free(ids);
	if (r != 0) {
		store_history_release(out);
		return -1;
	}
	read = out->n;
	/* The jobs without a stored summary: their runs' values, and
	 * those with none of metric are not on the page. */
	for (i = k = 0; i < out->n; i++) {
		struct store_hist_job *j = &out->v[i];

		if (j->n == 0 &&
		    hist_job_values(
		        s, j, q->metric, &out->unit, &out->better) != 0) {
			for (; i < out->n; i++)
				out->v[k++] = out->v[i];
			out->n = k;
			store_history_release(out);
			return -1;
		}
		if (j->n == 0 && j->nvalues == 0) {
			hist_job_release(j);
			continue;
		}
		out->v[k++] = *j;
	}
	out->n = k;
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), hist_job_cmp);
	/* A full page read may have more below its least job id, also
	 * when some of its jobs lack metric; none with it: the metric's
	 * history ends here.  A page that spent its budget goes on below
	 * the jobs it examined, points or none. */
	if (out->capped)
		out->next_cursor = floor;
	else if (end)
		out->next_cursor = 0; /* the range's last job is read */
	else
		out->next_cursor = out->n > 0
		    ? store_i_next_cursor(read, q->limit, h.least, STORE_I_DESC)
		    : 0;
	return 0;
}

void
store_history_release(struct store_history *h)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++)
		hist_job_release(&h->v[i]);
	free(h->v);
	free(h->unit);
	free(h->better);
	memset(h, 0, sizeof(*h));
}

static void
cp_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_cp_row *c = row;

	(void)arg;
	c->id = db_col_int64(st, 0);
	c->series_id = db_col_int64(st, 1);
	c->tree = store_i_col_dup(st, 2);
	c->branch = store_i_col_dup(st, 3);
	c->host = store_i_col_dup(st, 4);
	c->seq = db_col_int64(st, 5);
	c->job_id = db_col_int64(st, 6);
	c->lo_job_id = db_col_int64(st, 7);
	c->hi_job_id = db_col_int64(st, 8);
	c->pair_id = db_col_int64(st, 9);
	c->before = store_i_col_num(st, 10);
	c->after = store_i_col_num(st, 11);
	c->change_pct = store_i_col_num(st, 12);
	c->p = store_i_col_num(st, 13);
	c->direction = store_i_col_dup(st, 14);
}

int
store_history_changepoint_list(struct store *s, struct store_cp_rows *out,
    const char *tree, const char *branch, const char *host, const char *job,
    const char *point, const char *metric)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT cp.id, cp.series_id, hs.tree, hs.branch, h.name AS host,"
	    " cp.seq,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.seq) AS job_id,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.lo_seq) AS lo_job_id,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.hi_seq) AS hi_job_id,"
	    " (SELECT pair_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.seq) AS pair_id,"
	    " cp.before, cp.after, cp.change_pct, cp.p, cp.direction"
	    " FROM change_points cp"
	    " JOIN history_series hs ON hs.id = cp.series_id"
	    " LEFT JOIN hosts h ON h.id = hs.host_id"
	    " WHERE hs.job = ?1 AND hs.point = ?2 AND hs.metric = ?3"
	    " AND (CAST(?4 AS TEXT) IS NULL OR hs.tree = ?4)"
	    " AND (CAST(?5 AS TEXT) IS NULL OR hs.branch = ?5)"
	    " AND (CAST(?6 AS TEXT) IS NULL OR h.name = ?6)"
	    " ORDER BY cp.series_id, cp.seq");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, job);
	store_i_bind_text(st, 2, point ? point : "");
	store_i_bind_text(st, 3, metric);
	store_i_bind_text(st, 4, tree);
	store_i_bind_text(st, 5, branch);
	store_i_bind_text(st, 6, host);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), cp_scan, NULL,
	    "change points");
	out->v = v;
	if (r != 0)
		store_cp_rows_release(out);
	return r;
}

void
store_cp_rows_release(struct store_cp_rows *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].tree);
		free(l->v[i].branch);
		free(l->v[i].host);
		free(l->v[i].direction);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int
id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
hist_cp_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_hist_cp *c = row;

	(void)arg;
	c->id = db_col_int64(st, 0);
	c->job_id = db_col_int64(st, 1);
	c->pair_id = db_col_int64(st, 2);
	c->before = store_i_col_num(st, 3);
	c->after = store_i_col_num(st, 4);
	c->change_pct = store_i_col_num(st, 5);
	c->p = store_i_col_num(st, 6);
	c->direction = store_i_web_text(st, 7);
}

/*
 * From the page's pairs to their points (history_points is keyed by
 * series and pair too) and on to a change point at the same position: a
 * few lookups a pair on the page (CROSS: in this order, never a scan of a
 * series' points).
 */
#define HIST_PAGE_CPS                                               \
	"SELECT cp.id, hp.job_id, hp.pair_id, cp.before, cp.after," \
	" cp.change_pct, cp.p, cp.direction"                        \
	" FROM history_series hs"                                   \
	" LEFT JOIN hosts h ON h.id = hs.host_id"                   \
	" CROSS JOIN json_each(?7) je"                              \
	" CROSS JOIN history_points hp ON hp.series_id = hs.id"     \
	"  AND hp.pair_id = CAST(je.value AS BIGINT)"               \
	" CROSS JOIN change_points cp ON cp.series_id = hs.id"      \
	"  AND cp.seq = hp.seq"                                     \
	" WHERE hs.job = ?1 AND hs.point = ?2 AND hs.metric = ?3"   \
	" AND (CAST(?4 AS TEXT) IS NULL OR hs.tree = ?4)"           \
	" AND (CAST(?5 AS TEXT) IS NULL OR hs.branch = ?5)"         \
	" AND (CAST(?6 AS TEXT) IS NULL OR h.name = ?6)"            \
	" ORDER BY cp.series_id, cp.seq"

int
store_history_page_cps(struct store *s, struct store_hist_cps *out,
    const struct store_history_q *q, const int64_t *pair_ids, size_t n)
{
	struct db_stmt *st;
	struct buf ids = BUF_INIT(CAP_LINE);
	int64_t *sorted;
	void *v;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n && pair_ids[i] <= 0; i++)
		;
	if (i == n)
		return 0; /* no pair on the page: no change point either */
	st = store_i_stmt(s, HIST_PAGE_CPS);
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
