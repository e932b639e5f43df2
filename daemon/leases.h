#ifndef DAEMON_LEASES_H
#define DAEMON_LEASES_H

/*
 * Which background workers this daemon runs, when several daemons share
 * one PostgreSQL database: each worker runs on the daemon that holds its
 * lease (store/leases.h), and on no other.  A keeper thread with its
 * own store connection, every tick (a third of the lease, at most a
 * second), takes the leases nobody holds and renews those it holds once
 * a third of their time has gone.  A lease renewed by a statement sent
 * at time t is held here until t + the lease (by the monotonic clock):
 * the database ends it no earlier, so two daemons never both run a
 * worker's passes (a pass under way when a renewal fails runs to its
 * end).  When its holder dies or loses the database, another daemon
 * takes the worker over within the lease and a tick; a daemon that
 * stops gives its leases up (leases_stop), and another takes them at
 * its next tick.  Gains and losses are logged, naming the holder.
 *
 * On SQLite one daemon has the database: every lease is held from the
 * start, with no thread.  The workers ask leases_held before each pass
 * and wait (a second at most, or until the keeper wakes them through
 * the scheduler) while it says no.
 */
#include <stdint.h>

#include "common/err.h"

enum lease_worker {
	LEASE_WATCH,   /* the tree and inbox watcher, the series uploads */
	LEASE_SCHED,   /* the scheduler's requeue of expired job leases */
	LEASE_VERDICT, /* verdicts */
	LEASE_ALERTS,
	LEASE_CANARY,
	LEASE_BISECT,
	LEASE_NWORKERS
};
/* The lease names (worker_leases.name, logs, /metrics). */
extern const char *const lease_worker_names[LEASE_NWORKERS];

/* How long a worker waits before asking again while not held (ms). */
#define LEASE_IDLE_MS 1000

struct leases;
struct sched;

/*
 * Starts the keeper on dbpath for holder name me (a daemon's name for
 * itself, unique among the daemons), with leases of lease_s seconds;
 * sched (may be NULL) is notified when a lease is taken, so that its
 * workers start at once.  0 and *out, or -1 with e set.
 */
int leases_start(struct leases **out, const char *dbpath, const char *me,
    int64_t lease_s, struct sched *, struct err *e);
/* A daemon that runs no workers (perfwatchd --role web): nothing is
 * ever held; no thread, no connection.  Never NULL. */
struct leases *leases_none(void);
/* A reload: the next renewals are for lease_s. */
void leases_set_time(struct leases *, int64_t lease_s);
/* 1 while this daemon holds worker w's lease, else 0; NULL (a process
 * with no keeper, the only one on its database): 1.  Thread-safe. */
int leases_held(struct leases *, enum lease_worker w);
/* Stops the keeper and gives up the leases held (the workers must have
 * stopped), closes its connection and frees.  NULL ok. */
void leases_stop(struct leases *);

#endif
