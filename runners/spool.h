#ifndef RUNNERS_SPOOL_H
#define RUNNERS_SPOOL_H

/*
 * The runner's outbox: each run's upload body is written to disk before
 * it is sent, and deleted only after the daemon answered 2xx, so neither
 * a daemon restart nor a runner crash loses a finished run.  One file per
 * run, DIR/run-JOB-INDEX.json, written atomically (temporary file, fsync,
 * rename, fsync of the directory): a reader sees the whole body or no
 * file.  Bodies the daemon refused for good (4xx) are moved to
 * DIR/rejected/ for a human to look at, never resent.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

struct spool;

struct spool_entry {
	int64_t job_id, index;
};

/* Creates dir (and dir/rejected) as needed; removes stale temp files. */
int spool_open(struct spool **out, const char *dir, struct err *);
void spool_free(struct spool *); /* NULL ok */

/* Stores (replacing) the body for (job, index) durably.  0 or -1. */
int spool_put(struct spool *, int64_t job_id, int64_t index, const char *body,
    size_t len, struct err *);
/* The stored body, capped at max bytes.  0, ERR_NOTFOUND, or -1. */
int spool_get(struct buf *out, struct spool *, int64_t job_id, int64_t index,
    struct err *);
/* After a 2xx: deletes the file.  0 (also when it was gone) or -1. */
int spool_remove(struct spool *, int64_t job_id, int64_t index, struct err *);
/* After a permanent refusal: moves it to rejected/.  0 or -1. */
int spool_reject(struct spool *, int64_t job_id, int64_t index, struct err *);
/*
 * Pending entries sorted by (job, index); job_id 0 = all jobs.  *out is
 * malloc'd (free()); *n may be 0.  0 or -1.
 */
int spool_list(struct spool_entry **out, size_t *n, struct spool *,
    int64_t job_id, struct err *);

#endif
