/*
 * The SQLite backend of store/db.h: a file opened in WAL mode with
 * foreign keys on, statements as SQLite prepares them.  The only file
 * that includes <sqlite3.h>.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "store/db.h"
#include "store/db_backend.h"

struct sq {
	struct db base;
	sqlite3 *h;
	sqlite3_stmt *dv;    /* PRAGMA data_version */
	sqlite3_stmt *begin; /* BEGIN, prepared once: reads begin often */
	char msg[512];
	int code;
};

struct sq_stmt {
	struct db_stmt base;
	sqlite3_stmt *st;
};

#define SQ(d) ((struct sq *)(d))
#define ST(s) (((struct sq_stmt *)(s))->st)

static int
code_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_ROW:
		return DB_ROW;
	case SQLITE_DONE:
		return DB_DONE;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return DB_BUSY;
	case SQLITE_FULL:
		return DB_FULL;
	case SQLITE_CONSTRAINT:
		return DB_CONSTRAINT;
	default:
		return DB_ERROR;
	}
}

/* The connection's last error as db_errmsg gives it. */
static void
note(struct sq *q)
{
	int rc = sqlite3_extended_errcode(q->h);

	snprintf(q->msg, sizeof(q->msg), "%s (%d)", sqlite3_errmsg(q->h), rc);
	q->code = code_of(rc);
}

static void
sq_close(struct db *d)
{
	struct sq *q = SQ(d);

	sqlite3_finalize(q->dv);
	sqlite3_finalize(q->begin);
	sqlite3_close(q->h);
	free(q);
}

