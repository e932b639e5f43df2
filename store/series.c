/*
 * Patch series and inboxes (daemon/series.c, daemon/watch.c): series and
 * their patches, branch tags, superseding versions, the 3-way fallback,
 * the upload queue, a tip's run values, and the typed reads of the series
 * API and page; patch mail waiting for the rest of its series is in
 * mail_pending.c.
 */
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
#include "store/series.h"
#include "store/store_int.h"

/* ---- series (daemon/series.c) ---- */

static int
series_create_once(struct store *s, int64_t *out_id, int *out_new,
    const struct store_series_new *n, int64_t now)
{
	struct db_stmt *st;
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
		if ((rc = db_step(st)) == DB_ROW)
			id = db_col_int64(st, 0);
		else if (rc != DB_DONE)
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
			db_bind_int64(st, 4, n->version);
			db_bind_int64(st, 5, n->total);
			db_bind_int64(st, 6, n->found);
			store_i_bind_text(st, 7, n->author);
			if (n->date >= 0)
				db_bind_int64(st, 8, n->date);
			if (n->tree_id > 0)
				db_bind_int64(st, 9, n->tree_id);
			store_i_bind_text(st, 10, n->branch);
			db_bind_int64(st, 11, now);
			ok = store_i_step_done(s, st, "series insert") == 0;
			id = db_last_id(s->db);
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
store_series_create(struct store *s, int64_t *out_id, int *out_new,
    const struct store_series_new *n, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, series_create_once(s, out_id, out_new, n, now));
	return rc;
}

static int
series_patch_put_once(
    struct store *s, int64_t series_id, const struct store_series_patch *p)
{
	struct db_stmt *st;
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
		db_bind_int64(st, 1, series_id);
		db_bind_int64(st, 2, p->seq);
		store_i_bind_text(st, 3, p->message_id);
		store_i_bind_text(st, 4, p->subject);
		store_i_bind_text(st, 5, p->author);
		if (p->date >= 0)
			db_bind_int64(st, 6, p->date);
		if (p->commit_id > 0)
			db_bind_int64(st, 7, p->commit_id);
		ok = store_i_step_done(s, st, "series patch") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_series_patch_put(
    struct store *s, int64_t series_id, const struct store_series_patch *p)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, series_patch_put_once(s, series_id, p));
	return rc;
}

static int
series_state_once(struct store *s, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE series SET state = ?2, error = ?3,"
	    " base_sha = coalesce(?4, base_sha),"
	    " commit_id = CASE WHEN ?5 > 0 THEN ?5 ELSE commit_id END,"
	    " ref = coalesce(?6, ref), updated = ?7 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, id);
		store_i_bind_text(st, 2, state);
		store_i_bind_text(st, 3, error);
		store_i_bind_text(st, 4, base_sha);
		db_bind_int64(st, 5, commit_id);
		store_i_bind_text(st, 6, ref);
		db_bind_int64(st, 7, now);
		ok = store_i_step_done(s, st, "series state") == 0;
		if (ok && db_changes(s->db) == 0)
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

int
store_series_state(struct store *s, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    series_state_once(
	        s, id, state, error, base_sha, commit_id, ref, now));
	return rc;
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
col_int_or(struct db_stmt *st, int i, int64_t none)
{
	return db_col_type(st, i) == DB_NULL ? none : db_col_int64(st, i);
}

static int
col_has(struct db_stmt *st, int i, int64_t *out)
{
	*out = db_col_int64(st, i);
	return db_col_type(st, i) != DB_NULL;
}

/* A row of SERIES_COLS. */
static void
series_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_series_row *r = row;

	(void)arg;
	r->id = db_col_int64(st, 0);
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
store_i_series_scan_web(struct store_series_row *r, struct db_stmt *st)
{
	r->id = db_col_int64(st, 0);
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
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT " SERIES_COLS " WHERE se.id < ?1"
	    " ORDER BY se.id DESC LIMIT ?2");
	void *v = NULL;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, store_i_below(cursor));
	db_bind_int64(st, 2, limit);
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
patch_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_series_patch_row *p = row;

	(void)arg;
	p->seq = db_col_int64(st, 0);
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
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT p.seq, p.message_id, p.subject, p.author, p.date,"
	    " p.commit_id, c.sha, p.applied_by, " PATCH_VERDICTS
	    " FROM series_patches p"
	    " LEFT JOIN commits c ON c.id = p.commit_id"
	    " WHERE p.series_id = ?1 ORDER BY p.seq");
	void *v = NULL;
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	r = store_i_rows(s, st, &v, &out->npatches, sizeof(*out->patches),
	    patch_scan, NULL, "series patches");
	out->patches = v;
	return r;
}

