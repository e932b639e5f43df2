/*
 * A metric's history on a branch and host, GET /history and
 * /api/v1/history, with its change points.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/dash.h"
#include "store/history.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- history -------------------------------------------------------- */

/* "YYYY-MM-DD" or a commit sha (prefix) to a time; 0 ok, -1 bad. */
static int
parse_when(struct ctx *x, const char *s, int end_of_day, int64_t *out)
{
	struct tm tm;
	int y, m, d;
	char extra;

	*out = 0;
	if (s == NULL)
		return 0;
	if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &extra) == 3 && y >= 1970 &&
	    m >= 1 && m <= 12 && d >= 1 && d <= 31) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = m - 1;
		tm.tm_mday = d;
		*out = (int64_t)timegm(&tm) + (end_of_day ? 86399 : 0);
		return 0;
	}
	return store_commit_time_get(x->s, out, s) == 0 ? 0 : -1;
}

struct hist {
	struct view_history v;
	struct store_history rows; /* the store's, which v borrows */
	struct view_hist_point *pts;
	int64_t *job_ids;
	size_t n;
	struct view_change_point *cps;
	/* The store's change points of the page, each cps[i]'s row in
	 * cp_rows[i]. */
	struct store_hist_cps cp_list;
	const struct store_hist_cp **cp_rows;
	char (*alerts)[48];
	char (*labels)[48];
	char next[24];
	/* The page's points, one a commit (hist_by_commit), its change
	 * points among them. */
	struct view_hist_point *merged;
	struct view_change_point *mcps;
};

static void
hist_free(struct hist *h)
{
	store_history_release(&h->rows);
	free(h->pts);
	free(h->job_ids);
	free(h->cps);
	free(h->cp_rows);
	store_hist_cps_release(&h->cp_list);
	free(h->alerts);
	free(h->labels);
	free(h->merged);
	free(h->mcps);
}

/*
 * The change points the verdicts found in the series shown: each is drawn
 * at the point of its candidate job (the first point after the change),
 * when that job is on this page.
 */
static int
hist_changepoints(
    struct store *s, struct hist *h, const struct store_history_q *q)
{
	int64_t *pairs = xcalloc(h->n + 1, sizeof(*pairs));
	size_t i, k;
	int r;

	for (i = 0; i < h->n; i++)
		pairs[i] = h->pts[i].pair_id;
	r = store_history_page_cps(s, &h->cp_list, q, pairs, h->n);
	free(pairs);
	if (r != 0)
		return r;
	h->cps = xcalloc(h->cp_list.n + 1, sizeof(*h->cps));
	h->cp_rows = xcalloc(h->cp_list.n + 1, sizeof(*h->cp_rows));
	for (i = 0; i < h->cp_list.n; i++) {
		const struct store_hist_cp *c = &h->cp_list.v[i];

		for (k = 0; k < h->n; k++)
			if (h->job_ids[k] == c->job_id)
				break;
		if (k == h->n)
			continue;
		h->cps[h->v.ncps].index = k;
		h->cps[h->v.ncps].shift_pct = c->change_pct;
		h->cp_rows[h->v.ncps++] = c;
	}
	h->v.cps = h->cps;
	return 0;
}

static int hist_fill(
    struct store *s, struct hist *h, const struct store_history_q *q);

static int
hist_build(struct ctx *x, struct hist *h, const char **msg)
{
	struct store_history_q q;
	int64_t from, to, cursor, limit;

	memset(h, 0, sizeof(*h));
	h->v.tree = web_q(x, "tree");
	h->v.branch = web_q(x, "branch");
	h->v.host = web_q(x, "host");
	h->v.job = web_q(x, "job");
	h->v.point = web_q(x, "point");
	h->v.metric = web_q(x, "metric");
	h->v.from = web_q(x, "from");
	h->v.to = web_q(x, "to");
	if (h->v.job == NULL || h->v.metric == NULL) {
		*msg = "parameters 'job' and 'metric' are required (follow a "
		       "metric link from a commit or pair page)";
		return ERR_INVALID;
	}
	if (parse_when(x, h->v.from, 0, &from) == -1 ||
	    parse_when(x, h->v.to, 1, &to) == -1) {
		*msg = "'from' and 'to' take a date YYYY-MM-DD or a known "
		       "commit";
		return ERR_INVALID;
	}
	if (web_q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1) {
		*msg = "'cursor' must be a job id";
		return ERR_INVALID;
	}
	if (web_q_int(x, &limit, "limit", HISTORY_JOBS, 1, HISTORY_JOBS) ==
	    -1) {
		*msg = "parameter 'limit': expected 1..200 jobs a page";
		return ERR_INVALID;
	}
	q.tree = h->v.tree;
	q.branch = h->v.branch;
	q.host = h->v.host;
	q.job = h->v.job;
	q.point = h->v.point;
	q.metric = h->v.metric;
	q.from = from;
	q.to = to;
	q.limit = limit;
	q.cursor = cursor;
	q.scan = 0; /* STORE_HISTORY_SCAN */
	return hist_fill(x->s, h, &q);
}

