/*
 * Bisections and their steps (store/bisect.h): all the SQL of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/bisect.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"
#include "store/store_int.h"

/* Ids of one column of a query (caller frees). */
static int
ids_of(struct store *s, struct db_stmt *st, int64_t **out, size_t *n,
    const char *what)
{
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		*out = xreallocarray(*out, *n + 1, sizeof(**out));
		(*out)[(*n)++] = db_col_int64(st, 0);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_i_dberr(s, what);
	}
	return 0;
}

void
store_bisect_src_release(struct store_bisect_src *x)
{
	free(x->job);
	free(x->point);
	free(x->metric);
	free(x->tree);
	free(x->good_sha);
	free(x->bad_sha);
	free(x->spec);
	free(x->labels);
	free(x->origin_sha);
	free(x->branch);
	free(x->direction);
	memset(x, 0, sizeof(*x));
	x->origin_pct = NAN;
}

/* A source's pair columns (0-12), then what the query adds. */
#define SRC_COLS(metric)                                               \
	"SELECT p.id, p.host_id, cc.tree_id, p.name, p.point, " metric \
	", t.name,"                                                    \
	" bc.sha, cc.sha, cj.params, cj.labels, cj.max_attempts,"      \
	" p.bisect_id IS NOT NULL"
#define SRC_JOINS                                       \
	" JOIN jobs bj ON bj.id = p.base_job_id"        \
	" JOIN jobs cj ON cj.id = p.cand_job_id"        \
	" LEFT JOIN commits bc ON bc.id = bj.commit_id" \
	" LEFT JOIN commits cc ON cc.id = cj.commit_id" \
	" LEFT JOIN trees t ON t.id = cc.tree_id"

static void
src_row(struct db_stmt *st, struct store_bisect_src *out)
{
	out->pair_id = db_col_int64(st, 0);
	out->host_id = db_col_int64(st, 1);
	out->tree_id = db_col_int64(st, 2);
	out->job = store_i_col_dup(st, 3);
	out->point = store_i_col_dup(st, 4);
	out->metric = store_i_col_dup(st, 5);
	out->tree = store_i_col_dup(st, 6);
	out->good_sha = store_i_col_dup(st, 7);
	out->bad_sha = store_i_col_dup(st, 8);
	out->spec = store_i_col_dup(st, 9);
	out->labels = store_i_col_dup(st, 10);
	out->max_attempts = db_col_int64(st, 11);
	out->of_bisect = db_col_int(st, 12);
}

/* Steps st (id bound at 1) into *out; what names the row for errors. */
static int
src_get(struct store *s, struct db_stmt *st, struct store_bisect_src *out,
    int64_t id, const char *what)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->origin_pct = NAN;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = db_step(st);
	if (rc == DB_ROW)
		src_row(st, out);
	if (rc == DB_ROW && db_col_count(st) > 13) {
		/* A change point: the series' host, ends and change. */
		out->change_point_id = id;
		out->host_id = db_col_int64(st, 13);
		free(out->good_sha);
		free(out->bad_sha);
		out->good_sha = store_i_col_dup(st, 14);
		out->bad_sha = store_i_col_dup(st, 15);
		out->origin_sha = store_i_col_dup(st, 16);
		out->branch = store_i_col_dup(st, 17);
		out->direction = store_i_col_dup(st, 18);
		out->origin_pct = store_i_col_num(st, 19);
		free(out->job);
		free(out->point);
		out->job = store_i_col_dup(st, 20);
		out->point = store_i_col_dup(st, 21);
	}
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc == DB_DONE)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no %s %lld", what, (long long)id);
	return store_i_dberr(s, "bisect source");
}

int
store_bisect_src_get(
    struct store *s, struct store_bisect_src *out, int64_t regression_id)
{
	int r = src_get(s,
	    store_i_stmt(s,
	        SRC_COLS("c.metric") " FROM regressions r"
	                             " JOIN comparisons c"
	                             "  ON c.id = r.comparison_id"
	                             " JOIN pairs p"
	                             "  ON p.id = c.pair_id" SRC_JOINS
	                             " WHERE r.id = ?1"),
	    out, regression_id, "regression");