int
store_series_get(struct store *s, struct store_series_row *out, int64_t id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT " SERIES_COLS " WHERE se.id = ?1");

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) != DB_ROW) {
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
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT last_commit FROM inbox_state WHERE name = ?1");
	int rc;

	out_last[0] = '\0';
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	rc = db_step(st);
	if (rc == DB_ROW && store_i_col_text(st, 0) != NULL)
		snprintf(out_last, outlen, "%s", store_i_col_text(st, 0));
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "inbox state");
	return 0;
}

static int
inbox_put_once(struct store *s, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO inbox_state (name, url, last_commit, last_poll,"
	    " last_error, messages) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT (name) DO UPDATE SET url = excluded.url,"
	    " last_commit = coalesce(excluded.last_commit,"
	    "  inbox_state.last_commit),"
	    " last_poll = excluded.last_poll,"
	    " last_error = excluded.last_error,"
	    " messages = inbox_state.messages + excluded.messages");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, url);
		store_i_bind_text(st, 3, last_commit);
		db_bind_int64(st, 4, now);
		store_i_bind_text(st, 5, error);
		db_bind_int64(st, 6, messages);
		ok = store_i_step_done(s, st, "inbox state") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_inbox_put(struct store *s, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    inbox_put_once(s, name, url, last_commit, error, messages, now));
	return rc;
}

static void
pair_id_scan(void *row, struct db_stmt *st, void *arg)
{
	(void)arg;
	*(int64_t *)row = db_col_int64(st, 0);
}

/* The pairs measuring a series' tip against its base (not the
 * every_patch pair of the last patch against the one before), into
 * out->pairs. */
static int
series_tip_pairs(struct store *s, struct store_series_row *out, int64_t id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT DISTINCT p.id FROM series se"
	    " JOIN jobs cj ON cj.commit_id = se.commit_id"
	    "  AND cj.role = 'candidate'"
	    " JOIN pairs p ON p.cand_job_id = cj.id AND p.bisect_id IS NULL"
	    " JOIN jobs bj ON bj.id = p.base_job_id"
	    " LEFT JOIN commits bc ON bc.id = bj.commit_id"
	    " WHERE se.id = ?1 AND (se.base_sha IS NULL"
	    "  OR bc.sha = se.base_sha)"
	    " ORDER BY p.id DESC");
	void *v = NULL;
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	r = store_i_rows(s, st, &v, &out->npairs, sizeof(*out->pairs),
	    pair_id_scan, NULL, "series pairs");
	out->pairs = v;
	return r;
}

int
store_series_page_get(struct store *s, struct store_series_row *out, int64_t id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT se.id, se.inbox, se.title, se.version, se.total,"
	    " se.author, se.date AS time, se.state, se.error,"
	    " se.commit_id, c.sha AS commit_sha, se.base_sha, se.branch,"
	    " se.found, t.name AS tree, se.branch_tag, se.supersedes,"
	    " se.fallback FROM series se"
	    " LEFT JOIN commits c ON c.id = se.commit_id"
	    " LEFT JOIN trees t ON t.id = se.tree_id WHERE se.id = ?1");

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) != DB_ROW) {
		store_i_release(s, st);
		return err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	}
	store_i_series_scan_web(out, st);
	store_i_release(s, st);
	if ((out->commit_id && series_tip_pairs(s, out, id) != 0) ||
	    store_i_series_patches(s, out, id) != 0) {
		store_series_release(out);
		return -1;
	}
	return 0;
}

static char *
col_dup(struct db_stmt *st, int i)
{
	const char *t = db_col_text(st, i);

	return xstrdup(t ? t : "");
}

int
store_series_meta(
    struct store *s, int64_t id, const char *branch_tag, int64_t supersedes)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE series SET branch_tag = ?2, supersedes = ?3 WHERE id = ?1");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	store_i_bind_text(
	    st, 2, branch_tag && branch_tag[0] ? branch_tag : NULL);
	if (supersedes > 0)
		db_bind_int64(st, 3, supersedes);
	else
		db_bind_null(st, 3);
	return store_i_write1(s, st, "series meta");
}

int
store_series_previous(
    struct store *s, int64_t *out, int64_t id, const char *const *ids, size_t n)
{
	struct db_stmt *st;
	size_t i;
	int rc;