/* The store's reads of q into h (whose view names q's filters). */
static int
hist_fill(struct store *s, struct hist *h, const struct store_history_q *q)
{
	size_t i, k, n;
	int r;

	if ((r = store_history_list(s, &h->rows, q)) != 0)
		return r;
	n = h->rows.n;
	h->pts = xcalloc(n + 1, sizeof(*h->pts));
	h->job_ids = xcalloc(n + 1, sizeof(*h->job_ids));
	h->alerts = xcalloc(n + 1, sizeof(*h->alerts));
	h->labels = xcalloc(n + 1, sizeof(*h->labels));
	h->v.unit = h->rows.unit;
	h->v.better = h->rows.better;
	for (i = 0; i < n; i++) {
		struct store_hist_job *j = &h->rows.v[i];
		struct view_hist_point *p = &h->pts[i];

		h->job_ids[i] = j->job_id;
		p->role = j->role;
		p->commit = j->sha;
		p->subject = j->subject;
		p->time = j->time;
		p->pair_id = j->pair_id;
		if (p->subject == NULL) {
			/* A pair without a commit. */
			snprintf(h->labels[i], sizeof(h->labels[0]),
			    "pair %lld, %s", (long long)p->pair_id,
			    j->role ? j->role : "");
			p->subject = h->labels[i];
		}
		if (j->regression) {
			snprintf(h->alerts[i], sizeof(h->alerts[0]),
			    "regression (%s)", j->regression);
			p->alert = h->alerts[i];
		}
		if (j->values == NULL) {
			/* Its summary, stored at its pair's verdict. */
			p->n = (int)j->n;
			p->value = j->median;
			p->low = j->lo;
			p->high = j->hi;
			continue;
		}
		p->n = (int)j->nvalues;
		p->low = p->high = j->values[0];
		for (k = 1; k < j->nvalues; k++) {
			if (j->values[k] < p->low)
				p->low = j->values[k];
			if (j->values[k] > p->high)
				p->high = j->values[k];
		}
		p->value = analysis_median_inplace(j->values, j->nvalues);
	}
	h->n = n;
	h->v.points = h->pts;
	h->v.npoints = h->n;
	if ((r = hist_changepoints(s, h, q)) != 0)
		return r;
	h->v.pager.later = q->cursor != 0;
	h->v.partial = h->rows.capped;
	h->v.scanned = q->scan > 0 ? q->scan : STORE_HISTORY_SCAN;
	if (h->rows.next_cursor > 0) {
		snprintf(h->next, sizeof(h->next), "%lld",
		    (long long)h->rows.next_cursor);
		h->v.pager.next_cursor = h->next;
	}
	return 0;
}

/*
 * Point q, another job of p's commit, into p: a candidate's figures win
 * (what the verdict judged this commit by; the base of the next pair
 * measured the same tree again), and the roles are both.
 */
static void
hist_merge(struct view_hist_point *p, const struct view_hist_point *q)
{
	const char *role = p->role, *alert = p->alert;

	if (q->role && strcmp(q->role, "candidate") == 0)
		*p = *q;
	if (p->alert == NULL)
		p->alert = alert ? alert : q->alert;
	if (role && q->role && strcmp(role, q->role) != 0)
		p->role = "base, candidate";
	else
		p->role = role;
}

/*
 * The page shows a commit once: the points of its jobs (measured as a
 * pair's candidate and again as the next pair's base, side by side at
 * the commit's time) become one, the candidate's, with both roles; the
 * change points move with them.  The JSON keeps a point a job.
 */
