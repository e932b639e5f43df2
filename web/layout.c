#include <math.h>
#include <string.h>

#include "analysis/spread.h"

#include "web/html.h"
#include "web/layout.h"

/*
 * Hand-written CSS, inline so a page is one request and works offline.
 * Verdict colours are shared by the badges, the table cells and the CI
 * bars (class v-<verdict>).
 */
/* Appends the page's CSS. */
static void
css(struct buf *b)
{
	HTML_LIT(b,
	    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;"
	    "background:#f6f7f9}"
	    "header{background:#1d232a;color:#fff;padding:6px 16px}"
	    "header a{color:#cfd8e3;margin-right:14px;text-decoration:none}"
	    "header a.on{color:#fff;font-weight:600}"
	    "header b{margin-right:20px}"
	    "main{padding:12px 16px;max-width:1400px}"
	    "h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:18px 0 "
	    "6px}"
	    "table{border-collapse:collapse;background:#fff;margin:4px 0 12px}"
	    "th,td{border:1px solid #dde1e6;padding:3px 6px;text-align:left;"
	    "vertical-align:top}"
	    "th{background:#eef1f4;font-weight:600}"
	    "td.n{text-align:right;font-variant-numeric:tabular-nums;"
	    "white-space:nowrap}.nw{white-space:nowrap}"
	    "code,.mono{font-family:ui-monospace,monospace;font-size:13px}"
	    ".badge{display:inline-block;padding:0 6px;border-radius:8px;"
	    "font-size:12px;margin:1px 2px;border:1px solid transparent}"
	    ".v-regression{background:#fde2e1;color:#a4161a;border-color:#"
	    "f1aeb5}"
	    ".v-improvement{background:#dcf5e3;color:#17692f;border-color:#"
	    "a3d9b1}"
	    ".v-unchanged{background:#eceff3;color:#4a5561}"
	    ".v-info{background:#fff;color:#4a5561;border-color:#c9ced6}"
	    ".v-inconclusive{background:#fff3cd;color:#7a5b00;border-color:#"
	    "f3d98b}"
	    ".v-unstable{background:#efe3fb;color:#5b2a86;border-color:#cdb4ec}"
	    ".v-running{background:#dbeafe;color:#1e4e9c}"
	    ".v-suspect{background:#fff;color:#a4161a;border:1px dashed "
	    "#a4161a}"
	    ".v-queued{background:#f3f4f6;color:#4a5561;border-color:#c9ced6}"
	    ".v-failed{background:#7a1f1f;color:#fff}"
	    ".v-success{background:#eceff3;color:#17692f}"
	    ".v-cancelled{background:#f3f4f6;color:#555e69}"
	    ".v-unknown{background:#fff;color:#555e69;border:1px dashed "
	    "#9aa3ad}"
	    ".muted{color:#555e69}.note{background:#fff8e1;padding:6px 10px;"
	    "border-left:3px solid #f0c36d;margin:8px 0}"
	    ".err{color:#a4161a}"
	    "tr.grp th{background:#f6f7f9;text-align:left;font-weight:600}"
	    "table.cmp td{padding:2px 8px}ul.across li{margin:2px 0}"
	    "pre.log{white-space:pre-wrap;overflow-wrap:anywhere;background:#"
	    "fff;"
	    "border:1px solid #dde1e6;padding:6px 8px}"
	    "details summary{cursor:pointer;margin:8px 0}"
	    ".pager a{margin-right:12px}"
	    "form.f input,form.f select{margin-right:8px}"
	    "form.t{display:flex;gap:4px;margin:0}"
	    "svg text{font:11px system-ui,sans-serif;fill:#4a5561}"
	    ".grid{stroke:#e5e8ec}.axis{stroke:#6b7480}"
	    ".line{fill:none;stroke:#1e4e9c;stroke-width:1.5}"
	    ".spread{stroke:#9db7e0}.pt{fill:#1e4e9c}"
	    ".pt.alert{fill:#a4161a}.cp{stroke:#d97706;stroke-dasharray:4 3;"
	    "stroke-width:1.5}.mark{fill:#a4161a}"
	    ".band{fill:#eceff3}.zero{stroke:#6b7480}"
	    ".ci{fill:#4a5561}.ci.v-regression{fill:#a4161a}"
	    ".ci.v-improvement{fill:#17692f}.ci.v-inconclusive{fill:#b58a00}"
	    ".ci.v-unstable{fill:#5b2a86}.tick{stroke:#1d232a;stroke-width:2}");
}

