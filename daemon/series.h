#ifndef DAEMON_SERIES_H
#define DAEMON_SERIES_H

/*
 * Patch series: from mail (daemon/mail) to testable commits.  Each
 * complete series is recorded (store: series, series_patches), applied
 * patch by patch onto its base in the tree's bare mirror (git/git.h:
 * one synthetic commit per patch, under refs/perfwatch/series/<id>),
 * its commits recorded on the tree, and its tip triggered against the
 * base like a push would be (daemon/trigger).
 *
 * The base is the "base-commit:" trailer when the mirror has that
 * commit, else the tip of the branch.  A patch that does not apply
 * leaves the series 'failed' with an error naming the patch (seq and
 * subject) and the file; an incomplete series is recorded 'incomplete'
 * with the patches it has and is not applied.  A series already
 * applied (same root Message-ID) is not applied again; a failed or
 * incomplete one is tried again.
 *
 * The job's tree url is the tree's own url; runners get the series
 * commits, which exist only in the mirror, as a git pack through the
 * runner API (tree "pack", daemon/packs.h), so they need no access to
 * the mirrors directory.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct dconf;
struct cfg_tree;
struct store;
struct mail_msg;

struct series_ingest {
	const struct dconf *conf;
	const struct cfg_tree *tree; /* where the series go */
	const char *branch;          /* its branch (the base when no trailer) */
	const char *inbox;           /* inbox name; NULL: an upload */
	int64_t now;
	/* An inbox's limits (inboxes[].series_per_sender_day,
	 * max_queued_jobs); 0: none (uploads).  A new series past one is
	 * recorded 'refused' with the limit named, and not applied. */
	int64_t per_sender_day, max_queued;
};

struct series_result {
	int64_t *ids; /* the series, in mail order (new or known) */
	size_t n;
	size_t applied, failed, incomplete, known, refused, pairs;
	size_t messages, patches, orphans;
	const char **states; /* enqueue: "waiting" or "applied", per id */
	int64_t queue_id;    /* the upload queued or applied, or 0 */
};
void series_result_release(struct series_result *);

/*
 * Groups msgs into series and ingests each.  A series that fails to
 * apply, or has no base (no mirror yet, no such branch), is recorded
 * 'failed' with the reason, not an error.  0, or -1 with e set (the
 * store or the mirror failed).
 */
int series_ingest_msgs(struct series_result *out, struct store *,
    const struct series_ingest *, const struct mail_msg *msgs, size_t n,
    struct err *e);
/* One series already grouped (mail_group over msgs), as the inbox
 * watcher groups its mail: the same, for ms alone. */
struct mail_series;
int series_ingest_one(struct series_result *out, struct store *,
    const struct series_ingest *, const struct mail_msg *msgs,
    const struct mail_series *ms, struct err *e);
/* Same from an mbox: ERR_INVALID / ERR_TOOBIG naming the mbox line. */
int series_ingest_mbox(struct series_result *out, struct store *,
    const struct series_ingest *, const char *data, size_t len, struct err *e);

/*
 * POST /api/v1/series, off the request thread: parses and groups the
 * mbox, records each series ('waiting', or left 'applied' when it was
 * applied before: known) and queues the mbox for the watcher, which
 * applies it (series_apply_queued).  No git work.  0 with out->ids and
 * out->states, ERR_INVALID / ERR_TOOBIG naming the mbox line, or -1.
 * No series (out->n == 0) queues nothing.
 */
int series_enqueue_mbox(struct series_result *out, struct store *,
    const struct series_ingest *, const char *data, size_t len, struct err *e);
/*
 * The watcher's side: applies the oldest queued upload as
 * series_ingest_mbox does (each series goes 'applying', then 'applied',
 * 'failed' or 'incomplete') and drops it from the queue.  0 with out
 * filled, ERR_NOTFOUND when nothing is queued, or -1 (the upload stays
 * queued).
 */
int series_apply_queued(struct series_result *out, struct store *,
    const struct dconf *, int64_t now, struct err *e);

#endif
