/*
 * The store: the typed reads of the dashboard and the read API
 * (store_dash.h).  All SQL is in daemon/store*.c (docs/ARCHITECTURE.md).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "daemon/store.h"
#include "daemon/store_dash.h"
#include "daemon/store_int.h"

/* Column i as a time that may be NULL: *has, and the value (0). */
static int64_t
col_time(sqlite3_stmt *st, int i, int *has)
{
	*has = sqlite3_column_type(st, i) != SQLITE_NULL;
	return sqlite3_column_int64(st, i);
}

/* ---- trees ---- */

static void
branch_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_tree_branch *b = row;

	(void)arg;
	b->branch = store_i_web_text(st, 0);
	b->tip = store_i_web_text(st, 1);
	b->updated = col_time(st, 2, &b->has_updated);
	b->state = store_i_web_text(st, 3);
	b->error = store_i_web_text(st, 4);
	b->rewrites = sqlite3_column_int64(st, 5);
	b->last_rewrite = store_i_web_text(st, 6);
}

static void
tree_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_tree *t = row;

	(void)arg;
	t->id = sqlite3_column_int64(st, 0);
	t->name = store_i_web_text(st, 1);
	t->url = store_i_web_text(st, 2);
	t->last_fetch = col_time(st, 3, &t->has_last_fetch);
	t->last_ok = col_time(st, 4, &t->has_last_ok);
	t->last_error = store_i_web_text(st, 5);
	t->failures = sqlite3_column_int64(st, 6);
	t->next_fetch = col_time(st, 7, &t->has_next_fetch);
	t->commits = sqlite3_column_int64(st, 8);
}

int
store_trees_get(struct store *s, struct store_trees *out)
{
	sqlite3_stmt *st = store_i_prep(s,
	    "SELECT id, name, url, last_fetch, last_ok, last_error,"
	    " failures, next_fetch,"
	    " (SELECT count(*) FROM commits c WHERE c.tree_id = t.id"
	    "  AND c.first_seen IS NOT NULL)"
	    " FROM trees t ORDER BY name");
	void *v;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	r = store_i_rows(
	    s, st, &v, &out->n, sizeof(*out->v), tree_scan, NULL, "trees");
	out->v = v;
	for (i = 0; r == 0 && i < out->n; i++) {
		struct store_tree *t = &out->v[i];

		st = store_i_prep(s,
		    "SELECT branch, tip, updated, state, error, rewrites,"
		    " last_rewrite FROM tree_branches WHERE tree_id = ?1"
		    " ORDER BY branch");
		if (st == NULL) {
			r = -1;
			break;
		}
		sqlite3_bind_int64(st, 1, t->id);
		r = store_i_rows(s, st, &v, &t->nbranches, sizeof(*t->branches),
		    branch_scan, NULL, "branches");
		t->branches = v;
	}
	if (r != 0)
		store_trees_release(out);
	return r;
}

void
store_trees_release(struct store_trees *l)
{
	size_t i, k;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_tree *t = &l->v[i];

		for (k = 0; k < t->nbranches; k++) {
			free(t->branches[k].branch);
			free(t->branches[k].tip);
			free(t->branches[k].state);
			free(t->branches[k].error);
			free(t->branches[k].last_rewrite);
		}
		free(t->branches);
		free(t->name);
		free(t->url);
		free(t->last_error);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- commits ---- */

static void
commit_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_commit_row *c = row;

	(void)arg;
	c->id = sqlite3_column_int64(st, 0);
	c->sha = store_i_web_text(st, 1);
	c->tree = store_i_web_text(st, 2);
	c->subject = store_i_web_text(st, 3);
	c->author = store_i_web_text(st, 4);
	c->author_date = col_time(st, 5, &c->has_author_date);
	c->committer = store_i_web_text(st, 6);
	c->commit_date = col_time(st, 7, &c->has_commit_date);
	c->parents = store_i_web_text(st, 8);
	c->branches = store_i_web_text(st, 9);
	c->paths_json = store_i_web_text(st, 10);
	c->first_seen = sqlite3_column_int64(st, 11);
}

int
store_commits_get(struct store *s, struct store_commits *out, const char *tree,
    const char *branch, int64_t limit, int64_t cursor)
{
	sqlite3_stmt *st = store_i_prep(s,
	    "SELECT c.id, c.sha, t.name, c.subject, c.author,"
	    " c.author_date, c.committer, c.commit_date, c.parents,"
	    " c.branches, c.paths, c.first_seen"
	    " FROM commits c JOIN trees t ON t.id = c.tree_id"
	    " WHERE (?1 IS NULL OR t.name = ?1)"
	    " AND (?2 IS NULL OR instr(',' || c.branches || ',',"
	    "  ',' || ?2 || ',') > 0)"
	    " AND (?3 = 0 OR c.id < ?3) AND c.first_seen IS NOT NULL"
	    " ORDER BY c.id DESC LIMIT ?4");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, tree);
	store_i_bind_text(st, 2, branch);
	sqlite3_bind_int64(st, 3, cursor);
	sqlite3_bind_int64(st, 4, limit);
	r = store_i_rows(
	    s, st, &v, &out->n, sizeof(*out->v), commit_scan, NULL, "commits");
	out->v = v;
	if (r != 0) {
		store_commits_release(out);
		return r;
	}
	if (out->n > 0 && (int64_t)out->n == limit)
		out->next_cursor = out->v[out->n - 1].id;
	return 0;
}

void
store_commits_release(struct store_commits *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_commit_row *c = &l->v[i];

		free(c->sha);
		free(c->tree);
		free(c->subject);
		free(c->author);
		free(c->committer);
		free(c->parents);
		free(c->branches);
		free(c->paths_json);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
