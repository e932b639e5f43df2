#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static const char *const states[] = { "new", "acknowledged", "invalid",
	"fixed" };

static void
text_filter(struct buf *b, const char *name, const char *label, const char *v)
{
	HTML_LIT(b, "<label>");
	html_text(b, label);
	HTML_LIT(b, " <input name=\"");
	html_text(b, name);
	HTML_LIT(b, "\" size=\"12\" value=\"");
	html_text_trunc(b, v, 128);
	HTML_LIT(b, "\"></label>");
}

/* A select of the triage states; any = 1 adds an "any" entry first. */
static void
state_select(struct buf *b, const char *current, int any)
{
	size_t i;

	HTML_LIT(b, "<select name=\"state\" aria-label=\"triage state\">");
	if (any)
		HTML_LIT(b, "<option value=\"\">any</option>");
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		HTML_LIT(b, "<option");
		if (current && strcmp(current, states[i]) == 0)
			HTML_LIT(b, " selected");
		HTML_LIT(b, ">");
		html_text(b, states[i]);
		HTML_LIT(b, "</option>");
	}
	HTML_LIT(b, "</select>");
}

static void
filters(struct buf *b, const struct view_regressions *v)
{
	HTML_LIT(
	    b, "<form class=\"f\" method=\"get\" action=\"/regressions\">");
	text_filter(b, "tree", "tree", v->tree);
	text_filter(b, "host", "host", v->host);
	text_filter(b, "bench", "benchmark", v->bench);
	HTML_LIT(b, "<label>state ");
	state_select(b, v->state, 1);
	HTML_LIT(b, "</label><button>filter</button></form>\n");
}

static void
triage_form(struct buf *b, const struct view_regressions *v,
    const struct view_regression *r)
{
	HTML_LIT(b, "<form class=\"t\" method=\"post\" action=\"/regressions/");
	html_int(b, r->id);
	HTML_LIT(b, "/triage\"><input type=\"hidden\" name=\"csrf\" value=\"");
	html_text_trunc(b, v->session.csrf, 128);
	HTML_LIT(b, "\">");
	state_select(b, r->state, 0);
	HTML_LIT(b,
	    "<input name=\"note\" size=\"16\" maxlength=\"1000\" "
	    "placeholder=\"note\" value=\"");
	html_text_trunc(b, r->note, VIEW_NOTE_CHARS);
	HTML_LIT(b, "\"><button>save</button></form>");
}

static void
history_link(struct buf *b, const struct view_regression *r)
{
	HTML_LIT(b, "<a href=\"/history?");
	if (r->tree) {
		HTML_LIT(b, "tree=");
		html_url(b, r->tree);
		HTML_LIT(b, "&amp;");
	}
	if (r->branch) {
		HTML_LIT(b, "branch=");
		html_url(b, r->branch);
		HTML_LIT(b, "&amp;");
	}
	HTML_LIT(b, "host=");
	html_url(b, r->host);
	HTML_LIT(b, "&amp;job=");
	html_url(b, r->bench);
	HTML_LIT(b, "&amp;point=");
	html_url(b, r->point);
	HTML_LIT(b, "&amp;metric=");
	html_url(b, r->metric);
	HTML_LIT(b, "\">");
	html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, "</a>");
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* One report: the same commit (or, without one, the same pair), job and
 * host.  Its metrics (every point of the job) are one finding. */
static int
same_report(const struct view_regression *a, const struct view_regression *b)
{
	if (a->commit || b->commit) {
		if (!same_str(a->commit, b->commit))
			return 0;
	} else if (a->pair_id != b->pair_id)
		return 0;
	return same_str(a->bench, b->bench) && same_str(a->host, b->host);
}

#define REG_COLS 7

/* The report's header row: what was measured where, once. */
static void
report_row(struct buf *b, const struct view_regression *r, size_t nmetrics)
{
	HTML_LIT(b, "<tr class=\"grp report\"><th colspan=\"");
	html_int(b, REG_COLS);
	HTML_LIT(b, "\"><span class=\"mono\">");
	if (r->commit) {
		HTML_LIT(b, "<a href=\"/commit/");
		html_url(b, r->commit);
		HTML_LIT(b, "\">");
		html_text_trunc(b, r->commit, 12);
		HTML_LIT(b, "</a>");
	} else if (r->pair_id > 0) {
		HTML_LIT(b, "<a href=\"/pair/");
		html_int(b, r->pair_id);
		HTML_LIT(b, "\">pair ");
		html_int(b, r->pair_id);
		HTML_LIT(b, "</a>");
	} else
		HTML_LIT(b, "unknown");
	HTML_LIT(b, "</span> ");
	if (r->series_id > 0) {
		HTML_LIT(b, "<a href=\"/series/");
		html_int(b, r->series_id);
		HTML_LIT(b, "\">series ");
		html_int(b, r->series_id);
		HTML_LIT(b, "</a> ");
	}
	if (r->subject)
		html_text_trunc(b, r->subject, VIEW_SUBJECT_CHARS);
	else if (!r->commit)
		HTML_LIT(b,
		    "<span class=\"muted\">a submitted pair (no "
		    "commit)</span>");
	HTML_LIT(b, " <span class=\"muted\">&middot;</span> ");
	if (r->tree) {
		html_text_trunc(b, r->tree, VIEW_NAME_CHARS);
		if (r->branch) {
			HTML_LIT(b, " / ");
			html_text_trunc(b, r->branch, VIEW_NAME_CHARS);
		}
		HTML_LIT(b, " <span class=\"muted\">&middot;</span> ");
	}
	html_text_trunc(b, r->bench, VIEW_NAME_CHARS);
	HTML_LIT(b, " <span class=\"muted\">on</span> ");
	html_text_trunc(b, r->host, VIEW_NAME_CHARS);
	HTML_LIT(b, " <span class=\"muted\">(");
	html_int(b, (long long)nmetrics);
	if (nmetrics == 1)
		HTML_LIT(b, " metric)");
	else
		HTML_LIT(b, " metrics)");
	HTML_LIT(b, "</span></th></tr>\n");
}