	*out = 0;
	/* The Link:/Message-ID chain first: vN's cover answers vN-1's. */
	st = store_i_stmt(s,
	    "SELECT p.id FROM series p, series se WHERE se.id = ?1"
	    " AND p.message_id = ?2 AND p.id != se.id"
	    " AND p.version < se.version");
	if (st == NULL)
		return -1;
	for (i = 0; i < n && *out == 0; i++) {
		db_reset(st);
		db_bind_int64(st, 1, id);
		store_i_bind_text(st, 2, ids[i]);
		if ((rc = db_step(st)) == DB_ROW)
			*out = db_col_int64(st, 0);
		else if (rc != DB_DONE) {
			store_i_release(s, st);
			return store_i_dberr(s, "series previous");
		}
	}
	store_i_release(s, st);
	if (*out != 0)
		return 0;
	st = store_i_stmt(s,
	    "SELECT p.id FROM series p, series se WHERE se.id = ?1"
	    " AND p.title = se.title AND p.author = se.author"
	    " AND p.id != se.id AND p.version < se.version"
	    " ORDER BY p.version DESC, p.id DESC LIMIT 1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "series previous");
	return 0;
}

int
store_series_fallback(struct store *s, int64_t id, const char *text)
{
	struct db_stmt *st =
	    store_i_stmt(s, "UPDATE series SET fallback = ?2 WHERE id = ?1");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	store_i_bind_text(st, 2, text);
	return store_i_write1(s, st, "series fallback");
}

int
store_series_patch_how(
    struct store *s, int64_t id, int64_t seq, const char *how)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE series_patches SET applied_by = ?3"
	    " WHERE series_id = ?1 AND seq = ?2");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	db_bind_int64(st, 2, seq);
	store_i_bind_text(st, 3, how);
	return store_i_write1(s, st, "series patch");
}

int
store_series_enqueue(struct store *s, int64_t *out_id, const char *tree,
    const char *branch, const char *mbox, size_t len, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "INSERT INTO series_queue (tree, branch, mbox, created)"
	    " VALUES (?1, ?2, ?3, ?4)");
	int r;

	*out_id = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, tree);
	store_i_bind_text(st, 2, branch);
	db_bind_blob(st, 3, mbox, len);
	db_bind_int64(st, 4, now);
	r = store_i_write1(s, st, "series enqueue");
	if (r == 0)
		*out_id = db_last_id(s->db);
	return r;
}

int
store_series_dequeue(struct store *s, struct store_series_job *out)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id, tree, branch, mbox FROM series_queue"
	    " ORDER BY id LIMIT 1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		const void *b = db_col_blob(st, 3);

		out->id = db_col_int64(st, 0);
		out->tree = col_dup(st, 1);
		out->branch = col_dup(st, 2);
		out->len = (size_t)db_col_bytes(st, 3);
		out->mbox = xmalloc(out->len + 1);
		if (out->len > 0)
			memcpy(out->mbox, b, out->len);
		out->mbox[out->len] = '\0';
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return ERR_NOTFOUND;
	if (rc != DB_ROW)
		return store_i_dberr(s, "series dequeue");
	return 0;
}

void
store_series_job_release(struct store_series_job *j)
{
	if (j == NULL)
		return;
	free(j->tree);
	free(j->branch);
	free(j->mbox);
	memset(j, 0, sizeof(*j));
}

int
store_series_queue_done(struct store *s, int64_t id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "DELETE FROM series_queue WHERE id = ?1");

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	return store_i_write1(s, st, "series queue");
}

int
store_series_queued(struct store *s, int64_t *out)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT count(*) FROM series_queue");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	if ((rc = db_step(st)) == DB_ROW)
		*out = db_col_int64(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "series queued");
}

static int
series_mark_once(struct store *s, const int64_t *ids, size_t n,
    const char *state, int64_t now)
{
	struct db_stmt *st;
	size_t i;
	int rc, ok = 1;

	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE series SET state = ?2, error = NULL, updated = ?3"
	    " WHERE id = ?1 AND state != 'applied'");
	for (i = 0; st != NULL && ok && i < n; i++) {
		db_reset(st);
		db_bind_int64(st, 1, ids[i]);
		store_i_bind_text(st, 2, state);
		db_bind_int64(st, 3, now);
		rc = db_step(st);
		if (rc != DB_DONE)
			ok = store_i_dberr(s, "series mark") == 0;
	}
	if (st == NULL)
		ok = 0;
	store_i_release(s, st);
	return store_i_tx_end(s, ok);
}

int
store_series_mark(struct store *s, const int64_t *ids, size_t n,
    const char *state, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, series_mark_once(s, ids, n, state, now));
	return rc;
}