static const struct {
	const char *key;
	const char *href;
	const char *label;
} nav[] = {
	{ "overview", "/", "Overview" },
	{ "regressions", "/regressions", "Regressions" },
	{ "hosts", "/hosts", "Hosts" },
	{ "jobs", "/jobs", "Jobs" },
	{ "builds", "/builds", "Builds" },
	{ "trees", "/trees", "Trees" },
	{ "series", "/series", "Series" },
	{ "bisect", "/bisect", "Bisections" },
	{ "alerts", "/alerts", "Alerts" },
};

static const char *const verdicts[] = { "regression", "improvement",
	"unchanged", "inconclusive", "unstable", "running", "queued", "failed",
	"success", "cancelled", "info", "suspect" };

/* Most urgent first: what layout_verdict_rank() ranks by. */
static const char *const verdict_order[] = { "regression", "unstable", "failed",
	"running", "queued", "improvement", "inconclusive", "unchanged",
	"info" };

int
layout_verdict_rank(const char *verdict)
{
	size_t i, n = sizeof(verdict_order) / sizeof(verdict_order[0]);

	for (i = 0; verdict && i < n; i++)
		if (strcmp(verdict, verdict_order[i]) == 0)
			return (int)i;
	return (int)n;
}

const char *
layout_worst_verdict(const char *list)
{
	static const char *const comparison[] = { "regression", "unstable",
		"improvement", "inconclusive", "unchanged" };
	const char *worst = NULL;
	size_t i;

	for (i = 0; list && i < sizeof(comparison) / sizeof(comparison[0]); i++)
		if (strstr(list, comparison[i]) &&
		    (worst == NULL ||
		        layout_verdict_rank(comparison[i]) <
		            layout_verdict_rank(worst)))
			worst = comparison[i];
	return worst;
}

int
layout_begin(struct buf *b, const char *title, const char *active)
{
	size_t i;

	HTML_LIT(b,
	    "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" "
	    "content=\"width=device-width,initial-scale=1\">"
	    "<title>");
	html_text_trunc(b, title, VIEW_TITLE_CHARS);
	HTML_LIT(b, " - perfwatch</title><style>");
	css(b);
	HTML_LIT(b, "</style></head>\n<body><header><b>perfwatch</b>");
	for (i = 0; i < sizeof(nav) / sizeof(nav[0]); i++) {
		HTML_LIT(b, "<a href=\"");
		html_text(b, nav[i].href);
		if (active && strcmp(active, nav[i].key) == 0)
			HTML_LIT(b, "\" class=\"on");
		HTML_LIT(b, "\">");
		html_text(b, nav[i].label);
		HTML_LIT(b, "</a>");
	}
	return HTML_LIT(b, "</header>\n<main>");
}

int
layout_end(struct buf *b)
{
	return HTML_LIT(b, "</main></body></html>\n");
}

