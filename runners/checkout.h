#ifndef RUNNERS_CHECKOUT_H
#define RUNNERS_CHECKOUT_H

/*
 * The source tree of a job on a commit: the runner keeps one clone per
 * tree URL under WORKDIR/trees (git/git.h: gitm_repo_for_url), fetches
 * the commit into it when missing, and exports the commit into the job's
 * clean directory.  Nothing from the daemon is used but the job's
 * {"url", "commit"} and, for a commit of a mailed series, which exists
 * only in the daemon's mirror, "pack": the runner route that sends the
 * series commits as a git pack (docs/API.md, GET /api/v1/packs).
 */
#include <stddef.h>

#include "common/err.h"

struct client;
struct gitm_repo;

/* Where a commit the tree's URL lacks comes from. */
struct checkout_pack {
	struct client *cl; /* the runner's client (its token) */
	const char *path;  /* "/api/v1/packs/SHA?have=BASE", or NULL */
};

/*
 * Makes sure commit sha is in repo: fetched from the repo's URL; when
 * that has no such commit and pk names a pack of exactly sha (else
 * refused), the base is fetched from the URL, the pack downloaded (at
 * most CAP_GIT_PACK bytes) and added (gitm_pack_add: indexed, checked to
 * hold sha itself, nothing kept otherwise).  *out_pack (may be NULL): the
 * pack's size, 0 when none was needed.  0, or -1 with e naming the
 * commit (and the pack's route).  pk may be NULL.
 */
int checkout_fetch(size_t *out_pack, struct gitm_repo *repo, const char *sha,
    const struct checkout_pack *pk, struct err *e);

/*
 * Exports commit sha of url into dir (emptied first).  0, or -1 with e
 * naming the URL and the commit ("commit 1234abcd not found in ...").
 * *out_pack as for checkout_fetch (may be NULL).
 */
int checkout_prepare(size_t *out_pack, const char *workdir, const char *url,
    const char *sha, const struct checkout_pack *pk, const char *dir,
    struct err *e);

#endif
