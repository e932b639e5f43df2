/*
 * A bisection's page, GET /bisect/{id} (daemon/bisect.c runs them): the
 * regression it bisects, its steps and its result, and the list of
 * every bisection, GET /bisect; from the typed store (struct
 * store_bisect, struct store_bisect_step), as their JSON is, and the
 * JSON of GET /api/v1/bisect/{id} from the same read as the page.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "store/bisect.h"
#include "store/pairs.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/rows_dash.h"
#include "web/sides.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* A bisection's fields (not its steps) into v: its strings are bi's. */
static void
bisect_view(struct view_bisect *v, const struct store_bisect *bi)
{
	memset(v, 0, sizeof(*v));
	v->id = bi->id;
	v->regression_id = bi->regression_id;
	v->pair_id = bi->pair_id;
	v->cp = bi->origin && strcmp(bi->origin, "change-point") == 0;
	v->change_point_id = bi->change_point_id;
	v->origin_sha = bi->origin_sha;
	v->branch = bi->branch;
	v->origin_pct = bi->origin_pct;
	v->state = bi->state;
	v->job = bi->job;
	v->host = bi->host;
	v->point = bi->point;
	v->metric = bi->metric;
	v->tree = bi->tree;
	v->good = bi->good_sha;
	v->bad = bi->bad_sha;
	v->lo = bi->lo_sha;
	v->hi = bi->hi_sha;
	v->culprit = bi->culprit_sha;
	v->culprit_subject = bi->culprit_subject;
	v->reason = bi->reason;
	v->verify_parent = bi->verify_parent;
	v->verify_revert = bi->verify_revert;
	v->revert = bi->revert_sha;
}

/* A step's pairs read (good, bad for each step), 0 where it has none. */
struct step_pairs {
	struct store_pair *v;
	size_t n;
};

static void
step_pairs_release(struct step_pairs *sp)
{
	size_t i;

	for (i = 0; i < sp->n; i++)
		store_pair_release(&sp->v[i]);
	free(sp->v);
}

/* The comparison of metric in pair (NULL: none read) into c. */
static void
step_cmp(
    struct view_step_cmp *c, const struct store_pair *p, const char *metric)
{
	size_t k;

	c->ci_low = c->ci_high = NAN;
	c->mean[0] = c->mean[1] = c->sd[0] = c->sd[1] = NAN;
	c->n[0] = c->n[1] = -1;
	for (k = 0; p && metric && k < p->ncmps; k++) {
		const struct store_comparison *o = &p->cmps[k];

		if (o->metric == NULL || strcmp(o->metric, metric) != 0)
			continue;
		c->ci_low = o->ci_low;
		c->ci_high = o->ci_high;
		c->n[0] = o->n_base;
		c->n[1] = o->n_cand;
		if (o->has_spread) {
			c->mean[0] = o->base_mean;
			c->sd[0] = o->base_sd;
			c->mean[1] = o->cand_mean;
			c->sd[1] = o->cand_sd;
		}
	}
}

/*
 * Each step's pairs read into sp (in one read), their comparison of
 * the bisected metric into the steps and their sides into *sides (the
 * caller's): 0, or a store error.  A pair gone meanwhile is left out.
 */
static int
step_details(struct ctx *x, struct view_bisect_step *vs, size_t n,
    const char *metric, struct step_pairs *sp, struct view_side **sides,
    size_t *nsides)
{
	const struct store_pair **read;
	int64_t *ids = xcalloc(2 * n + 1, sizeof(*ids));
	size_t i, nread = 0;
	int r, k;

	sp->v = xcalloc(2 * n + 1, sizeof(*sp->v));
	sp->n = 0;
	for (i = 0; i < n; i++) {
		ids[2 * i] = vs[i].good_pair > 0 ? vs[i].good_pair : 0;
		ids[2 * i + 1] = vs[i].bad_pair > 0 ? vs[i].bad_pair : 0;
	}
	r = store_pair_get_many(x->s, sp->v, ids, 2 * n);
	free(ids);
	if (r != 0)
		return r;
	sp->n = 2 * n; /* those not found are zeroed */
	read = xcalloc(2 * n + 1, sizeof(*read));
	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			const struct store_pair *p = &sp->v[2 * i + k];
			const struct store_pair *got = p->id != 0 ? p : NULL;

			if (got)
				read[nread++] = got;
			step_cmp(k == 0 ? &vs[i].good_cmp : &vs[i].bad_cmp, got,
			    metric);
		}
	r = web_sides_get(x, read, NULL, nread, sides, nsides);
	free(read);
	return r;
}

/* A bisection as its page and its JSON read it: the store's rows, the
 * steps' view with their comparisons, and each step pair's sides. */
