#ifndef GIT_GIT_INT_H
#define GIT_GIT_INT_H

/*
 * What the files of the git module share (git/repo.c says which file
 * holds what); nothing outside git/ includes this.  The one
 * header besides those files that names libgit2's types.
 */
#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "common/err.h"
#include "git/git.h"

#define PROGRESS_EVERY_MS 200
#define CLI_TAIL 1024 /* bytes of `git clone` stderr kept for messages */
_Static_assert(CLI_TAIL > 512, "a read chunk fits in the tail");
#define MAX_AUTH_ASKS 1

struct gitm_repo {
	struct err err;
	char *name; /* for messages: the tree name or the redacted URL */
	char *url;
	char *dir;  /* parent directory */
	char *path; /* dir/NAME.git */
	struct gitm_opts opts;
	git_repository *repo;
	int corrupt; /* a walk hit a missing or broken object */

	/* State of the current transfer, read by the callbacks. */
	long long deadline_ms, last_progress_ms;
	int timed_out, cancelled, auth_asked;
	struct gitm_progress prog;
};

/* ---- repo.c: helpers, errors, opening ---- */

/* A copy of untrusted text of at most cap-1 bytes, cut on UTF-8. */
char *gitm_i_cap_copy(const char *s, size_t len, size_t cap);
/* Replaces control characters (from a remote, say) in a message. */
void gitm_i_sanitize(char *s);
int gitm_i_is_hex40(const char *s);
void gitm_i_oid_hex(char out[GITM_SHA_SIZE], const git_oid *id);
/*
 * Translates the libgit2 error of a failed call into the handle's error,
 * once: "tree NAME: WHAT: why".  ERR_AUTH when the remote wanted
 * credentials, else -1.
 */
int gitm_i_gerr(struct gitm_repo *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every branch names a readable commit with a readable tree: 1 or 0. */
int gitm_i_repo_healthy(git_repository *repo, char *why, size_t whylen);
/* Opens the mirror: 0, ERR_NOTFOUND (no mirror yet) or ERR_CONFLICT
 * (it exists but is corrupt; why says how). */
int gitm_i_repo_open(struct gitm_repo *r, char *why, size_t whylen);
/* Opens the mirror for reading, without fetching. */
int gitm_i_repo_ready(struct gitm_repo *r);

/* ---- transport.c: the stream and the transfer callbacks ---- */

/* The socket stream's timeout (gitm_global_init), also git's own. */
extern long gitm_i_io_timeout_ms;
/* The refspecs of a mirror: every branch and tag. */
extern const char *gitm_i_mirror_specs[2];
/* Resets the transfer state before a fetch or clone. */
void gitm_i_xfer_begin(struct gitm_repo *r);
/* Deadline and the caller's progress; non-zero cancels the transfer. */
int gitm_i_xfer_tick(struct gitm_repo *r, int force);
/* libgit2 callbacks (ARG is the struct gitm_repo). */
int gitm_i_on_sideband(const char *str, int len, void *arg);
int gitm_i_on_credentials(git_credential **out, const char *url,
    const char *user, unsigned int allowed, void *arg);
int gitm_i_on_certificate(
    git_cert *cert, int valid, const char *host, void *arg);
/* Fetches refspecs from the URL into repo; 0, ERR_AUTH or -1. */
int gitm_i_fetch_specs(struct gitm_repo *r, git_repository *repo,
    const char **specs, size_t nspecs, int prune, struct gitm_fetch_stats *st);

/* ---- cli.c: the git-CLI fallback ---- */

/*
 * Runs `git ARGS...` (an argv, no shell) under the deadline: 0,
 * ERR_NOTFOUND (git is not installed) or -1 with the tail of git's
 * stderr in the message.
 */
int gitm_i_cli_git(struct gitm_repo *r, const char *what,
    const char *const *args, size_t nargs);

/* ---- walk.c ---- */

/* Parses a 40-digit id and checks it names a commit in the mirror. */
int gitm_i_lookup_commit(
    git_commit **out, struct gitm_repo *r, const char *sha);
/* A failed read in a walk marks the mirror broken (made again at the
 * next gitm_fetch). */
int gitm_i_walk_fail(struct gitm_repo *r, int rc, const char *what);

/* ---- checkout.c ---- */

/* 1 when the commit is in the clone, 0 when not. */
int gitm_i_have_commit(struct gitm_repo *r, const char *sha);
/* Why a tree path could leave its directory or write into a .git:
 * NULL when it cannot. */
const char *gitm_i_tree_path_problem(const char *p);

#endif
