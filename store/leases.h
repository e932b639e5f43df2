#ifndef STORE_LEASES_H
#define STORE_LEASES_H

/*
 * Several daemons on one PostgreSQL database: the leases on the
 * daemon's background workers, and the change signal every daemon
 * polls.
 *
 * A lease is a row of worker_leases: a worker's name, its holder (the
 * name a daemon gives itself), since when it holds it and when the hold
 * ends, in milliseconds by the database's clock, so the daemons' clocks
 * need not agree.  store_lease_take takes a lease that nobody holds or
 * whose hold has ended, or renews one the caller holds, in one
 * statement: two daemons asking at once cannot both get it.  A daemon
 * gives its leases up when it stops (store_lease_release); one that
 * dies leaves them to end by themselves.  Neither moves the store's
 * generation.  On SQLite one daemon has the database (DATABASE.lock):
 * every lease is held, without a row.
 *
 * The change signal is the store's generation (PostgreSQL: the
 * sequence store_gen_seq; SQLite: table store_gen), which a write
 * transaction that changed what a page shows moves as it commits
 * (store.c, gen_bump).  On PostgreSQL a process's data version
 * (store_data_version) moves with its own such commits at once, and
 * with another process's when store_gen_poll, which a daemon calls
 * every tick, finds the generation moved: a page cached by one daemon
 * is made again at most a tick after another daemon's write.  SQLite's
 * data_version tells each connection of every commit; there
 * store_gen_poll does nothing.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

#define STORE_LEASES_VERSION 38
#define STORE_LEASES_TABLE(INT)                                              \
	"CREATE TABLE worker_leases (name TEXT PRIMARY KEY, holder TEXT NOT" \
	" NULL, taken_ms " INT " NOT NULL, expires_ms " INT " NOT NULL);"
#define STORE_LEASES_MIGRATION STORE_LEASES_TABLE("INTEGER")
#define STORE_LEASES_MIGRATION_PG STORE_LEASES_TABLE("BIGINT")

#define STORE_LEASE_HOLDER_MAX 128 /* bytes of a holder's name */

struct store_lease {
	int held;                            /* the caller holds it now */
	char holder[STORE_LEASE_HOLDER_MAX]; /* who does ("" nobody) */
	int64_t held_ms; /* how long its holder has held it */
	int64_t left_ms; /* until the hold ends (<= 0: it has ended) */
	int64_t db_ms;   /* the database's clock then, ms since the epoch
	                    (0: not read, on SQLite) */
};

/*
 * Takes lease name for me (at most STORE_LEASE_HOLDER_MAX - 1 bytes) for
 * lease_ms from now, when nobody holds it, its hold has ended or me
 * holds it (a renewal).  0 and *out (out->held 0: another holds it, who
 * and for how long in out), or -1 (store_errmsg).
 */
int store_lease_take(struct store *, struct store_lease *out, const char *name,
    const char *me, int64_t lease_ms);
/* Ends me's hold on name now, so another daemon may take it at once.
 * 0, or -1 (store_errmsg). */
int store_lease_release(struct store *, const char *name, const char *me);

/*
 * Reads the store's generation (PostgreSQL); when it moved since this
 * process's last poll, this process's data version moves too.  1 when
 * another process's commit moved it (at most a poll late), 0 when not
 * or only this process's did (and at the first poll, and always on
 * SQLite), or -1 (store_errmsg).
 */
int store_gen_poll(struct store *);

#endif
