#ifndef GIT_AM_H
#define GIT_AM_H

/*
 * The fallback for mailed patches libgit2 cannot apply (it takes exact
 * hunks only: no offset, no fuzz, no 3-way): `git am --3way` in a
 * scratch worktree of the bare mirror, run as argv vectors through
 * posix_spawnp (never a shell).  The worktree checks out only the files
 * the patch names (the rest of the parent's tree only in its index), so a
 * kernel tree is not checked out whole for one patch; it is removed afterwards.
 *
 * The commit is made as git/series.c makes its own: author and date from
 * the mail, committer "perfwatch" at the author's date, so the same mail
 * on the same parent gives the same commit.
 */
#include "common/err.h"
#include "git/git.h"

/*
 * Applies patch p onto commit PARENT of the bare repository GITDIR:
 * 0 and out = the new commit; ERR_CONFLICT when git am cannot apply it
 * either (e names the reason git gave), or -1 (git could not run, a
 * scratch directory could not be made: e says).
 */
int gitam_apply(char out[GITM_SHA_SIZE], const char *gitdir, const char *parent,
    const struct gitm_patch *p, struct err *e);

#endif
