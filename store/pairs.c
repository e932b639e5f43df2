/*
 * Pairs and their verdicts: what daemon/verdict.c reads and writes
 * (pending pairs, comparisons, requeue for more runs, shared bases), the
 * pairs a trigger makes or supersedes and a pair's hygiene mark; the
 * pair page's read is in pair_read.c.
 */
#include <math.h>
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
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "store/store_int.h"

int
store_verdict_pending(struct store *s, int64_t *out, size_t max, size_t *out_n)
{
	struct db_stmt *st = store_i_stmt(s,
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
	db_bind_int64(st, 1, (int64_t)max);
	while (n < max && (rc = db_step(st)) == DB_ROW)
		out[n++] = db_col_int64(st, 0);
	store_i_release(s, st);
	if (n < max && rc != DB_DONE)
		return store_i_dberr(s, "pending verdicts");
	*out_n = n;
	return 0;
}

/* One side's columns from i on (the order of store_verdict_pair_get's). */
static void
vside_scan(struct store_vside *d, struct db_stmt *st, int i)
{
	d->id = db_col_int64(st, i);
	d->state = store_i_col_dup(st, i + 1);
	d->runs = db_col_int64(st, i + 2);
	d->max_runs = db_col_int64(st, i + 3);
	d->spec_json = store_i_col_dup(st, i + 4);
	d->tree = store_i_col_dup(st, i + 5);
	d->branches = store_i_col_dup(st, i + 6);
	d->stored = db_col_int64(st, i + 7);
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
store_verdict_pair_get(
    struct store *s, struct store_vpair *out, int64_t pair_id)
{
	struct db_stmt *st = store_i_stmt(s,
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
	db_bind_int64(st, 1, pair_id);
	while ((rc = db_step(st)) == DB_ROW) {
		const char *role = store_i_col_text(st, 5);
		int k = role && strcmp(role, "base") == 0    ? 0
		    : role && strcmp(role, "candidate") == 0 ? 1
		                                             : -1;

		if (!have[0] && !have[1]) {
			out->pair_id = pair_id;
			out->name = store_i_col_dup(st, 0);
			out->point = store_i_col_dup(st, 1);
			out->host_id = db_col_int64(st, 2);
			out->host = store_i_col_dup(st, 3);
			out->analysed = db_col_int(st, 4) != 0;
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
	if (rc != DB_DONE) {
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
store_verdict_value_list(
    struct store *s, struct store_values *out, int64_t pair_id)
{
	struct db_stmt *st = store_i_stmt(s,
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
	db_bind_int64(st, 1, pair_id);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v),
	    store_i_value_scan, NULL, "verdict values");
	out->v = v;
	if (r != 0)
		store_values_release(out);
	return r;
}

static void
vsib_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_vsib *x = row;

	(void)arg;
	x->pair_id = db_col_int64(st, 0);
	x->point = store_i_col_dup(st, 1);
	x->analysed = db_col_int(st, 2) != 0;
	/* The specs as the JSON rows had them (non-UTF-8 bytes '?'). */
	x->base_spec_json = store_i_web_text(st, 3);
	x->cand_spec_json = store_i_web_text(st, 4);
}

int
store_verdict_sibling_list(
    struct store *s, struct store_vsibs *out, int64_t pair_id)
{
	struct db_stmt *st = store_i_stmt(s,
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
	db_bind_int64(st, 1, pair_id);
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
vhist_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_vhist *h = row;

	(void)arg;
	h->metric = store_i_col_dup(st, 0);
	h->job = db_col_int64(st, 1);
	h->value = store_i_col_num(st, 2);
}

int
store_verdict_history_list(struct store *s, struct store_vhists *out,
    int64_t pair_id, int64_t max_jobs)
{
	struct db_stmt *st = store_i_stmt(s,
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
	db_bind_int64(st, 1, pair_id);
	db_bind_int64(st, 2, max_jobs);
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

static int
verdict_put_once(struct store *s, int64_t *out_id, int64_t pair_id,
    const struct store_comparison *c, int64_t now)
{
	struct db_stmt *st;
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
		db_bind_int64(st, 1, pair_id);
		store_i_bind_text(st, 2, c->metric);
		store_i_bind_num(st, 3, c->base_median);
		store_i_bind_num(st, 4, c->cand_median);
		store_i_bind_num(st, 5, c->change_pct);
		store_i_bind_num(st, 6, c->ci_low);
		store_i_bind_num(st, 7, c->ci_high);
		store_i_bind_num(st, 8, c->p);
		store_i_bind_text(st, 9, c->verdict);
		db_bind_int64(st, 10, now);
		store_i_bind_text(st, 11, c->unit);
		store_i_bind_text(st, 12, c->better);
		db_bind_int64(st, 13, c->n_base);
		db_bind_int64(st, 14, c->n_cand);
		store_i_bind_num(st, 15, c->p_adjusted);
		store_i_bind_num(st, 16, c->min_effect);
		db_bind_int64(st, 17, c->final != 0);
		store_i_bind_text(st, 18, c->note);
		if (db_step(st) == DB_ROW)
			id = db_col_int64(st, 0);
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
			db_bind_int64(st, 1, id);
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
			db_bind_int64(st, 1, id);
			db_bind_int64(st, 2, now);
			db_bind_int64(st, 3, pair_id);
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
store_verdict_put(struct store *s, int64_t *out_id, int64_t pair_id,
    const struct store_comparison *c, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, verdict_put_once(s, out_id, pair_id, c, now));
	return rc;
}

int
store_verdict_check(struct store *s, int64_t pair_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT p.analysed, (SELECT count(*) FROM jobs j"
	    " WHERE j.id IN (p.base_job_id, p.cand_job_id) AND j.state = "
	    "'success')"
	    " FROM pairs p WHERE p.id = ?1");
	int r = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	if (db_step(st) != DB_ROW)
		r = err_setc(&s->err, ERR_CONFLICT, "pair %lld not found",
		    (long long)pair_id);
	else if (db_col_int64(st, 0) != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld already has its verdict", (long long)pair_id);
	else if (db_col_int64(st, 1) != 2)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld: a job has not succeeded", (long long)pair_id);
	store_i_release(s, st);
	return r;
}

static int
verdict_done_once(struct store *s, int64_t pair_id, int64_t now)
{
	struct db_stmt *st;
	int ok;

	(void)now;
	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "UPDATE pairs SET analysed = 1 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, pair_id);
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
		db_bind_int64(st, 1, pair_id);
		ok = store_i_step_done(s, st, "job summaries") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_verdict_done(struct store *s, int64_t pair_id, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, verdict_done_once(s, pair_id, now));
	return rc;
}

static int
verdict_requeue_once(struct store *s, int64_t pair_id, int64_t runs,
    int64_t max_past, int64_t now)
{
	struct db_stmt *st;
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
		db_bind_int64(st, 1, pair_id);
		while (r == 0 && db_step(st) == DB_ROW) {
			int64_t id = db_col_int64(st, 0);

			if (n < 2) {
				ids[n] = id;
				have[n] = db_col_int64(st, 2);
			}
			n++;
			if (strcmp(store_i_col_text(st, 1), "success") != 0)
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld is %s, not success",
				    (long long)id, store_i_col_text(st, 1));
			else if (runs > db_col_int64(st, 3) && runs > max_past)
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld: %lld runs is above its max_runs "
				    "%lld",
				    (long long)id, (long long)runs,
				    (long long)db_col_int64(st, 3));
			else if (runs > db_col_int64(st, 2))
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
			db_bind_int64(st, 1, ids[k]);
			db_bind_int64(st, 2, runs);
			db_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "requeue pair") == 0;
			store_i_release(s, st);
		}
	}
	if (store_i_tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

int
store_verdict_requeue(struct store *s, int64_t pair_id, int64_t runs,
    int64_t max_past, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, verdict_requeue_once(s, pair_id, runs, max_past, now));
	return rc;
}

/* A base job that p may share: 0 and *out (0 when there is none). */
static int
reusable_base(struct store *s, int64_t *out, const struct store_trigger_pair *p,
    int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT j.id FROM jobs j JOIN pairs o ON o.id = j.pair_id"
	    " WHERE j.role = 'base' AND j.name = ?1 AND j.point = ?2"
	    " AND j.params = json(?3) AND o.host_id = ?4"
	    " AND j.commit_id IS NOT DISTINCT FROM ?5"
	    " AND j.state IN ('queued', 'running', 'success')"
	    " AND j.updated >= ?6 ORDER BY j.id DESC LIMIT 1");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, p->name);
	store_i_bind_text(st, 2, p->point ? p->point : "");
	store_i_bind_text(st, 3, p->base->spec_json);
	db_bind_int64(st, 4, p->host_id);
	if (p->base->commit_id > 0)
		db_bind_int64(st, 5, p->base->commit_id);
	db_bind_int64(st, 6, now - p->reuse_age);
	if ((rc = db_step(st)) == DB_ROW)
		*out = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "reusable base");
	return 0;
}

static int
trigger_pair_once(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, int *out_reused, const struct store_trigger_pair *p,
    int64_t now)
{
	struct db_stmt *st;
	int64_t pair = 0, b = 0, c = 0;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	ok = 1;
	if (p->host_id > 0 && p->reuse_age > 0)
		ok = reusable_base(s, &b, p, now) == 0;
	st = ok ? store_i_stmt(s,
	              "INSERT INTO pairs (name, point, host_id, created,"
	              " pinned, tree_id, branch, tip_only, canary)"
	              " VALUES (?1, ?2, ?3, ?4, CASE WHEN CAST(?3 AS BIGINT) "
	              "IS NULL THEN 0 "
	              "ELSE 1 END,"
	              " ?5, ?6, ?7,"
	              " ?8)")
	        : NULL;
	if (ok && (ok = st != NULL)) {
		store_i_bind_text(st, 1, p->name);
		store_i_bind_text(st, 2, p->point ? p->point : "");
		if (p->host_id > 0)
			db_bind_int64(st, 3, p->host_id);
		db_bind_int64(st, 4, now);
		if (p->tree_id > 0)
			db_bind_int64(st, 5, p->tree_id);
		store_i_bind_text(st, 6, p->branch);
		db_bind_int64(st, 7, p->tip_only);
		db_bind_int64(st, 8, p->canary ? 1 : 0);
		ok = store_i_step_done(s, st, "insert pair") == 0;
		pair = db_last_id(s->db);
		store_i_release(s, st);
	}
	if (out_reused)
		*out_reused = b != 0;
	ok = ok &&
	    (b != 0 ||
	        store_i_job_insert(
	            s, &b, pair, p->name, p->point, p->base, now) == 0) &&
	    store_i_job_insert(s, &c, pair, p->name, p->point, p->cand, now) ==
	        0 &&
	    store_i_pair_sides(s, pair, b, c) == 0 &&
	    store_i_group_assign(s, pair) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_pair)
		*out_pair = pair;
	if (out_base)
		*out_base = b;
	if (out_cand)
		*out_cand = c;
	return 0;
}

int
store_trigger_pair(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, int *out_reused, const struct store_trigger_pair *p,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    trigger_pair_once(
	        s, out_pair, out_base, out_cand, out_reused, p, now));
	return rc;
}

static void
pending_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_pending *p = row;

	(void)arg;
	p->pair_id = db_col_int64(st, 0);
	p->sha = store_i_col_dup(st, 1);
	p->tip_only = db_col_int(st, 2) != 0;
}

