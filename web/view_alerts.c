/*
 * Deliveries of reports (docs/ALERTS.md): the alerts table of a commit
 * page, the alerts page, GET /alerts, with its commit column and
 * filters, and one alert's page, GET /alerts/{id}, with what it sends.
 */
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

/* The table's rows; with_commit: a commit column after the id. */
static void
alerts_rows(
    struct buf *b, const struct view_alert *a, size_t n, int with_commit)
{
	size_t i;

	HTML_LIT(b, "<table><tr><th>id</th>");
	if (with_commit)
		HTML_LIT(b, "<th>commit</th>");
	HTML_LIT(b,
	    "<th>kind</th><th>to</th><th>subject</th><th>state</th>"
	    "<th>attempts</th><th>sent</th><th>last error</th>"
	    "</tr>\n");
	for (i = 0; i < n && !layout_full(b); i++) {
		HTML_LIT(b, "<tr><td class=\"n\"><a href=\"/alerts/");
		html_int(b, a[i].id);
		HTML_LIT(b, "\">");
		html_int(b, a[i].id);
		HTML_LIT(b, "</a></td><td>");
		if (with_commit) {
			layout_commit_link(b, a[i].sha);
			HTML_LIT(b, "</td><td>");
		}
		html_text_trunc(b, a[i].kind, 16);
		if (a[i].followup)
			HTML_LIT(b, " (follow-up)");
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].target, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].subject, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].state, 16);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_int(b, a[i].attempts);
		HTML_LIT(b, "</td><td>");
		if (a[i].sent > 0)
			html_time(b, a[i].sent);
		HTML_LIT(b, "</td><td class=\"err\">");
		html_text_trunc(b, a[i].error, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, n);
}

void
view_alerts_table(struct buf *b, const struct view_alert *a, size_t n)
{
	if (n == 0)
		return;
	HTML_LIT(b, "<h2>Alerts</h2>\n");
	alerts_rows(b, a, n, 0);
}

/* A <select> of the filter name over values, any first. */
static void
select_of(struct buf *b, const char *name, const char *const *values, size_t n,
    const char *on)
{
	size_t i;

	HTML_LIT(b, "<label>");
	html_text(b, name);
	HTML_LIT(b, " <select name=\"");
	html_text(b, name);
	HTML_LIT(b, "\"><option value=\"\">any</option>");
	for (i = 0; i < n; i++) {
		HTML_LIT(b, "<option");
		if (on && strcmp(on, values[i]) == 0)
			HTML_LIT(b, " selected");
		HTML_LIT(b, ">");
		html_text(b, values[i]);
		HTML_LIT(b, "</option>");
	}
	HTML_LIT(b, "</select></label>");
}

int
view_alerts_render(struct buf *b, const struct view_alerts *v)
{
	static const char *const states[] = { "pending", "sent", "failed" };
	static const char *const kinds[] = { "email", "webhook" };
	const char *kv[] = { "state", v->state, "kind", v->kind };

	layout_begin(b, "Alerts", "alerts");
	HTML_LIT(b,
	    "<h1>Alerts</h1>\n<p class=\"muted\">Every report sent or "
	    "due, by mail or webhook, newest first.</p>\n"
	    "<form class=\"f\" method=\"get\" action=\"/alerts\">");
	select_of(b, "state", states, 3, v->state);
	select_of(b, "kind", kinds, 2, v->kind);
	HTML_LIT(b, "<button>filter</button></form>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No alerts.</p>\n");
	else
		alerts_rows(b, v->rows, v->nrows, 1);
	layout_pager(b, "/alerts", kv, 4, &v->pager);
	return layout_end(b);
}

/* The payload's share of the page (bytes of payload read). */
#define PAYLOAD_PAGE_BYTES (32 * 1024)

static void
fact_row(struct buf *b, const char *name)
{
	HTML_LIT(b, "<tr><th>");
	html_text(b, name);
	HTML_LIT(b, "</th><td>");
}

/* The payload in a <pre>, a mail's CRLF shown as a newline, cut to its
 * share of the page. */
static void
payload_pre(struct buf *b, const char *p)
{
	size_t len = strlen(p), n = len, i, from = 0;

	if (n > PAYLOAD_PAGE_BYTES)
		n = PAYLOAD_PAGE_BYTES;
	HTML_LIT(b, "<pre class=\"log\">");
	for (i = 0; i < n; i++)
		if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') {
			html_textn(b, p + from, i - from);
			from = i + 1;
		}
	html_textn(b, p + from, n - from);
	HTML_LIT(b, "</pre>\n");
	if (n < len) {
		HTML_LIT(b, "<p class=\"muted\">First ");
		html_int(b, (long long)n);
		HTML_LIT(b, " of ");
		html_int(b, (long long)len);
		HTML_LIT(b, " bytes.</p>\n");
	}
}

int
view_alert_render(struct buf *b, const struct view_alert_page *v)
{
	const struct view_alert *a = &v->a;

	layout_begin(b, "Alert", "alerts");
	HTML_LIT(b, "<h1>Alert ");
	html_int(b, a->id);
	HTML_LIT(b, "</h1>\n<table>");
	fact_row(b, "subject");
	html_text_trunc(b, a->subject, VIEW_SUBJECT_CHARS * 2);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "kind");
	html_text_trunc(b, a->kind, 16);
	if (a->followup)
		HTML_LIT(b, " (follow-up)");
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "to");
	html_text_trunc(b, a->target, VIEW_ERROR_CHARS);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "state");
	html_text_trunc(b, a->state, 16);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "attempts");
	html_int(b, a->attempts);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "created");
	html_time(b, v->created);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "sent");
	if (a->sent > 0)
		html_time(b, a->sent);
	else
		HTML_LIT(b, "<span class=\"muted\">not sent</span>");
	HTML_LIT(b, "</td></tr>");
	if (v->next_try > 0) {
		fact_row(b, "next try");
		html_time(b, v->next_try);
		HTML_LIT(b, "</td></tr>");
	}
	if (a->error) {
		fact_row(b, "last error");
		HTML_LIT(b, "<span class=\"err\">");
		html_text_trunc(b, a->error, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</span></td></tr>");
	}
	fact_row(b, "commit");
	if (a->sha)
		layout_commit_link(b, a->sha);
	else
		HTML_LIT(b, "<span class=\"muted\">none</span>");
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "benchmark");
	html_text_trunc(b, v->benchmark, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "host");
	html_text_trunc(b, v->host, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td></tr>");
	fact_row(b, "delivery");
	HTML_LIT(b, "<span class=\"mono\">");
	html_text_trunc(b, v->delivery, VIEW_NAME_CHARS * 2);
	HTML_LIT(b, "</span></td></tr></table>\n<h2>Payload</h2>\n");
	if (v->payload)
		payload_pre(b, v->payload);
	else
		HTML_LIT(b, "<p class=\"muted\">None.</p>\n");
	HTML_LIT(b, "<p><a href=\"/alerts\">All alerts</a></p>\n");
	return layout_end(b);
}