static void
row(struct buf *b, const struct view_regressions *v,
    const struct view_regression *r)
{
	HTML_LIT(b, "<tr id=\"r");
	html_int(b, r->id);
	HTML_LIT(b, "\"><td class=\"n\">");
	html_int(b, r->id);
	HTML_LIT(b, "</td><td class=\"mono\">");
	html_text_trunc(b, r->point, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	history_link(b, r);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_pct(b, r->change_pct, 2);
	HTML_LIT(b, "</td><td>");
	layout_badge(b, r->verdict, NULL);
	if (r->bisect_id > 0) {
		HTML_LIT(b, "<br><a href=\"/bisect/");
		html_int(b, r->bisect_id);
		HTML_LIT(b, "\">");
		if (r->culprit) {
			HTML_LIT(b, "bisected to <span class=\"mono\">");
			html_textn(b, r->culprit, strnlen(r->culprit, 12));
			HTML_LIT(b, "</span>");
		} else {
			HTML_LIT(b, "bisection ");
			html_text_trunc(b, r->bisect_state, 16);
		}
		HTML_LIT(b, "</a>");
	}
	if (r->suspect != NULL)
		layout_suspect(b, r->suspect);
	HTML_LIT(b, "</td><td>");
	if (v->session.admin)
		triage_form(b, v, r);
	else {
		HTML_LIT(b, "<b>");
		html_text_trunc(b, r->state ? r->state : "new", 16);
		HTML_LIT(b, "</b> ");
		html_text_trunc(b, r->note, VIEW_NOTE_CHARS);
	}
	HTML_LIT(b, "</td><td>");
	html_time(b, r->updated ? r->updated : r->created);
	HTML_LIT(b, "</td></tr>\n");
}

/* The rows grouped per report, reports in the order of their newest row;
 * the rows of a report in the store's order.  Returns the rows shown. */
static size_t
reports(struct buf *b, const struct view_regressions *v)
{
	unsigned char *done = xcalloc(v->nrows ? v->nrows : 1, 1);
	size_t i, j, n, shown = 0;

	for (i = 0; i < v->nrows && !layout_full(b); i++) {
		if (done[i])
			continue;
		for (n = 0, j = i; j < v->nrows; j++)
			n += !done[j] && same_report(&v->rows[i], &v->rows[j]);
		report_row(b, &v->rows[i], n);
		for (j = i; j < v->nrows && !layout_full(b); j++) {
			if (done[j] || !same_report(&v->rows[i], &v->rows[j]))
				continue;
			row(b, v, &v->rows[j]);
			done[j] = 1;
			shown++;
		}
	}
	free(done);
	return shown;
}

int
view_regressions_render(struct buf *b, const struct view_regressions *v)
{
	const char *kv[] = { "tree", v->tree, "host", v->host, "bench",
		v->bench, "state", v->state };
	size_t shown;

	layout_begin(b, "Regressions", "regressions");
	HTML_LIT(b, "<h1>Regressions</h1>\n");
	if (v->flash) {
		HTML_LIT(b, "<p class=\"note\" id=\"flash\">");
		html_text_trunc(b, v->flash, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</p>\n");
	}
	if (v->session.admin) {
		HTML_LIT(b,
		    "<form class=\"f\" method=\"post\" "
		    "action=\"/logout\"><span class=\"muted\">logged "
		    "in as admin</span> <input type=\"hidden\" "
		    "name=\"csrf\" value=\"");
		html_text_trunc(b, v->session.csrf, 128);
		HTML_LIT(b, "\"><button>log out</button></form>\n");
	} else
		HTML_LIT(b,
		    "<p><a href=\"/login?next=%2Fregressions\">Log in"
		    "</a> to triage.</p>\n");
	filters(b, v);
	if (v->partial)
		HTML_LIT(b,
		    "<p class=\"muted\">This page read the newest "
		    "regressions here and stopped: the filters pass few "
		    "of them. \"older\" goes on below them.</p>\n");
	if (v->nrows == 0 && !v->partial)
		HTML_LIT(b, "<p class=\"muted\">No regressions match.</p>\n");
	else if (v->nrows > 0) {
		HTML_LIT(b,
		    "<table><tr><th>id</th><th>point</th><th>metric</th>"
		    "<th>change</th><th>verdict</th><th>triage</th>"
		    "<th>updated</th></tr>\n");
		shown = reports(b, v);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, shown, v->nrows);
	}
	layout_pager(
	    b, "/regressions", kv, sizeof(kv) / sizeof(kv[0]), &v->pager);
	return layout_end(b);
}
