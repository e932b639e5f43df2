/*
 * The JSON of the dashboard's typed reads (web/rows_dash.h).  The keys
 * and values are the API's (docs/API.md), fixed by a golden file:
 * tests/unit/web_test.c compares the bytes with
 * tests/data/web/dash.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/redact.h"
#include "store/bisect.h"
#include "store/dash.h"
#include "web/rows_dash.h"

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A string of a public reply that may hold a URL with credentials. */
static json_t *
redacted_or_null(const char *s)
{
	char *r = redact_userinfo(s);
	json_t *o = str_or_null(r);

	free(r);
	return o;
}

static json_t *
time_or_null(int has, int64_t t)
{
	return has ? json_integer(t) : json_null();
}

static json_t *
id_or_null(int64_t id)
{
	return id > 0 ? json_integer(id) : json_null();
}

/* {key: arr, "next_cursor": "N"}, without next_cursor when next is 0. */
static json_t *
page_json(const char *key, json_t *arr, int64_t next)
{
	json_t *o = json_pack("{s:o}", key, arr);
	char c[32];

	if (next != 0) {
		snprintf(c, sizeof(c), "%lld", (long long)next);
		json_object_set_new(o, "next_cursor", json_string(c));
	}
	return o;
}

/* The pieces of t between each sep, the empty ones left out. */
static json_t *
split(const char *t, char sep)
{
	json_t *arr = json_array();

	while (t != NULL && *t) {
		const char *e = strchr(t, sep);
		size_t len = e ? (size_t)(e - t) : strlen(t);

		if (len > 0)
			json_array_append_new(arr, json_stringn(t, len));
		t = e ? e + 1 : NULL;
	}
	return arr;
}

static json_t *
branch_json(const struct store_tree_branch *b)
{
	json_t *o = json_object();

	json_object_set_new(o, "branch", str_or_null(b->branch));
	json_object_set_new(o, "tip", str_or_null(b->tip));
	json_object_set_new(
	    o, "updated", time_or_null(b->has_updated, b->updated));
	json_object_set_new(o, "state", str_or_null(b->state));
	json_object_set_new(o, "error", redacted_or_null(b->error));
	json_object_set_new(o, "rewrites", json_integer(b->rewrites));
	json_object_set_new(o, "last_rewrite", str_or_null(b->last_rewrite));
	json_object_set_new(o, "commits", json_integer(b->commits));
	return o;
}

json_t *
rows_trees_json(const struct store_trees *l)
{
	json_t *arr = json_array();
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		const struct store_tree *t = &l->v[i];
		json_t *o = json_object(), *bs = json_array();

		json_object_set_new(o, "name", str_or_null(t->name));
		json_object_set_new(o, "url", redacted_or_null(t->url));
		json_object_set_new(o, "last_fetch",
		    time_or_null(t->has_last_fetch, t->last_fetch));
		json_object_set_new(
		    o, "last_ok", time_or_null(t->has_last_ok, t->last_ok));
		json_object_set_new(
		    o, "last_error", redacted_or_null(t->last_error));
		json_object_set_new(o, "failures", json_integer(t->failures));
		json_object_set_new(o, "next_fetch",
		    time_or_null(t->has_next_fetch, t->next_fetch));
		json_object_set_new(o, "commits", json_integer(t->commits));
		for (k = 0; k < t->nbranches; k++)
			json_array_append_new(bs, branch_json(&t->branches[k]));
		json_object_set_new(o, "branches", bs);
		json_array_append_new(arr, o);
	}
	return json_pack("{s:o}", "trees", arr);
}

json_t *
rows_commits_json(const struct store_commits *l)
{
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct store_commit_row *c = &l->v[i];

		o = json_object();
		json_object_set_new(o, "id", json_integer(c->id));
		json_object_set_new(o, "sha", str_or_null(c->sha));
		json_object_set_new(o, "tree", str_or_null(c->tree));
		json_object_set_new(o, "subject", str_or_null(c->subject));
		json_object_set_new(o, "author", str_or_null(c->author));
		json_object_set_new(o, "author_date",
		    time_or_null(c->has_author_date, c->author_date));
		json_object_set_new(o, "committer", str_or_null(c->committer));
		json_object_set_new(o, "commit_date",
		    time_or_null(c->has_commit_date, c->commit_date));
		json_object_set_new(o, "parents", split(c->parents, ' '));
		json_object_set_new(o, "branches", split(c->branches, ','));
		json_object_set_new(
		    o, "paths", pwjson_doc(c->paths_json, json_array()));
		json_object_set_new(
		    o, "first_seen", json_integer(c->first_seen));
		json_array_append_new(arr, o);
	}
	return page_json("commits", arr, l->next_cursor);
}

json_t *
rows_commit_page_json(const struct store_commit_page *c)
{
	json_t *o = json_object(), *pairs = json_array();
	size_t i;

	json_object_set_new(o, "id", json_integer(c->id));
	json_object_set_new(o, "sha", str_or_null(c->sha));
	json_object_set_new(o, "subject", str_or_null(c->subject));
	json_object_set_new(o, "author", str_or_null(c->author));
	json_object_set_new(o, "time", time_or_null(c->has_time, c->time));
	json_object_set_new(o, "tree", str_or_null(c->tree));
	json_object_set_new(o, "branches", str_or_null(c->branches));
	json_object_set_new(o, "parents", str_or_null(c->parents));
	for (i = 0; i < c->npairs; i++)
		json_array_append_new(pairs, json_integer(c->pairs[i]));
	return json_pack("{s:o, s:o, s:o}", "commit", o, "pairs", pairs,
	    "series",
	    c->series_id
	        ? json_pack("{s:I, s:o}", "id", (json_int_t)c->series_id,
	              "title", str_or_null(c->series_title))
	        : json_null());
}

