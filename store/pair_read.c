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
	int64_t (*want)[2]; /* the jobs the pair names for its sides */
};

/* The first of PAIRS_SQL's pair columns (after a side's). */
#define PAIR_COL 22

/*
 * Each pair of the ids with its two sides' jobs, a row a side (one row
 * with the job's columns NULL when the pair has neither): a side's job
 * (STORE_I_JOB_COLS), its spec, the distinct boots its runs record
 * (the runner tags each run of a kernel job with kernel.round and
 * kernel.boot, docs/KERNEL.md) and the inventory of the host it ran on
 * (else the pair's), then the pair's columns from PAIR_COL on.
 */
#define PAIRS_SQL                                                              \
	"SELECT " STORE_I_JOB_COLS ", j.params,"                               \
	" (SELECT count(DISTINCT m.value) FROM runs r"                         \
	"  JOIN metrics m ON m.run_id = r.id"                                  \
	"  AND m.name = 'kernel.boot' WHERE r.job_id = j.id),"                 \
	" CASE WHEN j.host_id IS NULL THEN ph.inventory ELSE h.inventory END," \
	" p.id, p.name, p.point, ph.name, p.created, p.bj, p.cj,"              \
	" p.superseded, p.suspect, ph.inventory"                               \
	" FROM (SELECT id, name, point, host_id, created, superseded, "        \
	"suspect,"                                                             \
	"  coalesce(base_job_id, (SELECT id FROM jobs"                         \
	"   WHERE pair_id = pairs.id AND role = 'base')) AS bj,"               \
	"  coalesce(cand_job_id, (SELECT id FROM jobs"                         \
	"   WHERE pair_id = pairs.id AND role = 'candidate')) AS cj"           \
	"  FROM pairs WHERE id IN (" STORE_I_IDS ")) p"                        \
	" LEFT JOIN hosts ph ON ph.id = p.host_id"                             \
	" LEFT JOIN jobs j ON j.id IN (p.bj, p.cj)"                            \
	" LEFT JOIN hosts h ON h.id = j.host_id"                               \
	" LEFT JOIN commits c ON c.id = j.commit_id"                           \
	" LEFT JOIN trees t ON t.id = c.tree_id ORDER BY p.id"

/* One side (0 base, 1 candidate) of p from a row of PAIRS_SQL. */
static void
side_scan(struct store_pair *p, size_t side, struct db_stmt *st)
{
	const char *params = store_i_col_text(st, 19);
	json_t *spec = params ? json_loads(params, 0, NULL) : NULL;
	json_t *rounds = json_object_get(spec, "rounds");

	store_i_job_scan(&p->jobs.v[side], st);
	/* The spec's rounds (an integer), and whether it has a kernel (an
	 * object): what the job's spec says, parsed here rather than by
	 * each backend's JSON functions. */
	p->rounds[side] = 1;
	if (json_is_integer(rounds) && json_integer_value(rounds) > 1)
		p->rounds[side] = json_integer_value(rounds);
	p->kernel[side] = json_is_object(json_object_get(spec, "kernel"));
	json_decref(spec);
	p->boots[side] = db_col_int64(st, 20);
	if (p->kernel[side] && p->boots[side] == 0)
		p->boots[side] = -1; /* none recorded */
	if (!p->kernel[side])
		p->boots[side] = 0;
	p->inventory[side] = store_i_col_dup(st, 21);
}

/* A row of PAIRS_SQL into its pair: the pair's columns once, then the
 * side the row's job is. */
static void
pair_row(void *arg, size_t i, struct db_stmt *st)
{
	struct pairs_read *a = arg;
	struct store_pair *p = &a->v[i];
	int64_t job;
	size_t side;

	if (p->id == 0) {
		p->id = db_col_int64(st, PAIR_COL);
		p->name = store_i_col_dup(st, PAIR_COL + 1);
		p->point = store_i_col_dup(st, PAIR_COL + 2);
		p->host = store_i_col_dup(st, PAIR_COL + 3);
		p->created = db_col_int64(st, PAIR_COL + 4);
		p->deprioritised = db_col_int(st, PAIR_COL + 7) != 0;
		/* Host hygiene: why the two sides are not comparable. */
		p->suspect = store_i_col_dup(st, PAIR_COL + 8);
		p->host_inventory = store_i_col_dup(st, PAIR_COL + 9);
		p->jobs.v = xcalloc(2, sizeof(*p->jobs.v));
		p->jobs.n = 2;
		a->want[i][0] = db_col_int64(st, PAIR_COL + 5);
		a->want[i][1] = db_col_int64(st, PAIR_COL + 6);
	}
	if (db_col_type(st, 0) == DB_NULL)
		return;
	job = db_col_int64(st, 0);
	for (side = 0; side < 2; side++)
		if (job == a->want[i][side] && p->jobs.v[side].id == 0)
			side_scan(p, side, st);
}

/* 0, or -1 with the store's error (ERR_NOTFOUND) when a side's job of
 * a pair read is missing. */
static int
sides_found(struct store *s, const struct pairs_read *a)
{
	size_t i, side;

	for (i = 0; i < a->n; i++)
		for (side = 0; a->v[i].id != 0 && side < 2; side++)
			if (a->v[i].jobs.v[side].id == 0)
				return err_setc(&s->err, ERR_NOTFOUND,
				    "job %lld not found",
				    (long long)a->want[i][side]);
	return 0;
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
	int r;

	memset(out, 0, n * sizeof(*out));
	a.v = out;
	a.n = n;
	a.want = xcalloc(n + 1, sizeof(*a.want));
	r = store_i_ids_rows(
	        s, PAIRS_SQL, PAIR_COL, ids, n, pair_row, &a, "pairs") != 0 ||
	    sides_found(s, &a) != 0 ||
	    store_i_ids_rows(s,
	        "SELECT metric, base_median, cand_median, change_pct, ci_low,"
	        " ci_high, p, verdict, p_adjusted, min_effect, unit, better,"
	        " n_base, n_cand, final, note, base_mean, base_sd, cand_mean,"
	        " cand_sd, pair_id FROM comparisons"
	        " WHERE pair_id IN (" STORE_I_IDS ") ORDER BY pair_id, metric",
	        20, ids, n, cmp_row, &a, "pair comparisons") != 0;
	free(a.want);
	if (r) {
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
	free(p->host_inventory);
	free(p->inventory[0]);
	free(p->inventory[1]);
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