	if (r == 0)
		out->regression_id = regression_id;
	return r;
}

int
store_bisect_src_pair(
    struct store *s, struct store_bisect_src *out, int64_t pair_id)
{
	return src_get(s,
	    store_i_stmt(
	        s, SRC_COLS("''") " FROM pairs p" SRC_JOINS " WHERE p.id = ?1"),
	    out, pair_id, "pair");
}

/* The commits of a change point's series' points (history_points.job_id:
 * the candidate job): the one before the change's interval, its last. */
#define CP_GOOD_SHA                                                 \
	" (SELECT c.sha FROM history_points x JOIN jobs j"          \
	"  ON j.id = x.job_id JOIN commits c ON c.id = j.commit_id" \
	"  WHERE x.series_id = cp.series_id AND x.seq = cp.lo_seq - 1)"
#define CP_BAD_SHA                                                  \
	" (SELECT c.sha FROM history_points x JOIN jobs j"          \
	"  ON j.id = x.job_id JOIN commits c ON c.id = j.commit_id" \
	"  WHERE x.series_id = cp.series_id AND x.seq = cp.hi_seq)"
#define CP_METRIC "hs.metric"

/* A change point's source: the pair of its own point, then (13-21) the
 * series' host, both ends, the point's commit, the branch, the change,
 * the series' job and point. */
static const char src_cp_sql[] =
    SRC_COLS(CP_METRIC) ", hs.host_id," CP_GOOD_SHA "," CP_BAD_SHA ","
                        " cc.sha, hs.branch, cp.direction, cp.change_pct, "
                        "hs.job, hs.point"
                        " FROM change_points cp"
                        " JOIN history_series hs ON hs.id = cp.series_id"
                        " JOIN history_points hp ON hp.series_id = cp.series_id"
                        "  AND hp.seq = cp.seq"
                        " JOIN pairs p ON p.id = hp.pair_id" SRC_JOINS
                        " WHERE cp.id = ?1";

int
store_bisect_src_cp(
    struct store *s, struct store_bisect_src *out, int64_t change_point_id)
{
	return src_get(s, store_i_stmt(s, src_cp_sql), out, change_point_id,
	    "change point (change points are recomputed as history points "
	    "arrive: list them again)");
}

