#ifndef DAEMON_SERIES_H
#define DAEMON_SERIES_H

/*
 * Patch series: from mail (daemon/mail) to testable commits.  Each
 * complete series is recorded (store: series, series_patches), applied
 * patch by patch onto its base in the tree's bare mirror (common/git:
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
 * Runners fetch series commits from the daemon's mirror (the job's tree
 * url is the mirror's path), so they must see the mirrors directory.
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
};

struct series_result {
	int64_t *ids; /* the series, in mail order (new or known) */
	size_t n;
	size_t applied, failed, incomplete, known, pairs;
	size_t messages, patches, orphans;
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
/* Same from an mbox: ERR_INVALID / ERR_TOOBIG naming the mbox line. */
int series_ingest_mbox(struct series_result *out, struct store *,
    const struct series_ingest *, const char *data, size_t len, struct err *e);

#endif
