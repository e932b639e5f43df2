#ifndef STORE_SERIES2_H
#define STORE_SERIES2_H

/*
 * Patch series, the parts added after store/store.h's: branch tags,
 * versions superseding each other, the `git am --3way` fallback, the
 * upload queue, the run values for "vN vs vN-1".  All SQL; typed
 * structs in and out.  Errors: 0, ERR_NOTFOUND where said, or -1 with
 * store_errmsg().
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* Sets the series' branch tag ("" or NULL: none) and the series it
 * supersedes (0: none). */
int store_series_meta(
    struct store *, int64_t id, const char *branch_tag, int64_t supersedes);

/*
 * The series that series id (version, title, author as recorded)
 * supersedes: among series with a lower version, the newest whose root
 * Message-ID is one of ids[0..n) (the new root's In-Reply-To and
 * References), else the newest with the same title and author.  0 and
 * *out (0 when none).
 */
int store_series_previous(
    struct store *, int64_t *out, int64_t id, const char *const *ids, size_t n);

/* Which patches needed `git am --3way` ("2/5, 4/5"; NULL clears), and
 * a patch's applier ("libgit2" or "git am --3way"). */
int store_series_fallback(struct store *, int64_t id, const char *text);
int store_series_patch_how(
    struct store *, int64_t id, int64_t seq, const char *how);

/* ---- the upload queue: POST /api/v1/series -> the watcher ---- */

/* Queues an mbox for tree/branch: 0 and *out_id. */
int store_series_enqueue(struct store *, int64_t *out_id, const char *tree,
    const char *branch, const char *mbox, size_t len, int64_t now);

struct store_series_job {
	int64_t id;
	char *tree, *branch;
	char *mbox;
	size_t len;
};
/* The oldest queued upload: 0 and *out (release it), ERR_NOTFOUND. */
int store_series_dequeue(struct store *, struct store_series_job *out);
void store_series_job_release(struct store_series_job *);
/* Drops a queued upload once applied (or refused). */
int store_series_queue_done(struct store *, int64_t id);
/* Uploads waiting: 0 and *out. */
int store_series_queued(struct store *, int64_t *out);

/* Sets the state of the listed series that are not applied yet. */
int store_series_mark(struct store *, const int64_t *ids, size_t n,
    const char *state, int64_t now);

/* ---- vN vs vN-1 ---- */

/* Series id's version and the series it supersedes (0: none), without
 * the rest of its row: 0, ERR_NOTFOUND, or -1. */
int store_series_head(
    struct store *, int64_t *out_version, int64_t *out_supersedes, int64_t id);

/* One metric of one candidate job measuring a series tip. */
struct store_tip_runs {
	char *host, *job, *point, *metric, *unit, *better;
	double *values; /* ok runs */
	size_t n;
};
/*
 * The run values of the candidate jobs measuring series id's tip, one
 * entry per (host, job, point, metric), ordered by them.  0 and *out
 * (store_tip_runs_free), ERR_NOTFOUND when there is no such series.
 */
int store_series_tip_runs(
    struct store *, struct store_tip_runs **out, size_t *n, int64_t id);
void store_tip_runs_free(struct store_tip_runs *, size_t);

/*
 * A commit the daemon made from mail: the patch commit SHA of an applied
 * series (the only commits GET /api/v1/packs serves).  0 and the tree's
 * name (out_tree, at most n bytes with the NUL), the series' git ref
 * (out_ref, "refs/perfwatch/series/ID", n bytes) and its base (out_base,
 * 41 bytes), or ERR_NOTFOUND.
 */
int store_series_commit(struct store *, char *out_tree, char *out_ref, size_t n,
    char out_base[41], const char *sha);

/*
 * ---- time to report: when each stage of a series happened ----
 * Seconds since the epoch, 0 when it has not happened (yet): posted
 * (its root mail's Date), seen (recorded), applied (its first pair
 * made, else its last state change to applied), first_run (the first
 * run of its pairs' jobs started: upload time less duration), last_run
 * (the last run uploaded), verdict (the last final comparison of its
 * pairs), mailed (the first e-mail of a report on it sent).
 */
struct store_series_latency {
	int64_t id;
	int64_t posted, seen, applied, first_run, last_run, verdict, mailed;
};
/* One series: 0 and *out, or ERR_NOTFOUND. */
int store_series_latency_get(
    struct store *, struct store_series_latency *out, int64_t id);
/* The newest series seen at or after SINCE (at most max, newest
 * first): 0 and *out (free()). */
int store_series_latencies(struct store *, struct store_series_latency **out,
    size_t *out_n, int64_t since, size_t max);

#endif
