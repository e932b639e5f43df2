#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
summary(struct buf *b, const struct view_overview *v)
{
	HTML_LIT(b, "<p><a href=\"/hosts\">hosts online: <b>");
	html_int(b, v->hosts_online);
	HTML_LIT(b, "</b> of ");
	html_int(b, v->hosts_total);
	HTML_LIT(b, "</a> &middot; <a href=\"/jobs?state=queued\">queued: <b>");
	html_int(b, v->queued);
	HTML_LIT(b,
	    "</b></a> &middot; <a href=\"/jobs?state=running\">"
	    "running: <b>");
	html_int(b, v->running);
	HTML_LIT(b,
	    "</b></a> &middot; <a href=\"/regressions?state=new\">"
	    "new regressions: <b>");
	html_int(b, v->regressions_new);
	HTML_LIT(b, "</b></a></p>\n");
}

static void
item_row(struct buf *b, const struct view_overview_item *it)
{
	size_t k;

	HTML_LIT(b, "<tr><td class=\"mono\"><a href=\"");
	layout_target_href(b, it->kind, it->id);
	HTML_LIT(b, "\">");
	switch (it->kind) {
	case VIEW_COMMIT:
		html_text_trunc(b, it->id, 12);
		break;
	case VIEW_SERIES:
		HTML_LIT(b, "series ");
		html_text_trunc(b, it->id, 12);
		break;
	case VIEW_PAIR:
		HTML_LIT(b, "pair ");
		html_text_trunc(b, it->id, 12);
		break;
	}
	HTML_LIT(b, "</a></td><td>");
	html_text_trunc(b, it->subject, VIEW_SUBJECT_CHARS);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, it->author, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	html_time(b, it->time);
	HTML_LIT(b, "</td><td>");
	if (it->nbadges == 0)
		HTML_LIT(b, "<span class=\"muted\">no jobs</span>");
	for (k = 0; k < it->nbadges && k < 16; k++) {
		const struct view_badge *bg = &it->badges[k];

		HTML_LIT(b, "<span class=\"mono\">");
		html_text_trunc(b, bg->bench, VIEW_NAME_CHARS);
		HTML_LIT(b, "</span>");
		layout_badge(b, bg->verdict, bg->progress);
		if (bg->has_change) {
			/* By how much: the metric that changed most. */
			HTML_LIT(b, " <span class=\"change\">");
			html_pct(b, bg->change_pct, 1);
			if (bg->metric) {
				HTML_LIT(b, " <span class=\"muted\">");
				html_text_trunc(b, bg->metric, VIEW_NAME_CHARS);
				HTML_LIT(b, "</span>");
			}
			HTML_LIT(b, "</span>");
		}
		HTML_LIT(b, " ");
	}
	if (it->nbadges > 16)
		HTML_LIT(b, "&hellip;");
	HTML_LIT(b, "</td></tr>\n");
}

int
view_overview_render(struct buf *b, const struct view_overview *v)
{
	size_t g, i, shown = 0, total = 0;

	for (g = 0; g < v->ngroups; g++)
		total += v->groups[g].nitems;
	layout_begin(b, "Overview", "overview");
	HTML_LIT(b, "<h1>Overview</h1>\n");
	summary(b, v);
	if (v->ngroups == 0)
		HTML_LIT(b, "<p class=\"muted\">Nothing tested yet.</p>\n");
	for (g = 0; g < v->ngroups && !layout_full(b); g++) {
		const struct view_overview_group *gr = &v->groups[g];

		HTML_LIT(b, "<h2>");
		if (gr->tree) {
			html_text_trunc(b, gr->tree, VIEW_NAME_CHARS);
			HTML_LIT(b, " / ");
			html_text_trunc(b, gr->branch, VIEW_NAME_CHARS);
		} else
			HTML_LIT(b, "Submitted pairs");
		HTML_LIT(b,
		    "</h2>\n<table><tr><th>what</th><th>subject</th>"
		    "<th>author</th><th>time</th><th>benchmarks</th>"
		    "</tr>\n");
		for (i = 0; i < gr->nitems && !layout_full(b); i++, shown++)
			item_row(b, &gr->items[i]);
		HTML_LIT(b, "</table>\n");
	}
	layout_cut(b, shown, total);
	return layout_end(b);
}