struct bisect_read {
	struct store_bisect *bi;
	struct store_bisect_step *st;
	size_t n;
	struct view_bisect_step *vs;
	struct step_pairs sp;
	struct view_side *sides;
	size_t nsides;
};

static void
bisect_read_release(struct bisect_read *rd)
{
	free(rd->sides);
	step_pairs_release(&rd->sp);
	free(rd->vs);
	store_bisect_steps_release(rd->st, rd->n);
	store_bisect_release(rd->bi);
	memset(rd, 0, sizeof(*rd));
}

/* 0, or a store error (rd released). */
static int
bisect_read(struct ctx *x, struct bisect_read *rd, int64_t id)
{
	size_t i;
	int r;

	memset(rd, 0, sizeof(*rd));
	if ((r = store_bisect_get(x->s, &rd->bi, id)) != 0 ||
	    (r = store_bisect_step_list(x->s, &rd->st, &rd->n, id)) != 0) {
		bisect_read_release(rd);
		return r;
	}
	rd->vs = xcalloc(rd->n + 1, sizeof(*rd->vs));
	for (i = 0; i < rd->n; i++) {
		const struct store_bisect_step *o = &rd->st[i];
		struct view_bisect_step *w = &rd->vs[i];

		w->kind = o->kind;
		w->sha = o->sha;
		w->subject = o->subject;
		w->cls = o->cls;
		w->vs_good = o->vs_good;
		w->vs_bad = o->vs_bad;
		w->vs_good_pct = o->vs_good_pct;
		w->vs_bad_pct = o->vs_bad_pct;
		w->note = o->note;
		w->good_pair = o->good_pair;
		w->bad_pair = o->bad_pair;
	}
	if ((r = step_details(x, rd->vs, rd->n, rd->bi->metric, &rd->sp,
	         &rd->sides, &rd->nsides)) != 0)
		bisect_read_release(rd);
	return r;
}

static json_t *
step_cmp_json(const struct view_step_cmp *c)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "ci_low",
	    web_jnumber(c->ci_low), "ci_high", web_jnumber(c->ci_high),
	    "base_mean", web_jnumber(c->mean[0]), "base_sd",
	    web_jnumber(c->sd[0]), "cand_mean", web_jnumber(c->mean[1]),
	    "cand_sd", web_jnumber(c->sd[1]), "n_base", (json_int_t)c->n[0],
	    "n_cand", (json_int_t)c->n[1]);
}

int
web_bisect_json(struct ctx *x, int64_t id, json_t **out)
{
	struct bisect_read rd;
	json_t *o, *steps;
	size_t i;
	int r;

	*out = NULL;
	if ((r = bisect_read(x, &rd, id)) != 0)
		return r;
	if ((o = rows_bisect_json(rd.bi)) == NULL) {
		bisect_read_release(&rd);
		return -1;
	}
	steps = rows_bisect_steps_json(rd.st, rd.n);
	for (i = 0; i < rd.n; i++) {
		json_t *s = json_array_get(steps, i);

		json_object_set_new(
		    s, "vs_good_cmp", step_cmp_json(&rd.vs[i].good_cmp));
		json_object_set_new(
		    s, "vs_bad_cmp", step_cmp_json(&rd.vs[i].bad_cmp));
	}
	json_object_set_new(o, "steps", steps);
	json_object_set_new(o, "sides", web_sides_json(rd.sides, rd.nsides));
	bisect_read_release(&rd);
	*out = json_pack("{s:o}", "bisection", o);
	return 0;
}

void
web_bisect(struct ctx *x)
{
	struct view_bisect v;
	struct bisect_read rd;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	char *end;
	long long id;
	int r;

	id = strtoll(x->rest, &end, 10);
	if (*x->rest < '0' || *x->rest > '9' || *end != '\0' || id <= 0) {
		reply_message(x, 404, "Not found", "expected /bisect/ID");
		return;
	}
	if ((r = bisect_read(x, &rd, id)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	bisect_view(&v, rd.bi);
	v.steps = rd.vs;
	v.nsteps = rd.n;
	v.sides = rd.sides;
	v.nsides = rd.nsides;
	view_bisect_render(&b, &v);
	bisect_read_release(&rd);
	reply_page(x, 200, &b);
}

void
web_bisects(struct ctx *x)
{
	struct view_bisects v = { 0 };
	struct view_bisect *rows;
	struct store_bisects l;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor = web_q_cursor(x);
	char next[32];
	size_t i;
	int r;

	if ((r = store_bisect_list(x->s, &l, PAGE_ROWS, cursor)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++)
		bisect_view(&rows[i], &l.v[i]);
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	view_bisects_render(&b, &v);
	free(rows);
	store_bisects_release(&l);
	reply_page(x, 200, &b);
}
