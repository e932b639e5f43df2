/*
 * The store: patch series and inboxes (daemon/series.c); more in
 * store/series2.c. All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/series_rows.h"
#include "store/store.h"
#include "store/store_int.h"

/* ---- series (daemon/series.c) ---- */

int
store_series_create(struct store *s, int64_t *out_id, int *out_new,
    const struct store_series_new *n, int64_t now)
{
	sqlite3_stmt *st;
	int ok, rc;
	int64_t id = 0;

	*out_id = 0;
	if (out_new != NULL)
		*out_new = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "SELECT id FROM series WHERE message_id = ?1");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, n->message_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else if (rc != SQLITE_DONE)
			ok = store_i_dberr(s, "series lookup") == 0;
		store_i_release(s, st);
	}
	if (ok && id == 0) {
		st = store_i_stmt(s,
		    "INSERT INTO series (inbox, message_id, title, version,"
		    " total, found, author, date, tree_id, branch, state,"
		    " created, updated)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'new',"
		    " ?11, ?11)");
		if ((ok = st != NULL)) {
			store_i_bind_text(st, 1, n->inbox);
			store_i_bind_text(st, 2, n->message_id);
			store_i_bind_text(st, 3, n->title);
			sqlite3_bind_int64(st, 4, n->version);
			sqlite3_bind_int64(st, 5, n->total);
			sqlite3_bind_int64(st, 6, n->found);
			store_i_bind_text(st, 7, n->author);
			if (n->date >= 0)
				sqlite3_bind_int64(st, 8, n->date);
			if (n->tree_id > 0)
				sqlite3_bind_int64(st, 9, n->tree_id);
			store_i_bind_text(st, 10, n->branch);
			sqlite3_bind_int64(st, 11, now);
			ok = store_i_step_done(s, st, "series insert") == 0;
			id = sqlite3_last_insert_rowid(s->db);
			store_i_release(s, st);
		}
		if (ok && out_new != NULL)
			*out_new = 1;
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	*out_id = id;
	return 0;
}

int
store_series_patch_put(
    struct store *s, int64_t series_id, const struct store_series_patch *p)
{
	sqlite3_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO series_patches (series_id, seq, message_id,"
	    " subject, author, date, commit_id)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT (series_id, seq) DO UPDATE SET"
	    " message_id = excluded.message_id, subject = excluded.subject,"
	    " author = excluded.author, date = excluded.date,"
	    " commit_id = excluded.commit_id");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, series_id);
		sqlite3_bind_int64(st, 2, p->seq);
		store_i_bind_text(st, 3, p->message_id);
		store_i_bind_text(st, 4, p->subject);
		store_i_bind_text(st, 5, p->author);
		if (p->date >= 0)
			sqlite3_bind_int64(st, 6, p->date);
		if (p->commit_id > 0)
			sqlite3_bind_int64(st, 7, p->commit_id);
		ok = store_i_step_done(s, st, "series patch") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_series_state(struct store *s, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE series SET state = ?2, error = ?3,"
	    " base_sha = coalesce(?4, base_sha),"
	    " commit_id = CASE WHEN ?5 > 0 THEN ?5 ELSE commit_id END,"
	    " ref = coalesce(?6, ref), updated = ?7 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, id);
		store_i_bind_text(st, 2, state);
		store_i_bind_text(st, 3, error);
		store_i_bind_text(st, 4, base_sha);
		sqlite3_bind_int64(st, 5, commit_id);
		store_i_bind_text(st, 6, ref);
		sqlite3_bind_int64(st, 7, now);
		ok = store_i_step_done(s, st, "series state") == 0;
		if (ok && sqlite3_changes(s->db) == 0)
			ok = err_setc(&s->err, ERR_NOTFOUND,
			         "series %lld not found", (long long)id) == 0;
		store_i_release(s, st);
	}
	if (!ok && s->err.set && strstr(err_msg(&s->err), "not found")) {
		store_i_tx_end(s, 0);
		return ERR_NOTFOUND;
	}
	return store_i_tx_end(s, ok);
}

