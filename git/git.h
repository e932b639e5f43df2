#ifndef GIT_GIT_H
#define GIT_GIT_H

/*
 * The git module, the one module that includes <git2.h> (libgit2 1.5).
 * The daemon's watcher keeps one bare mirror per watched tree; the runner
 * keeps one clone per tree URL and exports commits from it.  Both are a
 * struct gitm_repo.
 *
 * Refs: a mirror is fetched mirror-style, each remote refs/heads/X into
 * refs/heads/X and refs/tags/X into refs/tags/X (forced), with prune.
 * The mirror's branches are therefore the remote's branches, exactly
 * what `git clone --bare` produces, so git and libgit2 can take turns on
 * the same mirror (see enum gitm_transfer).  A branch deleted upstream
 * disappears from the mirror at the next fetch.
 *
 * Everything read from a tree (names, e-mails, subjects, ref names) is
 * untrusted: copied with a length cap (cut on a UTF-8 boundary), never
 * interpreted, never passed to a shell.
 *
 * Threads: a struct gitm_repo must not be used by two threads at once.
 * Errors: functions return 0, -1 or a negative ERR_* (common/err.h); the
 * message, naming the tree, is read with gitm_errmsg() and stays until
 * gitm_clearerr() (first message wins).
 */
#include <stddef.h>

#include "common/buf.h"
#include "common/caps.h"

#define GITM_SHA_SIZE 41 /* 40 hex digits and the NUL */

/* Default whole-operation deadline and socket inactivity timeout. */
#define GITM_DEFAULT_TIMEOUT_MS (30L * 60 * 1000)
#define GITM_DEFAULT_IO_TIMEOUT_MS (120L * 1000)

enum gitm_stage {
	GITM_STAGE_CLI,       /* git clone or fetch running (no counts) */
	GITM_STAGE_RECEIVING, /* objects arriving */
	GITM_STAGE_INDEXING,  /* resolving deltas */
	GITM_STAGE_DONE
};

struct gitm_progress {
	const char *tree; /* the tree's name */
	enum gitm_stage stage;
	unsigned total_objects, received_objects, indexed_objects;
	unsigned total_deltas, indexed_deltas;
	unsigned long long received_bytes;
};

/*
 * Which program moves objects.  libgit2 1.5 is slow at it: its indexer
 * maps and unmaps the pack file for every object it writes (1.1x-1.9x
 * git's time to fetch 1,000 commits here, half of it in munmap), and its
 * file:// transport delta-searches a whole pack with no progress (a first
 * copy of 99,000 commits had not finished after 90 s; git: 14-24 s); see
 * tests/bench/git_bench.c.  So by default git downloads and
 * libgit2 does everything else, including the idle check: a poll lists
 * the remote's refs with libgit2 and runs git only when one differs.
 */
enum gitm_transfer {
	GITM_XFER_AUTO,   /* git when it runs, else libgit2 */
	GITM_XFER_CLI,    /* git only */
	GITM_XFER_LIBGIT2 /* libgit2 only */
};

struct gitm_opts {
	long timeout_ms; /* one fetch or clone; 0: the default */
	enum gitm_transfer transfer;
	const char *git_path; /* the git program; NULL: "git" in PATH */
	/*
	 * Progress, at most every 200 ms and at the end; a non-zero return
	 * cancels the transfer.  Called on the caller's thread.
	 */
	int (*progress)(const struct gitm_progress *, void *arg);
	void *arg;
};

/*
 * Process-wide setup, before any thread uses the module: initialises
 * libgit2, disables its owner validation (the module only opens
 * repositories it made), and registers a socket stream whose connect,
 * read and write time out after io_timeout_ms (0: the default) of
 * inactivity, because libgit2 1.5 has no server timeout option
 * (GIT_OPT_SET_SERVER_TIMEOUT arrived in 1.7).  The stream serves
 * http://, https:// (TLS runs over it) and git://; ssh:// (libssh2)
 * has only the whole-operation deadline.  0 or -1 (message in errbuf).
 */
int gitm_global_init(long io_timeout_ms);
void gitm_global_shutdown(void);

struct gitm_repo;

/*
 * A mirror of tree NAME (letters, digits, '.', '_', '-'; not starting
 * with '.') fetched from URL, kept at DIR/NAME.git.  Nothing is touched
 * until gitm_fetch().  Never NULL; opts may be NULL and is copied.
 */
struct gitm_repo *gitm_repo_new(const char *dir, const char *name,
    const char *url, const struct gitm_opts *opts);
