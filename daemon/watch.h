#ifndef DAEMON_WATCH_H
#define DAEMON_WATCH_H

/*
 * The tree watcher: one thread per tree of the daemon config, so a slow
 * or failing tree never holds up another one or the daemon.  Each thread
 * keeps the tree's bare mirror under `mirrors:` (git/git.h), fetches it
 * every `poll`, and for each configured branch whose tip moved records
 * the new commits (oldest first, once per tree, with the tree's `paths`
 * each touches and the branches it is on), notes force pushes, and runs
 * the triggers (daemon/trigger) in the same transaction as the new tip.
 * The first time a branch is seen only its tip is recorded: history
 * before the watcher started triggers nothing.
 *
 * Errors (unreachable remote, authentication wanted, a missing branch, a
 * baseline ref that vanished) are logged with the tree's name and stored
 * as the tree's last error (GET /api/v1/trees); a failing fetch is
 * retried after poll * 2^failures, at most an hour (never less than
 * poll).  A corrupt mirror is made again by the git module.
 *
 * Reload: every cycle reads the current configuration (watch_reload
 * swaps it): trees added get a thread, trees removed lose theirs, and a
 * tree's url, branches, paths, poll and the job configs apply at its next
 * cycle.
 */
#include "common/err.h"

struct watch;
struct dconf;
struct leases;
struct sched;

/*
 * Starts a thread per tree of conf (takes a reference), each with its own
 * store connection to conf's database; sched (may be NULL) is notified
 * when pairs were made.  The threads fetch and record only while leases
 * holds LEASE_WATCH (daemon/leases.h; NULL: always).  0 and *out, or -1
 * with e set.
 */
int watch_start(struct watch **out, struct dconf *conf, struct sched *,
    struct leases *leases, struct err *e);
void watch_reload(struct watch *, struct dconf *conf); /* NULL ok */
/* Asks every thread to stop (a transfer in flight is cancelled), joins
 * them and frees.  NULL ok. */
void watch_stop(struct watch *);

#endif
