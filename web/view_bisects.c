/*
 * The bisections page, GET /bisect: every bisection newest first, what
 * it bisects, its state and its culprit.
 */
#include <math.h>
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
row(struct buf *b, const struct view_bisect *v)
{
	HTML_LIT(b, "<tr><td class=\"n\"><a href=\"/bisect/");
	html_int(b, v->id);
	HTML_LIT(b, "\">");
	html_int(b, v->id);
	HTML_LIT(b, "</a></td><td>");
	if (v->cp)
		HTML_LIT(b, "change point");
	else if (v->regression_id > 0) {
		HTML_LIT(b, "<a href=\"/regressions#r");
		html_int(b, v->regression_id);
		HTML_LIT(b, "\">regression ");
		html_int(b, v->regression_id);
		HTML_LIT(b, "</a>");
	}
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, v->tree, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, v->job, VIEW_NAME_CHARS);
	HTML_LIT(b, " <span class=\"muted\">on</span> ");
	html_text_trunc(b, v->host, VIEW_NAME_CHARS);
	HTML_LIT(b, "<br><span class=\"mono\">");
	html_text_trunc(b, v->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, "</span></td><td>");
	layout_commit_link(b, v->good);
	HTML_LIT(b, " .. ");
	layout_commit_link(b, v->bad);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, v->state, 16);
	if (v->reason) {
		HTML_LIT(b, " <span class=\"muted\">");
		html_text_trunc(b, v->reason, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</span>");
	}
	HTML_LIT(b, "</td><td>");
	if (v->culprit) {
		layout_commit_link(b, v->culprit);
		HTML_LIT(b, " ");
		html_text_trunc(b, v->culprit_subject, VIEW_SUBJECT_CHARS);
	}
	HTML_LIT(b, "</td></tr>\n");
}

int
view_bisects_render(struct buf *b, const struct view_bisects *v)
{
	size_t i;

	layout_begin(b, "Bisections", "bisect");
	HTML_LIT(b, "<h1>Bisections</h1>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No bisections.</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>id</th><th>from</th><th>tree</th>"
		    "<th>benchmark / metric</th><th>good .. bad</th>"
		    "<th>state</th><th>culprit</th></tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++)
			row(b, &v->rows[i]);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
	}
	layout_pager(b, "/bisect", NULL, 0, &v->pager);
	return layout_end(b);
}