/*
 * The runner's clone of URL under WORKDIR, named after a hash of the URL
 * (WORKDIR/u-<16 hex>.git); the URL also serves as the tree name in
 * messages (without any user:password part).
 */
struct gitm_repo *gitm_repo_for_url(
    const char *workdir, const char *url, const struct gitm_opts *opts);
void gitm_repo_free(struct gitm_repo *); /* NULL ok */
const char *gitm_errmsg(const struct gitm_repo *);
void gitm_clearerr(struct gitm_repo *);
const char *gitm_path(const struct gitm_repo *); /* DIR/NAME.git */

struct gitm_fetch_stats {
	int cloned;    /* the mirror was created by this call */
	int recreated; /* it was corrupt and was made again */
	int by_cli;    /* git moved the objects (no counts below) */
	int changed;   /* a ref of the remote differed from the mirror */
	unsigned received_objects;
	unsigned long long received_bytes;
	long ms;
};

/*
 * Brings the mirror up to date: opens it, or makes the first copy when it
 * does not exist, or makes it again when it is corrupt (unreadable, or a
 * branch pointing to a missing or broken commit); otherwise fetches
 * branches and tags with prune (with git: only when the remote's refs
 * differ from the mirror's).  out may be NULL.  0, ERR_AUTH (the
 * remote wants credentials; perfwatch fetches anonymously) or -1.
 */
int gitm_fetch(struct gitm_fetch_stats *out, struct gitm_repo *);

struct gitm_tip {
	char *branch; /* "master", without refs/heads/ */
	char sha[GITM_SHA_SIZE];
};

/*
 * The branches of the mirror and their commits, sorted by name, as of
 * the last fetch.  Branch names longer than CAP_NAME are skipped.
 * *out is the caller's: gitm_tips_free(*out, *n).  0 or -1.
 */
int gitm_tips(struct gitm_tip **out, size_t *n, struct gitm_repo *);
void gitm_tips_free(struct gitm_tip *, size_t);
/* Commit of one branch: 0, ERR_NOTFOUND (no such branch) or -1. */
int gitm_tip(char out[GITM_SHA_SIZE], struct gitm_repo *, const char *branch);
/*
 * The tip of BRANCH on the handle's URL, listed from the remote without
 * fetching anything or touching the mirror directory.  0, ERR_NOTFOUND
 * (no such branch), ERR_AUTH or -1.
 */
int gitm_remote_branch(
    char out[GITM_SHA_SIZE], struct gitm_repo *, const char *branch);

struct gitm_commit {
	char sha[GITM_SHA_SIZE];
	char (*parents)[GITM_SHA_SIZE];
	size_t nparents;
	char *author_name, *author_email; /* capped at CAP_NAME */
	char *committer_name, *committer_email;
	long long author_time, commit_time; /* seconds since the epoch */
	int author_tz, commit_tz;           /* minutes east of UTC */
	char *subject; /* first line of the message, capped at CAP_SUBJECT */
	/* touches[i]: the commit changes paths[i] against its first parent
	 * (a root commit: against the empty tree). */
	unsigned char *touches;
	int touches_any;
};

struct gitm_walk {
	struct gitm_commit *commits; /* oldest first (parents first) */
	size_t n;
	int rewrite;     /* old is not an ancestor of new (force push) */
	int old_missing; /* old is not in the mirror: walked from new only */
	char base[GITM_SHA_SIZE]; /* rewrite: merge base of old and new,
	                             or "" when none */
	size_t dropped; /* rewrite: commits on old that new lost (capped) */
	int truncated;  /* more than max: only the newest max are here */
};

/*
 * The commits new on a branch that moved from OLD (NULL or "" when the
 * branch is new) to NEW, oldest first, with the paths each one touches.
 * Fast-forward: new ^old.  Otherwise (a rebase or a force push) the
 * rewrite is reported and the walk is new ^merge-base.  paths are
 * literal paths ("mm" covers mm/...) or fnmatch globs.  max caps the
 * number of commits (0: GITM_MAX_WALK); when the range is larger, the
 * newest max are returned and truncated is set.  0 and *out (release
 * with gitm_walk_release), ERR_NOTFOUND (new is not a commit here) or -1.
 */
#define GITM_MAX_WALK 1000000
int gitm_new_commits(struct gitm_walk *out, struct gitm_repo *, const char *old,
    const char *new_tip, const char *const *paths, size_t npaths, size_t max);
void gitm_walk_release(struct gitm_walk *);

