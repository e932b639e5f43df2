/*
 * The overview, GET / and GET /api/v1/overview: the newest commits and
 * pairs with their verdicts, the queue and the hosts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/dash.h"
#include "store/jobs.h"
#include "store/pair_change.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/layout.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- overview ------------------------------------------------------- */

/* What one candidate job (and its base) says, as a verdict-like word. */
static const char *
job_verdict(const struct store_recent_job *j, const char **progress)
{
	const char *cs = j->state, *bs = j->base_state;

	*progress = NULL;
	if ((cs && strcmp(cs, "running") == 0) ||
	    (bs && strcmp(bs, "running") == 0)) {
		*progress = cs && strcmp(cs, "running") == 0 ? j->progress
		                                             : j->base_progress;
		return "running";
	}
	if ((cs && strcmp(cs, "failed") == 0) ||
	    (bs && strcmp(bs, "failed") == 0))
		return "failed";
	if ((cs && strcmp(cs, "queued") == 0) ||
	    (bs && strcmp(bs, "queued") == 0))
		return "queued";
	return layout_worst_verdict(j->verdicts); /* NULL: unknown */
}

struct ov_item {
	struct view_overview_item it;
	struct view_badge badges[16];
	char key[32];
	const char *tree, *branch;
	char id[24];
};

/*
 * The size of a badge's regression or improvement: of the pairs it
 * stands for whose verdict is its own, the largest change.  0, or a
 * store error.
 */
static int
badge_change(
    struct ctx *x, struct view_badge *bg, int64_t pair_id, const char *verdict)
{
	struct store_pair_change c;
	int r;

	if (verdict == NULL || bg->verdict == NULL ||
	    strcmp(bg->verdict, verdict) != 0 ||
	    (strcmp(verdict, "regression") != 0 &&
	        strcmp(verdict, "improvement") != 0))
		return 0;
	if ((r = store_pair_change_get(x->s, &c, pair_id, verdict)) != 0) {
		if (r != ERR_NOTFOUND)
			return r;
		store_errclear(x->s);
		return 0;
	}
	if (!bg->has_change || fabs(c.change_pct) > fabs(bg->change_pct)) {
		bg->has_change = 1;
		bg->change_pct = c.change_pct;
		bg->metric = c.metric
		    ? json_string_value(web_keep(x, json_string(c.metric)))
		    : NULL;
	}
	store_pair_change_release(&c);
	return 0;
}

/*
 * The view of the overview into v, its items and groups (*out_items,
 * *out_groups: the caller frees both) borrowing from *recent (the
 * caller's store_recent_release): 0, or a store error.
 */
static int
overview_build(struct ctx *x, struct view_overview *v,
    struct ov_item **out_items, struct view_overview_group **out_groups,
    struct store_recent *recent)
{
	struct store_stats st;
	struct store_regression_counts counts;
	struct ov_item *items = xcalloc(OVERVIEW_ITEMS, sizeof(*items));
	struct view_overview_group *g = xcalloc(OVERVIEW_ITEMS + 1, sizeof(*g));
	size_t i, n = 0, ng = 0, k;
	int r;

	*out_items = items;
	*out_groups = g;
	memset(v, 0, sizeof(*v));
	memset(recent, 0, sizeof(*recent));
	v->now = x->now;
	if ((r = store_stats(x->s, &st, x->now, x->online_s)) != 0 ||
	    (r = store_regression_counts_get(x->s, &counts)) != 0 ||
	    (r = store_recent_list(x->s, recent, RECENT_JOBS)) != 0)
		return r;
	v->hosts_online = (int)st.hosts_online;
	v->hosts_total = (int)st.hosts;
	v->queued = st.jobs[0];
	v->running = st.jobs[1];
	v->regressions_new = counts.n[0];
	for (i = 0; i < recent->n; i++) {
		const struct store_recent_job *j = &recent->v[i];
		struct ov_item *it = NULL;
		char key[32];
		const char *name = j->name, *verdict, *progress;
		int64_t cid = j->commit_id;

		if (cid)
			snprintf(key, sizeof(key), "c%lld", (long long)cid);
		else
			snprintf(
			    key, sizeof(key), "p%lld", (long long)j->pair_id);
		for (k = 0; k < n; k++)
			if (strcmp(items[k].key, key) == 0)
				it = &items[k];
		if (it == NULL) {
			if (n == OVERVIEW_ITEMS)
				continue;
			it = &items[n++];
			memcpy(it->key, key, sizeof(key));
			if (j->series_id) {
				it->it.kind = VIEW_SERIES;
				snprintf(it->id, sizeof(it->id), "%lld",
				    (long long)j->series_id);
				it->it.id = it->id;
				it->it.subject = j->series_title;
			} else if (cid) {
				it->it.kind = VIEW_COMMIT;
				it->it.id = j->sha;
				it->it.subject = j->subject;
			} else {
				it->it.kind = VIEW_PAIR;
				snprintf(it->id, sizeof(it->id), "%lld",
				    (long long)j->pair_id);
				it->it.id = it->id;
				it->it.subject = j->point;
			}
			it->it.author = j->author;
			it->it.time = j->time;
			it->it.badges = it->badges;
			it->tree = j->tree;
			it->branch = j->branches;
		}
		verdict = job_verdict(j, &progress);
		for (k = 0; k < it->it.nbadges; k++)
			if (name && it->badges[k].bench &&
			    strcmp(it->badges[k].bench, name) == 0)
				break;
		if (k == it->it.nbadges) {
			if (k == sizeof(it->badges) / sizeof(it->badges[0]))
				continue;
			it->it.nbadges++;
			it->badges[k].bench = name;
			it->badges[k].verdict = verdict;
			it->badges[k].progress = progress;
		} else if (layout_verdict_rank(verdict) <
		    layout_verdict_rank(it->badges[k].verdict)) {
			it->badges[k].verdict = verdict;
			it->badges[k].progress = progress;
			it->badges[k].has_change = 0;
		}
		if ((r = badge_change(
		         x, &it->badges[k], j->pair_id, verdict)) != 0)
			return r;
	}
	/* Groups: one per tree and branch list, in order of first use;
	 * items of a group are contiguous because items are re-ordered. */
	{
		struct ov_item *sorted = xcalloc(n ? n : 1, sizeof(*sorted));
		size_t m = 0;

		for (i = 0; i < n; i++) {
			const char *t = items[i].tree, *b = items[i].branch;
			int seen = 0;

			for (k = 0; k < i; k++)
				if ((items[k].tree == t ||
				        (t && items[k].tree &&
				            strcmp(items[k].tree, t) == 0)) &&
				    (items[k].branch == b ||
				        (b && items[k].branch &&
				            strcmp(items[k].branch, b) == 0)))
					seen = 1;
			if (seen)
				continue;
			g[ng].tree = t;
			g[ng].branch = b;
			g[ng].nitems = 0;
			for (k = i; k < n; k++) {
				const char *t2 = items[k].tree;
				const char *b2 = items[k].branch;

				if ((t2 == t || (t && t2 && !strcmp(t, t2))) &&
				    (b2 == b || (b && b2 && !strcmp(b, b2)))) {
					sorted[m++] = items[k];
					g[ng].nitems++;
				}
			}
			ng++;
		}
		memcpy(items, sorted, m * sizeof(*items));
		free(sorted);
		/* The badges moved with their items. */
		for (i = 0; i < m; i++)
			items[i].it.badges = items[i].badges;
	}
	v->groups = g;
	v->ngroups = ng;
	return 0;
}

