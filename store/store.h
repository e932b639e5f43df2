#ifndef STORE_STORE_H
#define STORE_STORE_H

/*
 * The store: every SQL statement of perfwatch lives in store/ (SQLite or
 * PostgreSQL), one file per entity (docs/ARCHITECTURE.md).  This header
 * holds the connection: opening, errors, transactions, checkpoints, the
 * data version and the writers' accounting.  Each entity has its own
 * header, store/<entity>.h: jobs.h, claim.h, runs.h, pairs.h, hosts.h,
 * watch.h, history.h, series.h, dash.h, alerts.h, bisect.h, builds.h,
 * canary.h and the smaller ones.  No database type is part of these
 * interfaces: another backend implements the same prototypes.
 *
 * One struct store is one SQLite connection and must be used by one thread
 * at a time; each thread opens its own (store_open).  Connections run in
 * WAL mode with synchronous=NORMAL, foreign keys on and a busy timeout;
 * every write is one BEGIN IMMEDIATE transaction.  Writers inside one
 * process also serialise on a process-wide mutex, so threads queue on a
 * lock instead of sleeping in SQLite's busy handler.
 *
 * Errors: functions return 0, -1 (message in store_errmsg()) or a negative
 * ERR_* code (common/err.h) for the expected outcomes each prototype names;
 * the message then says why ("job 7 is not held by this runner").
 *
 * Typed reads, the model every entity follows (docs/ARCHITECTURE.md): a
 * read fills structs the caller releases, and the JSON of the API is made
 * at the HTTP edge (web/rows.h), not here.  Text fields are NULL when the
 * column is; a stored JSON document (labels, inventory) stays its text.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define STORE_VERSION 43 /* schema version after every migration */

struct store;

/* Opens (creating if needed) and migrates to STORE_VERSION.  On failure
 * *out is NULL and the message is in e. */
int store_open(struct store **out, const char *path, struct err *e);
/* Same, migrating only up to version (tests build old schemas with it). */
int store_open_version(
    struct store **out, const char *path, int version, struct err *e);
void store_close(struct store *); /* NULL ok */
/*
 * The database's instance id (12 hex digits, made once per database by
 * migration 18): *out (valid while the store is open), 0 or -1.  Kernel
 * build ids carry it, so two databases never name two builds alike.
 */
int store_instance(struct store *, const char **out);
const char *store_errmsg(const struct store *);
/* 1 while the connection to the database server is lost (its
 * statements fail until it is back; store/db_pg.c); a file's: 0. */
int store_unavailable(struct store *);
/*
 * The SQLite virtual machine steps the store's list and page reads took
 * so far (those of store_i_rows, and the history's): the work of a read,
 * which no machine's speed changes, for tests that a page's cost does
 * not grow with what is stored around it.
 */
uint64_t store_read_steps(const struct store *);
void store_errclear(struct store *);
/*
 * WAL checkpoints.  By default each connection checkpoints when the WAL
 * passes 1000 pages, inside the commit that crossed it; a server sets 0
 * on its request threads and calls store_checkpoint() from a background
 * thread instead: a passive pass, and past STORE_WAL_RESET_PAGES WAL
 * pages (store_set_wal_reset) a second one holding the writers' lock, so
 * that the next write starts the WAL over.  It never waits for readers.
 */
#define STORE_WAL_RESET_PAGES 32768 /* 128 MB of 4 KB pages */
int store_set_autocheckpoint(struct store *, int pages);
void store_set_wal_reset(struct store *, int pages);
int store_checkpoint(struct store *);
/* PRAGMA user_version, or -1. */
int store_user_version(struct store *);
/*
 * What a page could show from this store has not changed while *out
 * stays the same: it moves when any connection (this one included)
 * commits a change, except a heartbeat's (a host's last_seen, a job's
 * lease, progress and updated).  It is the store's generation, which a
 * write transaction moves as it commits (migration v32); writes made
 * outside the store's transactions do not move it.  For caches of what
 * was read (web/cache.h), which show what does not move it at most
 * their time to live late.  SQLite: read from the database only when
 * SQLite's data_version or this connection's change count moved since
 * the last call.  PostgreSQL: the process's own count, moved by this
 * process's commits and by store_gen_poll when it finds the generation
 * moved by another process (store/leases.h); no statement.  0, or -1.
 */
struct store_version {
	int64_t gen;
};
int store_data_version(struct store *, struct store_version *out);

/*
 * Write-lock accounting (GET /metrics): how long writers of each class
 * waited for the process write lock and held it (BEGIN IMMEDIATE ...
 * COMMIT), process-wide.  A connection's class is set once after opening
 * (default other); claims and heartbeats count as claim_heartbeat
 * whatever their connection's class.
 */
enum store_writer {
	STORE_W_OTHER,   /* request threads, watchers, alerts */
	STORE_W_URGENT,  /* claims and heartbeats */
	STORE_W_UPLOADS, /* the upload batch writer (store/batch.h) */
	STORE_W_VERDICT, /* the verdict worker */
	STORE_W_SCHED,   /* the scheduler's ticker: requeue, checkpoints */
	STORE_WRITERS
};
extern const char *const store_writer_names[STORE_WRITERS];
struct store_write_stat {
	uint64_t n;            /* write transactions */
	double wait_s, hold_s; /* sums, seconds */
	double wait_max_s, hold_max_s;
	int waiting;       /* writers waiting now */
	uint64_t last_seq; /* when the class last took the lock: a count of
	                      all acquisitions (tests check the order) */
};
void store_set_writer(struct store *, enum store_writer);
void store_write_stats(struct store_write_stat out[STORE_WRITERS]);

/* Explicit transactions around several calls (submit of many pairs).
 * Calls inside an explicit transaction join it. */
int store_begin(struct store *);
int store_commit(struct store *);
void store_rollback(struct store *);
/*
 * A read transaction around the reads of one reply: one snapshot, and
 * one WAL read lock for them all instead of one per statement (each
 * took and dropped its own, a fcntl and the file's mutex both ways: a
 * quarter of the uncached pair page).  A write on the connection ends
 * it first; store_read_end after that, or with none open, does
 * nothing.
 */
int store_read_begin(struct store *);
void store_read_end(struct store *);

#endif
