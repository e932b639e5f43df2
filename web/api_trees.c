/*
 * The public reads of what the watcher fetched (docs/API.md): the trees,
 * joined with the configuration, and the commits it recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/jobspec.h"
#include "store/dash.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/rows_dash.h"

/*
 * Trees: what the store knows, joined with the configuration (trees
 * configured but never polled yet are listed too).  status: "pending"
 * (not fetched yet), "ok", "warning" (fetched, but a branch or trigger has
 * a problem: last_error says which), "error" (the last fetch failed),
 * "unwatched" (no longer in the configuration).
 */
static int
tree_cmp(const void *a, const void *b)
{
	return strcmp(
	    json_string_value(json_object_get(*(json_t *const *)a, "name")),
	    json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

/*
 * One page of trees, by name: the names after cursor (a name; NULL from
 * the first), at most limit, and next_cursor when more follow.
 */
static json_t *
trees_page(json_t *arr, const char *cursor, int64_t limit)
{
	size_t n = json_array_size(arr), i, k = 0;
	json_t **v = xcalloc(n + 1, sizeof(*v)), *page = json_array(), *o;

	for (i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, n, sizeof(*v), tree_cmp);
	for (i = 0; i < n && (int64_t)k < limit; i++) {
		if (cursor != NULL &&
		    strcmp(json_string_value(json_object_get(v[i], "name")),
		        cursor) <= 0)
			continue;
		json_array_append(page, v[i]);
		k++;
	}
	o = json_pack("{s:o}", "trees", page);
	if (i < n && k > 0)
		json_object_set(
		    o, "next_cursor", json_object_get(v[i - 1], "name"));
	free(v);
	return o;
}

int
api_trees_json(struct store *s, const struct daemon_config *dc,
    const char *cursor, int64_t limit, json_t **out)
{
	struct store_trees l;
	json_t *all, *arr, *t = NULL;
	size_t i, k;
	int r;

	*out = NULL;
	if ((r = store_tree_list(s, &l)) != 0)
		return r;
	all = rows_trees_json(&l);
	store_trees_release(&l);
	arr = json_object_get(all, "trees");
	for (i = 0; i < dc->ntrees; i++) {
		json_array_foreach(arr, k, t)
		{
			if (strcmp(
			        json_string_value(json_object_get(t, "name")),
			        dc->trees[i].name) == 0)
				break;
		}
		if (k == json_array_size(arr)) {
			char *url = redact_userinfo(dc->trees[i].url);

			t = json_pack("{s:s, s:s, s:n, s:n, s:n, s:i, s:n, "
			              "s:i, s:[]}",
			    "name", dc->trees[i].name, "url", url, "last_fetch",
			    "last_ok", "last_error", "failures", 0,
			    "next_fetch", "commits", 0, "branches");
			free(url);
			json_array_append_new(arr, t);
		}
		json_object_set_new(t, "watched", json_true());
		json_object_set_new(
		    t, "poll_s", json_integer(dc->trees[i].poll_s));
		json_object_set_new(t, "watched_branches",
		    jobspec_strlist(&dc->trees[i].branches));
		json_object_set_new(
		    t, "paths", jobspec_strlist(&dc->trees[i].paths));
	}
	json_array_foreach(arr, k, t)
	{
		json_t *lf = json_object_get(t, "last_fetch");
		json_t *lo = json_object_get(t, "last_ok");
		const char *st;

		if (json_object_get(t, "watched") == NULL)
			json_object_set_new(t, "watched", json_false());
		if (!json_is_true(json_object_get(t, "watched")))
			st = "unwatched";
		else if (json_is_null(lf) || lf == NULL)
			st = "pending";
		else if (!json_is_integer(lo) ||
		    json_integer_value(lo) != json_integer_value(lf))
			st = "error";
		else if (!json_is_null(json_object_get(t, "last_error")))
			st = "warning";
		else
			st = "ok";
		json_object_set_new(t, "status", json_string(st));
	}
	*out = trees_page(arr, cursor, limit);
	json_decref(all);
	return 0;
}

void
api_read_trees(struct ctx *x)
{
	const char *cursor = httpd_query(x->r, "cursor");
	json_t *out = NULL;
	int64_t limit;
	int r;

	if (api_query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1)
		return;
	if (cursor != NULL && *cursor == '\0')
		cursor = NULL;
	if ((r = api_trees_json(x->s, x->conf->dc, cursor, limit, &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

int
api_commits_json(struct store *s, const char *tree, const char *branch,
    int64_t limit, int64_t cursor, json_t **out)
{
	struct store_commits l;
	int r;

	*out = NULL;
	if ((r = store_commit_list(s, &l, tree, branch, limit, cursor)) != 0)
		return r;
	*out = rows_commits_json(&l);
	store_commits_release(&l);
	return 0;
}

void
api_read_commits(struct ctx *x)
{
	const char *tree = httpd_query(x->r, "tree");
	const char *branch = httpd_query(x->r, "branch");
	int64_t limit, cursor;
	json_t *out = NULL;
	int r;

	if (tree != NULL && *tree == '\0')
		tree = NULL;
	if (branch != NULL && *branch == '\0')
		branch = NULL;
	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	r = api_commits_json(x->s, tree, branch, limit, cursor, &out);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}