#define SERIES_COLS                                                       \
	"se.id, se.inbox, se.message_id, se.title, se.version, se.total," \
	" se.found, se.author, se.date AS time, se.state, se.error,"      \
	" t.name AS tree, se.branch, se.base_sha, se.ref, se.commit_id,"  \
	" c.sha AS commit_sha, se.created, se.updated,"                   \
	" se.branch_tag, se.supersedes, se.fallback,"                     \
	" (SELECT group_concat(cm.verdict) FROM jobs j"                   \
	"  JOIN pairs p ON p.cand_job_id = j.id AND p.bisect_id IS NULL"  \
	"  JOIN comparisons cm ON cm.pair_id = p.id"                      \
	"  WHERE j.commit_id = se.commit_id AND j.role = 'candidate'"     \
	"  AND (se.base_sha IS NULL OR (SELECT bc.sha FROM jobs bj"       \
	"   JOIN commits bc ON bc.id = bj.commit_id"                      \
	"   WHERE bj.id = p.base_job_id) = se.base_sha)) AS verdicts"     \
	" FROM series se LEFT JOIN trees t ON t.id = se.tree_id"          \
	" LEFT JOIN commits c ON c.id = se.commit_id"

static int64_t
col_int_or(sqlite3_stmt *st, int i, int64_t none)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL
	    ? none
	    : sqlite3_column_int64(st, i);
}

static int
col_has(sqlite3_stmt *st, int i, int64_t *out)
{
	*out = sqlite3_column_int64(st, i);
	return sqlite3_column_type(st, i) != SQLITE_NULL;
}

/* A row of SERIES_COLS. */
static void
series_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_series_row *r = row;

	(void)arg;
	r->id = sqlite3_column_int64(st, 0);
	r->inbox = store_i_web_text(st, 1);
	r->message_id = store_i_web_text(st, 2);
	r->title = store_i_web_text(st, 3);
	r->version = col_int_or(st, 4, -1);
	r->total = col_int_or(st, 5, -1);
	r->found = col_int_or(st, 6, -1);
	r->author = store_i_web_text(st, 7);
	r->has_time = col_has(st, 8, &r->time);
	r->state = store_i_web_text(st, 9);
	r->error = store_i_web_text(st, 10);
	r->tree = store_i_web_text(st, 11);
	r->branch = store_i_web_text(st, 12);
	r->base_sha = store_i_web_text(st, 13);
	r->ref = store_i_web_text(st, 14);
	r->commit_id = col_int_or(st, 15, 0);
	r->commit_sha = store_i_web_text(st, 16);
	r->has_created = col_has(st, 17, &r->created);
	r->has_updated = col_has(st, 18, &r->updated);
	r->branch_tag = store_i_web_text(st, 19);
	r->supersedes = col_int_or(st, 20, 0);
	r->fallback = store_i_web_text(st, 21);
	r->verdicts = store_i_web_text(st, 22);
}

void
store_i_series_scan_web(struct store_series_row *r, sqlite3_stmt *st)
{
	r->id = sqlite3_column_int64(st, 0);
	r->inbox = store_i_web_text(st, 1);
	r->title = store_i_web_text(st, 2);
	r->version = col_int_or(st, 3, -1);
	r->total = col_int_or(st, 4, -1);
	r->author = store_i_web_text(st, 5);
	r->has_time = col_has(st, 6, &r->time);
	r->state = store_i_web_text(st, 7);
	r->error = store_i_web_text(st, 8);
	r->commit_id = col_int_or(st, 9, 0);
	r->commit_sha = store_i_web_text(st, 10);
	r->base_sha = store_i_web_text(st, 11);
	r->branch = store_i_web_text(st, 12);
	r->found = col_int_or(st, 13, -1);
	r->tree = store_i_web_text(st, 14);
	r->branch_tag = store_i_web_text(st, 15);
	r->supersedes = col_int_or(st, 16, 0);
	r->fallback = store_i_web_text(st, 17);
}

void
store_series_release(struct store_series_row *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->npatches; i++) {
		struct store_series_patch_row *p = &r->patches[i];

		free(p->message_id);
		free(p->subject);
		free(p->author);
		free(p->sha);
		free(p->applied_by);
		free(p->verdicts);
	}
	free(r->patches);
	free(r->pairs);
	free(r->inbox);
	free(r->message_id);
	free(r->title);
	free(r->author);
	free(r->state);
	free(r->error);
	free(r->tree);
	free(r->branch);
	free(r->base_sha);
	free(r->ref);
	free(r->commit_sha);
	free(r->branch_tag);
	free(r->fallback);
	free(r->verdicts);
	memset(r, 0, sizeof(*r));
}

