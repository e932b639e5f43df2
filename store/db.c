/*
 * The database layer's front (store/db.h): db_open picks the backend
 * from where the database is, and every other call goes to the
 * connection's backend (store/db_backend.h).
 */
#include "store/db.h"
#include "common/database.h"
#include "store/db_backend.h"

int
db_open(struct db **out, const char *where, struct err *e)
{
	*out = NULL;
	if (database_is_pg(where))
		return db_pg_open(out, where, e);
	return db_sqlite_open(out, where, e);
}

enum db_backend
db_backend(const struct db *db)
{
	return db->ops->backend;
}

void
db_close(struct db *db)
{
	if (db != NULL)
		db->ops->close(db);
}

int
db_exec(struct db *db, const char *sql)
{
	return db->ops->exec(db, sql);
}

const char *
db_errmsg(struct db *db)
{
	return db->ops->errmsg(db);
}

int
db_errcode(struct db *db)
{
	return db->ops->errcode(db);
}

int
db_begin_write(struct db *db)
{
	return db->ops->begin_write(db);
}

int
db_begin_read(struct db *db)
{
	return db->ops->begin_read(db);
}

int
db_end_read(struct db *db)
{
	if (db->ops->end_read != NULL)
		return db->ops->end_read(db);
	return db_exec(db, "COMMIT");
}

int
db_autocommit(struct db *db)
{
	return db->ops->autocommit(db);
}

int
db_connected(struct db *db)
{
	return db->ops->connected(db);
}

int
db_exec_later(struct db *db, const char *sql)
{
	if (db->ops->exec_later != NULL)
		return db->ops->exec_later(db, sql);
	return db_exec(db, sql);
}

int
db_exec_step(struct db *db, const char *sql, struct db_stmt *st, int *step)
{
	*step = 0;
	if (db->ops->exec_step != NULL)
		return db->ops->exec_step(db, sql, st, step);
	if (db_exec(db, sql) != 0)
		return -1;
	*step = db_step(st);
	return 0;
}

struct db_stmt *
db_prepare(struct db *db, const char *sql)
{
	return db->ops->prepare(db, sql);
}

const char *
db_sql(struct db_stmt *st)
{
	return st->db->ops->sql(st);
}

void
db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	st->db->ops->bind_int64(st, i, v);
}

void
db_bind_double(struct db_stmt *st, int i, double v)
{
	st->db->ops->bind_double(st, i, v);
}

void
db_bind_text(struct db_stmt *st, int i, const char *v, int n)
{
	if (v == NULL)
		st->db->ops->bind_null(st, i);
	else
		st->db->ops->bind_text(st, i, v, n);
}

void
db_bind_blob(struct db_stmt *st, int i, const void *v, size_t n)
{
	st->db->ops->bind_blob(st, i, v, n);
}

void
db_bind_null(struct db_stmt *st, int i)
{
	st->db->ops->bind_null(st, i);
}

void
db_bind_text_array(struct db_stmt *st, int i, const char *const *v, size_t n)
{
	if (st->db->ops->bind_text_array != NULL)
		st->db->ops->bind_text_array(st, i, v, n);
	else
		st->db->ops->bind_null(st, i);
}

void
db_bind_double_array(struct db_stmt *st, int i, const double *v, size_t n)
{
	if (st->db->ops->bind_double_array != NULL)
		st->db->ops->bind_double_array(st, i, v, n);
	else
		st->db->ops->bind_null(st, i);
}

int
db_step(struct db_stmt *st)
{
	return st->db->ops->step(st);
}

int
db_col_count(struct db_stmt *st)
{
	return st->db->ops->col_count(st);
}

enum db_type
db_col_type(struct db_stmt *st, int i)
{
	return st->db->ops->col_type(st, i);
}

int64_t
db_col_int64(struct db_stmt *st, int i)
{
	return st->db->ops->col_int64(st, i);
}

int
db_col_int(struct db_stmt *st, int i)
{
	return (int)st->db->ops->col_int64(st, i);
}

double
db_col_double(struct db_stmt *st, int i)
{
	return st->db->ops->col_double(st, i);
}

const char *
db_col_text(struct db_stmt *st, int i)
{
	return st->db->ops->col_text(st, i);
}

const void *
db_col_blob(struct db_stmt *st, int i)
{
	return st->db->ops->col_blob(st, i);
}

int
db_col_bytes(struct db_stmt *st, int i)
{
	return st->db->ops->col_bytes(st, i);
}

void
db_reset(struct db_stmt *st)
{
	st->db->ops->reset(st);
}

void
db_clear_bindings(struct db_stmt *st)
{
	st->db->ops->clear_bindings(st);
}

void
db_finalize(struct db_stmt *st)
{
	if (st != NULL)
		st->db->ops->finalize(st);
}

uint64_t
db_stmt_work(struct db_stmt *st)
{
	return st->db->ops->stmt_work(st);
}

int64_t
db_changes(struct db *db)
{
	return db->ops->changes(db);
}

int64_t
db_total_changes(struct db *db)
{
	return db->ops->total_changes(db);
}

int64_t
db_last_id(struct db *db)
{
	return db->ops->last_id(db);
}

void
db_last_id_keep(struct db *db, int64_t id)
{
	if (db->ops->last_id_keep != NULL)
		db->ops->last_id_keep(db, id);
}

int
db_data_version(struct db *db, int64_t *out)
{
	return db->ops->data_version(db, out);
}

int
db_checkpoint(struct db *db, int *log)
{
	return db->ops->checkpoint(db, log);
}

void
db_autocheckpoint(struct db *db, int pages)
{
	db->ops->autocheckpoint(db, pages);
}

uint64_t
db_round_trips(struct db *db)
{
	return db->ops->round_trips != NULL ? db->ops->round_trips(db) : 0;
}
