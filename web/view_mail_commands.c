/*
 * The commands a series' reports were answered with by mail
 * (daemon/mailcmd.h), beside the triage the dashboard shows: who sent
 * each line (the mail's address, as the list's archive shows it), the
 * line (and, where it differs, the command it was read as), when, and what it
 * did, linking the pairs or the series it made, or why it was refused.
 * Everything from the mail is escaped.
 */
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

/* The pairs a row links at most; the JSON lists them all. */
#define VIEW_COMMAND_PAIRS 16

static void
outcome_cell(struct buf *b, const struct view_mail_command *c)
{
	size_t k;
	int done = c->outcome && strcmp(c->outcome, "done") == 0;

	HTML_LIT(b, "<td class=\"outcome\"><b>");
	if (done)
		HTML_LIT(b, "done");
	else
		HTML_LIT(b, "refused");
	HTML_LIT(b, "</b>: ");
	html_text_trunc(b, c->reason, VIEW_NOTE_CHARS);
	for (k = 0; k < c->npairs && k < VIEW_COMMAND_PAIRS; k++) {
		if (k == 0)
			HTML_LIT(b, " (<a href=\"/pair/");
		else
			HTML_LIT(b, ", <a href=\"/pair/");
		html_int(b, c->pairs[k]);
		HTML_LIT(b, "\">pair ");
		html_int(b, c->pairs[k]);
		HTML_LIT(b, "</a>");
	}
	if (c->npairs > VIEW_COMMAND_PAIRS)
		HTML_LIT(b, ", &hellip;");
	if (c->npairs > 0)
		HTML_LIT(b, ")");
	if (c->made_series > 0) {
		HTML_LIT(b, " (<a href=\"/series/");
		html_int(b, c->made_series);
		HTML_LIT(b, "\">series ");
		html_int(b, c->made_series);
		HTML_LIT(b, "</a>)");
	}
	HTML_LIT(b, "</td>");
}

void
view_mail_commands_table(
    struct buf *b, const struct view_mail_command *c, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	HTML_LIT(b,
	    "<h2 id=\"requests\">Requests by mail</h2>\n"
	    "<table class=\"requests\"><tr><th>sender</th><th>command</th>"
	    "<th>report</th><th>when</th><th>outcome</th></tr>\n");
	for (i = 0; i < n && !layout_full(b); i++) {
		HTML_LIT(b, "<tr class=\"request\"><td>");
		html_text_trunc(b, c[i].sender, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</td><td class=\"mono\">#perfwatch ");
		html_text_trunc(b, c[i].command, VIEW_NAME_CHARS * 3);
		if (c[i].parsed && strcmp(c[i].parsed, c[i].command) != 0) {
			HTML_LIT(b,
			    "<br><span class=\"muted\">read as "
			    "#perfwatch ");
			html_text_trunc(b, c[i].parsed, VIEW_NAME_CHARS * 3);
			HTML_LIT(b, "</span>");
		}
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, c[i].job, VIEW_NAME_CHARS);
		if (c[i].commit) {
			HTML_LIT(b, " ");
			layout_commit_link(b, c[i].commit);
		}
		HTML_LIT(b, "</td><td>");
		html_time(b, c[i].at);
		HTML_LIT(b, "</td>");
		outcome_cell(b, &c[i]);
		HTML_LIT(b, "</tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, n);
}
