/*
 * The store's generation (migration v32, store_data_version): store_gen.n
 * goes up with every insert, update and delete of every table, through
 * three triggers a table, gen_<table>_i, _u and _d, except for what a
 * runner's heartbeat writes (store_heartbeat): a table with such columns
 * has an update trigger that names all its other columns (UPDATE OF).
 *
 * The triggers are made from the schema, at each open of a store at v32
 * or later, inside the open's write transaction: a table or a column
 * that a later migration adds has them without anyone remembering to.
 * A trigger already as it should be is left alone, so an open that finds
 * them all in place changes nothing (the schema's version included).
 */
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "daemon/store_int.h"

/* What store_heartbeat and store_host_seen write, and no trigger names. */
static const char *const heartbeat_cols[][2] = {
	{ "hosts", "last_seen" },
	{ "jobs", "lease_expires" },
	{ "jobs", "progress" },
	{ "jobs", "updated" },
};

#define NHEARTBEAT (sizeof(heartbeat_cols) / sizeof(heartbeat_cols[0]))

static int
heartbeat_col(const char *table, const char *col)
{
	size_t i;

	for (i = 0; i < NHEARTBEAT; i++)
		if (strcmp(heartbeat_cols[i][0], table) == 0 &&
		    strcmp(heartbeat_cols[i][1], col) == 0)
			return 1;
	return 0;
}

/* The sql of table t's trigger of kind ('i', 'u', 'd') into b, as
 * sqlite_schema keeps it. */
static int
trigger_sql(struct store *s, struct buf *b, const char *t, char kind)
{
	sqlite3_stmt *st;
	int rc, n = 0, named = 0;

	buf_reset(b);
	buf_printf(b, "CREATE TRIGGER \"gen_%s_%c\" AFTER %s", t, kind,
	    kind == 'i'       ? "INSERT"
	        : kind == 'd' ? "DELETE"
	                      : "UPDATE");
	if (kind == 'u') {
		size_t i;

		for (i = 0; i < NHEARTBEAT; i++)
			named |= strcmp(heartbeat_cols[i][0], t) == 0;
	}
	if (named) {
		if ((st = store_i_prep(s,
		         "SELECT name FROM pragma_table_info(?1) ORDER BY "
		         "cid")) == NULL)
			return -1;
		store_i_bind_text(st, 1, t);
		buf_puts(b, " OF");
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *c =
			    (const char *)sqlite3_column_text(st, 0);

			if (c == NULL || heartbeat_col(t, c))
				continue;
			buf_printf(b, "%s \"%s\"", n++ ? "," : "", c);
		}
		if (rc != SQLITE_DONE) {
			store_i_dberr(s, "generation triggers' columns");
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
	}
	buf_printf(
	    b, " ON \"%s\" BEGIN UPDATE store_gen SET n = n + 1; END", t);
	return buf_failed(b) ? -1 : 0;
}

/* Runs sql (made here from the schema's names). */
static int
run(struct store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	err_set(&s->err, "generation triggers: %s: %s", sql,
	    msg ? msg : sqlite3_errmsg(s->db));
	sqlite3_free(msg);
	return -1;
}

/*
 * The triggers named gen_* that are not one of a table's three (a table
 * renamed or dropped leaves them), dropped; then each table's three made
 * or remade.
 */
/* The first column of st's rows, copied into *v (*n of them); st
 * finalized.  0, or -1. */
static int
names(struct store *s, sqlite3_stmt *st, char ***v, size_t *n)
{
	size_t cap = 0;
	int rc;

	*v = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*v = xreallocarray(
			    *v, (cap = cap ? 2 * cap : 32), sizeof(**v));
		(*v)[(*n)++] =
		    xstrdup((const char *)sqlite3_column_text(st, 0));
	}
	if (rc != SQLITE_DONE)
		store_i_dberr(s, "generation triggers");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void
names_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* 1 when trigger name's sql is want, 0 when not or there is none, -1. */
static int
trigger_is(struct store *s, const char *name, const char *want)
{
	sqlite3_stmt *st = store_i_prep(s,
	    "SELECT sql FROM sqlite_schema WHERE type = 'trigger'"
	    " AND name = ?1");
	const char *have;
	int rc, r;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	rc = sqlite3_step(st);
	have =
	    rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	r = have != NULL && strcmp(have, want) == 0;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = store_i_dberr(s, "generation trigger");
	sqlite3_finalize(st);
	return r;
}

/*
 * The triggers named gen_* that are not one of a table's three (a table
 * renamed or dropped leaves them) dropped; then each table's three made,
 * or remade when they differ from what the schema asks for.
 */
int
store_i_gen_triggers(struct store *s)
{
	static const char kinds[] = "iud";
	struct buf b, q;
	char **stale = NULL, **tables = NULL;
	size_t nstale = 0, n = 0, i, k;
	int ok;

	buf_init(&b, 64 * 1024);
	buf_init(&q, 64 * 1024);
	ok = names(s,
	         store_i_prep(s,
	             "SELECT name FROM sqlite_schema WHERE type = 'trigger'"
	             " AND name LIKE 'gen\\_%' ESCAPE '\\' AND name NOT IN ("
	             " 'gen_' || tbl_name || '_i', 'gen_' || tbl_name || '_u',"
	             " 'gen_' || tbl_name || '_d')"),
	         &stale, &nstale) == 0 &&
	    names(s,
	        store_i_prep(s,
	            "SELECT name FROM sqlite_schema WHERE type = 'table'"
	            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
	            " AND name <> 'store_gen' ORDER BY name"),
	        &tables, &n) == 0;
	for (i = 0; ok && i < nstale; i++) {
		buf_reset(&q);
		buf_printf(&q, "DROP TRIGGER \"%s\"", stale[i]);
		ok = !buf_failed(&q) && run(s, q.data) == 0;
	}
	for (i = 0; ok && i < n; i++) {
		for (k = 0; ok && kinds[k] != '\0'; k++) {
			char name[256];
			int is;

			snprintf(name, sizeof(name), "gen_%s_%c", tables[i],
			    kinds[k]);
			if (trigger_sql(s, &b, tables[i], kinds[k]) != 0 ||
			    (is = trigger_is(s, name, b.data)) < 0) {
				ok = 0;
				break;
			}
			if (is)
				continue;
			buf_reset(&q);
			buf_printf(&q, "DROP TRIGGER IF EXISTS \"%s\"", name);
			ok = !buf_failed(&q) && run(s, q.data) == 0 &&
			    run(s, b.data) == 0;
		}
	}
	names_free(stale, nstale);
	names_free(tables, n);
	buf_release(&b);
	buf_release(&q);
	return ok ? 0 : -1;
}