static int
bisect_create_once(struct store *s, int64_t *out_id,
    const struct store_bisect_new *n, int64_t now)
{
	const struct store_bisect_src *x = n->src;
	struct db_stmt *st;
	int rc, ok;

	*out_id = 0;
	if (store_i_tx_begin(s) != 0)
		return -1;
	st = x->change_point_id > 0
	    ? store_i_stmt(s,
	          "SELECT id FROM bisections WHERE origin = 'change-point'"
	          " AND job = ?2 AND host_id IS NOT DISTINCT FROM ?3 AND point "
	          "= ?4"
	          " AND metric = ?5 AND good_sha = ?6 AND bad_sha = ?7"
	          " AND state IN ('queued', 'running')")
	    : store_i_stmt(s,
	          "SELECT id FROM bisections WHERE regression_id = ?1"
	          " AND state IN ('queued', 'running')");
	ok = st != NULL;
	if (ok) {
		if (x->change_point_id > 0) {
			store_i_bind_text(st, 2, x->job);
			store_i_bind_id(st, 3, x->host_id);
			store_i_bind_text(st, 4, x->point ? x->point : "");
			store_i_bind_text(st, 5, x->metric);
			store_i_bind_text(st, 6, x->good_sha);
			store_i_bind_text(st, 7, x->bad_sha);
		} else
			db_bind_int64(st, 1, x->regression_id);
		rc = db_step(st);
		if (rc == DB_ROW)
			*out_id = db_col_int64(st, 0);
		else if (rc != DB_DONE)
			ok = store_i_dberr(s, "live bisection") == 0;
		store_i_release(s, st);
	}
	if (ok && *out_id > 0) {
		store_i_tx_end(s, 1);
		if (x->change_point_id > 0)
			return err_setc(&s->err, ERR_EXISTS,
			    "the range %.12s..%.12s of change point %lld is "
			    "being bisected already (bisection %lld)",
			    x->good_sha, x->bad_sha,
			    (long long)x->change_point_id, (long long)*out_id);
		return err_setc(&s->err, ERR_EXISTS,
		    "regression %lld is being bisected already (bisection "
		    "%lld)",
		    (long long)x->regression_id, (long long)*out_id);
	}
	st = ok ? store_i_stmt(s,
	              "INSERT INTO bisections (regression_id, pair_id, job,"
	              " host_id, point, metric, tree_id, good_sha, bad_sha,"
	              " lo_sha, hi_sha, steps_limit, max_inconclusive,"
	              " full_dag, started_by, created, updated, origin,"
	              " change_point_id, origin_sha, branch, origin_pct)"
	              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?8, ?9,"
	              " ?10, ?11, ?12, ?13, ?14, ?14, ?15, ?16, ?17, ?18,"
	              " ?19)")
	        : NULL;
	if ((ok = ok && st != NULL)) {
		store_i_bind_id(st, 1, x->regression_id);
		store_i_bind_text(st, 15,
		    x->change_point_id > 0 ? "change-point" : "regression");
		store_i_bind_id(st, 16, x->change_point_id);
		store_i_bind_text(st, 17, x->origin_sha);
		store_i_bind_text(st, 18, x->branch);
		store_i_bind_num(st, 19, x->origin_pct);
		db_bind_int64(st, 2, x->pair_id);
		store_i_bind_text(st, 3, x->job);
		store_i_bind_id(st, 4, x->host_id);
		store_i_bind_text(st, 5, x->point ? x->point : "");
		store_i_bind_text(st, 6, x->metric);
		store_i_bind_id(st, 7, x->tree_id);
		store_i_bind_text(st, 8, x->good_sha);
		store_i_bind_text(st, 9, x->bad_sha);
		db_bind_int64(st, 10, n->steps_limit);
		db_bind_int64(st, 11, n->max_inconclusive);
		db_bind_int64(st, 12, n->full_dag != 0);
		store_i_bind_text(
		    st, 13, n->started_by ? n->started_by : "auto");
		db_bind_int64(st, 14, now);
		rc = db_step(st);
		if (rc == DB_DONE)
			*out_id = db_last_id(s->db);
		else
			ok = store_i_dberr(s, "insert bisection") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok) == 0 && ok ? 0 : -1;
}

int
store_bisect_create(struct store *s, int64_t *out_id,
    const struct store_bisect_new *n, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, bisect_create_once(s, out_id, n, now));
	return rc;
}

/* Frees what b holds, not b. */
static void
bisect_fields_free(struct store_bisect *b)
{
	free(b->job);
	free(b->point);
	free(b->metric);
	free(b->host);
	free(b->tree);
	free(b->good_sha);
	free(b->bad_sha);
	free(b->lo_sha);
	free(b->hi_sha);
	free(b->state);
	free(b->culprit_sha);
	free(b->culprit_subject);
	free(b->reason);
	free(b->started_by);
	free(b->verify_parent);
	free(b->verify_revert);
	free(b->revert_sha);
	free(b->origin);
	free(b->origin_sha);
	free(b->branch);
}

void
store_bisect_release(struct store_bisect *b)
{
	if (b == NULL)
		return;
	bisect_fields_free(b);
	free(b);
}

