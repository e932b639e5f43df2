/*
 * The commit page and a series' comparison tables (web/views.h): what
 * was compared, its cost, the comparison table, the patches and jobs;
 * the memcg facts and the range across hosts are in
 * view_commit_facts.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "web/html.h"
#include "web/layout.h"
#include "web/svg.h"
#include "web/view_commit_int.h"

/* Raw-output links shown per job; the JSON API lists them all. */
#define RAW_LINKS 20

/* "3", or "base 3, candidate 1" when the sides differ; -1 unknown. */
static void
per_side(struct buf *b, const int64_t x[2])
{
	if (x[0] == x[1]) {
		if (x[0] < 0)
			HTML_LIT(b, "unknown");
		else
			html_int(b, x[0]);
		return;
	}
	HTML_LIT(b, "base ");
	if (x[0] < 0)
		HTML_LIT(b, "unknown");
	else
		html_int(b, x[0]);
	HTML_LIT(b, ", candidate ");
	if (x[1] < 0)
		HTML_LIT(b, "unknown");
	else
		html_int(b, x[1]);
}

/*
 * Pair page: what the pair cost.  Its rounds (the sides measured in
 * turns, docs/CONFIG.md `rounds`) when no sides table shows them and,
 * for kernel jobs, the boots each side's runs record: a round of a
 * kernel job costs a boot (docs/KERNEL.md).
 */
static void
cost_rows(struct buf *b, const struct view_commit *v)
{
	int64_t boots[2];
	int i;

	/* The sides table has each side's rounds: said once. */
	if (v->nsides == 0) {
		HTML_LIT(b, "<tr><th>rounds</th><td class=\"cost\">");
		per_side(b, v->rounds);
		if (v->rounds[0] > 1 || v->rounds[1] > 1)
			HTML_LIT(b,
			    " <span class=\"muted\">(base and candidate "
			    "measured in turns)</span>");
		HTML_LIT(b, "</td></tr>");
	}
	if (!v->kernel_job[0] && !v->kernel_job[1])
		return;
	HTML_LIT(b, "<tr><th>boots</th><td class=\"cost\">");
	for (i = 0; i < 2; i++)
		boots[i] = v->kernel_job[i] ? v->boots[i] : 0;
	per_side(b, boots);
	if (boots[0] >= 0 && boots[0] == boots[1])
		HTML_LIT(b, " per side");
	HTML_LIT(b, " <span class=\"muted\">(");
	if (boots[0] >= 0 && boots[1] >= 0) {
		html_int(b, boots[0] + boots[1]);
		HTML_LIT(b, " in all; ");
	}
	HTML_LIT(b, "a round of a kernel job costs a boot)</span></td></tr>");
}

/* The base commits a page shows at most. */
#define VIEW_BASES 8

/* "<sha12> subject", the sha linked to its commit page. */
static void
commit_ref(struct buf *b, const struct view_commit_ref *c)
{
	if (c->sha == NULL) {
		HTML_LIT(b,
		    "<span class=\"muted\">no commit (a submitted "
		    "pair)</span>");
		return;
	}
	layout_commit_link(b, c->sha);
	HTML_LIT(b, " ");
	html_text_trunc(b, c->subject, VIEW_SUBJECT_CHARS);
}

/* The "compared with" row: the base commits, else what base says. */
static void
compared_with(struct buf *b, const struct view_commit *v)
{
	static const struct view_commit_ref none = { NULL, NULL };
	size_t i;

	if (v->kind == VIEW_PAIR) {
		HTML_LIT(b, "<tr><th>base</th><td class=\"side-base\">");
		commit_ref(b, v->nbases ? &v->bases[0] : &none);
		HTML_LIT(b,
		    "</td></tr><tr><th>candidate</th>"
		    "<td class=\"side-cand\">");
		commit_ref(b, &v->cand);
		HTML_LIT(b, "</td></tr>");
		return;
	}
	HTML_LIT(b, "<tr><th>compared with</th><td class=\"side-base\">");
	if (v->nbases == 0)
		html_text_trunc(
		    b, v->base ? v->base : "unknown", VIEW_TITLE_CHARS);
	for (i = 0; i < v->nbases && i < VIEW_BASES; i++) {
		if (i)
			HTML_LIT(b, "<br>");
		commit_ref(b, &v->bases[i]);
	}
	if (v->nbases > VIEW_BASES)
		HTML_LIT(b, "<br>&hellip;");
	HTML_LIT(b, "</td></tr>");
}

