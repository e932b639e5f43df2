/*
 * Metric history, its writes: points appended in commit order as
 * verdicts are made, a commit's position in its branch, change points
 * replaced, and the tails and windows the change point search reads.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "store/history.h"
#include "store/store_int.h"

static int
history_append_once(struct store *s, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *k, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now)
{
	struct db_stmt *st;
	int64_t series = 0, seq = 0;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO history_series (tree, branch, host_id, job, point,"
	    " metric, better) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT (job, point, metric, host_id, tree, branch)"
	    " DO UPDATE SET better = excluded.better RETURNING id");
	ok = st != NULL;
	if (ok) {
		store_i_bind_text(st, 1, k->tree ? k->tree : "");
		store_i_bind_text(st, 2, k->branch ? k->branch : "");
		db_bind_int64(st, 3, k->host_id);
		store_i_bind_text(st, 4, k->job);
		store_i_bind_text(st, 5, k->point ? k->point : "");
		store_i_bind_text(st, 6, k->metric);
		store_i_bind_text(st, 7, k->better);
		if (db_step(st) == DB_ROW)
			series = db_col_int64(st, 0);
		else
			ok = store_i_dberr(s, "history series") == 0;
		store_i_release(s, st);
	}
	/* In the branch's commit order (store/hosts.c). */
	ok = ok &&
	    store_i_history_insert(
	        s, series, pair_id, job_id, comparison_id, value, now) == 0;
	st = ok ? store_i_stmt(s,
	              "SELECT seq FROM history_points WHERE series_id = ?1"
	              " AND pair_id = ?2")
	        : NULL;
	if (ok && (ok = st != NULL)) {
		db_bind_int64(st, 1, series);
		db_bind_int64(st, 2, pair_id);
		if (db_step(st) == DB_ROW)
			seq = db_col_int64(st, 0);
		else
			ok = store_i_dberr(s, "history point seq") == 0;
		store_i_release(s, st);
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_series)
		*out_series = series;
	if (out_seq)
		*out_seq = seq;
	return 0;
}

int
store_history_append(struct store *s, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *k, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    history_append_once(s, out_series, out_seq, k, pair_id, job_id,
	        comparison_id, value, now));
	return rc;
}

int
store_history_tail(struct store *s, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t series, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT seq, value FROM (SELECT seq, value FROM history_points"
	    " WHERE series_id = ?1 ORDER BY seq DESC LIMIT ?2) AS w ORDER BY "
	    "seq");
	double *v = NULL;
	int64_t *q = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out_values = NULL;
	*out_seqs = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, series);
	db_bind_int64(st, 2, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xreallocarray(v, cap, sizeof(*v));
			q = xreallocarray(q, cap, sizeof(*q));
		}
		q[n] = db_col_int64(st, 0);
		v[n++] = db_col_double(st, 1);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		free(v);
		free(q);
		return store_i_dberr(s, "history tail");
	}
	*out_values = v;
	*out_seqs = q;
	*out_n = n;
	return 0;
}

int
store_changepoints_replace(struct store *s, int64_t series, int64_t from_seq,
    const struct store_change_point *cps, size_t n, int64_t now)
{
	return store_changepoints_replace_range(
	    s, series, from_seq, INT64_MAX, cps, n, now);
}

/* 1 when cps (n) has a change point at seq within [from, to]. */
static int
cp_kept(const struct store_change_point *cps, size_t n, int64_t seq,
    int64_t from, int64_t to)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (cps[i].seq == seq && seq >= from && seq <= to)
			return 1;
	return 0;
}

/*
 * A change point still found at its place keeps its row and id (a
 * bisection started from it names it; PostgreSQL never gives a deleted
 * id again, SQLite only the greatest) with its figures and time new;
 * those no longer found go.
 */
