#include <math.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
count(struct buf *b, int v)
{
	if (v > 0)
		html_int(b, v);
	else
		HTML_LIT(b, "unknown");
}

static void
row(struct buf *b, const struct view_hosts *v, const struct view_host *h)
{
	HTML_LIT(b, "<tr><td><b>");
	html_text_trunc(b, h->name, VIEW_NAME_CHARS);
	HTML_LIT(b, "</b><br><span class=\"muted\">");
	html_text_trunc(b, h->labels, VIEW_NAME_CHARS * 2);
	HTML_LIT(b, "</span></td><td>");
	html_text_trunc(b, h->cpu_model ? h->cpu_model : "unknown", 64);
	HTML_LIT(b, "<br><span class=\"muted\">");
	html_text_trunc(b, h->cpu_vendor, 24);
	HTML_LIT(b, "</span></td><td class=\"n\">");
	count(b, h->sockets);
	HTML_LIT(b, "</td><td class=\"n\">");
	count(b, h->cores);
	HTML_LIT(b, " / ");
	count(b, h->threads);
	HTML_LIT(b, "</td><td class=\"n\">");
	count(b, h->numa_nodes);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_bytes(b, h->memory_bytes);
	HTML_LIT(b, "</td><td class=\"mono\">");
	html_text_trunc(b, h->kernel ? h->kernel : "unknown", 64);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, h->cgroup ? h->cgroup : "unknown", 8);
	HTML_LIT(b, "</td><td><span class=\"badge v-");
	if (h->state && h->state[0] == 'o' && h->state[1] == 'n')
		HTML_LIT(b, "improvement\">online");
	else
		HTML_LIT(b, "unknown\">offline");
	HTML_LIT(b, "</span>");
	if (h->quarantined != NULL) {
		/* docs/HOST.md: no new pairs until an operator clears it. */
		HTML_LIT(b,
		    " <span class=\"badge v-regression quarantined\" "
		    "title=\"");
		html_text_trunc(b, h->quarantined, 400);
		HTML_LIT(b, "\">quarantined</span>");
	}
	HTML_LIT(b, "</td><td>");
	if (h->current_job > 0) {
		HTML_LIT(b, "<a href=\"/jobs/");
		html_int(b, h->current_job);
		HTML_LIT(b, "\">job ");
		html_int(b, h->current_job);
		HTML_LIT(b, "</a> ");
		html_text_trunc(b, h->progress, 24);
	} else
		HTML_LIT(b, "<span class=\"muted\">idle</span>");
	HTML_LIT(b, "</td><td>");
	if (h->last_seen > 0) {
		html_ago(b, v->now - h->last_seen);
		HTML_LIT(b, " ago");
	} else
		HTML_LIT(b, "never");
	HTML_LIT(b, "</td></tr>\n");
}

static void
pct_or_unknown(struct buf *b, double v)
{
	if (isfinite(v)) {
		html_num(b, v, 2);
		HTML_LIT(b, "%");
	} else
		HTML_LIT(b, "unknown");
}

/* Each canary host's noise floor, and what it can detect. */
static void
noise(struct buf *b, const struct view_hosts *v)
{
	size_t i, k, n = 0;

	for (i = 0; i < v->nrows; i++)
		n += v->rows[i].canary_job != NULL;
	if (n == 0)
		return;
	HTML_LIT(b,
	    "<h2>Noise floor (canary)</h2>\n<p class=\"muted\">Each host's "
	    "reference job runs as an A/A pair on its own kernel; the spread "
	    "of its runs (pooled within each job) is the noise a comparison "
	    "on that host has to beat, and from it the smallest change a job "
	    "with these runs per side detects (two-sided 5%, power 80%). An "
	    "A/A pair that finds a change quarantines the host.</p>\n"
	    "<table class=\"noise\"><tr><th>host</th><th>canary job</th>"
	    "<th>metric</th><th>runs</th><th>CV</th>"
	    "<th>smallest detectable effect</th></tr>\n");
	for (i = 0; i < v->nrows && !layout_full(b); i++) {
		const struct view_host *h = &v->rows[i];

		if (h->canary_job == NULL)
			continue;
		for (k = 0; k < (h->nnoise ? h->nnoise : 1); k++) {
			const struct view_noise *z =
			    h->nnoise ? &h->noise[k] : NULL;

			HTML_LIT(b, "<tr><td>");
			html_text_trunc(b, h->name, VIEW_NAME_CHARS);
			HTML_LIT(b, "</td><td>");
			html_text_trunc(b, h->canary_job, VIEW_NAME_CHARS);
			HTML_LIT(b, " <span class=\"muted\">every ");
			html_ago(b, h->canary_every_s);
			HTML_LIT(b, "</span></td>");
			if (z == NULL) {
				HTML_LIT(b,
				    "<td colspan=\"4\" class=\"muted\">no "
				    "canary run yet</td></tr>\n");
				continue;
			}
			HTML_LIT(b, "<td>");
			html_text_trunc(b, z->metric, VIEW_NAME_CHARS);
			HTML_LIT(b, "</td><td class=\"n\">");
			html_int(b, z->runs);
			HTML_LIT(b, "</td><td class=\"n\">");
			pct_or_unknown(b, z->cv_pct);
			HTML_LIT(b, "</td><td class=\"n\">");
			pct_or_unknown(b, z->mde_pct);
			HTML_LIT(b, " at ");
			html_int(b, h->canary_runs);
			HTML_LIT(b, " runs <span class=\"muted\">(");
			pct_or_unknown(b, z->mde_max_runs_pct);
			HTML_LIT(b, " at max_runs)</span></td></tr>\n");
		}
	}
	HTML_LIT(b, "</table>\n");
}

int
view_hosts_render(struct buf *b, const struct view_hosts *v)
{
	size_t i;

	layout_begin(b, "Hosts", "hosts");
	HTML_LIT(b, "<h1>Hosts</h1>\n");
	if (v->nrows == 0)
		HTML_LIT(b,
		    "<p class=\"muted\">No runner has registered."
		    "</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>host</th><th>CPU</th>"
		    "<th>sockets</th><th>cores / threads</th>"
		    "<th>NUMA</th><th>memory</th><th>kernel</th>"
		    "<th>cgroup</th><th>state</th><th>current job</th>"
		    "<th>last heartbeat</th></tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++)
			row(b, v, &v->rows[i]);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
		noise(b, v);
	}
	layout_pager(b, "/hosts", NULL, 0, &v->pager);
	return layout_end(b);
}
