#ifndef STORE_DB_BACKEND_H
#define STORE_DB_BACKEND_H

/*
 * What a database backend provides behind store/db.h: each connection
 * and statement starts with the common part below, and db.c forwards
 * every call through the connection's operations.  Only store/db*.c
 * include this.
 */
#include "store/db.h"

struct db_ops;

struct db {
	const struct db_ops *ops;
};

struct db_stmt {
	struct db *db;
};

struct db_ops {
	enum db_backend backend;
	void (*close)(struct db *);
	int (*exec)(struct db *, const char *sql);
	const char *(*errmsg)(struct db *);
	int (*errcode)(struct db *);
	int (*begin_write)(struct db *);
	int (*begin_read)(struct db *);
	int (*autocommit)(struct db *);
	struct db_stmt *(*prepare)(struct db *, const char *sql);
	const char *(*sql)(struct db_stmt *);
	void (*bind_int64)(struct db_stmt *, int i, int64_t v);
	void (*bind_double)(struct db_stmt *, int i, double v);
	void (*bind_text)(struct db_stmt *, int i, const char *v, int n);
	void (*bind_blob)(struct db_stmt *, int i, const void *v, size_t n);
	void (*bind_null)(struct db_stmt *, int i);
	int (*step)(struct db_stmt *);
	int (*col_count)(struct db_stmt *);
	enum db_type (*col_type)(struct db_stmt *, int i);
	int64_t (*col_int64)(struct db_stmt *, int i);
	double (*col_double)(struct db_stmt *, int i);
	const char *(*col_text)(struct db_stmt *, int i);
	const void *(*col_blob)(struct db_stmt *, int i);
	int (*col_bytes)(struct db_stmt *, int i);
	void (*reset)(struct db_stmt *);
	void (*clear_bindings)(struct db_stmt *);
	void (*finalize)(struct db_stmt *);
	uint64_t (*stmt_work)(struct db_stmt *);
	int64_t (*changes)(struct db *);
	int64_t (*total_changes)(struct db *);
	int64_t (*last_id)(struct db *);
	int (*data_version)(struct db *, int64_t *out);
	int (*checkpoint)(struct db *, int *log);
	void (*autocheckpoint)(struct db *, int pages);
	int (*connected)(struct db *);
	void (*last_id_keep)(struct db *, int64_t id); /* NULL: none */
	/* NULL: no arrays (db_bind_text_array binds NULL). */
	void (*bind_text_array)(
	    struct db_stmt *, int i, const char *const *v, size_t n);
	void (*bind_double_array)(
	    struct db_stmt *, int i, const double *v, size_t n);
	/* NULL: db_exec, then db_step. */
	int (*exec_step)(
	    struct db *, const char *sql, struct db_stmt *, int *step);
	int (*exec_later)(struct db *, const char *sql); /* NULL: db_exec */
	int (*end_read)(struct db *);         /* NULL: db_exec COMMIT */
	uint64_t (*round_trips)(struct db *); /* NULL: 0 */
};

/* store/db_sqlite.c */
int db_sqlite_open(struct db **out, const char *path, struct err *e);
/* store/db_pg.c: where is a URI or a conninfo.  Its errors name where
 * as redact_conninfo_into shows it. */
int db_pg_open(struct db **out, const char *where, struct err *e);

#endif