#define BISECT_COLS                                                          \
	"SELECT b.id, b.regression_id, b.pair_id, b.host_id, b.tree_id,"     \
	" b.job, b.point, b.metric, h.name, t.name, b.good_sha, b.bad_sha,"  \
	" b.lo_sha, b.hi_sha, b.state, b.culprit_sha,"                       \
	" (SELECT subject FROM commits WHERE tree_id = b.tree_id"            \
	"  AND sha = b.culprit_sha), b.reason, b.started_by,"                \
	" b.verify_parent, b.verify_revert, b.revert_sha, b.steps_limit,"    \
	" b.max_inconclusive, b.full_dag, b.created, b.updated,"             \
	" b.origin, b.change_point_id, b.origin_sha, b.branch, b.origin_pct" \
	" FROM bisections b LEFT JOIN hosts h ON h.id = b.host_id"           \
	" LEFT JOIN trees t ON t.id = b.tree_id "

/* A row of BISECT_COLS into row (a struct store_bisect). */
static void
bisect_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_bisect *b = row;

	(void)arg;
	b->id = db_col_int64(st, 0);
	b->regression_id = db_col_int64(st, 1);
	b->pair_id = db_col_int64(st, 2);
	b->host_id = db_col_int64(st, 3);
	b->tree_id = db_col_int64(st, 4);
	b->job = store_i_col_dup(st, 5);
	b->point = store_i_col_dup(st, 6);
	b->metric = store_i_col_dup(st, 7);
	b->host = store_i_col_dup(st, 8);
	b->tree = store_i_col_dup(st, 9);
	b->good_sha = store_i_col_dup(st, 10);
	b->bad_sha = store_i_col_dup(st, 11);
	b->lo_sha = store_i_col_dup(st, 12);
	b->hi_sha = store_i_col_dup(st, 13);
	b->state = store_i_col_dup(st, 14);
	b->culprit_sha = store_i_col_dup(st, 15);
	b->culprit_subject = store_i_col_dup(st, 16);
	b->reason = store_i_col_dup(st, 17);
	b->started_by = store_i_col_dup(st, 18);
	b->verify_parent = store_i_col_dup(st, 19);
	b->verify_revert = store_i_col_dup(st, 20);
	b->revert_sha = store_i_col_dup(st, 21);
	b->steps_limit = db_col_int64(st, 22);
	b->max_inconclusive = db_col_int64(st, 23);
	b->full_dag = db_col_int(st, 24);
	b->created = db_col_int64(st, 25);
	b->updated = db_col_int64(st, 26);
	b->origin = store_i_col_dup(st, 27);
	b->change_point_id = db_col_int64(st, 28);
	b->origin_sha = store_i_col_dup(st, 29);
	b->branch = store_i_col_dup(st, 30);
	b->origin_pct = store_i_col_num(st, 31);
}

static int
bisect_row(struct store *s, struct db_stmt *st, struct store_bisect **out,
    const char *what)
{
	struct store_bisect *b;
	int rc;

	*out = NULL;
	if (st == NULL)
		return -1;
	rc = db_step(st);
	if (rc != DB_ROW) {
		store_i_release(s, st);
		if (rc == DB_DONE)
			return err_setc(
			    &s->err, ERR_NOTFOUND, "no such bisection");
		return store_i_dberr(s, what);
	}
	b = xcalloc(1, sizeof(*b));
	bisect_scan(b, st, NULL);
	store_i_release(s, st);
	*out = b;
	return 0;
}

int
store_bisect_get(struct store *s, struct store_bisect **out, int64_t id)
{
	struct db_stmt *st = store_i_stmt(s, BISECT_COLS "WHERE b.id = ?1");

	if (st != NULL)
		db_bind_int64(st, 1, id);
	return bisect_row(s, st, out, "bisection");
}

void
store_bisect_ranges_release(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < 2 * n; i++)
		free(v[i]);
	free(v);
}

