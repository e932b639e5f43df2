/*
 * A whole store into another (store/copy.h).  Tables and their columns
 * come from each side's catalog, so a table a migration adds is copied
 * without a change here; the two sides must list the same ones.  While
 * the rows go in, the target's triggers are off (the rows they would
 * derive are copied as they are) and so are its foreign keys, since
 * pairs and jobs refer to each other: SQLite's are off around the
 * transaction and checked before the commit; PostgreSQL's are dropped
 * and added again inside it, which checks every row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/database.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "store/copy.h"
#include "store/store_int.h"

/* Tables a new schema already has rows in (the instance id, the
 * counters, the generation): the source's rows replace them. */
static const char *const seeded[] = { "counts", "instance", "store_gen" };

struct names {
	char **v;
	size_t n;
};

struct side {
	struct store *s;
	const char *role; /* "from" or "to" */
	char shown[512];
};

/* The target's foreign keys (PostgreSQL) or triggers (SQLite), put
 * back before the commit: table, name and definition. */
struct saved {
	struct names table, name, def;
};

static void
names_add(struct names *l, const char *v)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(v ? v : "");
}

static void
names_free(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int
names_has(const struct names *l, const char *v)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], v) == 0)
			return 1;
	return 0;
}

static int
is_seeded(const char *t)
{
	size_t i;

	for (i = 0; i < sizeof(seeded) / sizeof(seeded[0]); i++)
		if (strcmp(seeded[i], t) == 0)
			return 1;
	return 0;
}

/* The side's store error in e, prefixed with where it is. */
static int
side_err(struct side *d, struct err *e)
{
	return err_set(
	    e, "%s (%s): %s", d->shown, d->role, err_msg(&d->s->err));
}

static int
is_pg(const struct side *d)
{
	return db_backend(d->s->db) == DB_PG;
}

/* name as a quoted identifier ("a""b"), appended to buf. */
static void
quote(char *buf, size_t size, const char *name)
{
	size_t n = strlen(buf);
	const char *p;

	if (n + 1 < size)
		buf[n++] = '"';
	for (p = name; *p != '\0' && n + 3 < size; p++) {
		if (*p == '"')
			buf[n++] = '"';
		buf[n++] = *p;
	}
	if (n + 1 < size)
		buf[n++] = '"';
	buf[n] = '\0';
}

static int
exec_sql(struct side *d, const char *sql, struct err *e)
{
	if (store_i_exec(d->s, sql) == -1)
		return side_err(d, e);
	return 0;
}

/* The first column of sql's rows (arg bound to ?1 when not NULL) added
 * to out, and the second and third to out2, out3 when given. */
static int
read_text(struct side *d, const char *sql, const char *arg, struct names *out,
    struct names *out2, struct names *out3, struct err *e)
{
	struct db_stmt *st = store_i_prep(d->s, sql);
	int rc;

	if (st == NULL)
		return side_err(d, e);
	if (arg != NULL)
		db_bind_text(st, 1, arg, -1);
	while ((rc = db_step(st)) == DB_ROW) {
		names_add(out, db_col_text(st, 0));
		if (out2 != NULL)
			names_add(out2, db_col_text(st, 1));
		if (out3 != NULL)
			names_add(out3, db_col_text(st, 2));
	}
	if (rc != DB_DONE)
		store_i_dberr(d->s, "catalog");
	db_finalize(st);
	return rc == DB_DONE ? 0 : side_err(d, e);
}

static int
tables_of(struct side *d, struct names *out, struct err *e)
{
	return read_text(d,
	    is_pg(d) ? "SELECT tablename::text FROM pg_tables WHERE"
	               " schemaname = current_schema() AND tablename <>"
	               " 'schema_version'"
	             : "SELECT name FROM sqlite_master WHERE type = 'table'"
	               " AND substr(name, 1, 7) <> 'sqlite_'",
	    NULL, out, NULL, NULL, e);
}

