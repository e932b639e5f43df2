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

/* Time to report: the median and 90th percentile of each stage. */
static void
latency(struct buf *b, const struct view_series_list *v)
{
	size_t k;

	HTML_LIT(b, "<h2>Time to report</h2>\n<p class=\"muted\">Of the ");
	html_int(b, v->latency_series);
	HTML_LIT(b, " series seen in the last ");
	html_int(b, v->latency_days);
	HTML_LIT(b,
	    " days, each stage's median and 90th percentile.</p>\n"
	    "<table class=\"latency\"><tr><th>stage</th><th>from</th>"
	    "<th>to</th><th>series</th><th>median</th><th>90th "
	    "percentile</th></tr>\n");
	for (k = 0; k < v->nstages; k++) {
		const struct view_latency_stage *s = &v->stages[k];

		HTML_LIT(b, "<tr><th scope=\"row\">");
		html_text_trunc(b, s->name, VIEW_NAME_CHARS);
		HTML_LIT(b, "</th><td>");
		html_text_trunc(b, s->from, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, s->to, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_int(b, s->n);
		HTML_LIT(b, "</td><td class=\"n\">");
		if (s->n > 0) {
			html_ago(b, s->median_s);
			HTML_LIT(b, "</td><td class=\"n\">");
			html_ago(b, s->p90_s);
		} else
			HTML_LIT(b,
			    "<span class=\"muted\">unknown</span></td>"
			    "<td class=\"n\"><span class=\"muted\">unknown"
			    "</span>");
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
}

/* Patch mail taken into no series: a reader of the list sees why. */
static void
skipped(struct buf *b, const struct view_series_list *v)
{
	size_t i;

	HTML_LIT(b,
	    "<h2 id=\"skipped\">Patch mail not taken</h2>\n"
	    "<p class=\"muted\">Mail read from an inbox that is in no "
	    "series, newest first, and why.</p>\n"
	    "<table class=\"skipped\"><tr><th>inbox</th><th>subject</th>"
	    "<th>Message-ID</th><th>when</th><th>why</th></tr>\n");
	for (i = 0; i < v->nskipped && !layout_full(b); i++) {
		const struct view_mail_skipped *k = &v->skipped[i];

		HTML_LIT(b, "<tr class=\"skipped\"><td>");
		html_text_trunc(b, k->inbox, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, k->subject, VIEW_SUBJECT_CHARS);
		HTML_LIT(b, "</td><td class=\"mono\">");
		html_text_trunc(b, k->message_id, VIEW_NAME_CHARS * 3);
		HTML_LIT(b, "</td><td>");
		html_time(b, k->at);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, k->reason, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->nskipped);
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
	if (v->nstages)
		latency(b, v);
	if (v->nskipped)
		skipped(b, v);
	return layout_end(b);
}
