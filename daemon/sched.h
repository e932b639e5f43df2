#ifndef DAEMON_SCHED_H
#define DAEMON_SCHED_H

/*
 * The scheduler: the policy on top of the store's job transactions.
 * Claims (with long-poll), leases and heartbeats, requeue of expired
 * leases, cancel and retry.  A struct sched is shared by every thread;
 * each caller passes its own store connection.
 *
 * Waiting: every change to the queue bumps a generation counter and
 * broadcasts a condition variable.  sched_claim_wait() blocks on it (for
 * threads that may block); the HTTP server instead parks the connection
 * and is called back from the ticker thread (sched_start).
 */
#include <stdint.h>

#include "common/err.h"

struct leases;
struct sched;
struct store;
struct store_claimed;

struct sched *sched_new(int64_t lease_s, int64_t claim_wait_s); /* never NULL */
void sched_free(struct sched *);                                /* NULL ok */
/* Reload: new lease and long-poll times apply to the next calls. */
void sched_set_params(struct sched *, int64_t lease_s, int64_t claim_wait_s);
int64_t sched_lease_s(struct sched *);
int64_t sched_claim_wait_s(struct sched *);

/*
 * The scheduler's clock, which stamps and reads back the job and build
 * leases: this host's time plus the offset to the database's clock that
 * the leases' keeper measured (daemon/leases.h; 0 on SQLite and until
 * measured), so daemons on hosts whose clocks differ agree on when a
 * lease ends.  sched_clock_set: the database's clock less this host's,
 * in ms.
 */
void sched_clock_set(struct sched *, int64_t offset_ms);
int64_t sched_now_s(struct sched *);

/* The queue changed (submit, retry, finish, requeue): wake waiters. */
void sched_notify(struct sched *);
uint64_t sched_generation(struct sched *);
/* Waits until the generation differs from gen or timeout_ms passes;
 * returns the current generation. */
uint64_t sched_wait(struct sched *, uint64_t gen, int timeout_ms);

/* Claims (store_claim); expired leases are requeued by the ticker.
 * 0 and *out (the caller store_claimed_release()s it), or ERR_NOTFOUND
 * (nothing to do), or -1 (store_errmsg). */
int sched_claim(
    struct sched *, struct store *, struct store_claimed *out, int64_t host_id);
/* The same for a runner that measures a pair's jobs in turns
 * (store_claim_pair). */
int sched_claim_pair(
    struct sched *, struct store *, struct store_claimed *out, int64_t host_id);
/* Either (pairs), for a runner that may not build kernels (builds 0),
 * keyed by the runner's claim id (may be NULL): store_claim_as. */
int sched_claim_as(struct sched *, struct store *, struct store_claimed *out,
    int64_t host_id, int pairs, int builds, const char *claim_id);
/* Requeue and claim, waiting up to wait_s (capped by claim_wait_s) for
 * work: for threads that may block (tests, tools). */
int sched_claim_wait(struct sched *, struct store *, struct store_claimed *out,
    int64_t host_id, int64_t wait_s);
/* Extends the lease by lease_s (store_heartbeat). */
int sched_heartbeat(struct sched *, struct store *, int64_t *out_expires,
    int64_t *out_runs, int64_t host_id, int64_t job_id, const char *progress);
/*
 * The same during a kexec or reboot (docs/KERNEL.md): the lease is
 * extended by boot_s when that is longer, so a job whose host is booting
 * is not requeued before its boot timeout.
 */
int sched_heartbeat_boot(struct sched *, struct store *, int64_t *out_expires,
    int64_t *out_runs, int64_t host_id, int64_t job_id, const char *progress,
    int64_t boot_s);
int sched_finish(struct sched *, struct store *, int64_t host_id,
    int64_t job_id, int ok, const char *error);
int sched_cancel(struct sched *, struct store *, int64_t job_id);
int sched_retry(struct sched *, struct store *, int64_t job_id);
/* Requeue now; *out_n jobs changed (may be NULL). */
int sched_requeue(struct sched *, struct store *, int *out_n);

/*
 * Starts the ticker thread: with its own connection to dbpath, every
 * tick_ms, it polls the store's generation (store_gen_poll: another
 * daemon's writes notify, as a local change does), requeues expired
 * leases and checkpoints the WAL (store_checkpoint) while this daemon
 * holds the scheduler's lease (daemon/leases.h; leases NULL: always),
 * and then calls tick(arg, changed), changed being 1 when the
 * generation moved since the last call.  The callback runs on the
 * ticker thread.  0, or -1 with e set.
 */
int sched_start(struct sched *, const char *dbpath, int tick_ms,
    void (*tick)(void *arg, int changed), void *arg, struct leases *leases,
    struct err *e);
void sched_stop(struct sched *); /* joins the thread; ok if not started */

#endif
