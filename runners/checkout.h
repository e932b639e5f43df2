#ifndef RUNNERS_CHECKOUT_H
#define RUNNERS_CHECKOUT_H

/*
 * The source tree of a job on a commit: the runner keeps one clone per
 * tree URL under WORKDIR/trees (common/git: gitm_repo_for_url), fetches
 * the commit into it when missing, and exports the commit into the job's
 * clean directory.  Nothing from the daemon is used but the job's
 * {"url", "commit"}.
 */
#include "common/err.h"

/*
 * Exports commit sha of url into dir (emptied first).  0, or -1 with e
 * naming the URL and the commit ("commit 1234abcd not found in ...").
 */
int checkout_prepare(const char *workdir, const char *url, const char *sha,
    const char *dir, struct err *e);

#endif