void
store_series_list_release(struct store_series_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		store_series_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
store_series_list(struct store *s, struct store_series_list *out, int64_t limit,
    int64_t cursor)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT " SERIES_COLS " WHERE se.id < ?1"
	    " ORDER BY se.id DESC LIMIT ?2");
	void *v = NULL;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, store_i_below(cursor));
	sqlite3_bind_int64(st, 2, limit);
	if (store_i_rows(s, st, &v, &out->n, sizeof(*out->v), series_scan, NULL,
	        "series") != 0) {
		out->v = v;
		store_series_list_release(out);
		return -1;
	}
	out->v = v;
	out->next_cursor = store_i_next_cursor(
	    out->n, limit, out->n ? out->v[out->n - 1].id : 0, STORE_I_DESC);
	return 0;
}

/* The patch rows of a series, by seq, with their commits. */
/* A patch's verdicts against its parent (trigger.every_patch): pairs
 * whose candidate is the patch and whose base is the previous patch, or
 * the series base for patch 1. */
#define PATCH_VERDICTS                                                \
	"(SELECT group_concat(cm.verdict) FROM jobs cj"               \
	" JOIN pairs pr ON pr.cand_job_id = cj.id"                    \
	"  AND pr.bisect_id IS NULL"                                  \
	" JOIN jobs bj ON bj.id = pr.base_job_id"                     \
	" JOIN comparisons cm ON cm.pair_id = pr.id"                  \
	" WHERE cj.commit_id = p.commit_id AND cj.role = 'candidate'" \
	" AND bj.commit_id = COALESCE((SELECT pp.commit_id"           \
	"  FROM series_patches pp WHERE pp.series_id = p.series_id"   \
	"  AND pp.seq = p.seq - 1), (SELECT bc.id FROM series se"     \
	"  JOIN commits bc ON bc.sha = se.base_sha"                   \
	"  WHERE se.id = p.series_id))) AS verdicts"

static void
patch_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_series_patch_row *p = row;

	(void)arg;
	p->seq = sqlite3_column_int64(st, 0);
	p->message_id = store_i_web_text(st, 1);
	p->subject = store_i_web_text(st, 2);
	p->author = store_i_web_text(st, 3);
	p->has_date = col_has(st, 4, &p->date);
	p->commit_id = col_int_or(st, 5, 0);
	p->sha = store_i_web_text(st, 6);
	p->applied_by = store_i_web_text(st, 7);
	p->verdicts = store_i_web_text(st, 8);
}

int
store_i_series_patches(
    struct store *s, struct store_series_row *out, int64_t id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.seq, p.message_id, p.subject, p.author, p.date,"
	    " p.commit_id, c.sha, p.applied_by, " PATCH_VERDICTS
	    " FROM series_patches p"
	    " LEFT JOIN commits c ON c.id = p.commit_id"
	    " WHERE p.series_id = ?1 ORDER BY p.seq");
	void *v = NULL;
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	r = store_i_rows(s, st, &v, &out->npatches, sizeof(*out->patches),
	    patch_scan, NULL, "series patches");
	out->patches = v;
	return r;
}

int
store_series_get(struct store *s, struct store_series_row *out, int64_t id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "SELECT " SERIES_COLS " WHERE se.id = ?1");

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		store_i_release(s, st);
		return err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	}
	series_scan(out, st, NULL);
	store_i_release(s, st);
	if (store_i_series_patches(s, out, id) != 0) {
		store_series_release(out);
		return -1;
	}
	return 0;
}

int
store_inbox_get(
    struct store *s, char *out_last, size_t outlen, const char *name)
{
	sqlite3_stmt *st = store_i_stmt(
	    s, "SELECT last_commit FROM inbox_state WHERE name = ?1");
	int rc;

	out_last[0] = '\0';
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && store_i_col_text(st, 0) != NULL)
		snprintf(out_last, outlen, "%s", store_i_col_text(st, 0));
	store_i_release(s, st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_i_dberr(s, "inbox state");
	return 0;
}

int
store_inbox_put(struct store *s, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO inbox_state (name, url, last_commit, last_poll,"
	    " last_error, messages) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT (name) DO UPDATE SET url = excluded.url,"
	    " last_commit = coalesce(excluded.last_commit, last_commit),"
	    " last_poll = excluded.last_poll,"
	    " last_error = excluded.last_error,"
	    " messages = messages + excluded.messages");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, url);
		store_i_bind_text(st, 3, last_commit);
		sqlite3_bind_int64(st, 4, now);
		store_i_bind_text(st, 5, error);
		sqlite3_bind_int64(st, 6, messages);
		ok = store_i_step_done(s, st, "inbox state") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}