static int
columns_of(struct side *d, const char *table, struct names *out, struct err *e)
{
	return read_text(d,
	    is_pg(d) ? "SELECT attname::text FROM pg_attribute WHERE attrelid"
	               " = ?1::regclass AND attnum > 0 AND NOT attisdropped"
	               " ORDER BY attnum"
	             : "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
	    table, out, NULL, NULL, e);
}

static struct side *
side_open(struct side *d, const char *where, const char *role, struct err *e)
{
	d->role = role;
	redact_conninfo_into(d->shown, sizeof(d->shown), where);
	d->s = xcalloc(1, sizeof(*d->s));
	if (db_open(&d->s->db, where, e) != 0) {
		store_close(d->s);
		d->s = NULL;
		return NULL;
	}
	return d;
}

/* The side's schema version: 0 when it has none. */
static int
side_version(struct side *d, int *v, struct err *e)
{
	if ((*v = store_user_version(d->s)) < 0)
		return side_err(d, e);
	return 0;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n-- > 0) {
		h ^= *b++;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * The current row's values hashed as both backends give them: a number
 * by its value (an integral one as an integer, whichever way it is
 * kept), text and bytes by their bytes.
 */
static uint64_t
row_hash(struct db_stmt *st, int ncol)
{
	uint64_t h = 14695981039346656037ULL, len;
	unsigned char tag;
	const void *p;
	int64_t v;
	double x;
	int i;

	for (i = 0; i < ncol; i++) {
		switch (db_col_type(st, i)) {
		case DB_NULL:
			tag = 0;
			h = fnv(h, &tag, 1);
			break;
		case DB_INTEGER:
		case DB_FLOAT:
			x = db_col_double(st, i);
			if (db_col_type(st, i) == DB_INTEGER) {
				v = db_col_int64(st, i);
			} else if (x == trunc(x) && fabs(x) < 9.0e18) {
				v = (int64_t)x;
			} else {
				tag = 2;
				h = fnv(h, &tag, 1);
				h = fnv(h, &x, sizeof(x));
				break;
			}
			tag = 1;
			h = fnv(h, &tag, 1);
			h = fnv(h, &v, sizeof(v));
			break;
		default:
			p = db_col_blob(st, i);
			len = (uint64_t)db_col_bytes(st, i);
			tag = 3;
			h = fnv(h, &tag, 1);
			h = fnv(h, &len, sizeof(len));
			if (p != NULL)
				h = fnv(h, p, (size_t)len);
		}
	}
	return h;
}

static void
bind_as_read(struct db_stmt *ins, int k, struct db_stmt *src, int i)
{
	const void *p;

	switch (db_col_type(src, i)) {
	case DB_INTEGER:
		db_bind_int64(ins, k, db_col_int64(src, i));
		break;
	case DB_FLOAT:
		db_bind_double(ins, k, db_col_double(src, i));
		break;
	case DB_TEXT:
		db_bind_text(ins, k, db_col_text(src, i), db_col_bytes(src, i));
		break;
	case DB_BLOB:
		p = db_col_blob(src, i);
		db_bind_blob(ins, k, p ? p : "", (size_t)db_col_bytes(src, i));
		break;
	default:
		db_bind_null(ins, k);
	}
}

/* SELECT of cols from table (its rows in the order of the first). */
static void
select_sql(char *q, size_t size, const char *table, const struct names *cols)
{
	size_t i;

	snprintf(q, size, "SELECT ");
	for (i = 0; i < cols->n; i++) {
		if (i > 0)
			strncat(q, ", ", size - strlen(q) - 1);
		quote(q, size, cols->v[i]);
	}
	strncat(q, " FROM ", size - strlen(q) - 1);
	quote(q, size, table);
	strncat(q, " ORDER BY 1", size - strlen(q) - 1);
}

/*
 * The rows of a table's SELECT, read in batches: libpq holds the whole
 * result of a statement in memory (a table of 1M runs' metrics is
 * hundreds of MB), so a PostgreSQL side reads through a cursor,
 * FETCH_ROWS rows a round trip, inside the transaction each side is in
 * (copy_all); SQLite's statement steps through the table as it is.
 * One reader open a side at a time.
 */
#define FETCH_ROWS 2000

struct rows {
	struct side *d;
	struct db_stmt *st;
	int cursor; /* PostgreSQL: the statement FETCHes from the cursor */
	size_t got; /* rows of the current FETCH */
};

static int
rows_open(struct rows *r, struct side *d, const char *sql, struct err *e)
{
	char fetch[64];

	r->d = d;
	r->st = NULL;
	r->got = 0;
	r->cursor = is_pg(d);
	if (r->cursor) {
		/* The plan a plain SELECT of all the rows gets (a scan and a
		 * sort), not one for the first tenth of them. */
		char *q =
		    xasprintf("SET LOCAL cursor_tuple_fraction = 1;"
		              " DECLARE pw_copy_rows NO SCROLL CURSOR FOR %s",
		        sql);
		int rc = exec_sql(d, q, e);

		free(q);
		if (rc != 0)
			return -1;
		snprintf(fetch, sizeof(fetch),
		    "FETCH FORWARD %d FROM pw_copy_rows", FETCH_ROWS);
		sql = fetch;
	}
	if ((r->st = store_i_prep(d->s, sql)) == NULL)
		return side_err(d, e);
	return 0;
}

/* DB_ROW, DB_DONE at the end of the rows, or an error code. */
static int
rows_step(struct rows *r)
{
	int rc;

	for (;;) {
		if ((rc = db_step(r->st)) == DB_ROW) {
			r->got++;
			return rc;
		}
		/* A FETCH that came back full: the next one. */
		if (rc != DB_DONE || !r->cursor || r->got < FETCH_ROWS)
			return rc;
		db_reset(r->st);
		r->got = 0;
	}
}

static void
rows_close(struct rows *r)
{
	db_finalize(r->st);
	r->st = NULL;
	if (r->cursor)
		store_i_exec(r->d->s, "CLOSE pw_copy_rows");
}

/* The rows and checksum of the rows sql reads. */
static int
sum_rows(struct side *d, const char *sql, int ncol, int64_t *rows,
    uint64_t *sum, struct err *e)
{
	struct rows rd;
	int rc;

	*rows = 0;
	*sum = 0;
	if (rows_open(&rd, d, sql, e) != 0)
		return -1;
	while ((rc = rows_step(&rd)) == DB_ROW) {
		*sum += row_hash(rd.st, ncol);
		(*rows)++;
	}
	if (rc != DB_DONE)
		store_i_dberr(d->s, "read back");
	rows_close(&rd);
	return rc == DB_DONE ? 0 : side_err(d, e);
}

/* Rows a statement inserts at once: few round trips to a server, its
 * parameters within what either backend takes (SQLite 32766,
 * PostgreSQL 65535). */
static size_t
batch_rows(size_t ncol)
{
	size_t n = 30000 / (ncol ? ncol : 1);

	return n > 1000 ? 1000 : n ? n : 1;
}

/* INSERT INTO table (cols) VALUES (?, ...), ... of nrows rows: its
 * parameters by position (SQLite looks up each numbered ?NNN in a list,
 * which takes quadratic time in a statement this long). */
static struct db_stmt *
insert_stmt(struct side *dst, const char *table, const struct names *cols,
    size_t nrows, struct err *e)
{
	size_t size = 256 + cols->n * 64 + nrows * cols->n * 10, i, r, n;
	char *q = xmalloc(size);
	struct db_stmt *st;

	snprintf(q, size, "INSERT INTO ");
	quote(q, size, table);
	strncat(q, " (", size - strlen(q) - 1);
	for (i = 0; i < cols->n; i++) {
		if (i > 0)
			strncat(q, ", ", size - strlen(q) - 1);
		quote(q, size, cols->v[i]);
	}
	strncat(q, ") VALUES ", size - strlen(q) - 1);
	n = strlen(q);
	for (r = 0; r < nrows; r++)
		for (i = 0; i < cols->n; i++)
			n += (size_t)snprintf(q + n, size - n, "%s?%s",
			    i > 0       ? ", "
			        : r > 0 ? ", ("
			                : "(",
			    i + 1 == cols->n ? ")" : "");
	if ((st = store_i_prep(dst->s, q)) == NULL)
		side_err(dst, e);
	free(q);
	return st;
}

/* The source's rows of table: 0 and *n, or -1 with e. */
static int
count_rows(struct side *src, const char *table, int64_t *n, struct err *e)
{
	struct db_stmt *st;
	char q[512];
	int rc;

	snprintf(q, sizeof(q), "SELECT count(*) FROM ");
	quote(q, sizeof(q), table);
	if ((st = store_i_prep(src->s, q)) == NULL)
		return side_err(src, e);
	if ((rc = db_step(st)) == DB_ROW)
		*n = db_col_int64(st, 0);
	else
		store_i_dberr(src->s, table);
	db_finalize(st);
	return rc == DB_ROW ? 0 : side_err(src, e);
}

/*
 * The rows of table, read in the order of its first column, go in by
 * statements of batch_rows rows each (the last one of the rows left):
 * one round trip a batch, not a row, to a server.
 */
static int
copy_table(struct side *src, struct side *dst, const char *table,
    struct store_copy_table *out, struct err *e)
{
	struct names cols = { 0 }, scols = { 0 };
	struct db_stmt *sel, *ins = NULL, *full = NULL;
	struct rows rd = { 0 };
	char *q = xmalloc(16384);
	int64_t back_rows, total = 0;
	uint64_t back_sum;
	int rc = -1, step;
	size_t i, k = 0, batch, want = 0;

	out->name = xstrdup(table);
	if (columns_of(dst, table, &cols, e) != 0 ||
	    columns_of(src, table, &scols, e) != 0)
		goto done;
	for (i = 0; i < cols.n; i++)
		if (!names_has(&scols, cols.v[i])) {
			err_set(e, "table %s: %s has column %s, %s has not",
			    table, dst->shown, cols.v[i], src->shown);
			goto done;
		}
	if (scols.n != cols.n) {
		err_set(e, "table %s: %s has %zu columns, %s has %zu", table,
		    src->shown, scols.n, dst->shown, cols.n);
		goto done;
	}
	if (is_seeded(table)) {
		snprintf(q, 16384, "DELETE FROM ");
		quote(q, 16384, table);
		if (exec_sql(dst, q, e) != 0)
			goto done;
	}
	if (count_rows(src, table, &total, e) != 0)
		goto done;
	select_sql(q, 16384, table, &cols);
	if (rows_open(&rd, src, q, e) != 0)
		goto done;
	sel = rd.st;
	batch = batch_rows(cols.n);
	while ((step = rows_step(&rd)) == DB_ROW) {
		if (k == 0) {
			/* A batch starts: of batch rows, or of those left. */
			want = total - out->rows >= (int64_t)batch
			    ? batch
			    : (size_t)(total - out->rows);
			if (want == 0) {
				err_set(e,
				    "table %s: %s (from) has more rows than"
				    " the %lld it counted",
				    table, src->shown, (long long)total);
				goto done;
			}
			if (want == batch && full != NULL) {
				ins = full;
			} else {
				if (ins != full)
					db_finalize(ins);
				ins = insert_stmt(dst, table, &cols, want, e);
				if (ins == NULL)
					goto done;
				if (want == batch)
					full = ins;
			}
		}
		for (i = 0; i < cols.n; i++)
			bind_as_read(
			    ins, (int)(k * cols.n + i) + 1, sel, (int)i);
		out->sum += row_hash(sel, (int)cols.n);
		out->rows++;
		if (++k < want)
			continue;
		if (db_step(ins) != DB_DONE) {
			store_i_dberr(dst->s, "insert");
			err_set(e, "table %s, rows %lld to %lld: %s (%s): %s",
			    table, (long long)(out->rows - (int64_t)k + 1),
			    (long long)out->rows, dst->shown, dst->role,
			    err_msg(&dst->s->err));
			goto done;
		}
		db_reset(ins);
		k = 0;
	}
	if (step != DB_DONE) {
		store_i_dberr(src->s, table);
		side_err(src, e);
		goto done;
	}
	rows_close(&rd);
	if (k != 0 || out->rows != total) {
		err_set(e, "table %s: %s (from) counted %lld rows, read %lld",
		    table, src->shown, (long long)total, (long long)out->rows);
		goto done;
	}
	select_sql(q, 16384, table, &cols);
	if (sum_rows(dst, q, (int)cols.n, &back_rows, &back_sum, e) != 0)
		goto done;
	if (back_rows != out->rows || back_sum != out->sum) {
		err_set(e,
		    "table %s: %lld rows read, %lld written (checksum "
		    "%016llx, %016llx): nothing copied",
		    table, (long long)out->rows, (long long)back_rows,
		    (unsigned long long)out->sum, (unsigned long long)back_sum);
		goto done;
	}
	rc = 0;
done:
	if (rd.st != NULL)
		rows_close(&rd);
	if (ins != full)
		db_finalize(ins);
	db_finalize(full);
	names_free(&cols);
	names_free(&scols);
	free(q);
	return rc;
}

/* -1 with e when a table of the target but those the schema fills
 * has a row. */
static int
target_empty(struct side *dst, const struct names *tables, struct err *e)
{
	struct db_stmt *st;
	char q[256];
	size_t i;
	int rc;

	for (i = 0; i < tables->n; i++) {
		if (is_seeded(tables->v[i]))
			continue;
		snprintf(q, sizeof(q), "SELECT 1 FROM ");
		quote(q, sizeof(q), tables->v[i]);
		strncat(q, " LIMIT 1", sizeof(q) - strlen(q) - 1);
		if ((st = store_i_prep(dst->s, q)) == NULL)
			return side_err(dst, e);
		rc = db_step(st);
		if (rc != DB_ROW && rc != DB_DONE)
			store_i_dberr(dst->s, tables->v[i]);
		db_finalize(st);
		if (rc == DB_ROW)
			return err_set(e,
			    "%s (to) is not empty: table %s has rows; copy "
			    "into a new database",
			    dst->shown, tables->v[i]);
		if (rc != DB_DONE)
			return side_err(dst, e);
	}
	return 0;
}

/* The target's triggers off and foreign keys out of the way; what
 * put_back needs in sv. */
static int
set_aside(struct side *dst, const struct names *tables, struct saved *sv,
    struct err *e)
{
	char q[1024];
	size_t i;

	if (!is_pg(dst)) {
		if (read_text(dst,
		        "SELECT tbl_name, name, sql FROM sqlite_master"
		        " WHERE type = 'trigger' ORDER BY name",
		        NULL, &sv->table, &sv->name, &sv->def, e) != 0)
			return -1;
		for (i = 0; i < sv->name.n; i++) {
			snprintf(q, sizeof(q), "DROP TRIGGER ");
			quote(q, sizeof(q), sv->name.v[i]);
			if (exec_sql(dst, q, e) != 0)
				return -1;
		}
		return 0;
	}
	if (read_text(dst,
	        "SELECT conrelid::regclass::text, conname::text,"
	        " pg_get_constraintdef(oid) FROM pg_constraint WHERE"
	        " contype = 'f' AND connamespace ="
	        " current_schema()::regnamespace ORDER BY 1, 2",
	        NULL, &sv->table, &sv->name, &sv->def, e) != 0)
		return -1;
	for (i = 0; i < sv->name.n; i++) {
		snprintf(q, sizeof(q), "ALTER TABLE %s DROP CONSTRAINT ",
		    sv->table.v[i]);
		quote(q, sizeof(q), sv->name.v[i]);
		if (exec_sql(dst, q, e) != 0)
			return -1;
	}
	for (i = 0; i < tables->n; i++) {
		snprintf(q, sizeof(q), "ALTER TABLE ");
		quote(q, sizeof(q), tables->v[i]);
		strncat(q, " DISABLE TRIGGER USER", sizeof(q) - strlen(q) - 1);
		if (exec_sql(dst, q, e) != 0)
			return -1;
	}
	return 0;
}

static int
put_back(struct side *dst, const struct names *tables, struct saved *sv,
    struct err *e)
{
	struct db_stmt *st;
	char q[4096];
	size_t i;
	int rc;

	if (!is_pg(dst)) {
		for (i = 0; i < sv->def.n; i++)
			if (exec_sql(dst, sv->def.v[i], e) != 0)
				return -1;
		if ((st = store_i_prep(dst->s, "PRAGMA foreign_key_check")) ==
		    NULL)
			return side_err(dst, e);
		rc = db_step(st);
		if (rc == DB_ROW)
			err_set(e,
			    "table %s row %lld refers to a missing row of %s",
			    db_col_text(st, 0), (long long)db_col_int64(st, 1),
			    db_col_text(st, 2));
		else if (rc != DB_DONE)
			side_err(dst, e);
		db_finalize(st);
		return rc == DB_DONE ? 0 : -1;
	}
	for (i = 0; i < tables->n; i++) {
		snprintf(q, sizeof(q), "ALTER TABLE ");
		quote(q, sizeof(q), tables->v[i]);
		strncat(q, " ENABLE TRIGGER USER", sizeof(q) - strlen(q) - 1);
		if (exec_sql(dst, q, e) != 0)
			return -1;
	}
	for (i = 0; i < sv->name.n; i++) {
		snprintf(q, sizeof(q), "ALTER TABLE %s ADD CONSTRAINT ",
		    sv->table.v[i]);
		quote(q, sizeof(q), sv->name.v[i]);
		strncat(q, " ", sizeof(q) - strlen(q) - 1);
		strncat(q, sv->def.v[i], sizeof(q) - strlen(q) - 1);
		if (exec_sql(dst, q, e) != 0)
			return -1;
	}
	return 0;
}

/* PostgreSQL: each identity column's sequence gives next the greatest
 * id copied plus one. */
static int
sequences_past(struct side *dst, const struct names *tables, struct err *e)
{
	struct names idcol = { 0 };
	char q[1024];
	size_t i;
	int rc = 0;

	for (i = 0; i < tables->n && rc == 0; i++) {
		if (read_text(dst,
		        "SELECT attname::text FROM pg_attribute WHERE attrelid"
		        " = ?1::regclass AND attidentity <> ''",
		        tables->v[i], &idcol, NULL, NULL, e) != 0) {
			rc = -1;
			break;
		}
		if (idcol.n == 1) {
			snprintf(q, sizeof(q),
			    "SELECT setval(pg_get_serial_sequence('%s', '%s'),"
			    " coalesce(max(",
			    tables->v[i], idcol.v[0]);
			quote(q, sizeof(q), idcol.v[0]);
			strncat(q, "), 0) + 1, false) FROM ",
			    sizeof(q) - strlen(q) - 1);
			quote(q, sizeof(q), tables->v[i]);
			rc = exec_sql(dst, q, e);
		}
		names_free(&idcol);
	}
	return rc;
}

static int
same_tables(struct side *src, struct side *dst, const struct names *a,
    const struct names *b, struct err *e)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!names_has(b, a->v[i]))
			return err_set(e, "table %s is in %s, not in %s",
			    a->v[i], src->shown, dst->shown);
	for (i = 0; i < b->n; i++)
		if (!names_has(a, b->v[i]))
			return err_set(e, "table %s is in %s, not in %s",
			    b->v[i], dst->shown, src->shown);
	return 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The copy proper: both open at STORE_VERSION. */