/*
 * The commits of a bisection's range: those of BAD that are not
 * ancestors of GOOD, oldest first (parents first), BAD last, each with
 * the paths it touches against its first parent.  first_parent: only
 * BAD's first-parent chain (merges count as one commit, as `git bisect
 * --first-parent`), else the whole DAG.  ERR_INVALID when GOOD is not an
 * ancestor of BAD, ERR_NOTFOUND (either is not a commit here), -1; max
 * as gitm_new_commits (truncated: the range is too large to bisect).
 */
int gitm_range(struct gitm_walk *out, struct gitm_repo *, const char *good,
    const char *bad, int first_parent, const char *const *paths, size_t npaths,
    size_t max);

/*
 * Reverts commit SHA on top of commit ONTO (libgit2 git_revert_commit,
 * the mainline parent 1 for a merge) into a new commit in the mirror,
 * its parent ONTO, message "Revert \"<subject>\"", author and committer
 * "perfwatch" at ONTO's commit time (the same inputs give the same
 * commit), and points REF at it so it stays and runners can fetch it.
 * 0 and out, ERR_CONFLICT when the revert does not apply cleanly (the
 * message names a file), ERR_NOTFOUND, or -1.
 */
int gitm_revert(char out[GITM_SHA_SIZE], struct gitm_repo *, const char *sha,
    const char *onto, const char *ref);

/*
 * Resolves REF to a commit: a full ref name (refs/...), a branch, a tag
 * (peeled), or a full 40-digit id of a commit in the mirror.  No revision
 * syntax (REF~2, @{...}) is interpreted.  0, ERR_NOTFOUND or -1.
 */
int gitm_resolve(char out[GITM_SHA_SIZE], struct gitm_repo *, const char *ref);
/* First parent: 0, ERR_NOTFOUND (root commit or unknown commit) or -1. */
int gitm_first_parent(
    char out[GITM_SHA_SIZE], struct gitm_repo *, const char *sha);
/* Merge base of a and b: 0, ERR_NOTFOUND (unrelated) or -1. */
int gitm_merge_base(
    char out[GITM_SHA_SIZE], struct gitm_repo *, const char *a, const char *b);
/* 1 when ANCESTOR is COMMIT or one of its ancestors, 0 when not, <0. */
int gitm_is_ancestor(
    struct gitm_repo *, const char *ancestor, const char *commit);

/*
 * Makes sure commit SHA is in the clone: fetches branches and tags if it
 * is not, then, if still missing, asks the server for the commit itself
 * (servers that allow unadvertised objects; libgit2 first, then git, as
 * libgit2's file:// transport never sends them).  0, ERR_NOTFOUND, ERR_AUTH
 * or -1.
 */
int gitm_fetch_commit(struct gitm_repo *, const char *sha);
/*
 * Exports the tree of commit SHA (fetched as by gitm_fetch_commit) into
 * DIR, which is emptied first or created: a clean copy to build in, with
 * no .git.  0, ERR_NOTFOUND, ERR_AUTH or -1.
 */
int gitm_checkout(struct gitm_repo *, const char *sha, const char *dir);
/*
 * Moves DIR, which holds an export of commit FROM (and may hold other,
 * untracked files such as a build's objects), to commit TO by writing
 * only the files that differ between the two trees and removing the ones
 * TO deletes: unchanged files keep their bytes and times, so an
 * incremental build (make) rebuilds only what the change touches.  A
 * path with an empty, ".", ".." or ".git" component is refused.  *out_n
 * (may be NULL) is the number of paths changed.  0, ERR_NOTFOUND or -1.
 */
int gitm_checkout_update(size_t *out_n, struct gitm_repo *, const char *from,
    const char *to, const char *dir);
/*
 * Makes the objects of the repository at OTHER (the gitm_path of another
 * handle: the clone a build tree was last exported from) readable
 * through the handle until it is freed, writing nothing to either: so a
 * tree exported from a commit only OTHER has can be moved to one of this
 * repository's (gitm_checkout_update).  0, ERR_NOTFOUND (OTHER has no
 * objects directory) or -1.
 */
int gitm_borrow_objects(struct gitm_repo *, const char *other);

/* One mailed patch to apply (daemon/series). */
struct gitm_patch {
	const char *diff; /* from the first "diff --git" line */
	size_t len;
	const char *author_name, *author_email; /* untrusted; sanitised */
	long long author_time;                  /* < 0: unknown (epoch 0) */
	int author_tz;                          /* minutes east of UTC */
	const char *message;                    /* the commit message */
};