static int
changepoints_replace_range_once(struct store *s, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now)
{
	struct db_stmt *st;
	int64_t *gone = NULL, seq;
	size_t i, ngone = 0;
	int ok, rc = DB_DONE;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "SELECT seq FROM change_points WHERE series_id = ?1 AND seq >= ?2"
	    " AND seq <= ?3");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, series);
		db_bind_int64(st, 2, from_seq);
		db_bind_int64(st, 3, to_seq);
		while ((rc = db_step(st)) == DB_ROW) {
			seq = db_col_int64(st, 0);
			if (cp_kept(cps, n, seq, from_seq, to_seq))
				continue;
			gone = xreallocarray(gone, ngone + 1, sizeof(*gone));
			gone[ngone++] = seq;
		}
		if (rc != DB_DONE)
			ok = store_i_dberr(s, "change points") == 0;
		store_i_release(s, st);
	}
	for (i = 0; ok && i < ngone; i++) {
		st = store_i_stmt(s,
		    "DELETE FROM change_points WHERE series_id = ?1 AND"
		    " seq = ?2");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, series);
			db_bind_int64(st, 2, gone[i]);
			ok = store_i_step_done(s, st, "drop change point") == 0;
			store_i_release(s, st);
		}
	}
	free(gone);
	for (i = 0; ok && i < n; i++) {
		if (cps[i].seq < from_seq || cps[i].seq > to_seq)
			continue;
		st = store_i_stmt(s,
		    "INSERT INTO change_points (series_id, seq, lo_seq, hi_seq,"
		    " before, after, change_pct, p, direction, created)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (series_id, seq) DO UPDATE SET"
		    " lo_seq = excluded.lo_seq, hi_seq = excluded.hi_seq,"
		    " before = excluded.before, after = excluded.after,"
		    " change_pct = excluded.change_pct, p = excluded.p,"
		    " direction = excluded.direction,"
		    " created = excluded.created");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, series);
			db_bind_int64(st, 2, cps[i].seq);
			db_bind_int64(st, 3, cps[i].lo_seq);
			db_bind_int64(st, 4, cps[i].hi_seq);
			store_i_bind_num(st, 5, cps[i].before);
			store_i_bind_num(st, 6, cps[i].after);
			store_i_bind_num(st, 7, cps[i].change_pct);
			store_i_bind_num(st, 8, cps[i].p);
			store_i_bind_text(st, 9, cps[i].direction);
			db_bind_int64(st, 10, now);
			ok =
			    store_i_step_done(s, st, "store change point") == 0;
			store_i_release(s, st);
		}
	}
	return store_i_tx_end(s, ok);
}

int
store_changepoints_replace_range(struct store *s, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    changepoints_replace_range_once(
	        s, series, from_seq, to_seq, cps, n, now));
	return rc;
}

int
store_i_commit_position(struct store *s, int64_t commit_id)
{
	struct db_stmt *st;
	int r;

	if (s->version < 11)
		return 0;
	/* Parents are recorded before their children (the watcher walks
	 * oldest first), so the first parent's position is known here. */
	st = store_i_stmt(s,
	    "UPDATE commits SET fp_pos = coalesce((SELECT p.fp_pos + 1"
	    " FROM commits p WHERE p.tree_id = commits.tree_id AND p.sha ="
	    "  CASE WHEN instr(commits.parents, ' ') > 0"
	    "  THEN substr(commits.parents, 1, instr(commits.parents, ' ') - 1)"
	    "  ELSE commits.parents END), 0)"
	    " WHERE id = ?1 AND fp_pos IS NULL AND first_seen IS NOT NULL");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, commit_id);
	r = store_i_step_done(s, st, "commit position");
	store_i_release(s, st);
	return r;
}

/* Runs one statement of a series with two int binds; 0 or -1.  sql: a
 * literal (the statement cache keys on it). */
static int
exec2(struct store *s, const char *sql, int64_t a, int64_t b, const char *what)
{
	struct db_stmt *st = store_i_stmt(s, sql);
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, a);
	db_bind_int64(st, 2, b);
	r = store_i_step_done(s, st, what);
	store_i_release(s, st);
	return r;
}

/*
 * Making room at seq ?2 of series ?1: the later points and their change
 * points move up one.  seq is part of a unique key, so the move goes
 * through negative values (-(seq + 2), then back to seq + 1).
 */
static const char *const moves[] = {
	"UPDATE history_points SET seq = -(seq + 2)"
	" WHERE series_id = ?1 AND seq >= ?2",
	"UPDATE history_points SET seq = -seq - 1"
	" WHERE series_id = ?1 AND seq < 0 AND ?2 >= 0",
	"UPDATE change_points"
	" SET seq = CASE WHEN seq >= ?2 THEN -(seq + 2) ELSE seq END,"
	" lo_seq = lo_seq + CASE WHEN lo_seq >= ?2 THEN 1 ELSE 0 END,"
	" hi_seq = hi_seq + CASE WHEN hi_seq >= ?2 THEN 1 ELSE 0 END"
	" WHERE series_id = ?1 AND (seq >= ?2 OR hi_seq >= ?2)",
	"UPDATE change_points SET seq = -seq - 1"
	" WHERE series_id = ?1 AND seq < 0 AND ?2 >= 0",
};

