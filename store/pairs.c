/*
 * The store: verdicts (daemon/verdict.c): pending pairs, comparisons, requeue
 * for more runs, history points and change points. All SQL is in
 * store/ (docs/ARCHITECTURE.md).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/store.h"
#include "store/store_int.h"

/*
 * ---- verdicts (daemon/verdict.c) ----
 * Kept in one block at the end to ease merges; see store.h.
 */

int
store_verdict_pending(struct store *s, int64_t *out, size_t max, size_t *out_n)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.id FROM pairs p WHERE p.analysed = 0"
	    " AND (SELECT count(*) FROM jobs j WHERE j.id IN (p.base_job_id, "
	    "p.cand_job_id)"
	    "  AND j.state = 'success') = 2"
	    " ORDER BY p.id LIMIT ?1");
	size_t n = 0;
	int rc;

	*out_n = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(st, 0);
	store_i_release(s, st);
	if (n < max && rc != SQLITE_DONE)
		return store_i_dberr(s, "pending verdicts");
	*out_n = n;
	return 0;
}

/* One side's columns from i on (the order of store_verdict_pair's). */
static void
vside_scan(struct store_vside *d, sqlite3_stmt *st, int i)
{
	d->id = sqlite3_column_int64(st, i);
	d->state = store_i_col_dup(st, i + 1);
	d->runs = sqlite3_column_int64(st, i + 2);
	d->max_runs = sqlite3_column_int64(st, i + 3);
	d->spec_json = store_i_col_dup(st, i + 4);
	d->tree = store_i_col_dup(st, i + 5);
	d->branches = store_i_col_dup(st, i + 6);
	d->stored = sqlite3_column_int64(st, i + 7);
}

static void
vside_release(struct store_vside *d)
{
	free(d->state);
	free(d->spec_json);
	free(d->tree);
	free(d->branches);
}

int
store_verdict_pair(struct store *s, struct store_vpair *out, int64_t pair_id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.name, p.point, p.host_id, h.name, p.analysed, j.role,"
	    " j.id, j.state, j.runs, j.max_runs, j.params, t.name,"
	    " c.branches, (SELECT count(*) FROM runs r WHERE r.job_id = j.id)"
	    " FROM pairs p"
	    " LEFT JOIN hosts h ON h.id = p.host_id"
	    " JOIN jobs j ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " LEFT JOIN trees t ON t.id = c.tree_id"
	    " WHERE p.id = ?1 ORDER BY j.id");
	int rc, have[2] = { 0, 0 };

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *role = store_i_col_text(st, 5);
		int k = role && strcmp(role, "base") == 0    ? 0
		    : role && strcmp(role, "candidate") == 0 ? 1
		                                             : -1;

		if (!have[0] && !have[1]) {
			out->pair_id = pair_id;
			out->name = store_i_col_dup(st, 0);
			out->point = store_i_col_dup(st, 1);
			out->host_id = sqlite3_column_int64(st, 2);
			out->host = store_i_col_dup(st, 3);
			out->analysed = sqlite3_column_int(st, 4) != 0;
		}
		if (k < 0)
			continue;
		/* A role seen again replaces the first, as the JSON did. */
		if (have[k])
			vside_release(k == 0 ? &out->base : &out->cand);
		vside_scan(k == 0 ? &out->base : &out->cand, st, 6);
		have[k] = 1;
	}
	store_i_release(s, st);
	if (rc != SQLITE_DONE) {
		store_vpair_release(out);
		return store_i_dberr(s, "verdict pair");
	}
	if (!have[0] || !have[1]) {
		store_vpair_release(out);
		return err_setc(&s->err, ERR_NOTFOUND,
		    "pair %lld not found or without both jobs",
		    (long long)pair_id);
	}
	return 0;
}

void
store_vpair_release(struct store_vpair *p)
{
	if (p == NULL)
		return;
	free(p->name);
	free(p->point);
	free(p->host);
	vside_release(&p->base);
	vside_release(&p->cand);
	memset(p, 0, sizeof(*p));
}

int
store_verdict_values(struct store *s, struct store_values *out, int64_t pair_id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT j.role, m.name AS metric, m.unit, m.better, m.value,"
	    " r.idx AS run FROM jobs j JOIN runs r ON r.job_id = j.id"
	    " AND r.status = 'ok' AND r.idx < j.max_runs"
	    " JOIN metrics m ON m.run_id = r.id"
	    " WHERE j.id IN (SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)"
	    " ORDER BY m.name, j.role, r.idx");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v),
	    store_i_value_scan, NULL, "verdict values");
	out->v = v;
	if (r != 0)
		store_values_release(out);
	return r;
}

