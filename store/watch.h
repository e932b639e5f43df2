#ifndef STORE_WATCH_H
#define STORE_WATCH_H

/*
 * Watched trees, their branches and commits (store/watch.c), for
 * daemon/watch.c and daemon/trigger.c.  The typed reads of trees and
 * commits (GET /api/v1/trees, /commits) are store/dash.h; the pairs a
 * trigger makes, store/pairs.h.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* Creates the tree by name or updates its URL: 0 and *out_id. */
int store_tree_sync(
    struct store *, int64_t *out_id, const char *name, const char *url);
/* 0 and *out_id, or ERR_NOTFOUND. */
int store_tree_id(struct store *, int64_t *out_id, const char *name);
/*
 * After a poll: last_fetch = now; fetched: last_ok = now.  error (NULL
 * when all went well) is the tree's last error: the fetch's, or the
 * problems of its branches.  failures and next_fetch (Unix time) are the
 * backoff state.
 */
int store_tree_polled(struct store *, int64_t tree_id, int64_t now, int fetched,
    const char *error, int64_t failures, int64_t next_fetch);
/* The recorded tip of a branch into out: 0, or ERR_NOTFOUND (no tip). */
int store_branch_tip(struct store *, char *out, size_t outlen, int64_t tree_id,
    const char *branch);
/*
 * Sets a branch's row: tip (NULL keeps it), state ("ok" or "missing"),
 * error (NULL clears), rewrite (non-NULL: a force push was seen; counted
 * and kept as last_rewrite).
 */
int store_branch_update(struct store *, int64_t tree_id, const char *branch,
    const char *tip, const char *state, const char *error, const char *rewrite,
    int64_t now);

struct store_commit {
	const char *sha;
	const char *parents;            /* space-separated shas */
	const char *author, *committer; /* "Name <email>" */
	int64_t author_date, commit_date;
	const char *subject;
	const char *paths_json; /* the tree's paths it touches, an array */
};
/*
 * Records a commit seen on branch, once per tree: a commit already
 * recorded only gains the branch.  *out_new (may be NULL) is 1 when the
 * watcher had not recorded it before (a row made by a submit of that
 * commit counts as new).
 */
int store_commit_record(struct store *, int64_t *out_id, int *out_new,
    int64_t tree_id, const struct store_commit *, const char *branch,
    int64_t now);
/*
 * A commit of tree by full sha or unique prefix (>= 4 hex digits): 0 with
 * *out_id and the full sha, ERR_NOTFOUND, ERR_CONFLICT (ambiguous).
 */
int store_commit_find(struct store *, int64_t *out_id, char *out_sha,
    size_t outlen, int64_t tree_id, const char *sha);
/* A commit row (stub: sha only) for a submitted commit: 0, *out_id. */
int store_commit_stub(
    struct store *, int64_t *out_id, int64_t tree_id, const char *sha);

#endif
