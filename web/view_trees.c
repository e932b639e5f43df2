/*
 * The trees page, GET /trees: every watched tree with its fetch state
 * and the branches it follows, each linking its commits; and the
 * commits page, GET /commits?tree=&branch=: the commits the watcher
 * recorded, newest first, each linking its commit page.
 */
#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

/* "/commits?tree=T&branch=B", URL-encoded; either may be NULL. */
static void
commits_href(struct buf *b, const char *tree, const char *branch)
{
	HTML_LIT(b, "/commits");
	if (tree) {
		HTML_LIT(b, "?tree=");
		html_url(b, tree);
	}
	if (branch) {
		if (tree)
			HTML_LIT(b, "&amp;branch=");
		else
			HTML_LIT(b, "?branch=");
		html_url(b, branch);
	}
}

static void
when(struct buf *b, int64_t t)
{
	if (t > 0)
		html_time(b, t);
	else
		HTML_LIT(b, "<span class=\"muted\">never</span>");
}

static void
branch_rows(struct buf *b, const struct view_tree *t)
{
	size_t k;

	if (t->nbranches == 0) {
		HTML_LIT(b, "<p class=\"muted\">No branch seen yet.</p>\n");
		return;
	}
	HTML_LIT(b,
	    "<table><tr><th>branch</th><th>tip</th><th>state</th>"
	    "<th>commits</th><th>updated</th></tr>\n");
	for (k = 0; k < t->nbranches && !layout_full(b); k++) {
		const struct view_tree_branch *r = &t->branches[k];

		HTML_LIT(b, "<tr><td><a href=\"");
		commits_href(b, t->name, r->branch);
		HTML_LIT(b, "\">");
		html_text_trunc(b, r->branch, VIEW_NAME_CHARS);
		HTML_LIT(b, "</a></td><td>");
		if (r->tip)
			layout_commit_link(b, r->tip);
		else
			HTML_LIT(b, "<span class=\"muted\">none</span>");
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->state ? r->state : "unknown", 16);
		if (r->error) {
			HTML_LIT(b, " <span class=\"err\">");
			html_text_trunc(b, r->error, VIEW_ERROR_CHARS);
			HTML_LIT(b, "</span>");
		}
		HTML_LIT(b, "</td><td class=\"n\">");
		html_int(b, r->commits);
		HTML_LIT(b, "</td><td>");
		when(b, r->updated);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, k, t->nbranches);
}

int
view_trees_render(struct buf *b, const struct view_trees *v)
{
	size_t i;

	layout_begin(b, "Trees", "trees");
	HTML_LIT(b, "<h1>Trees</h1>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No trees.</p>\n");
	for (i = 0; i < v->nrows && !layout_full(b); i++) {
		const struct view_tree *t = &v->rows[i];

		HTML_LIT(b, "<h2><a href=\"");
		commits_href(b, t->name, NULL);
		HTML_LIT(b, "\">");
		html_text_trunc(b, t->name, VIEW_NAME_CHARS);
		HTML_LIT(b, "</a> <span class=\"muted\">");
		html_text_trunc(b, t->status ? t->status : "unknown", 16);
		HTML_LIT(b, "</span></h2>\n<p><span class=\"mono\">");
		html_text_trunc(b, t->url, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</span> &middot; last fetch ");
		when(b, t->last_fetch);
		HTML_LIT(b, " &middot; last good fetch ");
		when(b, t->last_ok);
		HTML_LIT(b, " &middot; ");
		html_int(b, t->commits);
		HTML_LIT(b, " commits");
		if (t->failures > 0) {
			HTML_LIT(b, " &middot; <span class=\"err\">");
			html_int(b, t->failures);
			HTML_LIT(b, " failed fetches in a row</span>");
		}
		if (t->last_error) {
			HTML_LIT(b, "<br><span class=\"err\">");
			html_text_trunc(b, t->last_error, VIEW_ERROR_CHARS);
			HTML_LIT(b, "</span>");
		}
		HTML_LIT(b, "</p>\n");
		branch_rows(b, t);
	}
	layout_cut(b, i, v->nrows);
	layout_pager(b, "/trees", NULL, 0, &v->pager);
	return layout_end(b);
}

int
view_commits_render(struct buf *b, const struct view_commits *v)
{
	const char *kv[4] = { "tree", v->tree, "branch", v->branch };
	size_t i;

	layout_begin(b, "Commits", "trees");
	HTML_LIT(b, "<h1>Commits");
	if (v->tree) {
		HTML_LIT(b, " of ");
		html_text_trunc(b, v->tree, VIEW_NAME_CHARS);
	}
	if (v->branch) {
		HTML_LIT(b, " / ");
		html_text_trunc(b, v->branch, VIEW_NAME_CHARS);
	}
	HTML_LIT(b, "</h1>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No commits.</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>commit</th><th>subject</th>"
		    "<th>author</th><th>branches</th><th>date</th></tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++) {
			const struct view_commit_item *c = &v->rows[i];

			HTML_LIT(b, "<tr><td>");
			layout_commit_link(b, c->sha);
			HTML_LIT(b, "</td><td>");
			html_text_trunc(b, c->subject, VIEW_SUBJECT_CHARS);
			HTML_LIT(b, "</td><td>");
			html_text_trunc(b, c->author, VIEW_NAME_CHARS);
			HTML_LIT(b, "</td><td>");
			html_text_trunc(b, c->branches, VIEW_NAME_CHARS);
			HTML_LIT(b, "</td><td>");
			html_time(b, c->time);
			HTML_LIT(b, "</td></tr>\n");
		}
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
	}
	layout_pager(b, "/commits", kv, 4, &v->pager);
	return layout_end(b);
}
