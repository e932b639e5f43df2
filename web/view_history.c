#include <math.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/svg.h"
#include "web/views.h"

static void
key_row(struct buf *b, const char *name, const char *v)
{
	HTML_LIT(b, "<tr><th>");
	html_text(b, name);
	HTML_LIT(b, "</th><td>");
	if (v)
		html_text_trunc(b, v, VIEW_NAME_CHARS * 2);
	else
		HTML_LIT(b, "<span class=\"muted\">any</span>");
	HTML_LIT(b, "</td></tr>");
}

static void
hidden(struct buf *b, const char *name, const char *v)
{
	if (v == NULL)
		return;
	HTML_LIT(b, "<input type=\"hidden\" name=\"");
	html_text(b, name);
	HTML_LIT(b, "\" value=\"");
	html_text_trunc(b, v, 256);
	HTML_LIT(b, "\">");
}

/* The range form: GET with the key kept in hidden fields. */
static void
range_form(struct buf *b, const struct view_history *h)
{
	HTML_LIT(b, "<form class=\"f\" method=\"get\" action=\"/history\">");
	hidden(b, "tree", h->tree);
	hidden(b, "branch", h->branch);
	hidden(b, "host", h->host);
	hidden(b, "job", h->job);
	hidden(b, "point", h->point);
	hidden(b, "metric", h->metric);
	HTML_LIT(b, "<label>from <input name=\"from\" size=\"14\" value=\"");
	html_text_trunc(b, h->from, 64);
	HTML_LIT(b,
	    "\"></label><label>to <input name=\"to\" size=\"14\" "
	    "value=\"");
	html_text_trunc(b, h->to, 64);
	HTML_LIT(b,
	    "\"></label><button>show</button> <span class=\"muted\">"
	    "a commit, or a date YYYY-MM-DD</span></form>\n");
}

static void
commit_cell(struct buf *b, const struct view_hist_point *p)
{
	HTML_LIT(b, "<td class=\"mono\">");
	if (p->commit) {
		HTML_LIT(b, "<a href=\"/commit/");
		html_url(b, p->commit);
		HTML_LIT(b, "\">");
		html_text_trunc(b, p->commit, 12);
		HTML_LIT(b, "</a>");
	} else
		HTML_LIT(b, "unknown");
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, p->subject, VIEW_SUBJECT_CHARS);
	HTML_LIT(b, "</td>");
}

static void
change_points(struct buf *b, const struct view_history *h)
{
	size_t i;

	if (h->ncps == 0)
		return;
	HTML_LIT(b,
	    "<h2>Change points</h2>\n<table><tr><th>first commit "
	    "after</th><th>subject</th><th>shift</th></tr>\n");
	for (i = 0; i < h->ncps && !layout_full(b); i++) {
		if (h->cps[i].index >= h->npoints)
			continue;
		HTML_LIT(b, "<tr>");
		commit_cell(b, &h->points[h->cps[i].index]);
		HTML_LIT(b, "<td class=\"n\">");
		html_pct(b, h->cps[i].shift_pct, 2);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
}

static void
alerts(struct buf *b, const struct view_history *h)
{
	size_t i, n = 0;

	for (i = 0; i < h->npoints; i++)
		n += h->points[i].alert != NULL;
	if (n == 0)
		return;
	HTML_LIT(b,
	    "<h2>Alerts</h2>\n<table><tr><th>commit</th>"
	    "<th>subject</th><th>alert</th></tr>\n");
	for (i = 0; i < h->npoints && !layout_full(b); i++) {
		if (h->points[i].alert == NULL)
			continue;
		HTML_LIT(b, "<tr>");
		commit_cell(b, &h->points[i]);
		HTML_LIT(b, "<td>");
		html_text_trunc(b, h->points[i].alert, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
}

static void
points(struct buf *b, const struct view_history *h)
{
	size_t i, shown = 0;

	HTML_LIT(b,
	    "<h2>Points</h2>\n<table><tr><th>commit</th>"
	    "<th>subject</th><th>role</th><th>time</th><th>median</th>"
	    "<th>min .. max</th><th>runs</th></tr>\n");
	/* Newest first, as a reader scans for what changed lately. */
	for (i = h->npoints; i-- > 0 && !layout_full(b); shown++) {
		const struct view_hist_point *p = &h->points[i];

		HTML_LIT(b, "<tr>");
		commit_cell(b, p);
		HTML_LIT(b, "<td>");
		html_text_trunc(b, p->role, 24);
		HTML_LIT(b, "</td><td>");
		html_time(b, p->time);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_si(b, p->value);
		HTML_LIT(b, "</td><td class=\"n\">");
		if (isfinite(p->low) && isfinite(p->high)) {
			html_si(b, p->low);
			HTML_LIT(b, " .. ");
			html_si(b, p->high);
		}
		HTML_LIT(b, "</td><td class=\"n\">");
		html_int(b, p->n);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, shown, h->npoints);
}

int
view_history_render(struct buf *b, const struct view_history *h)
{
	const char *kv[] = { "tree", h->tree, "branch", h->branch, "host",
		h->host, "job", h->job, "point", h->point, "metric", h->metric,
		"from", h->from, "to", h->to };

	layout_begin(b, h->metric ? h->metric : "History", NULL);
	HTML_LIT(b, "<h1>History of ");
	html_text_trunc(
	    b, h->metric ? h->metric : "unknown metric", VIEW_NAME_CHARS);
	HTML_LIT(b, "</h1>\n<table>");
	key_row(b, "tree", h->tree);
	key_row(b, "branch", h->branch);
	key_row(b, "host", h->host);
	key_row(b, "benchmark", h->job);
	key_row(b, "point", h->point);
	HTML_LIT(b, "</table>\n");
	range_form(b, h);
	svg_history(b, h);
	HTML_LIT(b, "\n");
	if (h->partial) {
		HTML_LIT(b, "<p class=\"muted\">This page read the newest ");
		html_int(b, h->scanned);
		HTML_LIT(b,
		    " jobs of the series here and stopped: the filters pass "
		    "few of them. \"older\" goes on below them.</p>\n");
	}
	layout_pager(b, "/history", kv, sizeof(kv) / sizeof(kv[0]), &h->pager);
	change_points(b, h);
	alerts(b, h);
	points(b, h);
	return layout_end(b);
}