static void
vsib_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_vsib *x = row;

	(void)arg;
	x->pair_id = sqlite3_column_int64(st, 0);
	x->point = store_i_col_dup(st, 1);
	x->analysed = sqlite3_column_int(st, 2) != 0;
	/* The specs as the JSON rows had them (non-UTF-8 bytes '?'). */
	x->base_spec_json = store_i_web_text(st, 3);
	x->cand_spec_json = store_i_web_text(st, 4);
}

int
store_verdict_siblings(
    struct store *s, struct store_vsibs *out, int64_t pair_id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.id AS pair_id, p.point, p.analysed,"
	    " b.params AS base_spec, c.params AS cand_spec"
	    " FROM pairs me JOIN pairs p"
	    "  ON p.sib_group = me.sib_group AND p.host_id = me.host_id"
	    " JOIN jobs b ON b.id = p.base_job_id"
	    " JOIN jobs c ON c.id = p.cand_job_id"
	    " WHERE me.id = ?1 ORDER BY p.id");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), vsib_scan, NULL,
	    "memcg tax siblings");
	out->v = v;
	if (r != 0)
		store_vsibs_release(out);
	return r;
}

void
store_vsibs_release(struct store_vsibs *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].point);
		free(l->v[i].base_spec_json);
		free(l->v[i].cand_spec_json);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void
vhist_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_vhist *h = row;

	(void)arg;
	h->metric = store_i_col_dup(st, 0);
	h->job = sqlite3_column_int64(st, 1);
	h->value = store_i_col_num(st, 2);
}

int
store_verdict_history(struct store *s, struct store_vhists *out,
    int64_t pair_id, int64_t max_jobs)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "WITH me AS (SELECT name, point, host_id FROM pairs"
	    "  WHERE id = ?1),"
	    " js AS (SELECT j.id FROM jobs j JOIN me"
	    "  ON j.name = me.name AND j.point = me.point"
	    "  JOIN pairs p ON p.id = j.pair_id AND p.host_id = me.host_id"
	    "  AND p.bisect_id IS NULL"
	    "  WHERE j.role = 'base' AND j.state = 'success'"
	    "  AND j.pair_id < ?1 ORDER BY j.id DESC LIMIT ?2)"
	    " SELECT m.name AS metric, js.id AS job, m.value FROM js"
	    " JOIN jobs j ON j.id = js.id"
	    " JOIN runs r ON r.job_id = js.id AND r.status = 'ok'"
	    "  AND r.idx < j.max_runs"
	    "  AND r.host_id = (SELECT host_id FROM me)"
	    " JOIN metrics m ON m.run_id = r.id"
	    " ORDER BY m.name, js.id, r.idx");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	sqlite3_bind_int64(st, 2, max_jobs);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), vhist_scan, NULL,
	    "baseline history");
	out->v = v;
	if (r != 0)
		store_vhists_release(out);
	return r;
}

