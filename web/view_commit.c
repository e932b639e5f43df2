#include <math.h>

#include "common/caps.h"

#include "web/html.h"
#include "web/layout.h"
#include "web/svg.h"
#include "web/views.h"

/* Raw-output links shown per job; the JSON API lists them all. */
#define RAW_LINKS 20

static void
head(struct buf *b, const struct view_commit *v)
{
	HTML_LIT(b, "<h1>");
	switch (v->kind) {
	case VIEW_COMMIT:
		HTML_LIT(b, "Commit <span class=\"mono\">");
		html_text_trunc(b, v->id, 40);
		HTML_LIT(b, "</span>");
		break;
	case VIEW_SERIES:
		HTML_LIT(b, "Series ");
		html_text_trunc(b, v->id, 40);
		break;
	case VIEW_PAIR:
		HTML_LIT(b, "Pair ");
		html_text_trunc(b, v->id, 40);
		break;
	}
	HTML_LIT(b, "</h1>\n<p><b>");
	html_text_trunc(b, v->title, VIEW_TITLE_CHARS);
	HTML_LIT(b, "</b></p>\n<table>");
	if (v->author) {
		HTML_LIT(b, "<tr><th>author</th><td>");
		html_text_trunc(b, v->author, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</td></tr>");
	}
	if (v->tree) {
		HTML_LIT(b, "<tr><th>tree</th><td>");
		html_text_trunc(b, v->tree, VIEW_NAME_CHARS);
		HTML_LIT(b, " / ");
		html_text_trunc(b, v->branch, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td></tr>");
	}
	HTML_LIT(b, "<tr><th>compared with</th><td>");
	html_text_trunc(b, v->base ? v->base : "unknown", VIEW_TITLE_CHARS);
	HTML_LIT(b, "</td></tr><tr><th>time</th><td>");
	html_time(b, v->time);
	HTML_LIT(b, "</td></tr></table>\n");
	if (v->note) {
		HTML_LIT(b, "<p class=\"note\">");
		html_text_trunc(b, v->note, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</p>\n");
	}
	if (v->suspect) {
		/* docs/HOST.md: the sides are not comparable as measured. */
		HTML_LIT(b,
		    "<p class=\"note\"><span class=\"badge v-suspect\">"
		    "suspect</span> the two sides ran under different "
		    "host states: ");
		html_text_trunc(b, v->suspect, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</p>\n");
	}
}

/* Pair page: charge-path symbols of base and candidate side by side. */
static void
charge_symbols(struct buf *b, const struct view_commit *v)
{
	size_t i;

	HTML_LIT(b,
	    "<h2>Charge path: base vs candidate</h2>\n"
	    "<table><tr><th>symbol</th><th>base</th><th>candidate</th>"
	    "<th>change (points)</th></tr>\n");
	for (i = 0; i < v->nsymbols && !layout_full(b); i++) {
		const struct chargepath_sym *s = &v->symbols[i];

		HTML_LIT(b, "<tr><td class=\"mono\">");
		html_text_trunc(b, s->symbol, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_num(b, s->base_pct, 2);
		HTML_LIT(b, "%</td><td class=\"n\">");
		html_num(b, s->cand_pct, 2);
		HTML_LIT(b, "%</td><td class=\"n\">");
		if (isfinite(s->base_pct) && isfinite(s->cand_pct))
			html_num(b, s->cand_pct - s->base_pct, 2);
		else
			HTML_LIT(b, "unknown");
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n<p class=\"muted\">");
	if (v->nsymbols == 0)
		HTML_LIT(b, "No charge-path symbol was sampled. ");
	HTML_LIT(b, "Mean share of samples over each side's profiled runs (");
	html_int(b, v->profiled_runs[0]);
	HTML_LIT(b, " base, ");
	html_int(b, v->profiled_runs[1]);
	HTML_LIT(b, " candidate).</p>\n");
}

static void
history_href(
    struct buf *b, const struct view_commit *v, const struct view_cmp_row *r)
{
	const char *kv[] = { "tree", v->tree, "branch", v->branch, "host",
		r->host, "job", r->bench, "point", r->point, "metric",
		r->metric };
	const char *sep = "?";
	size_t i;

	HTML_LIT(b, "/history");
	for (i = 0; i < sizeof(kv) / sizeof(kv[0]); i += 2) {
		if (kv[i + 1] == NULL)
			continue;
		html_text(b, sep);
		html_text(b, kv[i]);
		HTML_LIT(b, "=");
		html_url(b, kv[i + 1]);
		sep = "&";
	}
}

static void
value(struct buf *b, double v, const char *unit)
{
	html_si(b, v);
	if (isfinite(v) && unit && *unit) {
		HTML_LIT(b, " <span class=\"muted\">");
		html_text_trunc(b, unit, 12);
		HTML_LIT(b, "</span>");
	}
}

static void
cmp_row(
    struct buf *b, const struct view_commit *v, const struct view_cmp_row *r)
{
	HTML_LIT(b, "<tr><td class=\"nw\">");
	html_text_trunc(b, r->host, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td>");
	html_text_trunc(b, r->bench, VIEW_NAME_CHARS);
	HTML_LIT(b, "</td><td class=\"mono\">");
	html_text_trunc(b, r->point, VIEW_NAME_CHARS * 2);
	HTML_LIT(b, "</td><td><a href=\"");
	history_href(b, v, r);
	HTML_LIT(b, "\">");
	html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, "</a>");
	if (r->better) {
		HTML_LIT(b, " <span class=\"muted\">");
		html_text_trunc(b, r->better, 8);
		HTML_LIT(b, "&nbsp;better</span>");
	}
	HTML_LIT(b, "</td><td class=\"n\">");
	value(b, r->base_median, r->unit);
	HTML_LIT(b, "</td><td class=\"n\">");
	value(b, r->cand_median, r->unit);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_pct(b, r->change_pct, 2);
	HTML_LIT(b, "</td><td>");
	svg_ci_bar(
	    b, r->ci_low, r->change_pct, r->ci_high, r->min_effect, r->verdict);
	HTML_LIT(b, "</td><td class=\"n\">");
	if (isfinite(r->p) && r->p < 0.0001)
		HTML_LIT(b, "&lt;0.0001");
	else
		html_num(b, r->p, 4);
	HTML_LIT(b, "</td><td>");
	layout_badge(b, r->verdict, NULL);
	if (r->suspect != NULL)
		layout_suspect(b, r->suspect);
	HTML_LIT(b, "</td><td class=\"n\">");
	if (isfinite(r->memcg_tax_pct)) {
		/* Nested vs root throughput of the candidate, the base's
		 * beside it, and the tax's own verdict. */
		HTML_LIT(b, "<span title=\"nested/root - 1\">");
		html_pct(b, r->memcg_tax_pct, 1);
		HTML_LIT(b, "</span>");
		if (isfinite(r->memcg_tax_base_pct)) {
			HTML_LIT(b, " <span class=\"muted\">base ");
			html_pct(b, r->memcg_tax_base_pct, 1);
			HTML_LIT(b, "</span>");
		}
		if (r->memcg_tax_verdict) {
			HTML_LIT(b, " ");
			layout_badge(b, r->memcg_tax_verdict, NULL);
		}
	}
	HTML_LIT(b, "</td><td class=\"n\">");
	if (isfinite(r->charge_share_pct)) {
		html_num(b, r->charge_share_pct, 1);
		HTML_LIT(b, "%");
	}
	if (isfinite(r->charge_share_base_pct)) {
		HTML_LIT(b, " <span class=\"muted\">base ");
		html_num(b, r->charge_share_base_pct, 1);
		HTML_LIT(b, "%</span>");
	}
	HTML_LIT(b, "</td><td class=\"n\">");
	html_int(b, r->base_n);
	HTML_LIT(b, " / ");
	html_int(b, r->cand_n);
	HTML_LIT(b, "</td><td>");
	if (r->pair_id > 0 && v->kind != VIEW_PAIR) {
		HTML_LIT(b, "<a href=\"/pair/");
		html_int(b, r->pair_id);
		HTML_LIT(b, "\">pair</a> ");
	}
	if (r->base_job > 0) {
		HTML_LIT(b, "<a href=\"/api/v1/jobs/");
		html_int(b, r->base_job);
		HTML_LIT(b, "\">base</a> ");
	}
	if (r->cand_job > 0) {
		HTML_LIT(b, "<a href=\"/api/v1/jobs/");
		html_int(b, r->cand_job);
		HTML_LIT(b, "\">cand</a>");
	}
	HTML_LIT(b, "</td></tr>\n");
}

static void
patches(struct buf *b, const struct view_commit *v)
{
	size_t i;

	HTML_LIT(b,
	    "<h2>Patches</h2>\n<table><tr><th>#</th><th>subject</th>"
	    "<th>author</th><th>commit</th><th>verdict</th></tr>\n");
	for (i = 0; i < v->npatches && !layout_full(b); i++) {
		const struct view_patch *p = &v->patches[i];

		HTML_LIT(b, "<tr class=\"patch\"><td class=\"n\">");
		html_int(b, p->seq > 0 ? (long long)p->seq : (long long)i + 1);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, p->subject, VIEW_SUBJECT_CHARS);
		HTML_LIT(b, "</td><td>");
		if (p->author)
			html_text_trunc(b, p->author, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</td><td class=\"mono\">");
		if (p->commit) {
			HTML_LIT(b, "<a href=\"/commit/");
			html_url(b, p->commit);
			HTML_LIT(b, "\">");
			html_text_trunc(b, p->commit, 12);
			HTML_LIT(b, "</a>");
		} else
			HTML_LIT(b, "<span class=\"muted\">not applied</span>");
		HTML_LIT(b, "</td><td>");
		layout_badge(b, p->verdict, NULL);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->npatches);
}

static void
jobs(struct buf *b, const struct view_commit *v)
{
	size_t i;
	int k;

	HTML_LIT(b,
	    "<h2>Jobs</h2>\n<table><tr><th>job</th><th>role</th>"
	    "<th>host</th><th>state</th><th>error</th>"
	    "<th>raw outputs</th></tr>\n");
	for (i = 0; i < v->njobs && !layout_full(b); i++) {
		const struct view_job_ref *j = &v->jobs[i];

		HTML_LIT(b, "<tr><td><a href=\"/api/v1/jobs/");
		html_int(b, j->id);
		HTML_LIT(b, "\">");
		html_int(b, j->id);
		HTML_LIT(b, "</a> <a href=\"/jobs/");
		html_int(b, j->id);
		HTML_LIT(b, "/log\">log</a></td><td>");
		html_text_trunc(b, j->role, 12);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, j->host, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		layout_badge(b, j->state, j->progress);
		HTML_LIT(b, "</td><td class=\"err\">");
		html_text_trunc(b, j->error, VIEW_ERROR_CHARS);
		HTML_LIT(b, "</td><td>");
		for (k = 0; k < j->runs_done && k < RAW_LINKS; k++) {
			HTML_LIT(b, "<a href=\"/api/v1/jobs/");
			html_int(b, j->id);
			HTML_LIT(b, "/runs/");
			html_int(b, k);
			HTML_LIT(b, "/raw\">");
			html_int(b, k);
			HTML_LIT(b, "</a> ");
		}
		if (j->runs_done > RAW_LINKS)
			HTML_LIT(b, "&hellip;");
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->njobs);
}

int
view_commit_render(struct buf *b, const struct view_commit *v)
{
	size_t i;

	layout_begin(b, v->title ? v->title : v->id, NULL);
	head(b, v);
	if (v->npatches)
		patches(b, v);
	HTML_LIT(b, "<h2>Comparisons</h2>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No comparisons yet.</p>\n");
	else {
		HTML_LIT(b,
		    "<table><tr><th>host</th><th>benchmark</th>"
		    "<th>point</th><th>metric</th><th>base</th>"
		    "<th>candidate</th><th>change</th><th>95% CI</th>"
		    "<th>p</th><th>verdict</th><th>memcg tax</th>"
		    "<th>charge path</th><th>runs</th><th>links</th>"
		    "</tr>\n");
		for (i = 0; i < v->nrows && !layout_full(b); i++)
			cmp_row(b, v, &v->rows[i]);
		HTML_LIT(b, "</table>\n");
		layout_cut(b, i, v->nrows);
	}
	if (v->profiled_runs[0] || v->profiled_runs[1])
		charge_symbols(b, v);
	if (v->njobs)
		jobs(b, v);
	if (v->pager.next_cursor || v->pager.later) {
		struct buf path = BUF_INIT(CAP_LINE);

		layout_target_href(&path, v->kind, v->id);
		layout_pager(b, path.data, NULL, 0, &v->pager);
		buf_release(&path);
	}
	return layout_end(b);
}