static int
copy_all(struct side *src, struct side *dst, struct store_copy_report *out,
    struct err *e)
{
	struct names st = { 0 }, dt = { 0 };
	struct saved sv = { { 0 } };
	int rc = -1, fk_off = 0;
	size_t i;

	if (tables_of(src, &st, e) != 0 || tables_of(dst, &dt, e) != 0 ||
	    same_tables(src, dst, &st, &dt, e) != 0)
		goto done;
	qsort(dt.v, dt.n, sizeof(*dt.v), cmp_name);
	if (!is_pg(dst)) {
		if (exec_sql(dst, "PRAGMA foreign_keys = OFF", e) != 0)
			goto done;
		fk_off = 1;
	}
	if (store_i_tx_begin(dst->s) != 0) {
		side_err(dst, e);
		goto done;
	}
	if (store_read_begin(src->s) != 0) {
		side_err(src, e);
		goto abort;
	}
	if (target_empty(dst, &dt, e) != 0 || set_aside(dst, &dt, &sv, e) != 0)
		goto abort;
	out->t = xcalloc(dt.n, sizeof(*out->t));
	for (i = 0; i < dt.n; i++) {
		out->n = i + 1;
		if (copy_table(src, dst, dt.v[i], &out->t[i], e) != 0)
			goto abort;
	}
	if ((is_pg(dst) && sequences_past(dst, &dt, e) != 0) ||
	    put_back(dst, &dt, &sv, e) != 0)
		goto abort;
	store_read_end(src->s);
	if (store_i_tx_end(dst->s, 1) != 0) {
		side_err(dst, e);
		goto done;
	}
	/* PostgreSQL plans by the tables' statistics, which rows copied in
	 * do not make until autovacuum comes by (never, for a table of a
	 * few rows such as trees): without them a prepared statement's
	 * generic plan sorts a whole branch's commits for a page of 50. */
	if (is_pg(dst) && exec_sql(dst, "ANALYZE", e) != 0)
		goto done;
	rc = 0;
	goto done;
abort:
	store_read_end(src->s);
	store_i_tx_end(dst->s, 0);
done:
	if (fk_off)
		store_i_exec(dst->s, "PRAGMA foreign_keys = ON");
	names_free(&st);
	names_free(&dt);
	names_free(&sv.table);
	names_free(&sv.name);
	names_free(&sv.def);
	return rc;
}