const char *
layout_verdict(const char *v)
{
	size_t i;

	for (i = 0; v && i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (strcmp(v, verdicts[i]) == 0)
			return verdicts[i];
	return "unknown";
}

int
layout_badge(struct buf *b, const char *verdict, const char *progress)
{
	const char *v = layout_verdict(verdict);

	HTML_LIT(b, "<span class=\"badge v-");
	html_text(b, v);
	HTML_LIT(b, "\">");
	html_text(b, v);
	if (progress && *progress) {
		HTML_LIT(b, " ");
		html_text_trunc(b, progress, 24);
	}
	return HTML_LIT(b, "</span>");
}

int
layout_suspect(struct buf *b, const char *why)
{
	/* docs/HOST.md: the sides ran under different host states. */
	HTML_LIT(b, " <span class=\"badge v-suspect\" title=\"");
	html_text_trunc(b, why, 400);
	return HTML_LIT(b, "\">suspect</span>");
}

int
layout_commit_link(struct buf *b, const char *sha)
{
	if (sha == NULL)
		return buf_failed(b) ? -1 : 0;
	HTML_LIT(b, "<a class=\"mono\" href=\"/commit/");
	html_url(b, sha);
	HTML_LIT(b, "\">");
	html_textn(b, sha, strnlen(sha, 12));
	return HTML_LIT(b, "</a>");
}

int
layout_build_link(struct buf *b, const char *error)
{
	static const char *const pfx[] = { "build failed: build ",
		"build cancelled: build " };
	char id[24];
	size_t n = 0, i;

	for (i = 0; error != NULL && i < 2; i++)
		if (strncmp(error, pfx[i], strlen(pfx[i])) == 0)
			break;
	if (error == NULL || i == 2)
		return 0;
	error += strlen(pfx[i]);
	while (n < sizeof(id) - 1 && error[n] >= '0' && error[n] <= '9') {
		id[n] = error[n];
		n++;
	}
	id[n] = '\0';
	if (n == 0 || error[n] != ':')
		return 0;
	HTML_LIT(b, " <a href=\"/builds/");
	html_url(b, id);
	HTML_LIT(b, "\">build ");
	html_text(b, id);
	return HTML_LIT(b, "</a>");
}

int
layout_target_href(struct buf *b, enum view_target kind, const char *id)
{
	switch (kind) {
	case VIEW_COMMIT:
		HTML_LIT(b, "/commit/");
		break;
	case VIEW_SERIES:
		HTML_LIT(b, "/series/");
		break;
	case VIEW_PAIR:
		HTML_LIT(b, "/pair/");
		break;
	}
	return html_url(b, id);
}

/* path?k=v&k=v[&cursor=c]; "&amp;" because this goes into an attribute. */
static void
query(struct buf *b, const char *path, const char *const *kv, size_t nkv,
    const char *cursor)
{
	const char *sep = "?";
	size_t i;

	html_text(b, path);
	for (i = 0; i + 1 < nkv; i += 2) {
		if (kv[i + 1] == NULL || *kv[i + 1] == '\0')
			continue;
		html_text(b, sep);
		html_url(b, kv[i]);
		HTML_LIT(b, "=");
		html_url(b, kv[i + 1]);
		sep = "&";
	}
	if (cursor) {
		html_text(b, sep);
		HTML_LIT(b, "cursor=");
		html_url(b, cursor);
	}
}

int
layout_pager(struct buf *b, const char *path, const char *const *kv, size_t nkv,
    const struct view_pager *p)
{
	HTML_LIT(b, "<p class=\"pager\">");
	if (p->total > 0) {
		HTML_LIT(b, "<span class=\"muted\">");
		html_int(b, p->total);
		HTML_LIT(b, " in all</span> ");
	}
	if (p->later) {
		HTML_LIT(b, "<a href=\"");
		query(b, path, kv, nkv, NULL);
		HTML_LIT(b, "\">&laquo; newest</a>");
	}
	if (p->next_cursor) {
		HTML_LIT(b, "<a rel=\"next\" href=\"");
		query(b, path, kv, nkv, p->next_cursor);
		HTML_LIT(b, "\">older &raquo;</a>");
	}
	return HTML_LIT(b, "</p>");
}

int
layout_full(const struct buf *b)
{
	return b->len >= VIEW_ROWS_BUDGET;
}

int
layout_cut(struct buf *b, size_t shown, size_t total)
{
	if (shown >= total)
		return buf_failed(b) ? -1 : 0;
	HTML_LIT(b, "<p class=\"note\">");
	html_int(b, (long long)(total - shown));
	return HTML_LIT(b,
	    " more rows not shown to keep this page small; "
	    "use the filters, the next page or the JSON API.</p>");
}

int
layout_mean_sd(struct buf *b, double mean, double sd)
{
	double pct = spread_pct(mean, sd);

	html_si(b, mean);
	if (!isfinite(mean))
		return buf_failed(b) ? -1 : 0;
	HTML_LIT(b, " &plusmn;");
	if (isfinite(sd))
		html_si_digits(b, sd, 3);
	else
		HTML_LIT(b, "unknown");
	if (isfinite(pct)) {
		HTML_LIT(b, " <span class=\"muted\">(");
		html_num(b, pct, pct < 1 ? 2 : 1);
		HTML_LIT(b, "%)</span>");
	}
	return buf_failed(b) ? -1 : 0;
}

int
layout_interval(struct buf *b, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		return buf_failed(b) ? -1 : 0;
	HTML_LIT(b, "<span class=\"ci-text\">[");
	html_pct(b, fmin(lo, hi), 2);
	HTML_LIT(b, ", ");
	html_pct(b, fmax(lo, hi), 2);
	return HTML_LIT(b, "]</span>");
}