int
store_bisect_range_list(struct store *s, char ***out, size_t *n,
    const char *job, int64_t host_id, const char *point, const char *metric,
    int64_t tree_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT good_sha, bad_sha FROM bisections WHERE job = ?1"
	    " AND host_id IS NOT DISTINCT FROM ?2 AND point = ?3 AND metric = "
	    "?4"
	    " AND tree_id IS NOT DISTINCT FROM ?5 ORDER BY id");
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, job);
	store_i_bind_id(st, 2, host_id);
	store_i_bind_text(st, 3, point ? point : "");
	store_i_bind_text(st, 4, metric);
	store_i_bind_id(st, 5, tree_id);
	while ((rc = db_step(st)) == DB_ROW) {
		*out = xreallocarray(*out, 2 * (*n + 1), sizeof(**out));
		(*out)[2 * *n] = store_i_col_dup(st, 0);
		(*out)[2 * *n + 1] = store_i_col_dup(st, 1);
		(*n)++;
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		store_bisect_ranges_release(*out, *n);
		*out = NULL;
		*n = 0;
		return store_i_dberr(s, "bisection ranges");
	}
	return 0;
}

int
store_bisect_of_regression(
    struct store *s, struct store_bisect **out, int64_t regression_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    BISECT_COLS
	    "WHERE b.regression_id = ?1 ORDER BY b.id DESC LIMIT 1");

	if (st != NULL)
		db_bind_int64(st, 1, regression_id);
	return bisect_row(s, st, out, "bisection of a regression");
}

int
store_bisect_live(struct store *s, int64_t **out, size_t *n)
{
	return ids_of(s,
	    store_i_stmt(s,
	        "SELECT id FROM bisections WHERE state IN ('queued',"
	        " 'running') ORDER BY id"),
	    out, n, "live bisections");
}

int
store_bisect_list(
    struct store *s, struct store_bisects *out, int64_t limit, int64_t cursor)
{
	struct db_stmt *st = store_i_stmt(
	    s, BISECT_COLS "WHERE b.id < ?2 ORDER BY b.id DESC LIMIT ?1");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, limit);
	db_bind_int64(st, 2, store_i_below(cursor));
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), bisect_scan, NULL,
	    "bisections");
	out->v = v;
	if (r != 0) {
		store_bisects_release(out);
		return r;
	}
	out->next_cursor = store_i_next_cursor(
	    out->n, limit, out->n ? out->v[out->n - 1].id : 0, STORE_I_DESC);
	return 0;
}

void
store_bisects_release(struct store_bisects *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		bisect_fields_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* A string field: NULL keeps (?n IS NULL), "" clears. */
#define SET_STR(col, n)                                                \
	" " col " = CASE WHEN CAST(?" #n " AS TEXT) IS NULL THEN " col \
	" WHEN ?" #n " = '' THEN NULL ELSE ?" #n " END"

int
store_bisect_update(
    struct store *s, int64_t id, const struct store_bisect_set *v, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE bisections SET updated = ?2,"
	    " state = coalesce(nullif(?3, ''), state)," SET_STR(
	        "lo_sha", 4) "," SET_STR("hi_sha", 5) "," SET_STR("culprit_sha",
	        6) "," SET_STR("reason", 7) "," SET_STR("verify_parent",
	        8) "," SET_STR("verify_revert", 9) "," SET_STR("revert_sha",
	        10) " WHERE id = ?1");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	db_bind_int64(st, 2, now);
	store_i_bind_text(st, 3, v->state);
	store_i_bind_text(st, 4, v->lo_sha);
	store_i_bind_text(st, 5, v->hi_sha);
	store_i_bind_text(st, 6, v->culprit_sha);
	store_i_bind_text(st, 7, v->reason);
	store_i_bind_text(st, 8, v->verify_parent);
	store_i_bind_text(st, 9, v->verify_revert);
	store_i_bind_text(st, 10, v->revert_sha);
	return store_i_write1(s, st, "update bisection");
}

void
store_bisect_steps_release(struct store_bisect_step *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].sha);
		free(v[i].subject);
		free(v[i].cls);
		free(v[i].vs_good);
		free(v[i].vs_bad);
		free(v[i].note);
	}
	free(v);
}

