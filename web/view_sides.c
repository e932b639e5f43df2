/*
 * What a comparison page compared, one line per side of each pair: its
 * commit, tree, host and CPU (model and family), kernel, runs and
 * rounds, as a kernel developer reads a report's header before its
 * numbers (web/views.h).
 */
#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
known_text(struct buf *b, const char *s, size_t chars)
{
	if (s && *s)
		html_text_trunc(b, s, chars);
	else
		HTML_LIT(b, "<span class=\"muted\">unknown</span>");
}

static void
known_int(struct buf *b, int64_t v)
{
	if (v >= 0)
		html_int(b, v);
	else
		HTML_LIT(b, "<span class=\"muted\">unknown</span>");
}

static void
side_row(struct buf *b, const struct view_side *s, int with_pair)
{
	HTML_LIT(b, "<tr class=\"side\">");
	if (with_pair) {
		HTML_LIT(b, "<td class=\"nw\">");
		if (s->pair_id > 0) {
			HTML_LIT(b, "<a href=\"/pair/");
			html_int(b, s->pair_id);
			HTML_LIT(b, "\">pair ");
			html_int(b, s->pair_id);
			HTML_LIT(b, "</a> ");
		}
		html_text_trunc(b, s->job, VIEW_NAME_CHARS);
		if (s->point && *s->point) {
			HTML_LIT(b, " <span class=\"mono\">");
			html_text_trunc(b, s->point, VIEW_NAME_CHARS);
			HTML_LIT(b, "</span>");
		}
		HTML_LIT(b, "</td>");
	}
	HTML_LIT(b, "<th scope=\"row\">");
	html_text_trunc(b, s->role, 12);
	HTML_LIT(b, "</th><td>");
	if (s->commit.sha) {
		layout_commit_link(b, s->commit.sha);
		HTML_LIT(b, " ");
		html_text_trunc(b, s->commit.subject, VIEW_SUBJECT_CHARS / 2);
	} else
		HTML_LIT(b, "<span class=\"muted\">no commit</span>");
	HTML_LIT(b, "</td><td>");
	known_text(b, s->tree, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	known_text(b, s->host, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td class=\"cpu\">");
	known_text(b, s->cpu_model, VIEW_NAME_CHARS * 2);
	HTML_LIT(b, " <span class=\"muted\">(");
	html_text_trunc(
	    b, s->family ? s->family : "family unknown", VIEW_NAME_CHARS);
	HTML_LIT(b, ")</span></td><td class=\"mono kernel\">");
	known_text(b, s->kernel, VIEW_NOTE_CHARS);
	HTML_LIT(b, "</td><td class=\"n\">");
	known_int(b, s->runs);
	HTML_LIT(b, "</td><td class=\"n\">");
	known_int(b, s->rounds);
	HTML_LIT(b, "</td></tr>\n");
}

void
view_sides_table(
    struct buf *b, const struct view_side *sides, size_t n, int with_pair)
{
	size_t i;

	if (n == 0)
		return;
	HTML_LIT(b,
	    "<h2 id=\"sides\">What was compared</h2>\n<table "
	    "class=\"sides\"><tr>");
	if (with_pair)
		HTML_LIT(b, "<th>pair</th>");
	HTML_LIT(b,
	    "<th>side</th><th>commit</th><th>tree</th><th>host</th>"
	    "<th>CPU (family)</th><th>kernel</th><th>runs</th>"
	    "<th>rounds</th></tr>\n");
	for (i = 0; i < n && i < VIEW_SIDES && !layout_full(b); i++)
		side_row(b, &sides[i], with_pair);
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, n);
}