void
store_vhists_release(struct store_vhists *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].metric);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
store_verdict_put(struct store *s, int64_t *out_id, int64_t pair_id,
    const struct store_comparison *c, int64_t now)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO comparisons (pair_id, metric, base_median,"
	    " cand_median, change_pct, ci_low, ci_high, p, verdict, created,"
	    " host_id, job, point, unit, better, n_base, n_cand, p_adjusted,"
	    " min_effect, final, note, updated)"
	    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, p.host_id,"
	    " p.name, p.point, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?10"
	    " FROM pairs p WHERE p.id = ?1"
	    " ON CONFLICT (pair_id, metric) DO UPDATE SET"
	    " base_median = excluded.base_median,"
	    " cand_median = excluded.cand_median,"
	    " change_pct = excluded.change_pct, ci_low = excluded.ci_low,"
	    " ci_high = excluded.ci_high, p = excluded.p,"
	    " verdict = excluded.verdict, host_id = excluded.host_id,"
	    " job = excluded.job, point = excluded.point,"
	    " unit = excluded.unit, better = excluded.better,"
	    " n_base = excluded.n_base, n_cand = excluded.n_cand,"
	    " p_adjusted = excluded.p_adjusted,"
	    " min_effect = excluded.min_effect, final = excluded.final,"
	    " note = excluded.note, updated = excluded.updated"
	    " RETURNING id");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, pair_id);
		store_i_bind_text(st, 2, c->metric);
		store_i_bind_num(st, 3, c->base_median);
		store_i_bind_num(st, 4, c->cand_median);
		store_i_bind_num(st, 5, c->change_pct);
		store_i_bind_num(st, 6, c->ci_low);
		store_i_bind_num(st, 7, c->ci_high);
		store_i_bind_num(st, 8, c->p);
		store_i_bind_text(st, 9, c->verdict);
		sqlite3_bind_int64(st, 10, now);
		store_i_bind_text(st, 11, c->unit);
		store_i_bind_text(st, 12, c->better);
		sqlite3_bind_int64(st, 13, c->n_base);
		sqlite3_bind_int64(st, 14, c->n_cand);
		store_i_bind_num(st, 15, c->p_adjusted);
		store_i_bind_num(st, 16, c->min_effect);
		sqlite3_bind_int(st, 17, c->final != 0);
		store_i_bind_text(st, 18, c->note);
		if (sqlite3_step(st) == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else
			ok = store_i_dberr(s, "store comparison") == 0;
		store_i_release(s, st);
	}
	if (ok && id == 0)
		ok = err_set(&s->err, "pair %lld not found",
		         (long long)pair_id) == 0;
	if (ok && c->has_spread) {
		/* Schema v33, a statement of its own: a writer that does not
		 * know the spread writes the row as before v33. */
		st = store_i_stmt(s,
		    "UPDATE comparisons SET base_mean = ?2, base_sd = ?3,"
		    " cand_mean = ?4, cand_sd = ?5 WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			store_i_bind_num(st, 2, c->base_mean);
			store_i_bind_num(st, 3, c->base_sd);
			store_i_bind_num(st, 4, c->cand_mean);
			store_i_bind_num(st, 5, c->cand_sd);
			ok = store_i_step_done(s, st, "store spread") == 0;
			store_i_release(s, st);
		}
	}
	if (ok && c->final &&
	    (strcmp(c->verdict, "regression") == 0 ||
	        strcmp(c->verdict, "unstable") == 0)) {
		/* A bisection's pair is a measurement for the bisection,
		 * not a finding of its own. */
		st = store_i_stmt(s,
		    "INSERT INTO regressions (comparison_id, state, created,"
		    " updated) SELECT ?1, 'new', ?2, ?2 FROM pairs"
		    " WHERE id = ?3 AND bisect_id IS NULL"
		    " ON CONFLICT (comparison_id) DO NOTHING");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, now);
			sqlite3_bind_int64(st, 3, pair_id);
			ok = store_i_step_done(s, st, "store regression") == 0;
			store_i_release(s, st);
		}
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_id)
		*out_id = id;
	return 0;
}