void
store_tip_runs_release(struct store_tip_runs *r, size_t n)
{
	size_t i;

	for (i = 0; r != NULL && i < n; i++) {
		free(r[i].host);
		free(r[i].job);
		free(r[i].point);
		free(r[i].metric);
		free(r[i].unit);
		free(r[i].better);
		free(r[i].values);
	}
	free(r);
}

int
store_series_head(
    struct store *s, int64_t *out_version, int64_t *out_supersedes, int64_t id)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT version, supersedes FROM series WHERE id = ?1");
	int rc, r = 0;

	*out_version = *out_supersedes = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if ((rc = db_step(st)) == DB_ROW) {
		*out_version = db_col_int64(st, 0);
		*out_supersedes = db_col_int64(st, 1);
	} else if (rc == DB_DONE)
		r = err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	else
		r = store_i_dberr(s, "series");
	store_i_release(s, st);
	return r;
}

int
store_series_tip_run_list(
    struct store *s, struct store_tip_runs **out, size_t *n, int64_t id)
{
	struct db_stmt *st;
	struct store_tip_runs *r = NULL, *cur = NULL;
	size_t nr = 0;
	int rc, found = 0;

	*out = NULL;
	*n = 0;
	st = store_i_stmt(s, "SELECT 1 FROM series WHERE id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	found = db_step(st) == DB_ROW;
	store_i_release(s, st);
	if (!found)
		return ERR_NOTFOUND;
	st = store_i_stmt(s,
	    "SELECT h.name, j.name, j.point, m.name, m.unit, m.better,"
	    " m.value FROM series se"
	    " JOIN jobs j ON j.commit_id = se.commit_id"
	    "  AND j.role = 'candidate'"
	    " JOIN hosts h ON h.id = j.host_id"
	    " JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    " JOIN metrics m ON m.run_id = r.id"
	    " WHERE se.id = ?1 AND se.commit_id IS NOT NULL"
	    " ORDER BY h.name, j.name, j.point, m.name, r.id");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	while ((rc = db_step(st)) == DB_ROW) {
		const char *k[4];
		int i, same = cur != NULL;

		for (i = 0; i < 4; i++) {
			const char *t = db_col_text(st, i);

			k[i] = t ? t : "";
		}
		if (same)
			same = strcmp(cur->host, k[0]) == 0 &&
			    strcmp(cur->job, k[1]) == 0 &&
			    strcmp(cur->point, k[2]) == 0 &&
			    strcmp(cur->metric, k[3]) == 0;
		if (!same) {
			r = xreallocarray(r, nr + 1, sizeof(*r));
			cur = &r[nr++];
			memset(cur, 0, sizeof(*cur));
			cur->host = xstrdup(k[0]);
			cur->job = xstrdup(k[1]);
			cur->point = xstrdup(k[2]);
			cur->metric = xstrdup(k[3]);
			cur->unit = col_dup(st, 4);
			cur->better = col_dup(st, 5);
		}
		cur->values =
		    xreallocarray(cur->values, cur->n + 1, sizeof(double));
		cur->values[cur->n++] = db_col_double(st, 6);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		store_tip_runs_release(r, nr);
		return store_i_dberr(s, "series tip runs");
	}
	*out = r;
	*n = nr;
	return 0;
}

int
store_series_commit(struct store *s, char *out_tree, char *out_ref, size_t n,
    char out_base[41], const char *sha)
{
	struct db_stmt *st;
	int rc;

	out_tree[0] = out_ref[0] = out_base[0] = '\0';
	st = store_i_stmt(s,
	    "SELECT t.name, se.ref, se.base_sha FROM commits c"
	    " JOIN series_patches p ON p.commit_id = c.id"
	    " JOIN series se ON se.id = p.series_id"
	    " JOIN trees t ON t.id = c.tree_id"
	    " WHERE c.sha = ?1 AND se.ref IS NOT NULL"
	    " ORDER BY se.id DESC LIMIT 1");
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, sha);
	rc = db_step(st);
	if (rc == DB_ROW) {
		snprintf(out_tree, n, "%s", db_col_text(st, 0));
		snprintf(out_ref, n, "%s", db_col_text(st, 1));
		if (db_col_type(st, 2) != DB_NULL)
			snprintf(out_base, 41, "%s", db_col_text(st, 2));
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit %.40s is not a series commit of this daemon", sha);
	if (rc != DB_ROW)
		return store_i_dberr(s, "series commit");
	return 0;
}
