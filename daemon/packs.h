#ifndef DAEMON_PACKS_H
#define DAEMON_PACKS_H

/*
 * GET /api/v1/packs/{sha}?have={base} (docs/API.md): the series commits
 * the daemon made from mail, as a git packfile, for runners that cannot
 * see its mirrors.  Only a commit the store records as a patch of an
 * applied series, and that its series ref (refs/perfwatch/series/ID)
 * still holds in the tree's mirror, is served; the pack holds the
 * commits reachable from SHA but not from HAVE and the objects they add
 * (git/git.h: gitm_pack_build), at most http.max_pack bytes.  A daemon
 * whose mirror lacks the series (the watcher, which applied it, runs on
 * another perfwatchd of the database) serves the pack the watcher kept
 * in the store (packs_keep): the whole series over its base.
 *
 * Runs on an HTTP pool thread with its own view of the mirror (a
 * git_repository per call): packing a series is a walk of its few
 * commits and of the base's tree, well under a second on linux.git.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"

struct daemon_config;
struct store;

/*
 * Returns the HTTP status: 200 with the pack in *out (the caller
 * releases it), else 400 (an id is not 40 lowercase hex digits, HAVE
 * missing or not an ancestor of SHA), 404 (not a series commit, or not
 * in the mirror), 413 (larger than http.max_pack) or 500, with e saying
 * why and *out empty.
 */
int packs_build(struct buf *out, struct err *e, struct store *,
    const struct daemon_config *, const char *sha, const char *have);

/*
 * Keeps the pack of an applied series (its commits from base to tip, in
 * repo, the watcher's mirror) in the store (store/series_pack.h), so
 * that every perfwatchd on the database serves it, whatever its own
 * mirror holds.  Called before the series' jobs are recorded: a runner
 * may claim one on another daemon at once.  A series over http.max_pack
 * is recorded as such.  0, or -1 with e saying why.
 */
struct gitm_repo;
int packs_keep(struct store *, const struct daemon_config *, struct gitm_repo *,
    int64_t series_id, const char *tip, const char *base, struct err *e);

/*
 * A submitted job on a series commit (POST /api/v1/submit names the
 * commit itself): adds "pack" over the series base to the job's tree
 * object, as the triggers do (daemon/trigger.h), when sha is a series
 * commit of this daemon; else leaves tree as it is.
 */
void packs_tree_spec(json_t *tree, struct store *, const char *sha);

/* The route of sha's pack over base, as job specs name it ("pack"). */
#define PACKS_ROUTE_SIZE 112
void packs_route(char *out, size_t n, const char *sha, const char *base);

#endif
