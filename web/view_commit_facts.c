/*
 * The commit and series pages' memcg facts (the memcg tax, the charge
 * path's share, memory.stat deltas) and a metric's range of changes
 * across hosts and CPU families (web/views.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "web/html.h"
#include "web/layout.h"
#include "web/view_commit_int.h"

int
view_commit_i_is_other(const struct view_cmp_row *r)
{
	return !view_commit_i_is_changed(r) && !view_commit_i_is_telemetry(r);
}

static int
has_memcg_facts(const struct view_cmp_row *r)
{
	return isfinite(r->memcg_tax_pct) || isfinite(r->charge_share_pct) ||
	    isfinite(r->charge_share_base_pct);
}

/* The memcg facts: the tax of each nested point's throughput (nested vs
 * root, both kernels), the charge-path share, and memcg telemetry
 * (memory.stat deltas, PSI) as absolute amounts. */
void
view_commit_i_memcg_section(struct buf *b, const struct view_commit *v,
    const struct view_cmp_row **sorted, size_t n)
{
	const struct view_cmp_row *prev = NULL;
	size_t i, nfacts = 0, ntel = 0, shown = 0;

	for (i = 0; i < n; i++) {
		nfacts += has_memcg_facts(sorted[i]) ||
		    view_commit_i_is_tax(sorted[i]);
		ntel += view_commit_i_is_telemetry(sorted[i]);
	}
	if (nfacts + ntel == 0)
		return;
	HTML_LIT(b, "<h2>memcg</h2>\n");
	if (nfacts) {
		HTML_LIT(b,
		    "<table class=\"cmp\"><tr><th>metric</th>"
		    "<th>memcg tax</th><th>charge path</th><th>base</th>"
		    "<th>candidate</th><th>change</th><th>verdict</th>"
		    "</tr>\n");
		for (i = 0; i < n && !layout_full(b); i++) {
			const struct view_cmp_row *r = sorted[i];

			if (!has_memcg_facts(r) && !view_commit_i_is_tax(r))
				continue;
			view_commit_i_group_row(b, r, prev, 7);
			prev = r;
			HTML_LIT(b, "<tr><td><a href=\"");
			view_commit_i_history_href(b, v, r);
			HTML_LIT(b, "\">");
			html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
			HTML_LIT(b, "</a></td><td class=\"n\">");
			if (isfinite(r->memcg_tax_pct)) {
				/* Nested vs root throughput of the
				 * candidate, the base's beside it, and the
				 * tax's own verdict. */
				HTML_LIT(b, "<span title=\"nested/root - 1\">");
				html_pct(b, r->memcg_tax_pct, 1);
				HTML_LIT(b, "</span>");
				if (isfinite(r->memcg_tax_base_pct)) {
					HTML_LIT(
					    b, " <span class=\"muted\">base ");
					html_pct(b, r->memcg_tax_base_pct, 1);
					HTML_LIT(b, "</span>");
				}
				if (r->memcg_tax_verdict) {
					HTML_LIT(b, " ");
					layout_badge(
					    b, r->memcg_tax_verdict, NULL);
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
			view_commit_i_value(b, r->base_median, r->unit);
			HTML_LIT(b, "</td><td class=\"n\">");
			view_commit_i_value(b, r->cand_median, r->unit);
			HTML_LIT(b, "</td><td class=\"n\">");
			view_commit_i_change_cell(b, r);
			HTML_LIT(b, "</td><td>");
			layout_badge(b, r->verdict, NULL);
			HTML_LIT(b, "</td></tr>\n");
			shown++;
		}
		HTML_LIT(b, "</table>\n");
		layout_cut(b, shown, nfacts);
	}
	if (ntel) {
		prev = NULL;
		shown = 0;
		HTML_LIT(b, "<details><summary>memcg telemetry (");
		html_int(b, (long long)ntel);
		HTML_LIT(b,
		    " rows: memory.stat deltas, PSI; shown, never "
		    "judged)</summary>\n<table class=\"cmp\"><tr><th>metric"
		    "</th><th>base</th><th>candidate</th><th>difference</th>"
		    "<th>runs</th></tr>\n");
		for (i = 0; i < n && !layout_full(b); i++) {
			const struct view_cmp_row *r = sorted[i];

			if (!view_commit_i_is_telemetry(r))
				continue;
			view_commit_i_group_row(b, r, prev, 5);
			prev = r;
			HTML_LIT(b, "<tr><td>");
			html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
			HTML_LIT(b, "</td><td class=\"n\">");
			view_commit_i_value(b, r->base_median, r->unit);
			HTML_LIT(b, "</td><td class=\"n\">");
			view_commit_i_value(b, r->cand_median, r->unit);
			HTML_LIT(b, "</td><td class=\"n\">");
			if (isfinite(r->base_median) &&
			    isfinite(r->cand_median)) {
				double d = r->cand_median - r->base_median;

				if (d > 0)
					HTML_LIT(b, "+");
				view_commit_i_value(b, d, r->unit);
			} else
				HTML_LIT(b, "unknown");
			HTML_LIT(b, "</td><td class=\"n\">");
			html_int(b, r->base_n);
			HTML_LIT(b, " / ");
			html_int(b, r->cand_n);
			HTML_LIT(b, "</td></tr>\n");
			shown++;
		}
		HTML_LIT(b, "</table></details>\n");
		layout_cut(b, shown, ntel);
	}
}

/* One commit measured on several hosts: each judged metric's range of
 * changes across them, the way memcg authors quote it in cover letters
 * ("page_fault2 +13.7% ... +26.2% across 3 hosts"). */
#define ACROSS_MAX 24

/* 1 when group's row j is the first of its CPU family in the group. */
static int
family_first(const struct view_cmp_row **sorted, const size_t *group, size_t j)
{
	size_t k;

	for (k = 0; k < j; k++)
		if (view_commit_i_same(
		        sorted[group[k]]->family, sorted[group[j]]->family))
			return 0;
	return 1;
}

/* The rows of group (their indices into sorted, n of them) of family
 * fam (NULL: unknown): their range and count; the per-family line. */
static void
family_line(struct buf *b, const struct view_cmp_row **sorted,
    const size_t *group, size_t n, const char *fam)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t k, hosts = 0;

	for (k = 0; k < n; k++) {
		const struct view_cmp_row *o = sorted[group[k]];

		if (!view_commit_i_same(o->family, fam))
			continue;
		hosts++;
		lo = fmin(lo, o->change_pct);
		hi = fmax(hi, o->change_pct);
	}
	HTML_LIT(b, "<li>");
	html_text_trunc(b, fam ? fam : "unknown CPU", VIEW_NAME_CHARS);
	HTML_LIT(b, ": ");
	html_pct(b, lo, 1);
	if (hi != lo) {
		HTML_LIT(b, " &hellip; ");
		html_pct(b, hi, 1);
	}
	HTML_LIT(b, " on ");
	html_int(b, (long long)hosts);
	if (hosts == 1)
		HTML_LIT(b, " host</li>");
	else
		HTML_LIT(b, " hosts</li>");
}

/*
 * A metric measured on several hosts, once: its range of changes "+13.7%
 * ... +26.2% across 3 hosts, 2 CPU families" as a cover letter quotes
 * it, the verdicts among them, and each family's range.
 */
void
view_commit_i_across_hosts(
    struct buf *b, const struct view_cmp_row **sorted, size_t n)
{
	size_t i, j, lines = 0,
	             *group = xreallocarray(NULL, n + 1, sizeof(*group));
	int header = 0;

	for (i = 0; i < n && lines < ACROSS_MAX; i++) {
		const struct view_cmp_row *r = sorted[i];
		double lo = r->change_pct, hi = r->change_pct;
		size_t hosts = 1, regs = 0, imps = 0, first = 1, fams = 0;

		if (view_commit_i_is_telemetry(r) || !isfinite(r->change_pct))
			continue;
		/* Only the first row (in order) of a metric speaks for it. */
		for (j = 0; j < i && first; j++)
			if (view_commit_i_same(sorted[j]->bench, r->bench) &&
			    view_commit_i_same(sorted[j]->point, r->point) &&
			    view_commit_i_same(sorted[j]->metric, r->metric) &&
			    isfinite(sorted[j]->change_pct) &&
			    !view_commit_i_is_telemetry(sorted[j]))
				first = 0;
		if (!first)
			continue;
		regs = strcmp(r->verdict ? r->verdict : "", "regression") == 0;
		imps = strcmp(r->verdict ? r->verdict : "", "improvement") == 0;
		group[0] = i;
		for (j = i + 1; j < n; j++) {
			const struct view_cmp_row *o = sorted[j];

			if (!view_commit_i_same(o->bench, r->bench) ||
			    !view_commit_i_same(o->point, r->point) ||
			    !view_commit_i_same(o->metric, r->metric) ||
			    !isfinite(o->change_pct) ||
			    view_commit_i_same(o->host, r->host))
				continue;
			group[hosts++] = j;
			lo = fmin(lo, o->change_pct);
			hi = fmax(hi, o->change_pct);
			regs += strcmp(o->verdict ? o->verdict : "",
			            "regression") == 0;
			imps += strcmp(o->verdict ? o->verdict : "",
			            "improvement") == 0;
		}
		if (hosts < 2)
			continue;
		for (j = 0; j < hosts; j++)
			fams += family_first(sorted, group, j);
		if (!header) {
			HTML_LIT(
			    b, "<h2>Across hosts</h2>\n<ul class=\"across\">");
			header = 1;
		}
		HTML_LIT(b, "<li><b>");
		html_text_trunc(b, r->bench, VIEW_NAME_CHARS);
		HTML_LIT(b, ".");
		html_text_trunc(b, r->metric, VIEW_NAME_CHARS);
		HTML_LIT(b, "</b> ");
		if (r->point && *r->point) {
			HTML_LIT(b, "<span class=\"mono\">");
			html_text_trunc(b, r->point, VIEW_NAME_CHARS);
			HTML_LIT(b, "</span> ");
		}
		html_pct(b, lo, 1);
		HTML_LIT(b, " &hellip; ");
		html_pct(b, hi, 1);
		HTML_LIT(b, " across ");
		html_int(b, (long long)hosts);
		HTML_LIT(b, " hosts, ");
		html_int(b, (long long)fams);
		if (fams == 1)
			HTML_LIT(b, " CPU family");
		else
			HTML_LIT(b, " CPU families");
		if (regs || imps) {
			HTML_LIT(b, " <span class=\"muted\">(");
			if (regs) {
				html_int(b, (long long)regs);
				HTML_LIT(b, " regression");
			}
			if (regs && imps)
				HTML_LIT(b, ", ");
			if (imps) {
				html_int(b, (long long)imps);
				HTML_LIT(b, " improvement");
			}
			HTML_LIT(b, ")</span>");
		}
		HTML_LIT(b, "<ul class=\"families\">");
		for (j = 0; j < hosts; j++)
			if (family_first(sorted, group, j))
				family_line(b, sorted, group, hosts,
				    sorted[group[j]]->family);
		HTML_LIT(b, "</ul></li>\n");
		lines++;
	}
	if (header)
		HTML_LIT(b, "</ul>\n");
	free(group);
}