int
store_i_history_insert(struct store *s, int64_t series, int64_t pair_id,
    int64_t job_id, int64_t comparison_id, double value, int64_t now)
{
	struct db_stmt *st;
	int64_t seq = -1;
	size_t i;
	int have_pos = 0, rc, r;

	/*
	 * Where it goes: before the first point of a later commit, else
	 * last.  The candidate's commit position, when it has one.
	 */
	st = store_i_stmt(s,
	    "SELECT EXISTS (SELECT 1 FROM history_points"
	    "  WHERE series_id = ?1 AND pair_id = ?2),"
	    " c.fp_pos, (SELECT min(h.seq) FROM history_points h"
	    "  WHERE h.series_id = ?1 AND h.pos > c.fp_pos),"
	    " (SELECT coalesce(max(seq) + 1, 0) FROM history_points"
	    "  WHERE series_id = ?1)"
	    " FROM (SELECT 1) AS one LEFT JOIN jobs j ON j.id = ?3"
	    " LEFT JOIN commits c ON c.id = j.commit_id");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, series);
	db_bind_int64(st, 2, pair_id);
	db_bind_int64(st, 3, job_id);
	if ((rc = db_step(st)) != DB_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "history place");
	}
	if (db_col_int(st, 0)) {
		store_i_release(s, st);
		return 0; /* the pair is there already */
	}
	have_pos = db_col_type(st, 1) != DB_NULL;
	if (have_pos && db_col_type(st, 2) != DB_NULL)
		seq = db_col_int64(st, 2);
	else
		seq = db_col_int64(st, 3);
	store_i_release(s, st);
	for (i = 0, r = 0; r == 0 && i < sizeof(moves) / sizeof(moves[0]); i++)
		r = exec2(s, moves[i], series, seq, "history move");
	if (r != 0)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO history_points (series_id, seq, pair_id, job_id,"
	    " comparison_id, value, created, pos)"
	    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " (SELECT c.fp_pos FROM jobs j JOIN commits c"
	    "  ON c.id = j.commit_id WHERE j.id = ?4)");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, series);
	db_bind_int64(st, 2, seq);
	db_bind_int64(st, 3, pair_id);
	db_bind_int64(st, 4, job_id);
	if (comparison_id > 0)
		db_bind_int64(st, 5, comparison_id);
	db_bind_double(st, 6, value);
	db_bind_int64(st, 7, now);
	r = store_i_step_done(s, st, "history point");
	store_i_release(s, st);
	return r;
}

int
store_history_window(struct store *s, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t *out_total, int64_t series, int64_t around,
    size_t max)
{
	struct db_stmt *st;
	int64_t total = 0, from;
	double *v = NULL;
	int64_t *q = NULL;
	size_t n = 0;
	int rc;

	*out_values = NULL;
	*out_seqs = NULL;
	*out_n = 0;
	*out_total = 0;
	st = store_i_stmt(
	    s, "SELECT count(*) FROM history_points WHERE series_id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, series);
	if (db_step(st) == DB_ROW)
		total = db_col_int64(st, 0);
	store_i_release(s, st);
	/* max points with around in the middle, as far as the ends let. */
	from = around - (int64_t)max / 2;
	if (from > total - (int64_t)max)
		from = total - (int64_t)max;
	if (from < 0)
		from = 0;
	st = store_i_stmt(s,
	    "SELECT seq, value FROM history_points WHERE series_id = ?1"
	    " AND seq >= ?2 ORDER BY seq LIMIT ?3");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, series);
	db_bind_int64(st, 2, from);
	db_bind_int64(st, 3, (int64_t)max);
	v = xreallocarray(NULL, max + 1, sizeof(*v));
	q = xreallocarray(NULL, max + 1, sizeof(*q));
	while (n < max && (rc = db_step(st)) == DB_ROW) {
		q[n] = db_col_int64(st, 0);
		v[n++] = db_col_double(st, 1);
	}
	store_i_release(s, st);
	if (n < max && rc != DB_DONE) {
		free(v);
		free(q);
		return store_i_dberr(s, "history window");
	}
	*out_values = v;
	*out_seqs = q;
	*out_n = n;
	*out_total = total;
	return 0;
}
