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
