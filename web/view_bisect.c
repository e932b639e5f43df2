/*
 * A bisection's page: the regression it bisects, its result and
 * verification, and every step with its two comparisons.
 */
#include <math.h>
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

static void
commit_link(struct buf *b, const char *sha)
{
	if (sha == NULL) {
		HTML_LIT(b, "<span class=\"muted\">unknown</span>");
		return;
	}
	layout_commit_link(b, sha);
}

static void
pair_link(struct buf *b, int64_t pair)
{
	if (pair <= 0)
		return;
	HTML_LIT(b, " <a href=\"/pair/");
	html_int(b, pair);
	HTML_LIT(b, "\">pair ");
	html_int(b, pair);
	HTML_LIT(b, "</a>");
}

static void
side(struct buf *b, const char *verdict, double pct, int64_t pair,
    const struct view_step_cmp *c)
{
	if (verdict == NULL && pair <= 0) {
		HTML_LIT(b, "<span class=\"muted\">-</span>");
		return;
	}
	layout_badge(b, verdict ? verdict : "inconclusive",
	    verdict ? NULL : "measuring");
	if (isfinite(pct)) {
		HTML_LIT(b, " ");
		html_pct(b, pct, 1);
	}
	if (isfinite(c->ci_low) && isfinite(c->ci_high)) {
		HTML_LIT(b, " ");
		layout_interval(b, c->ci_low, c->ci_high);
	}
	pair_link(b, pair);
	if (c->n[0] < 0 && c->n[1] < 0)
		return;
	/* Each side's mean and spread over its runs. */
	HTML_LIT(b, "<br><span class=\"step-sides\">");
	layout_mean_sd(b, c->mean[0], c->sd[0]);
	HTML_LIT(b, " &rarr; ");
	layout_mean_sd(b, c->mean[1], c->sd[1]);
	HTML_LIT(b, " <span class=\"muted\">(");
	if (c->n[0] >= 0)
		html_int(b, c->n[0]);
	else
		HTML_LIT(b, "?");
	HTML_LIT(b, " / ");
	if (c->n[1] >= 0)
		html_int(b, c->n[1]);
	else
		HTML_LIT(b, "?");
	HTML_LIT(b, " runs)</span></span>");
}

static void
dl_row(struct buf *b, const char *label, const char *text)
{
	HTML_LIT(b, "<tr><th>");
	html_text(b, label);
	HTML_LIT(b, "</th><td>");
	if (text)
		html_text_trunc(b, text, VIEW_NOTE_CHARS);
	else
		HTML_LIT(b, "<span class=\"muted\">unknown</span>");
	HTML_LIT(b, "</td></tr>\n");
}

int
view_bisect_render(struct buf *b, const struct view_bisect *v)
{
	size_t i;

	layout_begin(b, "Bisection", "regressions");
	HTML_LIT(b, "<h1>Bisection ");
	html_int(b, v->id);
	if (v->cp) {
		HTML_LIT(b,
		    " <span class=\"muted\">of a history change "
		    "point</span></h1>\n<p>bisected from the change "
		    "point at ");
		commit_link(b, v->origin_sha);
		HTML_LIT(b, " on ");
		html_text_trunc(b,
		    v->branch && v->branch[0] ? v->branch : "unknown",
		    VIEW_NAME_CHARS);
		HTML_LIT(b, " history");
		if (isfinite(v->origin_pct)) {
			HTML_LIT(b, " (");
			html_pct(b, v->origin_pct, 1);
			HTML_LIT(b, ")");
		}
		if (v->change_point_id > 0) {
			HTML_LIT(b, " <span class=\"muted\">change point ");
			html_int(b, v->change_point_id);
			HTML_LIT(b, " when it started</span>");
		}
		HTML_LIT(b, "</p>\n<p>");
	} else {
		HTML_LIT(b, " <span class=\"muted\">of regression ");
		html_int(b, v->regression_id);
		HTML_LIT(b, "</span></h1>\n<p>");
	}
	html_text_trunc(b, v->job, VIEW_NAME_CHARS);
	HTML_LIT(b, " <span class=\"muted\">on</span> ");
	html_text_trunc(b, v->host ? v->host : "unknown", VIEW_NAME_CHARS);
	if (v->point && v->point[0]) {
		HTML_LIT(b, " <span class=\"muted\">at</span> ");
		html_text_trunc(b, v->point, VIEW_NAME_CHARS);
	}
	HTML_LIT(b, " &middot; metric ");
	html_text_trunc(b, v->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, " &middot; ");
	html_text_trunc(b, v->tree ? v->tree : "unknown", VIEW_NAME_CHARS);
	HTML_LIT(b, " ");
	commit_link(b, v->good);
	HTML_LIT(b, "..");
	commit_link(b, v->bad);
	if (v->cp)
		HTML_LIT(b, " &middot; the change point's");
	else
		HTML_LIT(b, " &middot; the regression's");
	pair_link(b, v->pair_id);
	HTML_LIT(b, "</p>\n<table class=\"kv\">\n<tr><th>state</th><td><b>");
	html_text_trunc(b, v->state, 16);
	HTML_LIT(b, "</b></td></tr>\n<tr><th>culprit</th><td>");
	if (v->culprit) {
		commit_link(b, v->culprit);
		HTML_LIT(b, " ");
		html_text_trunc(b, v->culprit_subject, VIEW_SUBJECT_CHARS);
	} else
		HTML_LIT(b, "<span class=\"muted\">none</span>");
	HTML_LIT(b, "</td></tr>\n<tr><th>range</th><td>");
	commit_link(b, v->lo);
	HTML_LIT(b, "..");
	commit_link(b, v->hi);
	HTML_LIT(b, "</td></tr>\n");
	dl_row(b, "against its parent", v->verify_parent);
	dl_row(b, "its revert", v->verify_revert);
	dl_row(b, "reason", v->reason);
	HTML_LIT(b, "</table>\n");
	if (v->nsteps == 0) {
		HTML_LIT(b, "<p class=\"muted\">No step yet.</p>\n");
		return layout_end(b);
	}
	HTML_LIT(b,
	    "<table><tr><th>#</th><th>kind</th><th>commit</th>"
	    "<th>class</th><th>against the good end</th>"
	    "<th>against the bad end</th><th>note</th></tr>\n");
	for (i = 0; i < v->nsteps && !layout_full(b); i++) {
		const struct view_bisect_step *x = &v->steps[i];

		HTML_LIT(b, "<tr><td class=\"n\">");
		html_int(b, (long long)i + 1);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, x->kind, 16);
		HTML_LIT(b, "</td><td>");
		commit_link(b, x->sha);
		HTML_LIT(b, " ");
		html_text_trunc(b, x->subject, VIEW_SUBJECT_CHARS);
		HTML_LIT(b, "</td><td><b>");
		html_text_trunc(b, x->cls ? x->cls : "measuring", 16);
		HTML_LIT(b, "</b></td><td>");
		side(b, x->vs_good, x->vs_good_pct, x->good_pair, &x->good_cmp);
		HTML_LIT(b, "</td><td>");
		side(b, x->vs_bad, x->vs_bad_pct, x->bad_pair, &x->bad_cmp);
		HTML_LIT(b, "</td><td>");
		html_text_trunc(b, x->note, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</td></tr>\n");
	}
	HTML_LIT(b, "</table>\n");
	layout_cut(b, i, v->nsteps);
	view_sides_table(b, v->sides, v->nsides, 1);
	return layout_end(b);
}
