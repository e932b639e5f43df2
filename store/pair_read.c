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

/* The pairs being read (store_pair_get_many): v[i] is ids[i]'s. */
struct pairs_read {
	struct store_pair *v;
	size_t n;
};

static void
pair_row(void *arg, size_t i, struct db_stmt *st)
{
	struct store_pair *p = &((struct pairs_read *)arg)->v[i];

	p->id = db_col_int64(st, 0);
	p->name = store_i_col_dup(st, 1);
	p->point = store_i_col_dup(st, 2);
	p->host = store_i_col_dup(st, 3);
	p->created = db_col_int64(st, 4);
	/* The sides' job ids until pairs_sides reads their jobs. */
	p->jobs.v = xcalloc(2, sizeof(*p->jobs.v));
	p->jobs.v[0].id = db_col_int64(st, 5);
	p->jobs.v[1].id = db_col_int64(st, 6);
	p->deprioritised = db_col_int(st, 7) != 0;
	/* Host hygiene: why the two sides are not comparable, or NULL. */
	p->suspect = store_i_col_dup(st, 8);
}

/* The sides being read (pairs_sides): job ids[i] is side who[i] % 2 of
 * pair who[i] / 2. */
struct sides_read {
	struct store_pair *v;
	size_t *who;
};

/* A side's job (STORE_I_JOB_COLS) and what it cost (the columns
 * after). */
static void
side_row(void *arg, size_t i, struct db_stmt *st)
{
	struct sides_read *a = arg;
	struct store_pair *p = &a->v[a->who[i] / 2];
	size_t side = a->who[i] % 2;

	store_i_job_scan(&p->jobs.v[side], st);
	/* An integer (PostgreSQL's json_extract: a numeric). */
	if (db_col_type(st, 19) != DB_NULL && db_col_int64(st, 19) > 1)
		p->rounds[side] = db_col_int64(st, 19);
	p->kernel[side] = db_col_int(st, 20) != 0;
	p->boots[side] = db_col_int64(st, 21);
	if (p->kernel[side] && p->boots[side] == 0)
		p->boots[side] = -1; /* none recorded */
	if (!p->kernel[side])
		p->boots[side] = 0;
}

/*
 * The two jobs of each pair found (their ids in jobs.v[].id), in one
 * read, and what each side cost (store_pair.rounds, boots, kernel):
 * its spec's rounds, whether it builds and boots a kernel, and the
 * distinct boots its runs record (the runner tags each run of a kernel
 * job with kernel.round and kernel.boot, docs/KERNEL.md).  0, or -1
 * (ERR_NOTFOUND: a side's job is missing).
 */
static int
pairs_sides(struct store *s, struct pairs_read *a)
{
	struct sides_read sr;
	int64_t *ids = xcalloc(2 * a->n + 1, sizeof(*ids));
	size_t i, side, n = 0;
	int r;

	sr.v = a->v;
	sr.who = xcalloc(2 * a->n + 1, sizeof(*sr.who));
	for (i = 0; i < a->n; i++)
		for (side = 0; a->v[i].id != 0 && side < 2; side++) {
			a->v[i].rounds[side] = 1;
			sr.who[n] = 2 * i + side;
			ids[n++] = a->v[i].jobs.v[side].id;
			a->v[i].jobs.v[side].id = 0; /* until read */
		}
	r = store_i_ids_rows(s,
	    "SELECT " STORE_I_JOB_COLS ", CASE WHEN json_valid(j.params) THEN"
	    " CASE WHEN json_type(j.params, '$.rounds') = 'integer' THEN"
	    " json_extract(j.params, '$.rounds') END END,"
	    " CASE WHEN json_valid(j.params) THEN"
	    " json_type(j.params, '$.kernel') = 'object' END,"
	    " (SELECT count(DISTINCT m.value) FROM runs r"
	    "  JOIN metrics m ON m.run_id = r.id"
	    "  AND m.name = 'kernel.boot' WHERE r.job_id = j.id)"
	    " " STORE_I_JOB_FROM "WHERE j.id IN (" STORE_I_IDS ")",
	    0, ids, n, side_row, &sr, "pair sides");
	for (i = 0; r == 0 && i < n; i++)
		if (a->v[sr.who[i] / 2].jobs.v[sr.who[i] % 2].id == 0)
			r = err_setc(&s->err, ERR_NOTFOUND,
			    "job %lld not found", (long long)ids[i]);
	for (i = 0; i < a->n; i++)
		if (a->v[i].id != 0)
			a->v[i].jobs.n = 2;
	free(sr.who);
	free(ids);
	return r == 0 ? 0 : -1;
}

static void
cmp_row(void *arg, size_t i, struct db_stmt *st)
{
	struct store_pair *p = &((struct pairs_read *)arg)->v[i];
	void *v = p->cmps;

	cmp_scan(store_i_grow(&v, &p->ncmps, sizeof(*p->cmps)), st, NULL);
	p->cmps = v;
}

int
store_pair_get_many(
    struct store *s, struct store_pair *out, const int64_t *ids, size_t n)
{
	struct pairs_read a;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	a.v = out;
	a.n = n;
	if (store_i_ids_rows(s,
	        "SELECT p.id, p.name, p.point, h.name, p.created,"
	        " coalesce(p.base_job_id, (SELECT id FROM jobs"
	        "  WHERE pair_id = p.id AND role = 'base')),"
	        " coalesce(p.cand_job_id, (SELECT id FROM jobs"
	        "  WHERE pair_id = p.id AND role = 'candidate')),"
	        " p.superseded, p.suspect"
	        " FROM pairs p LEFT JOIN hosts h ON h.id = p.host_id"
	        " WHERE p.id IN (" STORE_I_IDS ")",
	        0, ids, n, pair_row, &a, "pairs") != 0 ||
	    pairs_sides(s, &a) != 0 ||
	    store_i_ids_rows(s,
	        "SELECT metric, base_median, cand_median, change_pct, ci_low,"
	        " ci_high, p, verdict, p_adjusted, min_effect, unit, better,"
	        " n_base, n_cand, final, note, base_mean, base_sd, cand_mean,"
	        " cand_sd, pair_id FROM comparisons"
	        " WHERE pair_id IN (" STORE_I_IDS ") ORDER BY pair_id, metric",
	        20, ids, n, cmp_row, &a, "pair comparisons") != 0) {
		for (i = 0; i < n; i++)
			store_pair_release(&out[i]);
		return -1;
	}
	return 0;
}

int
store_pair_get(struct store *s, struct store_pair *out, int64_t pair_id)
{
	if (store_pair_get_many(s, out, &pair_id, 1) != 0)
		return -1;
	if (out->id == 0)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
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