static void
head(struct buf *b, const struct view_commit *v)
{
	int i;

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
	if (v->kind == VIEW_SERIES && v->branch_tag) {
		HTML_LIT(b, "<tr><th>subject tag</th><td class=\"mono\">");
		html_text_trunc(b, v->branch_tag, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td></tr>");
	}
	if (v->kind == VIEW_SERIES && v->latency) {
		HTML_LIT(
		    b, "<tr><th>time to report</th><td class=\"latency\">");
		html_text_trunc(b, v->latency, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</td></tr>");
	}
	if (v->kind == VIEW_SERIES && v->fallback) {
		HTML_LIT(b, "<tr><th>applied by</th><td class=\"fallback\">");
		html_text_trunc(b, v->fallback, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</td></tr>");
	}
	if (v->kind == VIEW_SERIES && v->prev_id > 0) {
		HTML_LIT(b, "<tr><th>supersedes</th><td><a href=\"/series/");
		html_int(b, v->prev_id);
		HTML_LIT(b, "\">v");
		html_int(b, v->prev_version);
		HTML_LIT(b, " (series ");
		html_int(b, v->prev_id);
		HTML_LIT(b, ")</a></td></tr>");
	}
	if (v->kind == VIEW_COMMIT && v->series_id > 0) {
		HTML_LIT(b, "<tr><th>series</th><td><a href=\"/series/");
		html_int(b, v->series_id);
		HTML_LIT(b, "\">series ");
		html_int(b, v->series_id);
		HTML_LIT(b, "</a>");
		if (v->series_title) {
			HTML_LIT(b, " ");
			html_text_trunc(b, v->series_title, VIEW_TITLE_CHARS);
		}
		HTML_LIT(b, "</td></tr>");
	}
	/* A pair's sides table names each side's commit and kernel: its
	 * head says them only when there is no such table. */
	if (v->kind != VIEW_PAIR || v->nsides == 0)
		compared_with(b, v);
	/* docs/KERNEL.md: which build each side measured. */
	for (i = 0; i < 2 && (v->kind != VIEW_PAIR || v->nsides == 0); i++) {
		if (v->kernel[i] == NULL)
			continue;
		if (i == 0)
			HTML_LIT(b, "<tr><th>base kernel</th>");
		else
			HTML_LIT(b, "<tr><th>candidate kernel</th>");
		HTML_LIT(b, "<td class=\"mono\">kernel: ");
		html_text_trunc(b, v->kernel[i], VIEW_NOTE_CHARS);
		HTML_LIT(b, "</td></tr>");
	}
	if (v->has_cost)
		cost_rows(b, v);
	HTML_LIT(b, "<tr><th>time</th><td>");
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
	if (v->kernel_warning) {
		HTML_LIT(b,
		    "<p class=\"note\"><span class=\"badge v-suspect\">"
		    "kernel</span> warning: ");
		html_text_trunc(b, v->kernel_warning, VIEW_NOTE_CHARS);
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

void
view_commit_i_history_href(
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

void
view_commit_i_value(struct buf *b, double v, const char *unit)
{
	html_si(b, v);
	if (isfinite(v) && unit && *unit) {
		HTML_LIT(b, " <span class=\"muted\">");
		html_text_trunc(b, unit, 12);
		HTML_LIT(b, "</span>");
	}
}

/* A change that crosses zero (telemetry deltas do) has no meaningful
 * percentage: show the absolute difference instead. */
void
view_commit_i_change_cell(struct buf *b, const struct view_cmp_row *r)
{
	double d = r->cand_median - r->base_median;

	if (isfinite(r->base_median) && isfinite(r->cand_median) &&
	    (r->base_median == 0 ||
	        (r->base_median < 0) != (r->cand_median < 0))) {
		HTML_LIT(b,
		    "<span title=\"the sides differ in sign: "
		    "difference, not percent\">");
		if (d > 0)
			HTML_LIT(b, "+");
		view_commit_i_value(b, d, r->unit);
		HTML_LIT(b, "</span>");
		return;
	}
	html_pct(b, r->change_pct, 2);
}

int
view_commit_i_is_tax(const struct view_cmp_row *r)
{
	return r->metric && strncmp(r->metric, "memcg_tax.", 10) == 0;
}

/* memcg telemetry: memory.stat deltas, PSI, the charge-path share. */
int
view_commit_i_is_telemetry(const struct view_cmp_row *r)
{
	return (r->metric && strncmp(r->metric, "memcg.", 6) == 0) ||
	    (r->verdict && strcmp(r->verdict, "info") == 0);
}

/* Regressions, unstable and improvements, a memcg tax's too (it is also
 * in the memcg section). */
int
view_commit_i_is_changed(const struct view_cmp_row *r)
{
	return !view_commit_i_is_telemetry(r) && r->verdict &&
	    (strcmp(r->verdict, "regression") == 0 ||
	        strcmp(r->verdict, "unstable") == 0 ||
	        strcmp(r->verdict, "improvement") == 0);
}

int
view_commit_i_same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int
cmpstr(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* What a kernel developer reads first: regressions, then unstable, then
 * improvements; throughput and latency before telemetry; the biggest
 * change first; ties by host, benchmark, point, metric. */
static int
row_order(const void *pa, const void *pb)
{
	const struct view_cmp_row *a = *(const struct view_cmp_row *const *)pa;
	const struct view_cmp_row *b = *(const struct view_cmp_row *const *)pb;
	double ma = isfinite(a->change_pct) ? fabs(a->change_pct) : -1;
	double mb = isfinite(b->change_pct) ? fabs(b->change_pct) : -1;
	int d;

	if ((d = layout_verdict_rank(a->verdict) -
	            layout_verdict_rank(b->verdict)) != 0)
		return d;
	if ((d = view_commit_i_is_telemetry(a) -
	            view_commit_i_is_telemetry(b)) != 0)
		return d;
	if (ma != mb)
		return ma < mb ? 1 : -1;
	if ((d = cmpstr(a->host, b->host)) != 0 ||
	    (d = cmpstr(a->bench, b->bench)) != 0 ||
	    (d = cmpstr(a->point, b->point)) != 0)
		return d;
	return cmpstr(a->metric, b->metric);
}

static void
links(struct buf *b, const struct view_commit *v, const struct view_cmp_row *r)
{
	if (r->pair_id > 0 && v->kind != VIEW_PAIR) {
		HTML_LIT(b, "<a href=\"/pair/");
		html_int(b, r->pair_id);
		HTML_LIT(b, "\">pair</a> ");
	}
	if (r->base_job > 0) {
		HTML_LIT(b, "<a href=\"/jobs/");
		html_int(b, r->base_job);
		HTML_LIT(b, "\">base</a> ");
	}
	if (r->cand_job > 0) {
		HTML_LIT(b, "<a href=\"/jobs/");
		html_int(b, r->cand_job);
		HTML_LIT(b, "\">cand</a>");
	}
}

/* A header row when host, benchmark or point differ from the row before,
 * so they are not repeated on every row. */
void
view_commit_i_group_row(struct buf *b, const struct view_cmp_row *r,
    const struct view_cmp_row *prev, int cols)
{
	if (prev && view_commit_i_same(prev->host, r->host) &&
	    view_commit_i_same(prev->bench, r->bench) &&
	    view_commit_i_same(prev->point, r->point))
		return;
	HTML_LIT(b, "<tr class=\"grp\"><th colspan=\"");
	html_int(b, cols);
	HTML_LIT(b, "\">");
	html_text_trunc(b, r->bench, VIEW_NAME_CHARS);
	HTML_LIT(b, " <span class=\"muted\">on</span> ");
	html_text_trunc(b, r->host, VIEW_NAME_CHARS);
	if (r->point && *r->point) {
		HTML_LIT(b, " <span class=\"mono\">");
		html_text_trunc(b, r->point, VIEW_NAME_CHARS * 2);
		HTML_LIT(b, "</span>");
	}
	HTML_LIT(b, "</th></tr>\n");
}

#define CMP_COLS 11

static void
cmp_head(struct buf *b, double extent)
{
	HTML_LIT(b,
	    "<table class=\"cmp\"><tr><th>metric</th><th>base median</th>"
	    "<th title=\"mean &plusmn; sample standard deviation (in "
	    "percent of the mean: %stddev)\">mean &plusmn;sd "
	    "(%stddev)</th><th>candidate median</th>"
	    "<th title=\"mean &plusmn; sample standard deviation (in "
	    "percent of the mean: %stddev)\">mean &plusmn;sd "
	    "(%stddev)</th>"
	    "<th>change</th><th>95% CI");
	/* The bars' one scale: zero in the middle, this at either edge. */
	if (isfinite(extent)) {
		HTML_LIT(b, " <span class=\"muted ci-scale\">bar &plusmn;");
		html_num(b, extent, extent < 10 ? 1 : 0);
		HTML_LIT(b, "%</span>");
	}
	HTML_LIT(b,
	    "</th><th>p</th><th>verdict</th><th>runs</th><th>links</th>"
	    "</tr>\n");
}

static void
mean_cell(struct buf *b, double mean, double sd)
{
	HTML_LIT(b, "<td class=\"n mean\">");
	layout_mean_sd(b, mean, sd);
	HTML_LIT(b, "</td>");
}

/* The interval as text, "[-1.20%, +3.40%]", over its bar (one above
 * the other: the table has eleven columns to fit in a window). */
static void
ci_cell(struct buf *b, const struct view_cmp_row *r, double extent)
{
	HTML_LIT(b, "<td class=\"nw\">");
	if (isfinite(r->ci_low) && isfinite(r->ci_high)) {
		layout_interval(b, r->ci_low, r->ci_high);
		HTML_LIT(b, "<br>");
	}
	svg_ci_bar(b, r->ci_low, r->change_pct, r->ci_high, r->min_effect,
	    r->verdict, extent);
	HTML_LIT(b, "</td>");
}

static void
cmp_row(struct buf *b, const struct view_commit *v,
    const struct view_cmp_row *r, double extent)
{
	HTML_LIT(b, "<tr><td><a href=\"");
	view_commit_i_history_href(b, v, r);
	HTML_LIT(b, "\">");
	html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, "</a>");
	if (r->better) {
		HTML_LIT(b, " <span class=\"muted\">");
		html_text_trunc(b, r->better, 8);
		HTML_LIT(b, "&nbsp;better</span>");
	}
	HTML_LIT(b, "</td><td class=\"n\">");
	view_commit_i_value(b, r->base_median, r->unit);
	HTML_LIT(b, "</td>");
	mean_cell(b, r->base_mean, r->base_sd);
	HTML_LIT(b, "<td class=\"n\">");
	view_commit_i_value(b, r->cand_median, r->unit);
	HTML_LIT(b, "</td>");
	mean_cell(b, r->cand_mean, r->cand_sd);
	HTML_LIT(b, "<td class=\"n\">");
	view_commit_i_change_cell(b, r);
	HTML_LIT(b, "</td>");
	ci_cell(b, r, extent);
	HTML_LIT(b, "<td class=\"n\">");
	if (isfinite(r->p) && r->p < 0.0001)
		HTML_LIT(b, "&lt;0.0001");
	else
		html_num(b, r->p, 4);
	HTML_LIT(b, "</td><td>");
	layout_badge(b, r->verdict, NULL);
	if (r->suspect != NULL)
		layout_suspect(b, r->suspect);
	HTML_LIT(b, "</td><td class=\"n\">");
	html_int(b, r->base_n);
	HTML_LIT(b, " / ");
	html_int(b, r->cand_n);
	HTML_LIT(b, "</td><td class=\"nw\">");
	links(b, v, r);
	HTML_LIT(b, "</td></tr>\n");
}

/* Rows of rows[] picked by want(), in row_order, as one grouped table
 * whose interval bars share one scale.  Returns the number of rows that
 * matched. */
static size_t
cmp_table(struct buf *b, const struct view_commit *v,
    const struct view_cmp_row **sorted, size_t n,
    int (*want)(const struct view_cmp_row *))
{
	const struct view_cmp_row *prev = NULL;
	size_t i, shown = 0, total = 0;
	/* One scale for the table's bars: the widest one's. */
	double extent = NAN, e;

	for (i = 0; i < n; i++) {
		if (!want(sorted[i]))
			continue;
		total++;
		e = svg_ci_extent(sorted[i]->ci_low, sorted[i]->change_pct,
		    sorted[i]->ci_high, sorted[i]->min_effect);
		if (isfinite(e) && !(e <= extent))
			extent = e;
	}
	if (total == 0)
		return 0;
	cmp_head(b, extent);
	for (i = 0; i < n && !layout_full(b); i++) {
		if (!want(sorted[i]))
			continue;
		view_commit_i_group_row(b, sorted[i], prev, CMP_COLS);
		cmp_row(b, v, sorted[i], extent);
		prev = sorted[i];
		shown++;
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, shown, total);
	return total;
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
		if (p->verdict == NULL && p->commit)
			HTML_LIT(
			    b, "<span class=\"muted\">not measured</span>");
		else
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

		HTML_LIT(b, "<tr><td><a href=\"/jobs/");
		html_int(b, j->id);
		HTML_LIT(b, "\">");
		html_int(b, j->id);
		HTML_LIT(b, "</a> <a href=\"/jobs/");
		html_int(b, j->id);
		HTML_LIT(b, "#log\">log</a></td><td>");
		html_text_trunc(b, j->role, 12);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, j->host, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		layout_badge(b, j->state, j->progress);
		HTML_LIT(b, "</td><td class=\"err\">");
		html_text_trunc(b, j->error, VIEW_ERROR_CHARS);
		layout_build_link(b, j->error);
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

/* "v5 vs v4": the two tips' candidate runs, per host, job, point. */
static void
versus(struct buf *b, const struct view_commit *v)
{
	size_t i;

	HTML_LIT(b, "<h2 id=\"versus\">v");
	html_int(b, v->version);
	HTML_LIT(b, " vs v");
	html_int(b, v->prev_version);
	HTML_LIT(b, "</h2>\n");
	if (v->nversus == 0) {
		HTML_LIT(b,
		    "<p class=\"muted\">No host, benchmark and point "
		    "measured on both versions yet.</p>\n");
		return;
	}
	HTML_LIT(b,
	    "<table><tr><th>host</th><th>benchmark</th><th>point</th>"
	    "<th>metric</th><th>v");
	html_int(b, v->prev_version);
	HTML_LIT(b, "</th><th>v");
	html_int(b, v->version);
	HTML_LIT(b,
	    "</th><th>change</th><th>95% CI</th><th>verdict</th>"
	    "</tr>\n");
	for (i = 0; i < v->nversus && !layout_full(b); i++) {
		const struct view_versus_row *r = &v->versus[i];

		HTML_LIT(b, "<tr class=\"versus\"><td>");
		html_text_trunc(b, r->host, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->job, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->point, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_num(b, r->prev_median, 4);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_num(b, r->median, 4);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_pct(b, r->change_pct, 1);
		HTML_LIT(b, "</td><td class=\"n\">");
		html_pct(b, r->ci_low, 1);
		HTML_LIT(b, " .. ");
		html_pct(b, r->ci_high, 1);
		HTML_LIT(b, "</td><td>");
		layout_badge(b, r->verdict, NULL);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->nversus);
}

int
view_commit_render(struct buf *b, const struct view_commit *v)
{
	const struct view_cmp_row **sorted = NULL;
	size_t i, nchanged, nother;

	layout_begin(b, v->title ? v->title : v->id, NULL);
	head(b, v);
	view_sides_table(b, v->sides, v->nsides, v->kind != VIEW_PAIR);
	if (v->nrows) {
		sorted = xreallocarray(NULL, v->nrows, sizeof(*sorted));
		for (i = 0; i < v->nrows; i++)
			sorted[i] = &v->rows[i];
		qsort(sorted, v->nrows, sizeof(*sorted), row_order);
	}
	if (v->kind == VIEW_SERIES && v->prev_id > 0)
		versus(b, v);
	if (v->kind == VIEW_SERIES) {
		HTML_LIT(b, "<h2>What changed: v");
		html_int(b, v->version);
		HTML_LIT(b, " vs base</h2>\n");
	} else
		HTML_LIT(b, "<h2>What changed</h2>\n");
	if (v->nrows == 0)
		HTML_LIT(b, "<p class=\"muted\">No comparisons yet.</p>\n");
	else {
		nchanged =
		    cmp_table(b, v, sorted, v->nrows, view_commit_i_is_changed);
		if (nchanged == 0)
			HTML_LIT(b,
			    "<p>No metric changed beyond its "
			    "min_effect (no regression, improvement or "
			    "unstable verdict).</p>\n");
		if (v->kind != VIEW_PAIR)
			view_commit_i_across_hosts(b, sorted, v->nrows);
		view_commit_i_memcg_section(b, v, sorted, v->nrows);
		nother = 0;
		for (i = 0; i < v->nrows; i++)
			nother += view_commit_i_is_other(sorted[i]) != 0;
		if (nother) {
			HTML_LIT(b, "<h2>Unchanged and inconclusive</h2>\n");
			cmp_table(
			    b, v, sorted, v->nrows, view_commit_i_is_other);
		}
	}
	free(sorted);
	if (v->npatches)
		patches(b, v);
	view_mail_commands_table(b, v->commands, v->ncommands);
	if (v->profiled_runs[0] || v->profiled_runs[1])
		charge_symbols(b, v);
	if (v->njobs)
		jobs(b, v);
	view_alerts_table(b, v->alerts, v->nalerts);
	if (v->pager.next_cursor || v->pager.later) {
		struct buf path = BUF_INIT(CAP_LINE);

		layout_target_href(&path, v->kind, v->id);
		layout_pager(b, path.data, NULL, 0, &v->pager);
		buf_release(&path);
	}
	return layout_end(b);
}
