/*
 * A job's page, GET /jobs/{id}: what it measures, its state, each run
 * and its log line by line.  The log is any bytes a runner sent: every
 * line is escaped (controls and invalid UTF-8 shown as U+FFFD), a
 * carriage return ends a line as a newline does, and a log longer than
 * the page's share shows its last lines, with the whole tail one link
 * away as text.
 */
#include <math.h>
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

/* The log's share of the page (bytes of log read; escaping adds). */
#define LOG_PAGE_BYTES (48 * 1024)

static void
head_row(struct buf *b, const char *name)
{
	HTML_LIT(b, "<tr><th>");
	html_text(b, name);
	HTML_LIT(b, "</th><td>");
}

static void
facts(struct buf *b, const struct view_job *j)
{
	HTML_LIT(b, "<table>");
	head_row(b, "benchmark");
	html_text_trunc(b, j->name, VIEW_NAME_CHARS);
	if (j->point && *j->point) {
		HTML_LIT(b, " <span class=\"mono\">");
		html_text_trunc(b, j->point, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</span>");
	}
	HTML_LIT(b, "</td></tr>");
	head_row(b, "pair");
	if (j->pair_id > 0) {
		HTML_LIT(b, "<a href=\"/pair/");
		html_int(b, j->pair_id);
		HTML_LIT(b, "\">pair ");
		html_int(b, j->pair_id);
		HTML_LIT(b, "</a> ");
	}
	html_text_trunc(b, j->role, 12);
	HTML_LIT(b, "</td></tr>");
	head_row(b, "commit");
	if (j->commit) {
		layout_commit_link(b, j->commit);
		HTML_LIT(b, " ");
		html_text_trunc(b, j->subject, VIEW_SUBJECT_CHARS);
		if (j->tree) {
			HTML_LIT(b, " <span class=\"muted\">(");
			html_text_trunc(b, j->tree, VIEW_NAME_CHARS);
			HTML_LIT(b, ")</span>");
		}
	} else
		HTML_LIT(b,
		    "<span class=\"muted\">none (a submitted "
		    "job)</span>");
	HTML_LIT(b, "</td></tr>");
	head_row(b, "state");
	layout_badge(b, j->state, j->progress);
	HTML_LIT(b, "</td></tr>");
	head_row(b, "host");
	html_text_trunc(b, j->host ? j->host : "none yet", VIEW_NAME_CHARS);
	HTML_LIT(b, "</td></tr>");
	head_row(b, "runs");
	html_int(b, j->runs_done);
	HTML_LIT(b, " of ");
	html_int(b, j->runs);
	HTML_LIT(b, " <span class=\"muted\">(attempts ");
	html_int(b, j->attempts);
	HTML_LIT(b, ")</span></td></tr>");
	if (j->error) {
		head_row(b, "error");
		HTML_LIT(b, "<span class=\"err\">");
		html_text_trunc(b, j->error, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</span>");
		layout_build_link(b, j->error);
		HTML_LIT(b, "</td></tr>");
	}
	head_row(b, "created");
	html_time(b, j->created);
	HTML_LIT(b, "</td></tr>");
	head_row(b, "updated");
	html_time(b, j->updated);
	HTML_LIT(b, "</td></tr></table>\n");
}

static void
runs(struct buf *b, const struct view_job_page *v)
{
	size_t i;

	HTML_LIT(b, "<h2>Runs</h2>\n");
	if (v->nruns == 0) {
		HTML_LIT(b, "<p class=\"muted\">No runs yet.</p>\n");
		return;
	}
	HTML_LIT(b,
	    "<table><tr><th>run</th><th>status</th><th>host</th>"
	    "<th>attempt</th><th>seconds</th><th>error</th>"
	    "<th>raw output</th></tr>\n");
	for (i = 0; i < v->nruns && !layout_full(b); i++) {
		const struct view_job_run *r = &v->runs[i];

		HTML_LIT(b, "<tr><td class=\"n\">");
		html_int(b, r->index);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->status, 16);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->host, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_int(b, r->attempt);
		HTML_LIT(b, "</td><td class=\"n\">");
		if (isfinite(r->duration_s))
			html_num(b, r->duration_s, 1);
		HTML_LIT(b, "</td><td class=\"err\">");
		html_text_trunc(b, r->error, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td><a href=\"/api/v1/jobs/");
		html_int(b, v->job.id);
		HTML_LIT(b, "/runs/");
		html_int(b, r->index);
		HTML_LIT(b, "/raw\">raw</a></td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->nruns);
}

/* The log, one line a line, its last LOG_PAGE_BYTES. */
static void
log_lines(struct buf *b, const struct view_job_page *v)
{
	const char *p = v->log, *end = v->log + v->log_len, *nl;
	size_t skipped = 0;

	HTML_LIT(b, "<h2 id=\"log\">Log</h2>\n");
	if (v->log == NULL || v->log_len == 0) {
		HTML_LIT(b, "<p class=\"muted\">No log.</p>\n");
		return;
	}
	if (v->log_len > LOG_PAGE_BYTES) {
		/* From the first whole line of the last bytes. */
		p = end - LOG_PAGE_BYTES;
		while (p < end && *p != '\n' && *p != '\r')
			p++;
		if (p < end)
			p++;
		skipped = (size_t)(p - v->log);
	}
	HTML_LIT(b,
	    "<p class=\"muted\">The job's log tail as the runner "
	    "sent it");
	if (skipped) {
		HTML_LIT(b, "; its first ");
		html_int(b, (long long)skipped);
		HTML_LIT(b, " bytes are not shown here");
	}
	HTML_LIT(b, " (<a href=\"/jobs/");
	html_int(b, v->job.id);
	HTML_LIT(b, "/log\">as text</a>).</p>\n<pre class=\"log\">");
	while (p < end) {
		for (nl = p; nl < end && *nl != '\n' && *nl != '\r'; nl++)
			;
		HTML_LIT(b, "<span class=\"ln\">");
		html_textn(b, p, (size_t)(nl - p));
		HTML_LIT(b, "</span>\n");
		/* "\r\n" is one line end. */
		if (nl + 1 < end && nl[0] == '\r' && nl[1] == '\n')
			nl++;
		p = nl + 1;
	}
	HTML_LIT(b, "</pre>\n");
}

int
view_job_render(struct buf *b, const struct view_job_page *v)
{
	layout_begin(b, v->title, "jobs");
	HTML_LIT(b, "<h1>");
	html_text(b, v->title);
	HTML_LIT(b, "</h1>\n");
	facts(b, &v->job);
	runs(b, v);
	log_lines(b, v);
	return layout_end(b);
}