int
store_trigger_pending(struct store *s, struct store_pendings *out,
    int64_t tree_id, const char *branch, const char *name)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT p.id AS pair_id, c.sha, p.tip_only FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " WHERE p.tree_id = ?1 AND p.branch = ?2 AND p.name = ?3"
	    " AND j.state = 'queued'"
	    /* measured, back in the queue for more runs: not waiting */
	    " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id)"
	    " ORDER BY p.id");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, tree_id);
	store_i_bind_text(st, 2, branch);
	store_i_bind_text(st, 3, name);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), pending_scan,
	    NULL, "pending pairs");
	out->v = v;
	if (r != 0)
		store_pendings_release(out);
	return r;
}

void
store_pendings_release(struct store_pendings *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].sha);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int
pair_supersede_once(struct store *s, int *out_n, int64_t pair_id,
    const char *reason, int64_t now)
{
	static const char *const sql[2] = {
		"UPDATE jobs SET state = 'cancelled', error = ?2, updated = ?3"
		" WHERE state = 'queued' AND id ="
		" (SELECT cand_job_id FROM pairs WHERE id = ?1)"
		" AND NOT EXISTS (SELECT 1 FROM runs WHERE job_id = jobs.id)",
		"UPDATE jobs SET state = 'cancelled', error = ?2, updated = ?3"
		" WHERE state = 'queued' AND id ="
		" (SELECT base_job_id FROM pairs WHERE id = ?1)"
		/* only with its candidate (one with runs stays) */
		" AND EXISTS (SELECT 1 FROM pairs me"
		"  JOIN jobs mc ON mc.id = me.cand_job_id"
		"  WHERE me.id = ?1 AND mc.state = 'cancelled')"
		" AND NOT EXISTS (SELECT 1 FROM pairs o"
		"  JOIN jobs oc ON oc.id = o.cand_job_id"
		"  WHERE o.base_job_id = jobs.id AND o.id <> ?1"
		"  AND oc.state <> 'cancelled')",
	};
	struct db_stmt *st;
	int ok = 1, i, n = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	for (i = 0; i < 2 && ok; i++) {
		if ((ok = (st = store_i_prep(s, sql[i])) != NULL) == 0)
			break;
		db_bind_int64(st, 1, pair_id);
		store_i_bind_text(st, 2, reason);
		db_bind_int64(st, 3, now);
		ok = store_i_step_done(s, st, "supersede") == 0;
		n += db_changes(s->db);
		store_i_release(s, st);
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

int
store_pair_supersede(struct store *s, int *out_n, int64_t pair_id,
    const char *reason, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, pair_supersede_once(s, out_n, pair_id, reason, now));
	return rc;
}

int
store_pair_deprioritise(struct store *s, int *out_n, int64_t pair_id)
{
	struct db_stmt *st;
	int r;

	st = store_i_stmt(s,
	    "UPDATE pairs SET superseded = 1 WHERE id = ?1 AND superseded = 0"
	    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = pairs.cand_job_id"
	    "  AND j.state = 'queued')");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	r = store_i_step_done(s, st, "deprioritise");
	if (r == 0 && out_n)
		*out_n = db_changes(s->db);
	store_i_release(s, st);
	return r;
}

static int
hygiene_set_once(struct store *s, int64_t pair_id, const char *why)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "UPDATE pairs SET suspect = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, pair_id);
		store_i_bind_text(st, 2, why);
		ok = store_i_step_done(s, st, "pair suspect") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_hygiene_set(struct store *s, int64_t pair_id, const char *why)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, hygiene_set_once(s, pair_id, why));
	return rc;
}

