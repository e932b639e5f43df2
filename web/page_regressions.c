/*
 * The regressions page and their triage: GET /regressions, POST
 * /regressions/{id}/triage, and their mirrors GET /api/v1/regressions
 * and POST /api/v1/regressions/{id}/triage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/dash.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/rows_dash.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

static const char *
state_filter(struct ctx *x)
{
	static const char *const ok[] = { "new", "acknowledged", "invalid",
		"fixed" };
	const char *s = web_q(x, "state");
	size_t i;

	for (i = 0; s && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(s, ok[i]) == 0)
			return ok[i];
	return NULL;
}

void
web_regressions(struct ctx *x)
{
	struct view_regressions v = { 0 };
	struct view_regression *rows;
	struct store_regressions l;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor, saved;
	char next[32], flash[64];
	size_t i;
	int r;

	cursor = web_q_cursor(x);
	v.tree = web_q(x, "tree");
	v.host = web_q(x, "host");
	v.bench = web_q(x, "bench");
	v.state = state_filter(x);
	r = store_regression_list(x->s, &l,
	    &(struct store_regressions_q){ .tree = v.tree,
	        .host = v.host,
	        .bench = v.bench,
	        .state = v.state,
	        .limit = PAGE_ROWS,
	        .cursor = cursor });
	if (r != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		const struct store_regression *o = &l.v[i];
		struct view_regression *g = &rows[i];

		g->id = o->id;
		g->tree = o->tree;
		g->branch = o->branches;
		g->commit = o->sha;
		g->subject = o->subject;
		g->pair_id = o->pair_id;
		g->host = o->host;
		g->bench = o->bench;
		g->point = o->point;
		g->metric = o->metric;
		g->change_pct = o->change_pct;
		g->verdict = o->verdict;
		g->state = o->state;
		g->note = o->note;
		g->created = o->created;
		g->updated = o->updated;
		g->bisect_id = o->bisect_id;
		g->bisect_state = o->bisect_state;
		g->culprit = o->culprit;
		g->suspect = o->suspect;
		g->series_id = o->series_id;
	}
	v.rows = rows;
	v.nrows = l.n;
	v.partial = l.capped;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	v.session.admin = x->admin;
	v.session.csrf = x->admin ? x->csrf : NULL;
	if (web_q_int(x, &saved, "saved", 0, 0, INT64_MAX) == 0 && saved) {
		snprintf(flash, sizeof(flash), "Regression %lld saved.",
		    (long long)saved);
		v.flash = flash;
	}
	view_regressions_render(&b, &v);
	free(rows);
	store_regressions_release(&l);
	reply_page(x, 200, &b);
}

int
web_regressions_doc(struct store *s, json_t **out, const char *tree,
    const char *host, const char *bench, const char *state, int64_t limit,
    int64_t cursor)
{
	struct store_regressions l;
	int r;

	*out = NULL;
	r = store_regression_list(s, &l,
	    &(struct store_regressions_q){ .tree = tree,
	        .host = host,
	        .bench = bench,
	        .state = state,
	        .limit = limit,
	        .cursor = cursor });
	if (r != 0)
		return r;
	*out = rows_regressions_json(&l);
	store_regressions_release(&l);
	return 0;
}

void
web_regressions_json(struct ctx *x)
{
	json_t *out = NULL;
	int64_t limit, cursor;
	int r;

	if (web_q_int(x, &limit, "limit", PAGE_ROWS, 1, PAGE_MAX) == -1 ||
	    web_q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1) {
		reply_err(x, 400,
		    "parameters 'limit' (1..500) and 'cursor' take integers");
		return;
	}
	if (web_q(x, "state") && state_filter(x) == NULL) {
		reply_err(x, 400,
		    "parameter 'state': expected new, acknowledged, invalid or "
		    "fixed");
		return;
	}
	r = web_regressions_doc(x->s, &out, web_q(x, "tree"), web_q(x, "host"),
	    web_q(x, "bench"), state_filter(x), limit, cursor);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

/* "/regressions/ID/triage" -> ID, else 0. */
static int64_t
triage_id(const char *rest)
{
	const char *end;
	int64_t id = web_parse_id(rest, &end);

	return id && strcmp(end, "/triage") == 0 ? id : 0;
}

void
web_triage(struct ctx *x)
{
	struct buf state = BUF_INIT(64), note = BUF_INIT(FORM_FIELD_MAX);
	int64_t id = triage_id(x->rest);
	char loc[96];
	int r;

	if (id == 0) {
		reply_message(x, 404, "Not found", "no such page");
		goto out;
	}
	if (web_form(x, "state", &state) != 0 || buf_failed(&state) ||
	    buf_failed(&note)) {
		reply_message(
		    x, 400, "Bad request", "form field 'state' needed");
		goto out;
	}
	if (web_form(x, "note", &note) != 0)
		buf_reset(&note);
	if (buf_failed(&note) || note.len > 1000) {
		reply_message(
		    x, 400, "Bad request", "note: at most 1000 bytes");
		goto out;
	}
	r = store_regression_triage(
	    x->s, id, state.data, note.len ? note.data : NULL, x->now);
	if (r != 0) {
		reply_page_store_err(x, r);
		goto out;
	}
	snprintf(loc, sizeof(loc), "/regressions?saved=%lld#r%lld",
	    (long long)id, (long long)id);
	web_redirect(x, loc);
out:
	buf_release(&state);
	buf_release(&note);
}

void
web_triage_json(struct ctx *x)
{
	static const char *const keys[] = { "state", "note", NULL };
	const char *state = NULL, *note = NULL, *body;
	struct err e = { 0 };
	json_t *o;
	int64_t id = triage_id(x->rest);
	size_t len;
	int r;

	if (id == 0) {
		reply_err(x, 404, "expected /api/v1/regressions/ID/triage");
		return;
	}
	body = httpd_body(x->r, &len);
	if ((o = pwjson_parse(body, len, &e)) == NULL) {
		reply_err(x, 400, "%s", err_msg(&e));
		return;
	}
	if (!json_is_object(o) || pwjson_only_keys(o, keys, "body", &e) == -1 ||
	    pwjson_str(&state, o, "state", &e) == -1 ||
	    pwjson_str_opt(&note, o, "note", &e) == -1) {
		reply_err(x, 400, "%s",
		    err_msg(&e)[0] ? err_msg(&e) : "expected a JSON object");
		json_decref(o);
		return;
	}
	if (note && strlen(note) > 1000) {
		reply_err(x, 400, "field 'note': at most 1000 bytes");
		json_decref(o);
		return;
	}
	if ((r = store_regression_triage(x->s, id, state, note, x->now)) != 0)
		reply_store_err(x, r);
	else
		reply_json(x, 200,
		    json_pack(
		        "{s:I, s:s}", "id", (json_int_t)id, "state", state));
	json_decref(o);
}
