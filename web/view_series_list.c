/*
 * The series page, GET /series: every patch series mailed or uploaded,
 * newest first, with where it applied and what its tip's pairs said.
 */
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
row(struct buf *b, const struct view_series_item *s)
{
	HTML_LIT(b, "<tr><td class=\"n\"><a href=\"/series/");
	html_int(b, s->id);
	HTML_LIT(b, "\">");
	html_int(b, s->id);
	HTML_LIT(b, "</a></td><td><a href=\"/series/");
	html_int(b, s->id);
	HTML_LIT(b, "\">");
	html_text_trunc(
	    b, s->title ? s->title : "(no title)", VIEW_SUBJECT_CHARS);
	HTML_LIT(b, "</a>");
	if (s->version > 1) {
		HTML_LIT(b, " <span class=\"muted\">v");
		html_int(b, s->version);
		HTML_LIT(b, "</span>");
	}
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, s->author, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td class=\"n\">");
	if (s->total >= 0)
		html_int(b, s->total);
	HTML_LIT(b, "</td><td>");
	if (s->tree) {
		html_text_trunc(b, s->tree, VIEW_NAME_CHARS);
		HTML_LIT(b, " / ");
		html_text_trunc(b, s->branch, VIEW_NAME_CHARS);
	} else
		html_text_trunc(b, s->inbox, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, s->state, 16);
	if (s->error) {
		HTML_LIT(b, " <span class=\"err\">");
		html_text_trunc(b, s->error, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</span>");
	}
	HTML_LIT(b, "</td><td>");
	layout_commit_link(b, s->commit);
	HTML_LIT(b, "</td><td>");
	if (s->verdicts && *s->verdicts)
		layout_badge(b, layout_worst_verdict(s->verdicts), NULL);
	HTML_LIT(b, "</td><td>");
	html_time(b, s->time);
	HTML_LIT(b, "</td></tr>\n");
}

int
view_series_list_render(struct buf *b, const struct view_series_list *v)
{
	size_t i;

	layout_begin(b, "Series", "series");
	HTML_LIT(b, "<h1>Series</h1>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No series.</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>id</th><th>title</th><th>author</th>"
		    "<th>patches</th><th>tree / branch</th><th>state</th>"
		    "<th>tip</th><th>verdict</th><th>date</th></tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++)
			row(b, &v->rows[i]);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
	}
	layout_pager(b, "/series", NULL, 0, &v->pager);
	return layout_end(b);
}
