/*
 * The store: reads of shared kernel builds (store/builds.h): the list,
 * one build with its files, log and the jobs linked to it, the build a
 * job waits on, and the counts /metrics shows.  All SQL is in store/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "store/store_int.h"

int
store_build_id_text(struct store *s, char *out, size_t len, int64_t id)
{
	const char *inst;

	if (store_instance(s, &inst) != 0)
		return -1;
	snprintf(out, len, "-pwb%lld-%s", (long long)id, inst);
	return 0;
}

#define BUILD_COLS                                                         \
	"b.id, b.url, b.sha, b.key, b.spec, b.state, h.name, b.attempts, " \
	"b.created, b.started, b.finished,"                                \
	" b.build_s, (SELECT coalesce(sum(f.size), 0) FROM build_files f"  \
	"  WHERE f.build_id = b.id), b.release, b.error, b.compiler,"      \
	" b.evicted, b.incremental"
#define BUILD_FROM " FROM builds b LEFT JOIN hosts h ON h.id = b.host_id"

static void
build_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_build_row *b = row;
	json_t *spec, *k;

	(void)arg;
	b->id = db_col_int64(st, 0);
	b->url = store_i_col_dup(st, 1);
	b->sha = store_i_col_dup(st, 2);
	b->key = store_i_col_dup(st, 3);
	spec = pwjson_doc(store_i_col_text(st, 4), json_object());
	k = json_object_get(spec, "kernel");
	b->config = xstrdup(json_string_value(json_object_get(k, "config"))
	        ? json_string_value(json_object_get(k, "config"))
	        : "");
	b->fragment_json = json_object_get(k, "fragment")
	    ? pwjson_dump(json_object_get(k, "fragment"))
	    : xstrdup("[]");
	b->cc = xstrdup(json_string_value(json_object_get(k, "compiler"))
	        ? json_string_value(json_object_get(k, "compiler"))
	        : STORE_BUILD_CC_DEFAULT);
	json_decref(spec);
	b->state = store_i_col_dup(st, 5);
	b->host = store_i_col_dup(st, 6);
	b->attempts = db_col_int64(st, 7);
	b->created = db_col_int64(st, 8);
	b->started = db_col_int64(st, 9);
	b->finished = db_col_int64(st, 10);
	b->build_s = store_i_col_num(st, 11);
	b->size = db_col_int64(st, 12);
	b->release = store_i_col_dup(st, 13);
	b->error = store_i_col_dup(st, 14);
	b->compiler = store_i_col_dup(st, 15);
	b->evicted = db_col_int(st, 16) != 0;
	b->incremental =
	    db_col_type(st, 17) == DB_NULL ? -1 : db_col_int(st, 17) != 0;
}

void
store_build_row_release(struct store_build_row *b)
{
	size_t i;

	if (b == NULL)
		return;
	free(b->url);
	free(b->sha);
	free(b->key);
	free(b->config);
	free(b->fragment_json);
	free(b->cc);
	free(b->state);
	free(b->host);
	free(b->release);
	free(b->error);
	free(b->compiler);
	for (i = 0; i < b->nfiles; i++) {
		free(b->files[i].name);
		free(b->files[i].sha256);
	}
	free(b->files);
	for (i = 0; i < b->nwaiters; i++) {
		free(b->waiters[i].state);
		free(b->waiters[i].role);
	}
	free(b->waiters);
	free(b->log);
	memset(b, 0, sizeof(*b));
}

int
store_build_list(struct store *s, struct store_builds *out, const char *state,
    int64_t limit, int64_t cursor)
{
	struct db_stmt *st = store_i_stmt(s,
	    state != NULL
	        ? "SELECT " BUILD_COLS BUILD_FROM
	          " WHERE b.state = ?1 AND b.id < ?2 ORDER BY b.id DESC"
	          " LIMIT ?3"
	        : "SELECT " BUILD_COLS BUILD_FROM
	          " WHERE b.id < ?2 AND CAST(?1 AS TEXT) IS NULL"
	          " ORDER BY b.id DESC"
	          " LIMIT ?3");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	r = store_i_state_page(s, st, state, limit, cursor, &v, &out->n,
	    sizeof(*out->v), build_scan, offsetof(struct store_build_row, id),
	    "list builds", &out->next_cursor);
	out->v = v;
	if (r != 0)
		store_builds_release(out);
	return r;
}

void
store_builds_release(struct store_builds *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		store_build_row_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void
file_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_build_file_row *f = row;

	(void)arg;
	f->name = store_i_col_dup(st, 0);
	f->sha256 = store_i_col_dup(st, 1);
	f->size = db_col_int64(st, 2);
}

static void
waiter_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_build_waiter *w = row;

	(void)arg;
	w->job_id = db_col_int64(st, 0);
	w->pair_id = db_col_int64(st, 1);
	w->state = store_i_col_dup(st, 2);
	w->role = store_i_col_dup(st, 3);
}

/* The rows of sql (a literal: the statement cache keys on it; ?1 the
 * build's id) into *v, *n of size bytes each: store_i_rows' 0 or -1. */
