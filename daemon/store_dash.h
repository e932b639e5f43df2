#ifndef DAEMON_STORE_DASH_H
#define DAEMON_STORE_DASH_H

/*
 * The typed reads of the dashboard and the read API (issue 13,
 * docs/ARCHITECTURE.md "The typed store"): trees, commits.  Each fills
 * structs the caller releases with the matching _release (NULL ok); the
 * JSON of the API is made at the HTTP edge (web/rows_dash.h).  Text is
 * the struct's own copy, NULL where the column is NULL, with the bytes
 * that are not UTF-8 (and NULs) as '?', as the JSON rows had it.  A time
 * that may be absent has a has_ flag.  0, or -1 (store_errmsg()) unless
 * a prototype says more.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* A branch of a tree as the watcher last saw it. */
struct store_tree_branch {
	char *branch;
	char *tip; /* NULL: no tip recorded */
	int has_updated;
	int64_t updated;
	char *state; /* ok | missing */
	char *error, *last_rewrite;
	int64_t rewrites; /* force pushes seen */
};
/* A tree (GET /api/v1/trees). */
struct store_tree {
	int64_t id;
	char *name, *url;
	int has_last_fetch, has_last_ok, has_next_fetch;
	int64_t last_fetch, last_ok, next_fetch;
	char *last_error;
	int64_t failures; /* fetches failed in a row (backoff) */
	int64_t commits;  /* commits the watcher recorded */
	struct store_tree_branch *branches; /* by branch */
	size_t nbranches;
};
struct store_trees {
	struct store_tree *v;
	size_t n;
};
/* Every tree, by name, with its branches. */
int store_trees_get(struct store *, struct store_trees *out);
void store_trees_release(struct store_trees *);

/* A commit the watcher recorded (GET /api/v1/commits). */
struct store_commit_row {
	int64_t id;
	char *sha, *tree, *subject, *author, *committer;
	int has_author_date, has_commit_date;
	int64_t author_date, commit_date;
	char *parents;    /* space-separated shas, as stored */
	char *branches;   /* comma-separated, as stored */
	char *paths_json; /* the tree's paths it touches: a JSON array */
	int64_t first_seen;
};
struct store_commits {
	struct store_commit_row *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
};
/* Commits newest first with id < cursor (0: from the newest), filtered
 * by tree and branch (NULL: any), at most limit. */
int store_commits_get(struct store *, struct store_commits *out,
    const char *tree, const char *branch, int64_t limit, int64_t cursor);
void store_commits_release(struct store_commits *);

#endif