/*
 * The groups point into an array of struct ov_item, whose first member
 * is the view item; the renderer walks view items, so they are copied
 * into a plain array here.
 */
static struct view_overview_item *
flatten(struct view_overview_group *g, size_t ng, struct ov_item *items)
{
	size_t i, k, total = 0, at = 0;
	struct view_overview_item *flat;

	for (i = 0; i < ng; i++)
		total += g[i].nitems;
	flat = xcalloc(total ? total : 1, sizeof(*flat));
	for (i = 0; i < ng; i++) {
		size_t start = at;

		for (k = 0; k < g[i].nitems; k++)
			flat[at++] = items[start + k].it;
		g[i].items = &flat[start];
	}
	return flat;
}

void
web_overview(struct ctx *x)
{
	struct view_overview v;
	struct ov_item *items;
	struct view_overview_group *g;
	struct view_overview_item *flat;
	struct store_recent recent;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int r;

	if ((r = overview_build(x, &v, &items, &g, &recent)) != 0) {
		free(items);
		free(g);
		store_recent_release(&recent);
		reply_page_store_err(x, r);
		return;
	}
	flat = flatten(g, v.ngroups, items);
	view_overview_render(&b, &v);
	free(flat);
	free(items);
	free(g);
	store_recent_release(&recent);
	reply_page(x, 200, &b);
}

int
web_overview_doc(struct ctx *x, json_t **out)
{
	struct view_overview v;
	struct ov_item *items;
	struct view_overview_group *g;
	struct store_recent recent;
	json_t *groups;
	size_t i, k, at = 0;
	int r;

	*out = NULL;
	if ((r = overview_build(x, &v, &items, &g, &recent)) != 0) {
		free(items);
		free(g);
		store_recent_release(&recent);
		return r;
	}
	groups = json_array();
	for (i = 0; i < v.ngroups; i++) {
		json_t *arr = json_array();

		for (k = 0; k < g[i].nitems; k++, at++) {
			const struct view_overview_item *it = &items[at].it;
			json_t *bs = json_array();
			size_t m;

			for (m = 0; m < it->nbadges; m++)
				json_array_append_new(bs,
				    json_pack("{s:s?, s:s, s:s?, s:o, s:s?}",
				        "bench", it->badges[m].bench, "verdict",
				        it->badges[m].verdict
				            ? it->badges[m].verdict
				            : "unknown",
				        "progress", it->badges[m].progress,
				        "change_pct",
				        it->badges[m].has_change
				            ? web_jnumber(
				                  it->badges[m].change_pct)
				            : json_null(),
				        "metric",
				        it->badges[m].has_change
				            ? it->badges[m].metric
				            : NULL));
			json_array_append_new(arr,
			    json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:o}",
			        "kind",
			        it->kind == VIEW_COMMIT       ? "commit"
			            : it->kind == VIEW_SERIES ? "series"
			                                      : "pair",
			        "id", it->id, "subject", it->subject, "author",
			        it->author, "time", (json_int_t)it->time,
			        "benches", bs));
		}
		json_array_append_new(groups,
		    json_pack("{s:s?, s:s?, s:o}", "tree", g[i].tree, "branch",
		        g[i].branch, "items", arr));
	}
	*out = json_pack("{s:i, s:i, s:I, s:I, s:I, s:o}", "hosts_online",
	    v.hosts_online, "hosts", v.hosts_total, "queued",
	    (json_int_t)v.queued, "running", (json_int_t)v.running,
	    "regressions_new", (json_int_t)v.regressions_new, "groups", groups);
	free(items);
	free(g);
	store_recent_release(&recent);
	return 0;
}

void
web_overview_json(struct ctx *x)
{
	json_t *o;
	int r;

	if ((r = web_overview_doc(x, &o)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, o);
}
