/*
 * The store: a per-connection cache of prepared statements keyed by
 * their SQL text.  Parsing and planning a statement costs
 * more than most page reads do with it (preparing was half the
 * series page's time), so a read that runs on every request takes its
 * statement from here and hands it back with store_i_release, which
 * resets it (ending the read) instead of finalizing it.
 */
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/store_int.h"

/* Statements kept per connection; past this, reads prepare their own. */
#define STMT_CACHE 128

struct store_stmt {
	const char *sql; /* the caller's text: a literal, stable */
	struct db_stmt *st;
	int busy; /* handed out, not yet released */
};

struct store_stmts {
	struct store_stmt v[STMT_CACHE];
	size_t n;
};

struct db_stmt *
store_i_stmt(struct store *s, const char *sql)
{
	struct store_stmts *c = s->stmts;
	struct store_stmt *e;
	size_t i;

	if (c == NULL)
		c = s->stmts = xcalloc(1, sizeof(*c));
	for (i = 0; i < c->n; i++) {
		e = &c->v[i];
		/* The same text at the same address: a literal (the check
		 * of the text keeps a caller's reused buffer safe). */
		if (e->sql != sql || strcmp(db_sql(e->st), sql) != 0)
			continue;
		if (e->busy)
			break; /* in use further up: a statement of its own */
		e->busy = 1;
		db_reset(e->st);
		db_clear_bindings(e->st);
		return e->st;
	}
	if (i < c->n || c->n == STMT_CACHE)
		return store_i_prep(s, sql);
	e = &c->v[c->n];
	if ((e->st = store_i_prep(s, sql)) == NULL)
		return NULL;
	e->sql = sql;
	e->busy = 1;
	c->n++;
	return e->st;
}

void
store_i_release(struct store *s, struct db_stmt *st)
{
	struct store_stmts *c = s->stmts;
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; c != NULL && i < c->n; i++)
		if (c->v[i].st == st) {
			db_reset(st);
			c->v[i].busy = 0;
			return;
		}
	db_finalize(st);
}

void
store_i_stmts_free(struct store *s)
{
	struct store_stmts *c = s->stmts;
	size_t i;

	for (i = 0; c != NULL && i < c->n; i++)
		db_finalize(c->v[i].st);
	free(c);
	s->stmts = NULL;
}

size_t
store_i_bind_ids(struct db_stmt *st, const int64_t *ids, size_t n)
{
	size_t i, k = n < STORE_I_IDS_MAX ? n : STORE_I_IDS_MAX;

	for (i = 0; i < STORE_I_IDS_MAX; i++)
		db_bind_int64(st, (int)i + 1, ids[i < k ? i : 0]);
	return k;
}

static int
id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int
store_i_ids_rows(struct store *s, const char *sql, int idcol,
    const int64_t *ids, size_t n,
    void (*row)(void *arg, size_t i, struct db_stmt *st), void *arg,
    const char *what)
{
	int64_t *u = xcalloc(n ? n : 1, sizeof(*u)), cur = 0;
	size_t *at = xcalloc(n ? n : 1, sizeof(*at));
	size_t nu = 0, off, k, i, nat = 0;
	struct db_stmt *st = NULL;
	int rc = DB_DONE, have = 0;

	/* Each id once: a row goes to every place that asked for it. */
	memcpy(u, ids, n * sizeof(*u));
	qsort(u, n, sizeof(*u), id_cmp);
	for (i = 0; i < n; i++)
		if (nu == 0 || u[nu - 1] != u[i])
			u[nu++] = u[i];
	for (off = 0; off < nu && rc == DB_DONE; off += k) {
		if ((st = store_i_stmt(s, sql)) == NULL)
			break;
		k = store_i_bind_ids(st, u + off, nu - off);
		while ((rc = db_step(st)) == DB_ROW) {
			int64_t id = db_col_int64(st, idcol);

			if (!have || id != cur) {
				for (nat = 0, i = 0; i < n; i++)
					if (ids[i] == id)
						at[nat++] = i;
				cur = id;
				have = 1;
			}
			for (i = 0; i < nat; i++)
				row(arg, at[i], st);
		}
		store_i_count_steps(s, st);
		store_i_release(s, st);
	}
	free(u);
	free(at);
	if (off < nu || rc != DB_DONE)
		return st == NULL ? -1 : store_i_dberr(s, what);
	return 0;
}

void *
store_i_grow(void **v, size_t *n, size_t size)
{
	char *e;

	/* The capacity is the power of two above *n. */
	if ((*n & (*n - 1)) == 0)
		*v = xreallocarray(*v, *n ? 2 * *n : 1, size);
	e = (char *)*v + *n * size;
	memset(e, 0, size);
	(*n)++;
	return e;
}

struct ids_lists {
	char *out;
	size_t stride, size;
	void (*scan)(void *row, struct db_stmt *st, void *arg);
};

/* The list's members copied, not cast: its v is a T *, not a void *. */
static void
ids_lists_row(void *arg, size_t i, struct db_stmt *st)
{
	struct ids_lists *a = arg;
	char *l = a->out + i * a->stride;
	void *v;
	size_t n;

	memcpy(&v, l, sizeof(v));
	memcpy(&n, l + sizeof(v), sizeof(n));
	a->scan(store_i_grow(&v, &n, a->size), st, NULL);
	memcpy(l, &v, sizeof(v));
	memcpy(l + sizeof(v), &n, sizeof(n));
}

int
store_i_ids_lists(struct store *s, const char *sql, int idcol,
    const int64_t *ids, size_t n, void *out, size_t stride, size_t size,
    void (*scan)(void *row, struct db_stmt *st, void *arg), const char *what)
{
	struct ids_lists a = { out, stride, size, scan };

	memset(out, 0, n * stride);
	return store_i_ids_rows(s, sql, idcol, ids, n, ids_lists_row, &a, what);
}