int
store_hygiene_suspect(struct store *s, char **out_why, int64_t pair_id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT suspect FROM pairs WHERE id = ?1");
	int rc;

	*out_why = NULL;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		if (db_col_type(st, 0) != DB_NULL)
			*out_why = xstrdup(db_col_text(st, 0));
		store_i_release(s, st);
		return 0;
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return store_i_dberr(s, "pair suspect");
}

int
store_stats(
    struct store *s, struct store_stats *out, int64_t now, int64_t online_s)
{
	struct db_stmt *st;
	int i;

	memset(out, 0, sizeof(*out));
	/* The triggers' counts (store/counts.h), not count(*) of a million
	 * rows, and the hosts', in one statement: a row a job state, then
	 * the hosts' (its name NULL). */
	st = store_i_stmt(s,
	    "SELECT substr(name, 6), n, 0, 0 FROM count_totals"
	    " WHERE name LIKE 'jobs.%'"
	    " UNION ALL SELECT NULL, count(*),"
	    " count(*) FILTER (WHERE last_seen >= ?1),"
	    " (SELECT n FROM count_totals WHERE name = 'runs') FROM hosts");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, now - online_s);
	while (db_step(st) == DB_ROW) {
		if (db_col_type(st, 0) == DB_NULL) {
			out->hosts = db_col_int64(st, 1);
			out->hosts_online = db_col_int64(st, 2);
			out->runs = db_col_int64(st, 3);
			continue;
		}
		for (i = 0; i < 5; i++)
			if (strcmp(store_i_col_text(st, 0),
			        store_job_states[i]) == 0)
				out->jobs[i] = db_col_int64(st, 1);
	}
	store_i_release(s, st);
	return 0;
}

int
store_verdict_unchanged(
    struct store *s, const struct store_side_stamp *sides, size_t n)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT j.runs, (SELECT count(*) FROM runs r WHERE r.job_id = "
	    "j.id),"
	    " j.state FROM jobs j WHERE j.id = ?1");
	size_t i;
	int r = 0, rc;

	if (st == NULL)
		return -1;
	for (i = 0; r == 0 && i < n; i++) {
		db_reset(st);
		db_bind_int64(st, 1, sides[i].job_id);
		rc = db_step(st);
		if (rc != DB_ROW && rc != DB_DONE) {
			r = store_i_dberr(s, "verdict sides");
			break;
		}
		if (rc == DB_DONE || db_col_int64(st, 0) != sides[i].runs ||
		    db_col_int64(st, 1) != sides[i].stored ||
		    strcmp(db_col_text(st, 2), "success") != 0)
			r = err_setc(&s->err, ERR_CONFLICT,
			    "job %lld changed while its verdict was made",
			    (long long)sides[i].job_id);
	}
	store_i_release(s, st);
	return r;
}
