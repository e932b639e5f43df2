/*
 * The pair page's read (store/pairs.h): a pair, its two sides and its
 * comparisons, as web/ shows them.
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

static void
cmp_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_comparison *c = row;

	(void)arg;
	c->metric = store_i_col_dup(st, 0);
	c->base_median = store_i_col_num(st, 1);
	c->cand_median = store_i_col_num(st, 2);
	c->change_pct = store_i_col_num(st, 3);
	c->ci_low = store_i_col_num(st, 4);
	c->ci_high = store_i_col_num(st, 5);
	c->p = store_i_col_num(st, 6);
	c->verdict = store_i_col_dup(st, 7);
	c->p_adjusted = store_i_col_num(st, 8);
	c->min_effect = store_i_col_num(st, 9);
	c->unit = store_i_col_dup(st, 10);
	c->better = store_i_col_dup(st, 11);
	c->n_base = db_col_type(st, 12) == DB_NULL ? -1 : db_col_int64(st, 12);
	c->n_cand = db_col_type(st, 13) == DB_NULL ? -1 : db_col_int64(st, 13);
	c->final = db_col_int(st, 14);
	c->note = store_i_col_dup(st, 15);
	/* Schema v33: NULL before it, and where a side had no value. */
	c->base_mean = store_i_col_num(st, 16);
	c->base_sd = store_i_col_num(st, 17);
	c->cand_mean = store_i_col_num(st, 18);
	c->cand_sd = store_i_col_num(st, 19);
	c->has_spread = !isnan(c->base_mean) || !isnan(c->base_sd) ||
	    !isnan(c->cand_mean) || !isnan(c->cand_sd);
}

/*
 * What each side of a pair cost (store_pair.rounds, boots, kernel): its
 * spec's rounds, whether it builds and boots a kernel, and the distinct
 * boots its runs record (the runner tags each run of a kernel job with
 * kernel.round and kernel.boot, docs/KERNEL.md).
 */
static int
pair_sides(struct store *s, struct store_pair *p)
{
	struct db_stmt *st;
	int i, rc;

	for (i = 0; i < 2 && (size_t)i < p->jobs.n; i++) {
		st = store_i_stmt(s,
		    "SELECT CASE WHEN json_valid(j.params) THEN"
		    " json_extract(j.params, '$.rounds') END,"
		    " CASE WHEN json_valid(j.params) THEN"
		    " json_type(j.params, '$.kernel') = 'object' END,"
		    " (SELECT count(DISTINCT m.value) FROM runs r"
		    "  JOIN metrics m ON m.run_id = r.id"
		    "  AND m.name = 'kernel.boot' WHERE r.job_id = j.id)"
		    " FROM jobs j WHERE j.id = ?1");
		if (st == NULL)
			return -1;
		db_bind_int64(st, 1, p->jobs.v[i].id);
		p->rounds[i] = 1;
		rc = db_step(st);
		if (rc == DB_ROW) {
			if (db_col_type(st, 0) == DB_INTEGER &&
			    db_col_int64(st, 0) > 1)
				p->rounds[i] = db_col_int64(st, 0);
			p->kernel[i] = db_col_int(st, 1) != 0;
			p->boots[i] = db_col_int64(st, 2);
			if (p->kernel[i] && p->boots[i] == 0)
				p->boots[i] = -1; /* none recorded */
			if (!p->kernel[i])
				p->boots[i] = 0;
		}
		store_i_release(s, st);
		if (rc != DB_ROW && rc != DB_DONE)
			return store_i_dberr(s, "pair sides");
	}
	return 0;
}

int
store_pair_get(struct store *s, struct store_pair *out, int64_t pair_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT p.name, p.point, h.name, p.created,"
	    " coalesce(p.base_job_id, (SELECT id FROM jobs"
	    "  WHERE pair_id = p.id AND role = 'base')),"
	    " coalesce(p.cand_job_id, (SELECT id FROM jobs"
	    "  WHERE pair_id = p.id AND role = 'candidate')),"
	    " p.superseded, p.suspect"
	    " FROM pairs p LEFT JOIN hosts h ON h.id = p.host_id"
	    " WHERE p.id = ?1");
	int64_t ids[2];
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	if (db_step(st) != DB_ROW) {
		store_i_release(s, st);
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	}
	out->id = pair_id;
	out->name = store_i_col_dup(st, 0);
	out->point = store_i_col_dup(st, 1);
	out->host = store_i_col_dup(st, 2);
	out->created = db_col_int64(st, 3);
	ids[0] = db_col_int64(st, 4);
	ids[1] = db_col_int64(st, 5);
	out->deprioritised = db_col_int(st, 6) != 0;
	/* Host hygiene: why the two sides are not comparable, or NULL. */
	out->suspect = store_i_col_dup(st, 7);
	store_i_release(s, st);
	if (store_i_jobs_of(s, &out->jobs, ids, 2) != 0 ||
	    pair_sides(s, out) != 0) {
		store_pair_release(out);
		return -1;
	}
	st = store_i_stmt(s,
	    "SELECT metric, base_median, cand_median, change_pct, ci_low,"
	    " ci_high, p, verdict, p_adjusted, min_effect, unit, better,"
	    " n_base, n_cand, final, note, base_mean, base_sd, cand_mean,"
	    " cand_sd FROM comparisons WHERE pair_id = ?1"
	    " ORDER BY metric");
	if (st == NULL) {
		store_pair_release(out);
		return -1;
	}
	db_bind_int64(st, 1, pair_id);
	r = store_i_rows(s, st, &v, &out->ncmps, sizeof(*out->cmps), cmp_scan,
	    NULL, "pair comparisons");
	out->cmps = v;
	if (r != 0) {
		store_pair_release(out);
		return r;
	}
	return 0;
}

void
store_pair_release(struct store_pair *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->name);
	free(p->point);
	free(p->host);
	free(p->suspect);
	store_jobs_release(&p->jobs);
	for (i = 0; i < p->ncmps; i++) {
		free((char *)p->cmps[i].metric);
		free((char *)p->cmps[i].unit);
		free((char *)p->cmps[i].better);
		free((char *)p->cmps[i].verdict);
		free((char *)p->cmps[i].note);
	}
	free(p->cmps);
	memset(p, 0, sizeof(*p));
}