static void
hist_by_commit(struct hist *h)
{
	size_t *map = xcalloc(h->n + 1, sizeof(*map));
	size_t i, from = 0, m = 0;

	h->merged = xcalloc(h->n + 1, sizeof(*h->merged));
	for (i = 0; i < h->n; i++) {
		const char *c = h->pts[i].commit;

		if (i > from && c && h->pts[from].commit &&
		    strcmp(c, h->pts[from].commit) == 0) {
			map[i] = m - 1;
			hist_merge(&h->merged[m - 1], &h->pts[i]);
			continue;
		}
		from = i;
		map[i] = m;
		h->merged[m++] = h->pts[i];
	}
	h->mcps = xcalloc(h->v.ncps + 1, sizeof(*h->mcps));
	for (i = 0; i < h->v.ncps; i++) {
		h->mcps[i] = h->cps[i];
		h->mcps[i].index = map[h->cps[i].index];
	}
	free(map);
	h->v.points = h->merged;
	h->v.npoints = m;
	h->v.cps = h->mcps;
}

void
web_history(struct ctx *x)
{
	struct hist h;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	const char *msg = NULL;
	int r;

	if ((r = hist_build(x, &h, &msg)) != 0) {
		hist_free(&h);
		if (msg)
			reply_message(x, 400, "Bad request", msg);
		else
			reply_page_store_err(x, r);
		return;
	}
	hist_by_commit(&h);
	view_history_render(&b, &h.v);
	hist_free(&h);
	reply_page(x, 200, &b);
}

/* The JSON of /api/v1/history from h. */
static json_t *
hist_json(const struct hist *h)
{
	json_t *pts, *o, *cps;
	size_t i;

	pts = json_array();
	for (i = 0; i < h->n; i++) {
		const struct view_hist_point *p = &h->pts[i];

		json_array_append_new(pts,
		    json_pack("{s:I, s:I, s:s?, s:s?, s:I, s:o, s:o, s:o, s:i, "
		              "s:s?, s:s?}",
		        "job_id", (json_int_t)h->job_ids[i], "pair_id",
		        (json_int_t)p->pair_id, "commit", p->commit, "subject",
		        p->subject, "time", (json_int_t)p->time, "median",
		        web_jnumber(p->value), "min", web_jnumber(p->low),
		        "max", web_jnumber(p->high), "runs", p->n, "alert",
		        p->alert, "role", p->role));
	}
	cps = json_array();
	for (i = 0; i < h->v.ncps; i++) {
		const struct store_hist_cp *c = h->cp_rows[i];

		json_array_append_new(cps,
		    json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:s?}",
		        "id", (json_int_t)c->id, "index",
		        (json_int_t)h->cps[i].index, "job_id",
		        (json_int_t)c->job_id, "pair_id",
		        (json_int_t)c->pair_id, "before",
		        web_jnumber(c->before), "after", web_jnumber(c->after),
		        "change_pct", web_jnumber(c->change_pct), "p",
		        web_jnumber(c->p), "direction", c->direction));
	}
	o = json_pack("{s:s?, s:s?, s:o, s:o}", "unit", h->v.unit, "better",
	    h->v.better, "points", pts, "change_points", cps);
	if (h->v.pager.next_cursor)
		json_object_set_new(
		    o, "next_cursor", json_string(h->v.pager.next_cursor));
	if (h->v.partial)
		json_object_set_new(o, "partial", json_true());
	return o;
}

void
web_history_json(struct ctx *x)
{
	struct hist h;
	const char *msg = NULL;
	json_t *o;
	int r;

	if ((r = hist_build(x, &h, &msg)) != 0) {
		hist_free(&h);
		if (msg)
			reply_err(x, 400, "%s", msg);
		else
			reply_store_err(x, r);
		return;
	}
	o = hist_json(&h);
	hist_free(&h);
	reply_json(x, 200, o);
}

int
web_history_doc(struct store *s, const struct store_history_q *q,
    json_t **out_json, struct buf *out_html)
{
	struct hist h;
	int r;

	memset(&h, 0, sizeof(h));
	h.v.tree = q->tree;
	h.v.branch = q->branch;
	h.v.host = q->host;
	h.v.job = q->job;
	h.v.point = q->point;
	h.v.metric = q->metric;
	if ((r = hist_fill(s, &h, q)) == 0) {
		if (out_json != NULL)
			*out_json = hist_json(&h);
		if (out_html != NULL) {
			hist_by_commit(&h);
			view_history_render(out_html, &h.v);
		}
	}
	hist_free(&h);
	return r;
}
