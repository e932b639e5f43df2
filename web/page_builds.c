/*
 * The builds pages (docs/KERNEL.md, "Shared builds"): GET /builds, the
 * shared kernel builds newest first (filtered by state, paginated as
 * /jobs), and GET /builds/{id}, one build with its files, the jobs
 * waiting on it and its log.  Everything a builder or a tree sent is
 * escaped (web/html.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "web/api_int.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

static const char *const build_states[] = { "queued", "running", "success",
	"failed", "cancelled" };

static const char *
state_filter(struct ctx *x)
{
	const char *s = web_q(x, "state");
	size_t i;

	for (i = 0; s && i < 5; i++)
		if (strcmp(s, build_states[i]) == 0)
			return build_states[i];
	return NULL;
}

static void
cell_text(struct buf *b, const char *s)
{
	HTML_LIT(b, "<td>");
	if (s != NULL)
		html_text_trunc(b, s, 80);
	HTML_LIT(b, "</td>");
}

static void
build_row(struct buf *b, const struct store_build_row *r)
{
	char id[24];

	snprintf(id, sizeof(id), "%lld", (long long)r->id);
	HTML_LIT(b, "<tr><td><a href=\"/builds/");
	html_url(b, id);
	HTML_LIT(b, "\">");
	html_int(b, r->id);
	HTML_LIT(b, "</a></td><td>");
	if (r->sha != NULL)
		html_text_trunc(b, r->sha, 12);
	HTML_LIT(b, "</td>");
	cell_text(b, r->url);
	cell_text(b, r->key);
	cell_text(b, r->config);
	cell_text(b, r->state);
	cell_text(b, r->host);
	HTML_LIT(b, "<td>");
	if (!isnan(r->build_s))
		html_num(b, r->build_s, 1);
	HTML_LIT(b, "</td><td>");
	html_bytes(b, r->size);
	if (r->evicted)
		HTML_LIT(b, " (evicted)");
	HTML_LIT(b, "</td>");
	cell_text(b, r->error);
	HTML_LIT(b, "<td>");
	html_time(b, r->created);
	HTML_LIT(b, "</td></tr>\n");
}

void
web_builds(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct store_builds l;
	struct view_pager pager = { 0 };
	const char *state = state_filter(x);
	const char *kv[] = { "state", state };
	char next[32];
	int64_t cursor = web_q_cursor(x);
	size_t i;
	int r;

	if ((r = store_build_list(x->s, &l, state, PAGE_ROWS, cursor)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	web_pager(&pager, cursor, l.next_cursor, next);
	layout_begin(&b, "Builds", "builds");
	HTML_LIT(&b, "<h1>Shared kernel builds</h1>\n<p>");
	HTML_LIT(&b, "<a href=\"/builds\">all</a>");
	for (i = 0; i < 5; i++) {
		HTML_LIT(&b, " &middot; <a href=\"/builds?state=");
		html_url(&b, build_states[i]);
		HTML_LIT(&b, "\">");
		html_text(&b, build_states[i]);
		HTML_LIT(&b, "</a>");
	}
	HTML_LIT(&b, "</p>\n");
	if (l.n == 0) {
		HTML_LIT(&b, "<p class=\"muted\">No builds.</p>\n");
	} else {
		HTML_LIT(&b,
		    "<table><tr><th>id</th><th>commit</th>"
		    "<th>tree</th><th>key</th><th>config</th>"
		    "<th>state</th><th>builder</th><th>build s</th>"
		    "<th>size</th><th>error</th><th>created</th>"
		    "</tr>\n");
		for (i = 0; i < l.n && !layout_full(&b); i++)
			build_row(&b, &l.v[i]);
		HTML_LIT(&b, "</table>\n");
		layout_cut(&b, i, l.n);
	}
	layout_pager(&b, "/builds", kv, 2, &pager);
	layout_end(&b);
	store_builds_release(&l);
	reply_page(x, 200, &b);
}

static void
dt(struct buf *b, const char *name)
{
	HTML_LIT(b, "<tr><th>");
	html_text(b, name);
	HTML_LIT(b, "</th><td>");
}

static void
build_page(struct ctx *x, int64_t id)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE + CAP_JOB_LOG);
	struct store_build_row r;
	char title[48], bid[64], num[24];
	size_t i;
	int rc;

	if ((rc = store_build_get(x->s, &r, id)) != 0) {
		reply_page_store_err(x, rc);
		return;
	}
	if (store_build_id_text(x->s, bid, sizeof(bid), id) != 0)
		snprintf(bid, sizeof(bid), "-pwb%lld", (long long)id);
	snprintf(title, sizeof(title), "Build %lld", (long long)id);
	layout_begin(&b, title, "builds");
	HTML_LIT(&b, "<h1>");
	html_text(&b, title);
	HTML_LIT(&b, "</h1>\n<table>\n");
	dt(&b, "state");
	html_text(&b, r.state ? r.state : "");
	if (r.evicted)
		HTML_LIT(&b, " (artifacts evicted)");
	dt(&b, "tree");
	html_text(&b, r.url ? r.url : "");
	dt(&b, "commit");
	if (r.sha != NULL)
		layout_commit_link(&b, r.sha);
	dt(&b, "config key");
	html_text(&b, r.key ? r.key : "");
	dt(&b, "config");
	html_text(&b, r.config ? r.config : "");
	HTML_LIT(&b, " ");
	html_text_trunc(&b, r.fragment_json ? r.fragment_json : "", 400);
	dt(&b, "build id");
	html_text(&b, bid);
	dt(&b, "release");
	html_text(&b, r.release ? r.release : "");
	dt(&b, "builder");
	html_text(&b, r.host ? r.host : "");
	dt(&b, "attempts");
	html_int(&b, r.attempts);
	dt(&b, "created");
	html_time(&b, r.created);
	dt(&b, "build time");
	if (!isnan(r.build_s)) {
		html_num(&b, r.build_s, 1);
		HTML_LIT(&b, " s");
	}
	if (r.incremental > 0)
		HTML_LIT(&b, " (incremental)");
	else if (r.incremental == 0)
		HTML_LIT(&b, " (full)");
	/* The key's compiler (CC), then what the builder said it is. */
	dt(&b, "compiler");
	html_text(&b, r.cc ? r.cc : "");
	if (r.compiler != NULL && r.compiler[0] != '\0') {
		HTML_LIT(&b, " (");
		html_text_trunc(&b, r.compiler, 200);
		HTML_LIT(&b, ")");
	}
	dt(&b, "size");
	html_bytes(&b, r.size);
	dt(&b, "error");
	html_text(&b, r.error ? r.error : "");
	HTML_LIT(&b, "</td></tr>\n</table>\n<h2>Files</h2>\n");
	if (r.nfiles == 0)
		HTML_LIT(&b, "<p class=\"muted\">None stored.</p>\n");
	else {
		HTML_LIT(&b,
		    "<table><tr><th>file</th><th>sha256</th>"
		    "<th>size</th></tr>\n");
		for (i = 0; i < r.nfiles; i++) {
			HTML_LIT(&b, "<tr><td>");
			html_text(&b, r.files[i].name);
			HTML_LIT(&b, "</td><td>");
			html_text(&b, r.files[i].sha256);
			HTML_LIT(&b, "</td><td>");
			html_bytes(&b, r.files[i].size);
			HTML_LIT(&b, "</td></tr>\n");
		}
		HTML_LIT(&b, "</table>\n");
	}
	HTML_LIT(&b, "<h2>Jobs on this build</h2>\n");
	if (r.nwaiters == 0)
		HTML_LIT(&b, "<p class=\"muted\">None.</p>\n");
	else {
		HTML_LIT(&b,
		    "<table><tr><th>job</th><th>pair</th>"
		    "<th>role</th><th>state</th></tr>\n");
		for (i = 0; i < r.nwaiters; i++) {
			snprintf(num, sizeof(num), "%lld",
			    (long long)r.waiters[i].job_id);
			HTML_LIT(&b, "<tr><td><a href=\"/jobs/");
			html_url(&b, num);
			HTML_LIT(&b, "\">");
			html_int(&b, r.waiters[i].job_id);
			HTML_LIT(&b, "</a></td><td>");
			if (r.waiters[i].pair_id > 0) {
				snprintf(num, sizeof(num), "%lld",
				    (long long)r.waiters[i].pair_id);
				HTML_LIT(&b, "<a href=\"/pair/");
				html_url(&b, num);
				HTML_LIT(&b, "\">");
				html_int(&b, r.waiters[i].pair_id);
				HTML_LIT(&b, "</a>");
			}
			HTML_LIT(&b, "</td><td>");
			html_text(&b, r.waiters[i].role);
			HTML_LIT(&b, "</td><td>");
			html_text(&b, r.waiters[i].state);
			HTML_LIT(&b, "</td></tr>\n");
		}
		HTML_LIT(&b, "</table>\n");
	}
	HTML_LIT(&b, "<h2>Log</h2>\n<pre>");
	html_text(&b, r.log ? r.log : "");
	HTML_LIT(&b, "</pre>\n");
	layout_end(&b);
	store_build_row_release(&r);
	reply_page(x, 200, &b);
}

void
web_build(struct ctx *x)
{
	const char *end;
	int64_t id = web_parse_id(x->rest, &end);

	if (id == 0 || *end != '\0') {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	build_page(x, id);
}