static int
build_rows(struct store *s, const char *sql, int64_t id, void **v, size_t *n,
    size_t size, void (*scan)(void *row, struct db_stmt *st, void *arg),
    const char *what)
{
	struct db_stmt *st = store_i_stmt(s, sql);

	*v = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	return store_i_rows(s, st, v, n, size, scan, NULL, what);
}

int
store_build_get(struct store *s, struct store_build_row *out, int64_t id)
{
	struct db_stmt *st;
	void *v;
	int rc;

	memset(out, 0, sizeof(*out));
	st = store_i_stmt(
	    s, "SELECT " BUILD_COLS ", b.log" BUILD_FROM " WHERE b.id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		build_scan(out, st, NULL);
		out->log = store_i_col_dup(st, 18);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "build %lld not found",
		    (long long)id);
	if (rc != DB_ROW)
		return store_i_dberr(s, "build");
	rc = build_rows(s,
	    "SELECT name, sha256, size FROM build_files WHERE build_id = ?1"
	    " ORDER BY name",
	    id, &v, &out->nfiles, sizeof(*out->files), file_scan,
	    "build files");
	out->files = v;
	if (rc != 0)
		goto fail;
	rc = build_rows(s,
	    "SELECT id, coalesce(pair_id, 0), state, role FROM jobs"
	    " WHERE build_id = ?1 ORDER BY id LIMIT 500",
	    id, &v, &out->nwaiters, sizeof(*out->waiters), waiter_scan,
	    "build jobs");
	out->waiters = v;
	if (rc != 0)
		goto fail;
	return 0;
fail:
	store_build_row_release(out);
	return -1;
}

int
store_builds_counts(struct store *s, int64_t by_state[5], int64_t *reuses)
{
	static const char *const states[] = { "queued", "running", "success",
		"failed", "cancelled" };
	struct db_stmt *st;
	size_t i;
	int rc;

	memset(by_state, 0, 5 * sizeof(*by_state));
	*reuses = 0;
	for (i = 0; i < 5; i++) {
		/* A range of the index builds_state (state, id). */
		st = store_i_stmt(
		    s, "SELECT count(*) FROM builds WHERE state = ?1");
		if (st == NULL)
			return -1;
		store_i_bind_text(st, 1, states[i]);
		if ((rc = db_step(st)) == DB_ROW)
			by_state[i] = db_col_int64(st, 0);
		store_i_release(s, st);
		if (rc != DB_ROW)
			return store_i_dberr(s, "build counts");
	}
	st = store_i_stmt(s,
	    "SELECT coalesce(max(n), 0) FROM count_totals"
	    " WHERE name = 'builds.reuses'");
	if (st == NULL)
		return -1;
	if ((rc = db_step(st)) == DB_ROW)
		*reuses = db_col_int64(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "build reuses");
}

int
store_job_build_get(
    struct store *s, struct store_job_build *out, int64_t job_id)
{
	struct db_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (s->version < STORE_BUILDS_VERSION)
		return 0;
	st = store_i_stmt(s,
	    "SELECT coalesce(b.id, 0), b.state, b.error FROM jobs j"
	    " LEFT JOIN builds b ON b.id = j.build_id WHERE j.id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, job_id);
	if ((rc = db_step(st)) == DB_ROW) {
		out->id = db_col_int64(st, 0);
		out->state = store_i_col_dup(st, 1);
		out->error = store_i_col_dup(st, 2);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "job %lld not found",
		    (long long)job_id);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "job build");
}

/* The builds being read (store_job_build_get_many): v[i] job ids[i]'s. */
struct job_builds {
	struct store_job_build *v;
	char *found;
};

static void
job_build_row(void *arg, size_t i, struct db_stmt *st)
{
	struct job_builds *a = arg;
	struct store_job_build *b = &a->v[i];

	b->id = db_col_int64(st, 0);
	b->state = store_i_col_dup(st, 1);
	b->error = store_i_col_dup(st, 2);
	a->found[i] = 1;
}

int
store_job_build_get_many(struct store *s, struct store_job_build *out,
    const int64_t *job_ids, size_t n)
{
	struct job_builds a = { out, NULL };
	size_t i;
	int r;

	memset(out, 0, n * sizeof(*out));
	if (s->version < STORE_BUILDS_VERSION)
		return 0;
	a.found = xcalloc(n + 1, 1);
	r = store_i_ids_rows(s,
	    "SELECT coalesce(b.id, 0), b.state, b.error, j.id FROM jobs j"
	    " LEFT JOIN builds b ON b.id = j.build_id"
	    " WHERE j.id IN (" STORE_I_IDS ")",
	    3, job_ids, n, job_build_row, &a, "job builds");
	for (i = 0; r == 0 && i < n; i++)
		if (!a.found[i])
			r = err_setc(&s->err, ERR_NOTFOUND,
			    "job %lld not found", (long long)job_ids[i]);
	for (i = 0; r != 0 && i < n; i++)
		store_job_build_release(&out[i]);
	free(a.found);
	return r;
}

void
store_job_build_release(struct store_job_build *b)
{
	if (b == NULL)
		return;
	free(b->state);
	free(b->error);
	memset(b, 0, sizeof(*b));
}
