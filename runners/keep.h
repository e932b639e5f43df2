#ifndef RUNNERS_KEEP_H
#define RUNNERS_KEEP_H

/*
 * A job's built tree, kept for its next round on this runner (runner.yaml
 * `keep_builds`, docs/CONFIG.md): a job claimed again (a round a claim
 * with `pair_claims: false`, or the runs an adaptive look adds) would
 * otherwise export the commit and run its build again, a third of a
 * bisection step's time here.  The job's directory is DIR/ID; DIR/ID.kept
 * names what was built there (the tree, the commit and the build), and is
 * written only after a round of the job finished with success.  The next
 * round uses the directory as that round left it, as the runs of one
 * round share it.
 */
#include <stdint.h>

/*
 * 1: DIR/ID holds what (a kept round's; its mark is taken away, so a
 * crash of this round leaves no mark).  0: it does not, and whatever was
 * at DIR/ID is removed: the round starts from nothing.  what NULL: 0.
 */
int keep_take(const char *dir, int64_t id, const char *what);
/*
 * After a round that finished with success: marks DIR/ID as holding
 * what, then removes the oldest kept directories beyond max.  max 0 or
 * what NULL: DIR/ID is removed instead (keep_drop).
 */
void keep_put(const char *dir, int64_t id, const char *what, int64_t max);
/* DIR/ID and its mark removed. */
void keep_drop(const char *dir, int64_t id);
/* The oldest kept directories beyond max removed (max 0: all). */
void keep_prune(const char *dir, int64_t max);

#endif
