#ifndef DAEMON_STORE_INT_H
#define DAEMON_STORE_INT_H

/*
 * For the store's own files only (daemon/store*.c): the connection and
 * the helpers of daemon/store.c, so an entity's SQL can live in a file
 * of its own.  Nothing outside the store includes this.
 */
#include <sqlite3.h>

struct store;

/* A statement (finalize it), or NULL with the store's error set. */
sqlite3_stmt *store__prep(struct store *, const char *sql);
/* begin 1: BEGIN IMMEDIATE (nested in store_begin: nothing); begin 0:
 * COMMIT when ok, else ROLLBACK.  0 or -1. */
int store__tx(struct store *, int begin, int ok);
/* Sets the store's error from SQLite's: -1. */
int store__dberr(struct store *, const char *what);
sqlite3 *store__db(struct store *);

/* Used by daemon/store_alert.c. */
sqlite3 *store_db_(struct store *);
struct err *store_err_(struct store *);

#endif