static json_t *
regression_json(const struct store_regression *g)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(g->id));
	json_object_set_new(o, "state", str_or_null(g->state));
	json_object_set_new(o, "note", str_or_null(g->note));
	json_object_set_new(o, "created", json_integer(g->created));
	json_object_set_new(o, "updated", json_integer(g->updated));
	json_object_set_new(o, "metric", str_or_null(g->metric));
	json_object_set_new(o, "change_pct",
	    isnan(g->change_pct) ? json_null() : json_real(g->change_pct));
	json_object_set_new(o, "verdict", str_or_null(g->verdict));
	json_object_set_new(o, "pair_id", json_integer(g->pair_id));
	json_object_set_new(o, "bench", str_or_null(g->bench));
	json_object_set_new(o, "point", str_or_null(g->point));
	json_object_set_new(o, "host", str_or_null(g->host));
	json_object_set_new(o, "sha", str_or_null(g->sha));
	json_object_set_new(o, "subject", str_or_null(g->subject));
	json_object_set_new(o, "tree", str_or_null(g->tree));
	json_object_set_new(o, "branches", str_or_null(g->branches));
	json_object_set_new(o, "bisect_id", id_or_null(g->bisect_id));
	json_object_set_new(o, "bisect_state", str_or_null(g->bisect_state));
	json_object_set_new(o, "culprit", str_or_null(g->culprit));
	json_object_set_new(
	    o, "culprit_subject", str_or_null(g->culprit_subject));
	json_object_set_new(o, "verify_parent", str_or_null(g->verify_parent));
	json_object_set_new(o, "verify_revert", str_or_null(g->verify_revert));
	json_object_set_new(o, "bisect_reason", str_or_null(g->bisect_reason));
	json_object_set_new(o, "suspect", str_or_null(g->suspect));
	json_object_set_new(o, "series_id", id_or_null(g->series_id));
	return o;
}

json_t *
rows_regressions_json(const struct store_regressions *l)
{
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(arr, regression_json(&l->v[i]));
	o = page_json("regressions", arr, l->next_cursor);
	if (l->capped)
		json_object_set_new(o, "partial", json_true());
	return o;
}

/* ---- bisections ---- */

static json_t *
finite_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
step_json(const struct store_bisect_step *v)
{
	return json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	                 "s:o, s:o, s:I}",
	    "id", (json_int_t)v->id, "kind", v->kind, "sha", v->sha, "subject",
	    str_or_null(v->subject), "good_pair", id_or_null(v->good_pair),
	    "bad_pair", id_or_null(v->bad_pair), "class", str_or_null(v->cls),
	    "vs_good", str_or_null(v->vs_good), "vs_good_pct",
	    finite_or_null(v->vs_good_pct), "vs_bad", str_or_null(v->vs_bad),
	    "vs_bad_pct", finite_or_null(v->vs_bad_pct), "note",
	    str_or_null(v->note), "updated", (json_int_t)v->updated);
}

json_t *
rows_bisect_steps_json(const struct store_bisect_step *steps, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, step_json(&steps[i]));
	return arr;
}

json_t *
rows_bisect_json(const struct store_bisect *b)
{
	int cp = b->origin && strcmp(b->origin, "change-point") == 0;
	json_t *o = json_pack("{s:I, s:I, s:s, s:o, s:s, s:s, s:o, s:s, "
	                      "s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	                      "s:o, s:s, s:I, s:I, s:b, s:I, s:I}",
	    "id", (json_int_t)b->id, "pair", (json_int_t)b->pair_id, "job",
	    b->job, "host", str_or_null(b->host), "point", b->point, "metric",
	    b->metric, "tree", str_or_null(b->tree), "good", b->good_sha, "bad",
	    b->bad_sha, "state", b->state, "lo", str_or_null(b->lo_sha), "hi",
	    str_or_null(b->hi_sha), "culprit", str_or_null(b->culprit_sha),
	    "culprit_subject", str_or_null(b->culprit_subject), "reason",
	    str_or_null(b->reason), "verify_parent",
	    str_or_null(b->verify_parent), "verify_revert",
	    str_or_null(b->verify_revert), "revert_commit",
	    str_or_null(b->revert_sha), "started_by", b->started_by,
	    "steps_limit", (json_int_t)b->steps_limit, "max_inconclusive",
	    (json_int_t)b->max_inconclusive, "full_dag", b->full_dag, "created",
	    (json_int_t)b->created, "updated", (json_int_t)b->updated);
	if (o == NULL)
		return NULL;
	/* Where it started: a regression row, or a change point (its id
	 * when started, its commit, branch and change). */
	json_object_set_new(o, "regression", id_or_null(b->regression_id));
	json_object_set_new(
	    o, "origin", json_string(cp ? "change-point" : "regression"));
	json_object_set_new(o, "change_point",
	    cp ? json_pack("{s:o, s:o, s:o, s:o}", "id",
	             id_or_null(b->change_point_id), "sha",
	             str_or_null(b->origin_sha), "branch",
	             str_or_null(b->branch), "change_pct",
	             finite_or_null(b->origin_pct))
	       : json_null());
	return o;
}

json_t *
rows_bisects_json(const struct store_bisects *l)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(arr, rows_bisect_json(&l->v[i]));
	return page_json("bisections", arr, l->next_cursor);
}
