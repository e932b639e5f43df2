/*
 * The trees page, GET /trees, from what GET /api/v1/trees answers (the
 * store's trees joined with the configuration, api_trees_json), and the
 * commits page, GET /commits?tree=&branch=, from the typed read GET
 * /api/v1/commits makes (store_commit_list).
 */
#include <stdlib.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "store/dash.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* A time of the trees' JSON: null (never) as 0. */
static int64_t
jtime(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

void
web_trees(struct ctx *x)
{
	struct view_trees v = { 0 };
	struct view_tree *rows;
	struct view_tree_branch *brs;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	json_t *o = NULL, *trees, *t, *bl, *br;
	size_t i, k, nb = 0, at = 0;
	int r;

	if ((r = api_trees_json(
	         x->s, x->conf->dc, web_q(x, "cursor"), PAGE_ROWS, &o)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	web_keep(x, o);
	trees = json_object_get(o, "trees");
	json_array_foreach(trees, i, t) nb +=
	    json_array_size(json_object_get(t, "branches"));
	rows = xcalloc(json_array_size(trees) + 1, sizeof(*rows));
	brs = xcalloc(nb + 1, sizeof(*brs));
	json_array_foreach(trees, i, t)
	{
		struct view_tree *w = &rows[i];

		w->name = web_jstr(t, "name");
		w->url = web_jstr(t, "url");
		w->status = web_jstr(t, "status");
		w->last_error = web_jstr(t, "last_error");
		w->last_fetch = jtime(t, "last_fetch");
		w->last_ok = jtime(t, "last_ok");
		w->failures = web_jint(t, "failures");
		w->commits = web_jint(t, "commits");
		w->branches = &brs[at];
		bl = json_object_get(t, "branches");
		json_array_foreach(bl, k, br)
		{
			struct view_tree_branch *q = &brs[at++];

			q->branch = web_jstr(br, "branch");
			q->tip = web_jstr(br, "tip");
			q->state = web_jstr(br, "state");
			q->error = web_jstr(br, "error");
			q->commits = web_jint(br, "commits");
			q->updated = jtime(br, "updated");
			w->nbranches++;
		}
	}
	v.rows = rows;
	v.nrows = json_array_size(trees);
	v.pager.later = web_q(x, "cursor") != NULL;
	v.pager.next_cursor = web_jstr(o, "next_cursor");
	view_trees_render(&b, &v);
	free(brs);
	free(rows);
	reply_page(x, 200, &b);
}

void
web_commits(struct ctx *x)
{
	struct view_commits v = { 0 };
	struct view_commit_item *rows;
	struct store_commits l;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor = web_q_cursor(x);
	char next[32];
	size_t i;
	int r;

	v.tree = web_q(x, "tree");
	v.branch = web_q(x, "branch");
	if ((r = store_commit_list(
	         x->s, &l, v.tree, v.branch, PAGE_ROWS, cursor)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		const struct store_commit_row *c = &l.v[i];

		rows[i].sha = c->sha;
		rows[i].subject = c->subject;
		rows[i].author = c->author;
		rows[i].branches = c->branches;
		rows[i].time = c->has_commit_date ? c->commit_date : 0;
	}
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	view_commits_render(&b, &v);
	free(rows);
	store_commits_release(&l);
	reply_page(x, 200, &b);
}
