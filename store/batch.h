#ifndef STORE_BATCH_H
#define STORE_BATCH_H

/*
 * Group commit of uploaded runs.  One writer thread with its
 * own connection takes every upload queued while it was committing the
 * last batch and stores them in one write transaction, each under its own
 * SAVEPOINT: an upload that is refused (a duplicate metric, a lost lease,
 * an index out of range) rolls back alone and the rest of its batch
 * commits.  An upload's callback runs only after the COMMIT that holds it
 * returned: a 2xx sent from it means stored, as durable as the store's
 * own commits (WAL, synchronous=NORMAL, store/store.c).  When the COMMIT
 * fails, every upload of that batch gets -1: none of it was stored.
 *
 * The writer holds the store's write lock as an ordinary (not urgent)
 * writer, so a claim or heartbeat waits for at most the batch in
 * progress, never for the uploads queued behind it; a batch is capped at
 * STORE_BATCH_MAX uploads to bound that wait.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "store/jobs.h"

#define STORE_BATCH_MAX 64

struct store_batch;
struct store_upload;

/* Opens the writer's connection to path and starts its thread.  0, or -1
 * with e set. */
int store_batch_start(
    struct store_batch **out, const char *path, struct err *e);
/* Stores what is queued (calling each callback) and stops the thread;
 * later store_batch_add() calls refuse at once.  NULL ok; twice ok. */
void store_batch_stop(struct store_batch *);
/* Stops it (if not yet) and frees it.  NULL ok. */
void store_batch_release(struct store_batch *);

/*
 * A copy of run (its strings, metrics, raw output, profile and host state)
 * to be stored for host at time now.  One allocation: free() releases it,
 * so it may live in an httpd slot.  done(arg) runs on the writer thread
 * once the result is known and must not block; after it returns the
 * writer does not touch the upload again.  Never NULL.
 */
struct store_upload *store_upload_new(int64_t host_id,
    const struct store_run *run, int64_t now, void (*done)(void *arg),
    void *arg);
/* Queues u; its callback runs later on the writer thread, or at once (on
 * this thread, result -1) when the batch writer is stopping. */
void store_batch_add(struct store_batch *, struct store_upload *u);
/* After the callback: what store_run_add() would have returned (0,
 * ERR_EXISTS, ERR_NOTFOUND, ERR_INVALID, ERR_CONFLICT, -1) and, for
 * anything but 0, the message in *out_msg (valid while u is). */
int store_upload_result(const struct store_upload *u, const char **out_msg);

struct store_batch_stats {
	uint64_t batches;  /* write transactions committed or failed */
	uint64_t uploads;  /* uploads they held */
	uint64_t taken;    /* uploads taken off the queue so far */
	uint64_t max_size; /* the largest batch */
	uint64_t failed;   /* batches whose BEGIN or COMMIT failed */
	uint64_t queued;   /* uploads waiting for the writer now */
};
void store_batch_stats(struct store_batch *, struct store_batch_stats *out);

#endif