int
store_verdict_check(struct store *s, int64_t pair_id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.analysed, (SELECT count(*) FROM jobs j"
	    " WHERE j.id IN (p.base_job_id, p.cand_job_id) AND j.state = "
	    "'success')"
	    " FROM pairs p WHERE p.id = ?1");
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	if (sqlite3_step(st) != SQLITE_ROW)
		r = err_setc(&s->err, ERR_CONFLICT, "pair %lld not found",
		    (long long)pair_id);
	else if (sqlite3_column_int64(st, 0) != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld already has its verdict", (long long)pair_id);
	else if (sqlite3_column_int64(st, 1) != 2)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld: a job has not succeeded", (long long)pair_id);
	store_i_release(s, st);
	return r;
}

int
store_verdict_done(struct store *s, int64_t pair_id, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	(void)now;
	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "UPDATE pairs SET analysed = 1 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, pair_id);
		ok = store_i_step_done(s, st, "verdict done") == 0;
		store_i_release(s, st);
	}
	/* Its jobs' summaries for the history page (schema v20). */
	st = ok ? store_i_stmt(s,
	              STORE_I_JOB_VALUES_FILL(
	                  "SELECT id FROM jobs WHERE pair_id = ?1"
	                  " UNION SELECT base_job_id FROM pairs WHERE id = ?1"
	                  " UNION SELECT cand_job_id FROM pairs WHERE id = ?1"))
	        : NULL;
	if (ok && (ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, pair_id);
		ok = store_i_step_done(s, st, "job summaries") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_verdict_requeue(struct store *s, int64_t pair_id, int64_t runs,
    int64_t max_past, int64_t now)
{
	sqlite3_stmt *st;
	int64_t ids[2] = { 0, 0 }, have[2] = { 0, 0 };
	int ok, r = 0, n = 0, k, more = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "SELECT id, state, runs, max_runs FROM jobs WHERE id IN "
	    "(SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, pair_id);
		while (r == 0 && sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);

			if (n < 2) {
				ids[n] = id;
				have[n] = sqlite3_column_int64(st, 2);
			}
			n++;
			if (strcmp(store_i_col_text(st, 1), "success") != 0)
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld is %s, not success",
				    (long long)id, store_i_col_text(st, 1));
			else if (runs > sqlite3_column_int64(st, 3) &&
			    runs > max_past)
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld: %lld runs is above its max_runs "
				    "%lld",
				    (long long)id, (long long)runs,
				    (long long)sqlite3_column_int64(st, 3));
			else if (runs > sqlite3_column_int64(st, 2))
				more++;
		}
		store_i_release(s, st);
	}
	if (ok && r == 0 && n != 2)
		r = err_setc(&s->err, ERR_CONFLICT, "pair %lld has %d jobs",
		    (long long)pair_id, n);
	if (ok && r == 0 && more == 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld: both jobs have %lld runs already",
		    (long long)pair_id, (long long)runs);
	/*
	 * Only the sides short of runs go back to the queue: a base shared
	 * with another pair may have them already (that pair asked first),
	 * and then only the candidate runs more.
	 */
	for (k = 0; ok && r == 0 && k < 2; k++) {
		if (have[k] >= runs)
			continue;
		st = store_i_stmt(s,
		    "UPDATE jobs SET state = 'queued', runs = ?2, attempts = 0,"
		    " max_runs = max(max_runs, ?2),"
		    " lease_owner = NULL, lease_expires = NULL,"
		    " progress = NULL, error = NULL, updated = ?3"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, ids[k]);
			sqlite3_bind_int64(st, 2, runs);
			sqlite3_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "requeue pair") == 0;
			store_i_release(s, st);
		}
	}
	if (store_i_tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

/* ---- metric history and change points ---- */

int
store_history_append(struct store *s, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *k, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now)
{
	sqlite3_stmt *st;
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
		sqlite3_bind_int64(st, 3, k->host_id);
		store_i_bind_text(st, 4, k->job);
		store_i_bind_text(st, 5, k->point ? k->point : "");
		store_i_bind_text(st, 6, k->metric);
		store_i_bind_text(st, 7, k->better);
		if (sqlite3_step(st) == SQLITE_ROW)
			series = sqlite3_column_int64(st, 0);
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
		sqlite3_bind_int64(st, 1, series);
		sqlite3_bind_int64(st, 2, pair_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			seq = sqlite3_column_int64(st, 0);
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
store_history_tail(struct store *s, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t series, size_t max)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT seq, value FROM (SELECT seq, value FROM history_points"
	    " WHERE series_id = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq");
	double *v = NULL;
	int64_t *q = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out_values = NULL;
	*out_seqs = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xreallocarray(v, cap, sizeof(*v));
			q = xreallocarray(q, cap, sizeof(*q));
		}
		q[n] = sqlite3_column_int64(st, 0);
		v[n++] = sqlite3_column_double(st, 1);
	}
	store_i_release(s, st);
	if (rc != SQLITE_DONE) {
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

int
store_changepoints_replace_range(struct store *s, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now)
{
	sqlite3_stmt *st;
	size_t i;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "DELETE FROM change_points WHERE series_id = ?1 AND seq >= ?2"
	    " AND seq <= ?3");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, series);
		sqlite3_bind_int64(st, 2, from_seq);
		sqlite3_bind_int64(st, 3, to_seq);
		ok = store_i_step_done(s, st, "drop change points") == 0;
		store_i_release(s, st);
	}
	for (i = 0; ok && i < n; i++) {
		if (cps[i].seq < from_seq || cps[i].seq > to_seq)
			continue;
		st = store_i_stmt(s,
		    "INSERT INTO change_points (series_id, seq, lo_seq, hi_seq,"
		    " before, after, change_pct, p, direction, created)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (series_id, seq) DO NOTHING");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, series);
			sqlite3_bind_int64(st, 2, cps[i].seq);
			sqlite3_bind_int64(st, 3, cps[i].lo_seq);
			sqlite3_bind_int64(st, 4, cps[i].hi_seq);
			store_i_bind_num(st, 5, cps[i].before);
			store_i_bind_num(st, 6, cps[i].after);
			store_i_bind_num(st, 7, cps[i].change_pct);
			store_i_bind_num(st, 8, cps[i].p);
			store_i_bind_text(st, 9, cps[i].direction);
			sqlite3_bind_int64(st, 10, now);
			ok =
			    store_i_step_done(s, st, "store change point") == 0;
			store_i_release(s, st);
		}
	}
	return store_i_tx_end(s, ok);
}
