/*
 * Patch series: branch tags, superseding, the 3-way fallback, the upload
 * queue and the tip's run values (store/series2.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/series2.h"
#include "store/store.h"
#include "store/store_int.h"

static char *
col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return xstrdup(t ? (const char *)t : "");
}

int
store_series_meta(
    struct store *s, int64_t id, const char *branch_tag, int64_t supersedes)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "UPDATE series SET branch_tag = ?2, supersedes = ?3 WHERE id = ?1");

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_i_bind_text(
	    st, 2, branch_tag && branch_tag[0] ? branch_tag : NULL);
	if (supersedes > 0)
		sqlite3_bind_int64(st, 3, supersedes);
	else
		sqlite3_bind_null(st, 3);
	return store_i_write1(s, st, "series meta");
}

int
store_series_previous(
    struct store *s, int64_t *out, int64_t id, const char *const *ids, size_t n)
{
	sqlite3_stmt *st;
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
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		store_i_bind_text(st, 2, ids[i]);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW)
			*out = sqlite3_column_int64(st, 0);
		else if (rc != SQLITE_DONE) {
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
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	store_i_release(s, st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_i_dberr(s, "series previous");
	return 0;
}

int
store_series_fallback(struct store *s, int64_t id, const char *text)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "UPDATE series SET fallback = ?2 WHERE id = ?1");

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_i_bind_text(st, 2, text);
	return store_i_write1(s, st, "series fallback");
}

int
store_series_patch_how(
    struct store *s, int64_t id, int64_t seq, const char *how)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "UPDATE series_patches SET applied_by = ?3"
	    " WHERE series_id = ?1 AND seq = ?2");

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, seq);
	store_i_bind_text(st, 3, how);
	return store_i_write1(s, st, "series patch");
}

/* ---- the upload queue ---- */

int
store_series_enqueue(struct store *s, int64_t *out_id, const char *tree,
    const char *branch, const char *mbox, size_t len, int64_t now)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "INSERT INTO series_queue (tree, branch, mbox, created)"
	    " VALUES (?1, ?2, ?3, ?4)");
	int r;

	*out_id = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, tree);
	store_i_bind_text(st, 2, branch);
	sqlite3_bind_blob64(st, 3, mbox, (sqlite3_uint64)len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	r = store_i_write1(s, st, "series enqueue");
	if (r == 0)
		*out_id = sqlite3_last_insert_rowid(s->db);
	return r;
}

int
store_series_dequeue(struct store *s, struct store_series_job *out)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT id, tree, branch, mbox FROM series_queue"
	    " ORDER BY id LIMIT 1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(st, 3);

		out->id = sqlite3_column_int64(st, 0);
		out->tree = col_dup(st, 1);
		out->branch = col_dup(st, 2);
		out->len = (size_t)sqlite3_column_bytes(st, 3);
		out->mbox = xmalloc(out->len + 1);
		if (out->len > 0)
			memcpy(out->mbox, b, out->len);
		out->mbox[out->len] = '\0';
	}
	store_i_release(s, st);
	if (rc == SQLITE_DONE)
		return ERR_NOTFOUND;
	if (rc != SQLITE_ROW)
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
	sqlite3_stmt *st =
	    store_i_stmt(s, "DELETE FROM series_queue WHERE id = ?1");

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return store_i_write1(s, st, "series queue");
}

int
store_series_queued(struct store *s, int64_t *out)
{
	sqlite3_stmt *st = store_i_stmt(s, "SELECT count(*) FROM series_queue");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	store_i_release(s, st);
	return rc == SQLITE_ROW ? 0 : store_i_dberr(s, "series queued");
}

int
store_series_mark(struct store *s, const int64_t *ids, size_t n,
    const char *state, int64_t now)
{
	sqlite3_stmt *st;
	size_t i;
	int rc, ok = 1;

	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE series SET state = ?2, error = NULL, updated = ?3"
	    " WHERE id = ?1 AND state != 'applied'");
	for (i = 0; st != NULL && ok && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, ids[i]);
		store_i_bind_text(st, 2, state);
		sqlite3_bind_int64(st, 3, now);
		rc = sqlite3_step(st);
		if (rc != SQLITE_DONE)
			ok = store_i_dberr(s, "series mark") == 0;
	}
	if (st == NULL)
		ok = 0;
	store_i_release(s, st);
	return store_i_tx_end(s, ok);
}

/* ---- vN vs vN-1 ---- */

void
store_tip_runs_free(struct store_tip_runs *r, size_t n)
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
	sqlite3_stmt *st = store_i_stmt(
	    s, "SELECT version, supersedes FROM series WHERE id = ?1");
	int rc, r = 0;

	*out_version = *out_supersedes = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out_version = sqlite3_column_int64(st, 0);
		*out_supersedes = sqlite3_column_int64(st, 1);
	} else if (rc == SQLITE_DONE)
		r = err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	else
		r = store_i_dberr(s, "series");
	store_i_release(s, st);
	return r;
}