int
store_copy(const char *from, const char *to, struct store_copy_report *out,
    struct err *e)
{
	struct side src = { 0 }, dst = { 0 };
	int vs, vd, rc = -1;

	out->t = NULL;
	out->n = 0;
	if (strcmp(from, to) == 0)
		return err_set(
		    e, "%s: the source and the target are one", from);
	if (!database_is_pg(from) && access(from, R_OK) != 0)
		return err_set(e, "%s (from): no such database file", from);
	if (side_open(&src, from, "from", e) == NULL)
		return -1;
	if (side_version(&src, &vs, e) != 0)
		goto done;
	if (vs != STORE_VERSION) {
		err_set(e,
		    vs == 0 ? "%s (from): no perfwatch store in it"
		            : "%s (from): schema version %d, this perfwatch's "
		              "is %d: open it once with the perfwatchd of this "
		              "version (it migrates), or copy with the "
		              "perfwatch of its own",
		    src.shown, vs, STORE_VERSION);
		goto done;
	}
	if (side_open(&dst, to, "to", e) == NULL)
		goto done;
	if (side_version(&dst, &vd, e) != 0)
		goto done;
	if (vd != 0 && vd != STORE_VERSION) {
		err_set(e,
		    "%s (to): schema version %d, not this perfwatch's %d: "
		    "copy into a new database",
		    dst.shown, vd, STORE_VERSION);
		goto done;
	}
	/* The schema, in a transaction of its own: a copy that fails after
	 * it leaves a store with no rows, which a second try takes. */
	store_close(dst.s);
	if (store_open(&dst.s, to, e) != 0) {
		dst.s = NULL;
		goto done;
	}
	rc = copy_all(&src, &dst, out, e);
done:
	store_close(src.s);
	store_close(dst.s);
	return rc;
}

void
store_copy_report_release(struct store_copy_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->t[i].name);
	free(r->t);
	r->t = NULL;
	r->n = 0;
}
