#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

void
view_alerts_table(struct buf *b, const struct view_alert *a, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	HTML_LIT(b,
	    "<h2>Alerts</h2>\n<table><tr><th>id</th><th>kind</th>"
	    "<th>to</th><th>subject</th><th>state</th>"
	    "<th>attempts</th><th>sent</th><th>last error</th>"
	    "</tr>\n");
	for (i = 0; i < n && !layout_full(b); i++) {
		HTML_LIT(b, "<tr><td><a href=\"/api/v1/alerts/");
		html_int(b, a[i].id);
		HTML_LIT(b, "\">");
		html_int(b, a[i].id);
		HTML_LIT(b, "</a></td><td>");
		html_text_trunc(b, a[i].kind, 16);
		if (a[i].followup)
			HTML_LIT(b, " (follow-up)");
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].target, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].subject, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, a[i].state, 16);
		HTML_LIT(b, "</td><td>");
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