int
store_bisect_step_list(struct store *s, struct store_bisect_step **out,
    size_t *n, int64_t bisect_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT x.id, x.kind, x.sha, (SELECT subject FROM commits"
	    "  WHERE tree_id = b.tree_id AND sha = x.sha),"
	    " x.good_pair_id, x.bad_pair_id, x.class, x.vs_good,"
	    " x.vs_good_pct, x.vs_bad, x.vs_bad_pct, x.note, x.created,"
	    " x.updated FROM bisect_steps x"
	    " JOIN bisections b ON b.id = x.bisect_id"
	    " WHERE x.bisect_id = ?1 ORDER BY x.id");
	struct store_bisect_step *v = NULL, *p;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, bisect_id);
	while ((rc = db_step(st)) == DB_ROW) {
		v = xreallocarray(v, *n + 1, sizeof(*v));
		p = &v[(*n)++];
		memset(p, 0, sizeof(*p));
		p->bisect_id = bisect_id;
		p->id = db_col_int64(st, 0);
		p->kind = store_i_col_dup(st, 1);
		p->sha = store_i_col_dup(st, 2);
		p->subject = store_i_col_dup(st, 3);
		p->good_pair = db_col_int64(st, 4);
		p->bad_pair = db_col_int64(st, 5);
		p->cls = store_i_col_dup(st, 6);
		p->vs_good = store_i_col_dup(st, 7);
		p->vs_good_pct = store_i_col_num(st, 8);
		p->vs_bad = store_i_col_dup(st, 9);
		p->vs_bad_pct = store_i_col_num(st, 10);
		p->note = store_i_col_dup(st, 11);
		p->created = db_col_int64(st, 12);
		p->updated = db_col_int64(st, 13);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		store_bisect_steps_release(v, *n);
		*n = 0;
		return store_i_dberr(s, "bisect steps");
	}
	*out = v;
	return 0;
}

int
store_bisect_step_add(struct store *s, int64_t *out_id, int64_t bisect_id,
    const char *kind, const char *sha, int64_t good_pair, int64_t bad_pair,
    int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "INSERT INTO bisect_steps (bisect_id, kind, sha, good_pair_id,"
	    " bad_pair_id, created, updated)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)");
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, bisect_id);
	store_i_bind_text(st, 2, kind);
	store_i_bind_text(st, 3, sha);
	store_i_bind_id(st, 4, good_pair);
	store_i_bind_id(st, 5, bad_pair);
	db_bind_int64(st, 6, now);
	r = store_i_write1(s, st, "insert bisect step");
	if (r == 0 && out_id)
		*out_id = db_last_id(s->db);
	return r;
}

int
store_bisect_step_set(struct store *s, int64_t step_id, const char *cls,
    const char *vs_good, double vs_good_pct, const char *vs_bad,
    double vs_bad_pct, const char *note, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE bisect_steps SET class = coalesce(?2, class),"
	    " vs_good = ?3, vs_good_pct = ?4, vs_bad = ?5, vs_bad_pct = ?6,"
	    " note = coalesce(?7, note), updated = ?8 WHERE id = ?1");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, step_id);
	store_i_bind_text(st, 2, cls);
	store_i_bind_text(st, 3, vs_good);
	store_i_bind_num(st, 4, vs_good_pct);
	store_i_bind_text(st, 5, vs_bad);
	store_i_bind_num(st, 6, vs_bad_pct);
	store_i_bind_text(st, 7, note);
	db_bind_int64(st, 8, now);
	return store_i_write1(s, st, "update bisect step");
}

