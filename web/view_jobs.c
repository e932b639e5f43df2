#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static const char *const states[] = { "queued", "running", "success", "failed",
	"cancelled" };

static void
filters(struct buf *b, const struct view_jobs *v)
{
	size_t i;

	HTML_LIT(b,
	    "<form class=\"f\" method=\"get\" action=\"/jobs\">"
	    "<label>state <select name=\"state\">"
	    "<option value=\"\">any</option>");
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		HTML_LIT(b, "<option");
		if (v->state && strcmp(v->state, states[i]) == 0)
			HTML_LIT(b, " selected");
		HTML_LIT(b, ">");
		html_text(b, states[i]);
		HTML_LIT(b, "</option>");
	}
	HTML_LIT(b, "</select></label><button>filter</button></form>\n");
}

static void
row(struct buf *b, const struct view_job *j)
{
	HTML_LIT(b, "<tr><td class=\"n\"><a href=\"/jobs/");
	html_int(b, j->id);
	HTML_LIT(b, "\">");
	html_int(b, j->id);
	HTML_LIT(b, "</a></td><td>");
	if (j->pair_id > 0) {
		HTML_LIT(b, "<a href=\"/pair/");
		html_int(b, j->pair_id);
		HTML_LIT(b, "\">");
		html_int(b, j->pair_id);
		HTML_LIT(b, "</a> ");
	}
	html_text_trunc(b, j->role, 12);
	HTML_LIT(b, "</td><td class=\"mono\">");
	if (j->commit) {
		HTML_LIT(b, "<a href=\"/commit/");
		html_url(b, j->commit);
		HTML_LIT(b, "\" title=\"");
		html_text_trunc(b, j->subject, VIEW_SUBJECT_CHARS);
		HTML_LIT(b, "\">");
		html_text_trunc(b, j->commit, 12);
		HTML_LIT(b, "</a>");
	} else
		HTML_LIT(b, "<span class=\"muted\">submitted</span>");
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, j->tree, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, j->name, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td class=\"mono\">");
	html_text_trunc(b, j->point, VIEW_NAME_CHARS * 2);
	HTML_LIT(b, "</td><td><span class=\"badge v-");
	html_text(b, layout_verdict(j->state));
	HTML_LIT(b, "\">");
	html_text_trunc(b, j->state ? j->state : "unknown", 16);
	if (j->progress) {
		HTML_LIT(b, " ");
		html_text_trunc(b, j->progress, 24);
	}
	HTML_LIT(b, "</span></td><td>");
	html_text_trunc(b, j->host, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_int(b, j->attempts);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_int(b, j->runs_done);
	HTML_LIT(b, " / ");
	html_int(b, j->runs);
	HTML_LIT(b, "</td><td class=\"err\">");
	html_text_trunc(b, j->error, VIEW_ERROR_CHARS);
	HTML_LIT(b, "</td><td>");
	html_time(b, j->updated ? j->updated : j->created);
	HTML_LIT(b, "</td></tr>\n");
}

int
view_jobs_render(struct buf *b, const struct view_jobs *v)
{
	const char *kv[] = { "state", v->state };
	size_t i;

	layout_begin(b, "Jobs", "jobs");
	HTML_LIT(b, "<h1>Jobs</h1>\n");
	filters(b, v);
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No jobs.</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>id</th><th>pair</th><th>commit</th>"
		    "<th>tree</th><th>benchmark</th><th>point</th><th>state</"
		    "th>"
		    "<th>host</th><th>attempts</th><th>runs</th>"
		    "<th>error</th><th>updated</th></tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++)
			row(b, &v->rows[i]);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
	}
	layout_pager(b, "/jobs", kv, 2, &v->pager);
	return layout_end(b);
}
