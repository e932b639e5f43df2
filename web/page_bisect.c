/*
 * A bisection's page, GET /bisect/{id} (daemon/bisect.c runs them): the
 * regression it bisects, its steps and its result, and the list of
 * every bisection, GET /bisect; from the typed store (struct
 * store_bisect, struct store_bisect_step), as their JSON is.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "store/bisect.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/reply.h"
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
 * Each step's pairs read into sp, their comparison of the bisected
 * metric into the steps and their sides into *sides (the caller's):
 * 0, or a store error.  A pair gone meanwhile is left out.
 */
static int
step_details(struct ctx *x, struct view_bisect_step *vs, size_t n,
    const char *metric, struct step_pairs *sp, struct view_side **sides,
    size_t *nsides)
{
	const struct store_pair **read;
	size_t i, nread = 0;
	int r = 0, k;

	sp->v = xcalloc(2 * n + 1, sizeof(*sp->v));
	sp->n = 0;
	read = xcalloc(2 * n + 1, sizeof(*read));
	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			int64_t id = k == 0 ? vs[i].good_pair : vs[i].bad_pair;
			struct store_pair *p = &sp->v[sp->n];
			const struct store_pair *got = NULL;

			if (id > 0) {
				r = store_pair_read(x->s, p, id);
				if (r == 0) {
					got = p;
					sp->n++;
					read[nread++] = p;
				} else if (r == ERR_NOTFOUND)
					store_errclear(x->s);
				else
					goto out;
			}
			step_cmp(k == 0 ? &vs[i].good_cmp : &vs[i].bad_cmp, got,
			    metric);
		}
	r = web_sides_get(x, read, nread, sides, nsides);
out:
	free(read);
	return r;
}

void
web_bisect(struct ctx *x)
{
	struct view_bisect v;
	struct view_bisect_step *vs;
	struct store_bisect *bi = NULL;
	struct store_bisect_step *st = NULL;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct step_pairs sp = { 0 };
	struct view_side *sides = NULL;
	size_t n = 0, i, nsides = 0;
	char *end;
	long long id;
	int r;

	id = strtoll(x->rest, &end, 10);
	if (*x->rest < '0' || *x->rest > '9' || *end != '\0' || id <= 0) {
		reply_message(x, 404, "Not found", "expected /bisect/ID");
		return;
	}
	if ((r = store_bisect_get(x->s, &bi, id)) != 0 ||
	    (r = store_bisect_steps(x->s, &st, &n, id)) != 0) {
		store_bisect_free(bi);
		reply_page_store_err(x, r);
		return;
	}
	bisect_view(&v, bi);
	vs = xcalloc(n + 1, sizeof(*vs));
	for (i = 0; i < n; i++) {
		vs[i].kind = st[i].kind;
		vs[i].sha = st[i].sha;
		vs[i].subject = st[i].subject;
		vs[i].cls = st[i].cls;
		vs[i].vs_good = st[i].vs_good;
		vs[i].vs_bad = st[i].vs_bad;
		vs[i].vs_good_pct = st[i].vs_good_pct;
		vs[i].vs_bad_pct = st[i].vs_bad_pct;
		vs[i].note = st[i].note;
		vs[i].good_pair = st[i].good_pair;
		vs[i].bad_pair = st[i].bad_pair;
	}
	if ((r = step_details(x, vs, n, bi->metric, &sp, &sides, &nsides)) !=
	    0) {
		free(sides);
		step_pairs_release(&sp);
		free(vs);
		store_bisect_steps_free(st, n);
		store_bisect_free(bi);
		reply_page_store_err(x, r);
		return;
	}
	v.steps = vs;
	v.nsteps = n;
	v.sides = sides;
	v.nsides = nsides;
	view_bisect_render(&b, &v);
	free(sides);
	step_pairs_release(&sp);
	free(vs);
	store_bisect_steps_free(st, n);
	store_bisect_free(bi);
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

	if ((r = store_bisects_get(x->s, &l, PAGE_ROWS, cursor)) != 0) {
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