static int
bisect_pair_once(struct store *s, int64_t *out_pair, int64_t bisect_id,
    const char *name, const char *point, int64_t host_id, int64_t tree_id,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	struct store_trigger_pair tp;
	struct db_stmt *st;
	int64_t pair = 0;
	int ok;

	*out_pair = 0;
	memset(&tp, 0, sizeof(tp));
	tp.name = name;
	tp.point = point;
	tp.host_id = host_id;
	/* No branch: a push never supersedes a bisection's pairs. */
	tp.tree_id = tree_id;
	tp.base = base;
	tp.cand = cand;
	if (store_begin(s) != 0)
		return -1;
	ok = store_trigger_pair(s, &pair, NULL, NULL, NULL, &tp, now) == 0;
	st = ok
	    ? store_i_stmt(s, "UPDATE pairs SET bisect_id = ?2 WHERE id = ?1")
	    : NULL;
	if ((ok = ok && st != NULL)) {
		db_bind_int64(st, 1, pair);
		db_bind_int64(st, 2, bisect_id);
		ok = db_step(st) == DB_DONE ||
		    store_i_dberr(s, "tag bisect pair") == 0;
		store_i_release(s, st);
	}
	if (!ok) {
		store_rollback(s);
		return -1;
	}
	if (store_commit(s) != 0)
		return -1;
	*out_pair = pair;
	return 0;
}

int
store_bisect_pair(struct store *s, int64_t *out_pair, int64_t bisect_id,
    const char *name, const char *point, int64_t host_id, int64_t tree_id,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    bisect_pair_once(s, out_pair, bisect_id, name, point, host_id,
	        tree_id, base, cand, now));
	return rc;
}

void
store_bisect_pair_state_release(struct store_bisect_pair_state *x)
{
	free(x->base_error);
	free(x->cand_error);
	free(x->verdict);
	free(x->better);
	free(x->suspect);
	memset(x, 0, sizeof(*x));
}

int
store_bisect_pair_state_get(struct store *s,
    struct store_bisect_pair_state *out, int64_t pair_id, const char *metric)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT b.state, b.error, c.state, c.error, p.analysed,"
	    " m.verdict, m.change_pct, m.min_effect, m.better, p.suspect"
	    " FROM pairs p JOIN jobs b ON b.id = p.base_job_id"
	    " JOIN jobs c ON c.id = p.cand_job_id"
	    " LEFT JOIN comparisons m ON m.pair_id = p.id AND m.metric = ?2"
	    "  AND m.final = 1"
	    " WHERE p.id = ?1");
	int rc;

	memset(out, 0, sizeof(*out));
	out->change_pct = out->min_effect = NAN;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	store_i_bind_text(st, 2, metric);
	rc = db_step(st);
	if (rc == DB_ROW) {
		snprintf(out->base_state, sizeof(out->base_state), "%s",
		    db_col_text(st, 0));
		out->base_error = store_i_col_dup(st, 1);
		snprintf(out->cand_state, sizeof(out->cand_state), "%s",
		    db_col_text(st, 2));
		out->cand_error = store_i_col_dup(st, 3);
		out->analysed = db_col_int(st, 4);
		out->verdict = store_i_col_dup(st, 5);
		out->change_pct = store_i_col_num(st, 6);
		out->min_effect = store_i_col_num(st, 7);
		out->better = store_i_col_dup(st, 8);
		out->suspect = store_i_col_dup(st, 9);
	}
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc == DB_DONE)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no pair %lld", (long long)pair_id);
	return store_i_dberr(s, "bisect pair");
}

int
store_bisect_cancel_jobs(
    struct store *s, int64_t bisect_id, const char *why, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE jobs SET state = 'cancelled', error = ?2, updated = ?3,"
	    " lease_owner = NULL, lease_expires = NULL"
	    " WHERE state IN ('queued', 'running') AND id IN"
	    " (SELECT base_job_id FROM pairs WHERE bisect_id = ?1"
	    "  UNION SELECT cand_job_id FROM pairs WHERE bisect_id = ?1)");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, bisect_id);
	store_i_bind_text(st, 2, why);
	db_bind_int64(st, 3, now);
	return store_i_write1(s, st, "cancel bisect jobs");
}

int
store_bisect_pair_of(struct store *s, int64_t *out, int64_t pair_id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT bisect_id FROM pairs WHERE id = ?1");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out = db_col_int64(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "pair's bisection");
}

