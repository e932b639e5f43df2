#ifndef STORE_DB_H
#define STORE_DB_H

/*
 * The database layer the store's files talk to instead of a database
 * library: a connection, prepared statements with positional parameters
 * (?NNN in the SQL, numbered from 1), rows stepped one at a time and
 * their columns read by index.  One backend per connection, chosen by
 * db_open from where it points; each backend (store/db_sqlite.c, ...)
 * is the only file that includes its library.  Only store/ includes
 * this.
 *
 * A statement's bound values are copied; a column's text or bytes stay
 * valid until the statement is stepped again, reset or finalized.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct db;
struct db_stmt;

enum db_backend { DB_SQLITE, DB_PG };

/* db_step's results: a row, the end, or why it failed. */
enum {
	DB_ERROR = 1,
	DB_BUSY = 5,         /* locked, a serialization failure, a deadlock */
	DB_FULL = 13,        /* the disk is full */
	DB_UNAVAILABLE = 14, /* the server's connection lost, not back yet */
	DB_CONSTRAINT = 19,  /* a unique, foreign key or check constraint */
	DB_ROW = 100,
	DB_DONE = 101,
};

/* A column's type in the current row (db_col_type). */
enum db_type { DB_INTEGER = 1, DB_FLOAT, DB_TEXT, DB_BLOB, DB_NULL };

/*
 * Opens where: a file path is SQLite (created when missing); a
 * postgresql:// or postgres:// URI or a libpq conninfo ("host=...
 * dbname=...") is PostgreSQL.  0, or -1 with e naming where (a password
 * in it redacted).
 */
int db_open(struct db **out, const char *where, struct err *e);
void db_close(struct db *);
enum db_backend db_backend(const struct db *);

/* Runs sql (one or more statements, no parameters, rows discarded): 0 or
 * -1 with db_errmsg. */
int db_exec(struct db *, const char *sql);
/* The last error's message and its DB_* code. */
const char *db_errmsg(struct db *);
int db_errcode(struct db *);

/* BEGIN for a transaction that will write (SQLite takes the write lock
 * at once, BEGIN IMMEDIATE); COMMIT and ROLLBACK are plain SQL.  On
 * PostgreSQL the BEGIN goes with the transaction's first statement (a
 * failed BEGIN fails that statement) and a transaction without one
 * sends nothing. */
int db_begin_write(struct db *);
/* BEGIN for reads that see one snapshot (PostgreSQL: REPEATABLE READ).
 * 0 or -1. */
int db_begin_read(struct db *);
/*
 * Ends a read transaction (db_begin_read) that wrote nothing: its
 * COMMIT.  On PostgreSQL the COMMIT is sent and not waited for: the
 * connection's next use reads its answer first, and a failure there
 * (the connection lost) costs nothing, a read-only transaction having
 * nothing to lose.  0, or -1 with db_errmsg when the transaction has not
 * ended (then ROLLBACK).
 */
int db_end_read(struct db *);
/* 1 outside a transaction (a failed statement may have ended one). */
int db_autocommit(struct db *);
/* 0 while the connection to a database server is lost (a file's: 1). */
int db_connected(struct db *);

/*
 * sql (one command without parameters, a string that outlives the next
 * statement: a literal) to run before the next statement: on
 * PostgreSQL it goes with it in one round trip (a SAVEPOINT, say), and
 * its failure is that statement's; elsewhere it runs now.  0 or -1.
 */
int db_exec_later(struct db *, const char *sql);

/*
 * Runs sql as db_exec does and then, when it succeeded, steps st (its
 * rows then read as after db_step): on PostgreSQL both in one round
 * trip, so that what st does after a COMMIT costs no wait of its own.
 * 0 with *step st's db_step result, or -1 when sql failed (db_errmsg;
 * st not run, *step 0).
 */
int db_exec_step(struct db *, const char *sql, struct db_stmt *st, int *step);

/* sql prepared, or NULL with db_errmsg. */
struct db_stmt *db_prepare(struct db *, const char *sql);
const char *db_sql(struct db_stmt *);
void db_bind_int64(struct db_stmt *, int i, int64_t v);
void db_bind_double(struct db_stmt *, int i, double v);
/* n bytes of v, or (n < 0) up to its NUL; NULL binds NULL. */
void db_bind_text(struct db_stmt *, int i, const char *v, int n);
void db_bind_blob(struct db_stmt *, int i, const void *v, size_t n);
void db_bind_null(struct db_stmt *, int i);
/* n values as one parameter, an array: PostgreSQL's text[] (a NULL
 * element NULL) or float8[]; the SQL casts it (?11::text[]).  SQLite
 * has no arrays: the store sends these to PostgreSQL only. */
void db_bind_text_array(
    struct db_stmt *, int i, const char *const *v, size_t n);
void db_bind_double_array(struct db_stmt *, int i, const double *v, size_t n);
/* DB_ROW, DB_DONE or an error code (db_errmsg of its connection). */
int db_step(struct db_stmt *);
int db_col_count(struct db_stmt *);
enum db_type db_col_type(struct db_stmt *, int i);
int64_t db_col_int64(struct db_stmt *, int i);
int db_col_int(struct db_stmt *, int i);
double db_col_double(struct db_stmt *, int i);
/* NULL for NULL. */
const char *db_col_text(struct db_stmt *, int i);
const void *db_col_blob(struct db_stmt *, int i);
int db_col_bytes(struct db_stmt *, int i);
/* Ready to step again (the bindings kept); then without them. */
void db_reset(struct db_stmt *);
void db_clear_bindings(struct db_stmt *);
void db_finalize(struct db_stmt *);
/* The work a statement did since the last call (SQLite's virtual
 * machine steps; 0 where a backend does not count them). */
uint64_t db_stmt_work(struct db_stmt *);

/* Rows the last INSERT/UPDATE/DELETE changed; all this connection has
 * changed since it opened; the id the last INSERT gave its row. */
int64_t db_changes(struct db *);
int64_t db_total_changes(struct db *);
int64_t db_last_id(struct db *);
/* PostgreSQL: db_last_id gives id until the next INSERT, whatever ran
 * meanwhile (lastval() would give a sequence's bump of the store's
 * generation, store.c).  SQLite: nothing. */
void db_last_id_keep(struct db *, int64_t id);

/*
 * A number that moves when another connection commits (SQLite's
 * data_version); a backend that cannot tell gives a new number each
 * call.  0 or -1.
 */
int db_data_version(struct db *, int64_t *out);
/* The times this connection waited for the server's answer (a round
 * trip: one pipeline, one query string); 0 where there is no server. */
uint64_t db_round_trips(struct db *);
/* Write-ahead log upkeep (SQLite; a no-op elsewhere): a passive
 * checkpoint, *log the log's pages (0 when it has none); 0, DB_BUSY or
 * -1.  The log's size that starts an automatic one. */
int db_checkpoint(struct db *, int *log);
void db_autocheckpoint(struct db *, int pages);

#endif