static int
sq_exec(struct db *d, const char *sql)
{
	struct sq *q = SQ(d);
	char *msg = NULL;
	int rc = sqlite3_exec(q->h, sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	snprintf(q->msg, sizeof(q->msg), "%s", msg ? msg : "error");
	q->code = code_of(rc);
	sqlite3_free(msg);
	return -1;
}

static const char *
sq_errmsg(struct db *d)
{
	return SQ(d)->msg;
}

static int
sq_errcode(struct db *d)
{
	return SQ(d)->code;
}

static int
sq_begin_write(struct db *d)
{
	return sq_exec(d, "BEGIN IMMEDIATE");
}

static int
sq_begin_read(struct db *d)
{
	struct sq *q = SQ(d);
	int rc;

	if (q->begin == NULL &&
	    sqlite3_prepare_v2(q->h, "BEGIN", -1, &q->begin, NULL) !=
	        SQLITE_OK) {
		note(q);
		return -1;
	}
	rc = sqlite3_step(q->begin);
	sqlite3_reset(q->begin);
	if (rc == SQLITE_DONE)
		return 0;
	note(q);
	return -1;
}

static int
sq_autocommit(struct db *d)
{
	return sqlite3_get_autocommit(SQ(d)->h) != 0;
}

static int
sq_connected(struct db *d)
{
	(void)d;
	return 1;
}

static struct db_stmt *
sq_prepare(struct db *d, const char *sql)
{
	struct sq *q = SQ(d);
	sqlite3_stmt *st = NULL;
	struct sq_stmt *s;

	if (sqlite3_prepare_v2(q->h, sql, -1, &st, NULL) != SQLITE_OK) {
		note(q);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->base.db = d;
	s->st = st;
	return &s->base;
}

static const char *
sq_sql(struct db_stmt *s)
{
	return sqlite3_sql(ST(s));
}

static void
sq_bind_int64(struct db_stmt *s, int i, int64_t v)
{
	sqlite3_bind_int64(ST(s), i, v);
}

static void
sq_bind_double(struct db_stmt *s, int i, double v)
{
	sqlite3_bind_double(ST(s), i, v);
}

static void
sq_bind_text(struct db_stmt *s, int i, const char *v, int n)
{
	sqlite3_bind_text(ST(s), i, v, n, SQLITE_TRANSIENT);
}

static void
sq_bind_blob(struct db_stmt *s, int i, const void *v, size_t n)
{
	sqlite3_bind_blob64(ST(s), i, v, (sqlite3_uint64)n, SQLITE_TRANSIENT);
}

static void
sq_bind_null(struct db_stmt *s, int i)
{
	sqlite3_bind_null(ST(s), i);
}

static int
sq_step(struct db_stmt *s)
{
	int rc = sqlite3_step(ST(s));

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	note(SQ(s->db));
	return code_of(rc);
}

static int
sq_col_count(struct db_stmt *s)
{
	return sqlite3_column_count(ST(s));
}

static enum db_type
sq_col_type(struct db_stmt *s, int i)
{
	switch (sqlite3_column_type(ST(s), i)) {
	case SQLITE_INTEGER:
		return DB_INTEGER;
	case SQLITE_FLOAT:
		return DB_FLOAT;
	case SQLITE_TEXT:
		return DB_TEXT;
	case SQLITE_BLOB:
		return DB_BLOB;
	default:
		return DB_NULL;
	}
}

static int64_t
sq_col_int64(struct db_stmt *s, int i)
{
	return sqlite3_column_int64(ST(s), i);
}

static double
sq_col_double(struct db_stmt *s, int i)
{
	return sqlite3_column_double(ST(s), i);
}

static const char *
sq_col_text(struct db_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(ST(s), i);
}

static const void *
sq_col_blob(struct db_stmt *s, int i)
{
	return sqlite3_column_blob(ST(s), i);
}

static int
sq_col_bytes(struct db_stmt *s, int i)
{
	return sqlite3_column_bytes(ST(s), i);
}

static void
sq_reset(struct db_stmt *s)
{
	sqlite3_reset(ST(s));
}

static void
sq_clear_bindings(struct db_stmt *s)
{
	sqlite3_clear_bindings(ST(s));
}

static void
sq_finalize(struct db_stmt *s)
{
	sqlite3_finalize(ST(s));
	free(s);
}

static uint64_t
sq_stmt_work(struct db_stmt *s)
{
	return (uint64_t)sqlite3_stmt_status(
	    ST(s), SQLITE_STMTSTATUS_VM_STEP, 1);
}

static int64_t
sq_changes(struct db *d)
{
	return sqlite3_changes64(SQ(d)->h);
}

static int64_t
sq_total_changes(struct db *d)
{
	return sqlite3_total_changes64(SQ(d)->h);
}

static int64_t
sq_last_id(struct db *d)
{
	return sqlite3_last_insert_rowid(SQ(d)->h);
}

static int
sq_data_version(struct db *d, int64_t *out)
{
	struct sq *q = SQ(d);
	int rc;

	if (q->dv == NULL &&
	    sqlite3_prepare_v2(q->h, "PRAGMA data_version", -1, &q->dv, NULL) !=
	        SQLITE_OK) {
		note(q);
		return -1;
	}
	rc = sqlite3_step(q->dv);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(q->dv, 0);
	else
		note(q);
	sqlite3_reset(q->dv);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int
sq_checkpoint(struct db *d, int *log)
{
	struct sq *q = SQ(d);
	int done = 0, rc;

	*log = 0;
	rc = sqlite3_wal_checkpoint_v2(
	    q->h, NULL, SQLITE_CHECKPOINT_PASSIVE, log, &done);
	if (rc == SQLITE_OK)
		return 0;
	note(q);
	return rc == SQLITE_BUSY ? DB_BUSY : -1;
}

static void
sq_autocheckpoint(struct db *d, int pages)
{
	sqlite3_wal_autocheckpoint(SQ(d)->h, pages);
}

static const struct db_ops sq_ops = { DB_SQLITE, sq_close, sq_exec, sq_errmsg,
	sq_errcode, sq_begin_write, sq_begin_read, sq_autocommit, sq_prepare,
	sq_sql, sq_bind_int64, sq_bind_double, sq_bind_text, sq_bind_blob,
	sq_bind_null, sq_step, sq_col_count, sq_col_type, sq_col_int64,
	sq_col_double, sq_col_text, sq_col_blob, sq_col_bytes, sq_reset,
	sq_clear_bindings, sq_finalize, sq_stmt_work, sq_changes,
	sq_total_changes, sq_last_id, sq_data_version, sq_checkpoint,
	sq_autocheckpoint, sq_connected, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL };

/*
 * Before SQLite's first use: no memory statistics.  With them on (the
 * default) every sqlite3_malloc and free takes one mutex for the whole
 * process, and the page threads queued on it (a seventh of the
 * uncached pair page's time, futex waits included).  The daemon reads
 * none of them.
 */
static void
sqlite_setup(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
db_sqlite_open(struct db **out, const char *path, struct err *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct sq *q = xcalloc(1, sizeof(*q));
	int flags =
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	*out = NULL;
	q->base.ops = &sq_ops;
	pthread_once(&once, sqlite_setup);
	if (sqlite3_open_v2(path, &q->h, flags, NULL) != SQLITE_OK) {
		err_set(e, "%s: %s", path,
		    q->h ? sqlite3_errmsg(q->h) : "cannot open");
		sq_close(&q->base);
		return -1;
	}
	sqlite3_extended_result_codes(q->h, 1);
	sqlite3_busy_timeout(q->h, 5000);
	if (sq_exec(&q->base,
	        "PRAGMA journal_mode = WAL;"
	        "PRAGMA journal_size_limit = 4194304;"
	        "PRAGMA synchronous = NORMAL;"
	        "PRAGMA foreign_keys = ON;") == -1) {
		err_set(e, "%s: sqlite: %s", path, q->msg);
		sq_close(&q->base);
		return -1;
	}
	*out = &q->base;
	return 0;
}