int
store_bisect_host(
    struct store *s, int64_t *seen, char **why, int64_t *since, int64_t host_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT last_seen, quarantined, quarantined_at FROM hosts"
	    " WHERE id = ?1");
	int rc;

	*seen = *since = 0;
	*why = NULL;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, host_id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		*seen = db_col_int64(st, 0);
		*why = store_i_col_dup(st, 1);
		*since = db_col_int64(st, 2);
	}
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "host last seen");
}

char *
store_bisect_subject(struct store *s, int64_t tree_id, const char *sha)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT subject FROM commits WHERE tree_id = ?1 AND sha = ?2");
	char *r = NULL;

	if (st == NULL)
		return NULL;
	db_bind_int64(st, 1, tree_id);
	store_i_bind_text(st, 2, sha);
	if (db_step(st) == DB_ROW)
		r = store_i_col_dup(st, 0);
	store_i_release(s, st);
	return r;
}

int
store_bisect_candidates(
    struct store *s, int64_t *out, size_t *n, int64_t after_id, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT r.id FROM regressions r"
	    " JOIN comparisons c ON c.id = r.comparison_id AND c.final = 1"
	    " JOIN pairs p ON p.id = c.pair_id AND p.bisect_id IS NULL"
	    /* docs/HOST.md: a suspect pair's regression alerts nobody and
	     * is not bisected unasked */
	    " AND p.suspect IS NULL"
	    " WHERE r.id > ?1 AND r.state = 'new'"
	    /* An unstable verdict is bisected when its level moved too. */
	    " AND (c.verdict = 'regression' OR (c.verdict = 'unstable'"
	    "  AND abs(c.change_pct) >= coalesce(c.min_effect, 1)))"
	    " AND NOT EXISTS (SELECT 1 FROM bisections b"
	    "  WHERE b.regression_id = r.id)"
	    " ORDER BY r.id LIMIT ?2");
	int rc;

	*n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, after_id);
	db_bind_int64(st, 2, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW && *n < max)
		out[(*n)++] = db_col_int64(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "bisect candidates");
}

int
store_bisect_cp_candidates(struct store *s, int64_t *out, int64_t *out_at,
    size_t *n, int64_t after_at, int64_t after_id, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT cp.id, cp.created FROM change_points cp"
	    " JOIN history_series hs ON hs.id = cp.series_id"
	    " WHERE (cp.created, cp.id) > (?1, ?2)"
	    " AND cp.direction = 'regression'"
	    " AND hs.tree <> '' AND hs.host_id IS NOT NULL"
	    /* started from this very row (an id is reused when the change
	     * points are recomputed) */
	    " AND NOT EXISTS (SELECT 1 FROM bisections b"
	    "  WHERE b.change_point_id = cp.id AND b.created >= cp.created)"
	    " ORDER BY cp.created, cp.id LIMIT ?3");
	int rc;

	*n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, after_at);
	db_bind_int64(st, 2, after_id);
	db_bind_int64(st, 3, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW && *n < max) {
		out[*n] = db_col_int64(st, 0);
		out_at[(*n)++] = db_col_int64(st, 1);
	}
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "change point candidates");
}

int
store_bisect_previous_tip(struct store *s, char *out, size_t outlen,
    int64_t tree_id, const char *branch, const char *name, int64_t host_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT c.sha FROM pairs p JOIN jobs j ON j.id = p.cand_job_id"
	    " JOIN commits c ON c.id = j.commit_id"
	    " WHERE p.tree_id = ?1 AND p.branch = ?2 AND p.name = ?3"
	    " AND p.host_id = ?4 AND p.tip_only = 1 AND p.bisect_id IS NULL"
	    " AND j.state <> 'cancelled' ORDER BY p.id DESC LIMIT 1");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, tree_id);
	store_i_bind_text(st, 2, branch);
	store_i_bind_text(st, 3, name);
	db_bind_int64(st, 4, host_id);
	rc = db_step(st);
	if (rc == DB_ROW)
		snprintf(out, outlen, "%s", db_col_text(st, 0));
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc == DB_DONE)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no previous tip measured");
	return store_i_dberr(s, "previous tip");
}