int
store_series_tip_runs(
    struct store *s, struct store_tip_runs **out, size_t *n, int64_t id)
{
	sqlite3_stmt *st;
	struct store_tip_runs *r = NULL, *cur = NULL;
	size_t nr = 0;
	int rc, found = 0;

	*out = NULL;
	*n = 0;
	st = store_i_stmt(s, "SELECT 1 FROM series WHERE id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	found = sqlite3_step(st) == SQLITE_ROW;
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
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k[4];
		int i, same = cur != NULL;

		for (i = 0; i < 4; i++) {
			const unsigned char *t = sqlite3_column_text(st, i);

			k[i] = t ? (const char *)t : "";
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
		cur->values[cur->n++] = sqlite3_column_double(st, 6);
	}
	store_i_release(s, st);
	if (rc != SQLITE_DONE) {
		store_tip_runs_free(r, nr);
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
	sqlite3_stmt *st;
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
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(out_tree, n, "%s",
		    (const char *)sqlite3_column_text(st, 0));
		snprintf(
		    out_ref, n, "%s", (const char *)sqlite3_column_text(st, 1));
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			snprintf(out_base, 41, "%s",
			    (const char *)sqlite3_column_text(st, 2));
	}
	store_i_release(s, st);
	if (rc == SQLITE_DONE)
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit %.40s is not a series commit of this daemon", sha);
	if (rc != SQLITE_ROW)
		return store_i_dberr(s, "series commit");
	return 0;
}

/* ---- time to report ---- */

int
store_series_latency_get(
    struct store *s, struct store_series_latency *out, int64_t id)
{
	/* Its pairs: those whose candidate is one of its commits (the
	 * tip, or each patch's with every_patch), bisections' left out. */
	sqlite3_stmt *st = store_i_stmt(s,
	    "WITH pr AS (SELECT p.id, p.created FROM pairs p"
	    "  JOIN jobs c ON c.id = p.cand_job_id"
	    "  WHERE c.commit_id IN (SELECT commit_id FROM series_patches"
	    "   WHERE series_id = ?1 UNION SELECT commit_id FROM series"
	    "   WHERE id = ?1) AND p.bisect_id IS NULL),"
	    " rs AS (SELECT r.created, r.duration_s FROM runs r"
	    "  JOIN jobs j ON j.id = r.job_id WHERE j.pair_id IN"
	    "  (SELECT id FROM pr))"
	    " SELECT coalesce(s.date, 0), coalesce(s.created, 0),"
	    " coalesce((SELECT min(created) FROM pr),"
	    "  CASE WHEN s.state = 'applied' THEN s.updated END, 0),"
	    " coalesce((SELECT min(created - CAST(coalesce(duration_s, 0)"
	    "  AS INTEGER)) FROM rs), 0),"
	    " coalesce((SELECT max(created) FROM rs), 0),"
	    " coalesce((SELECT max(coalesce(updated, created))"
	    "  FROM comparisons WHERE final = 1"
	    "  AND pair_id IN (SELECT id FROM pr)), 0),"
	    " coalesce((SELECT min(a.sent) FROM alerts a"
	    "  JOIN alert_reports ar ON ar.id = a.report_id"
	    "  WHERE ar.series_id = s.id AND a.kind = 'email'"
	    "  AND a.state = 'sent'), 0)"
	    " FROM series s WHERE s.id = ?1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = id;
		out->posted = sqlite3_column_int64(st, 0);
		out->seen = sqlite3_column_int64(st, 1);
		out->applied = sqlite3_column_int64(st, 2);
		out->first_run = sqlite3_column_int64(st, 3);
		out->last_run = sqlite3_column_int64(st, 4);
		out->verdict = sqlite3_column_int64(st, 5);
		out->mailed = sqlite3_column_int64(st, 6);
	}
	store_i_release(s, st);
	if (rc == SQLITE_DONE)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no series %lld", (long long)id);
	return rc == SQLITE_ROW ? 0 : store_i_dberr(s, "series latency");
}

int
store_series_latencies(struct store *s, struct store_series_latency **out,
    size_t *out_n, int64_t since, size_t max)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT id FROM series WHERE coalesce(created, 0) >= ?1"
	    " ORDER BY id DESC LIMIT ?2");
	int64_t *ids = NULL;
	size_t n = 0, i;
	int rc;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, since);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	store_i_release(s, st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return store_i_dberr(s, "series latencies");
	}
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (i = 0; i < n && rc == SQLITE_DONE; i++) {
		int r = store_series_latency_get(s, &(*out)[i], ids[i]);

		if (r == ERR_NOTFOUND) /* deleted meanwhile: all unknown */
			store_errclear(s);
		else if (r != 0)
			rc = -1;
	}
	free(ids);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		return -1;
	}
	*out_n = n;
	return 0;
}