/*
 * The author a patch's commit gets, the same in both appliers (libgit2
 * here, git am in git/am.c): the mail's name and address with '<',
 * '>' and control bytes replaced (spaces too in the address), and
 * "unknown" for one that is empty or all of what git strips from the
 * ends of an identity (blanks, . , : ; " \\ '): git refuses an empty
 * name, and the fallback failed on such mail.
 */
void gitm_patch_author(char name[CAP_NAME + 1], char email[CAP_NAME + 1],
    const struct gitm_patch *);

/*
 * Applies patches in order onto commit BASE of the mirror (libgit2
 * git_apply_to_tree: hunks must match where they say, no fuzz), one
 * commit per patch: author and date from the mail, committer
 * "perfwatch" at the same date, so the same mails give the same
 * commits.  out[i] is patch i's commit; REF (NULL: none) is pointed at
 * the last one (at BASE when n is 0), which keeps the commits from git's
 * garbage collection and lets runners fetch them.  0 (*out_failed = n);
 * ERR_CONFLICT when patch *out_failed does not apply (the message names the
 * file), ERR_INVALID (it does not parse), ERR_NOTFOUND (no BASE), or -1.
 */
int gitm_apply_series(char (*out)[GITM_SHA_SIZE], size_t *out_failed,
    struct gitm_repo *, const char *base, const struct gitm_patch *, size_t n,
    const char *ref);
/* The tree id of commit SHA: 0, ERR_NOTFOUND or -1. */
int gitm_tree_id(char out[GITM_SHA_SIZE], struct gitm_repo *, const char *sha);
/*
 * The size of the largest file in commit SHA's tree, from the object
 * headers (no blob is read): 0, ERR_NOTFOUND or -1.  It walks the whole
 * tree: for checks of small trees (the patch fuzz target's caps).
 */
int gitm_largest_blob(int64_t *out, struct gitm_repo *, const char *sha);

/*
 * Series commits for runners that cannot see the mirror (docs/API.md,
 * GET /api/v1/packs/{sha}): a git packfile, as git itself sends, holding
 * the commits reachable from TIP but not from HAVE, and the trees and
 * blobs they add (libgit2 git_packbuilder over a walk that hides HAVE,
 * so everything HAVE's tree holds stays out).  The pack is written into
 * out, whose max is the cap.  *out_commits (may be NULL): the commits
 * packed.  0; ERR_INVALID (an id is not 40 hex digits, or HAVE is not an
 * ancestor of TIP), ERR_NOTFOUND (TIP or HAVE is not in the mirror),
 * ERR_TOOBIG (the pack would be larger than out->max: out is emptied),
 * or -1.
 */
int gitm_pack_build(struct buf *out, size_t *out_commits, struct gitm_repo *,
    const char *tip, const char *have);
/*
 * The runner's side: adds PACK (len bytes, from gitm_pack_build) to the
 * clone and makes sure it brought commit SHA.  The pack is indexed in a
 * scratch directory inside the clone first (libgit2 git_indexer, which
 * checks every object's checksum and the pack's trailer), then checked:
 * commit SHA is in the clone with the pack, and every object the pack's
 * commits and trees name is in the pack or already in the clone.  Only
 * then are the pack and its index moved into objects/pack; on any
 * failure the clone is left as it was.  0; ERR_INVALID (not a pack, a
 * damaged one, or one naming objects the clone lacks: the message says
 * which), ERR_NOTFOUND (a sound pack without commit SHA: the message
 * names SHA and the commits the pack holds), or -1.
 */
int gitm_pack_add(
    struct gitm_repo *, const char *sha, const void *pack, size_t len);
/* 1 when commit SHA is in the repository (opened, not fetched), 0 when
 * not or the repository does not exist yet, ERR_INVALID (not 40 hex). */
int gitm_has_commit(struct gitm_repo *, const char *sha);

/*
 * A public-inbox archive (one message per commit, as the file "m"):
 * calls cb with each message of the commits on HEAD (else master) that
 * are not ancestors of OLD (NULL or "": all), oldest first, at most max
 * of them; a non-zero cb return stops after that message; cb NULL only
 * walks (to find the newest commit).  A commit
 * without "m" is skipped (cb not called).  *out_last is the last commit
 * read ("" when none), *out_n their count.  0, ERR_NOTFOUND, -1.
 */
int gitm_inbox_read(char out_last[GITM_SHA_SIZE], size_t *out_n,
    struct gitm_repo *, const char *old, size_t max,
    int (*cb)(const char *sha, const char *data, size_t len, void *arg),
    void *arg);

#endif
