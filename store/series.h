#ifndef STORE_SERIES_H
#define STORE_SERIES_H

/*
 * Patch series (store/series.c).  The typed reads (docs/ARCHITECTURE.md
 * "The typed store"): GET /api/v1/series, /api/v1/series/{id} and the
 * /series/{id} page read these structs; web/rows_series.c makes their JSON.
 * Text is the struct's own copy (bytes that are not UTF-8 as '?'), NULL where
 * the column is NULL; an id absent is 0, a count unknown -1, a time
 * absent has its has_ flag 0.  Errors: 0, ERR_NOTFOUND where said, or
 * -1 with store_errmsg().
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * ---- patch series (daemon/series.c) ----
 * A series (table series) is one root message (cover letter or first
 * patch) of an inbox or an upload; each patch has a series_patches row
 * with the synthetic commit made from it.  States: new (recorded),
 * applied (commits made), failed (error says which patch and file),
 * incomplete (patches missing).
 */
struct store_series_new {
	const char *inbox; /* inbox name, or "upload" */
	const char *message_id;
	const char *title, *author;
	int64_t version, total, found, date; /* date < 0: unknown */
	int64_t tree_id;                     /* 0: none */
	const char *branch;
};
/* Creates the series, or finds the one with this root message_id
 * (*out_new = 0; out_new may be NULL).  0 and *out_id, or -1. */
int store_series_create(struct store *, int64_t *out_id, int *out_new,
    const struct store_series_new *, int64_t now);

struct store_series_patch {
	int64_t seq;
	const char *message_id, *subject, *author;
	int64_t date;      /* < 0: unknown */
	int64_t commit_id; /* its synthetic commit's row, or 0 */
};
/* Inserts or replaces the patch row (series, seq). */
int store_series_patch_put(
    struct store *, int64_t series_id, const struct store_series_patch *);
/* Sets state and error (NULL clears); base_sha and ref NULL keep,
 * commit_id 0 keeps (the tip's row).  ERR_NOTFOUND. */
int store_series_state(struct store *, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now);

/* The inbox watcher's state: the last archive commit read ("" none). */
int store_inbox_get(
    struct store *, char *out_last, size_t outlen, const char *name);
/* last_commit NULL keeps it; messages is added to the count. */
int store_inbox_put(struct store *, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now);

/* One patch of a series, by seq, with its commit. */
struct store_series_patch_row {
	int64_t seq;
	char *message_id, *subject, *author;
	int has_date;
	int64_t date;
	int64_t commit_id; /* 0: none */
	char *sha;         /* its commit's, or NULL */
	char *applied_by;  /* "libgit2", "git am --3way", or NULL */
	char *verdicts;    /* against its parent (trigger.every_patch) */
};

/* One series.  The list and store_series_get fill every field; the
 * page's read (store_series_page_get) leaves message_id, ref, created,
 * updated and verdicts empty and fills pairs. */
struct store_series_row {
	int64_t id;
	char *inbox, *message_id, *title, *author;
	int64_t version, total, found; /* -1: unknown */
	int has_time;
	int64_t time; /* the mail's date */
	char *state, *error, *tree, *branch, *base_sha, *ref;
	int64_t commit_id; /* the tip's row, 0: none */
	char *commit_sha;
	int has_created, has_updated;
	int64_t created, updated;
	char *branch_tag;
	int64_t supersedes; /* 0: none */
	char *fallback;
	char *verdicts; /* of the pairs measuring the tip, comma-separated */
	/* store_series_get, store_series_page_get: */
	struct store_series_patch_row *patches;
	size_t npatches;
	/* store_series_page_get: the pairs measuring the tip, newest first. */
	int64_t *pairs;
	size_t npairs;
};

struct store_series_list {
	struct store_series_row *v;
	size_t n;
	int64_t next_cursor; /* 0 at the end */
};

/* Newest first, limit rows below cursor (0: from the newest). */
int store_series_list(struct store *, struct store_series_list *out,
    int64_t limit, int64_t cursor);
void store_series_list_release(struct store_series_list *);

/* The series with its patches.  ERR_NOTFOUND. */
int store_series_get(struct store *, struct store_series_row *out, int64_t id);
/* The /series/{id} page's read: the series, the pairs measuring its tip
 * and its patches.  ERR_NOTFOUND. */
int store_series_page_get(
    struct store *, struct store_series_row *out, int64_t id);
void store_series_release(struct store_series_row *);

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
 * (store_tip_runs_release), ERR_NOTFOUND when there is no such series.
 */
int store_series_tip_run_list(
    struct store *, struct store_tip_runs **out, size_t *n, int64_t id);
void store_tip_runs_release(struct store_tip_runs *, size_t);

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
 * Patch mail waiting for the rest of its series (daemon/watch.c), and
 * the newest mail of series taken, kept as the raw archive message
 * under (inbox, archive commit sha), so a restarted daemon picks a
 * half-arrived series up again and a partial reroll finds the rest of
 * its series (store/series_mail.h tells the two apart).  Put: once per
 * (inbox, sha), a repeat changes nothing.  Each: calls cb for the
 * inbox's messages oldest first, stops at cb's first nonzero return
 * (returned).  Drop: removes one (none there is fine).
 */
int store_mail_pending_put(struct store *, const char *inbox, const char *sha,
    const char *data, size_t len, int64_t now);
int store_mail_pending_each(struct store *, const char *inbox,
    int (*cb)(const char *sha, const char *data, size_t len, void *arg),
    void *arg);
int store_mail_pending_drop(struct store *, const char *inbox, const char *sha);

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
int store_series_latency_list(struct store *, struct store_series_latency **out,
    size_t *out_n, int64_t since, size_t max);

#endif
