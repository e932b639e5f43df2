/*
 * The git module (git/git.h): handles, errors, opening and checking a
 * mirror.  libgit2 errors are translated here, once (gitm_i_gerr), into
 * the handle's struct err with the tree's name.  The module is split by
 * concern; what its files share is in git/git_int.h:
 *   transport.c  the socket stream with timeouts, transfer callbacks
 *   cli.c        the git-CLI fallback (`git` run with an argv)
 *   fetch.c      first copy and fetch of a mirror
 *   walk.c       branch tips, commit lookups, new commits, ranges
 *   checkout.c   checkout for the runner
 *   series.c     patch series apply, revert, inbox archives
 *   am.c         `git am --3way`, for the patches series.c cannot apply
 *   pack.c       series commits as packs (daemon -> remote runner)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/caps.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- small helpers ---------------------------------------------------- */

/*
 * A copy of untrusted text of at most cap-1 bytes, cut on a UTF-8
 * boundary so a capped name never ends in half a character.
 */
char *
gitm_i_cap_copy(const char *s, size_t len, size_t cap)
{
	if (s == NULL)
		return xstrdup("");
	return xstrndup(s, utf8_cut(s, len, cap - 1));
}

/* Replaces control characters (from a remote, say) in a message. */
void
gitm_i_sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* "https://user:secret@host/x" -> "https://host/x", capped. */
static char *
redact_url(const char *url)
{
	const char *p = strstr(url, "://"), *slash, *at;
	char *out;

	if (p != NULL) {
		p += 3;
		slash = strchr(p, '/');
		at = strchr(p, '@');
		if (at != NULL && (slash == NULL || at < slash)) {
			out = xasprintf("%.*s%s", (int)(p - url), url, at + 1);
			goto done;
		}
	}
	out = xstrdup(url);
done:
	if (strlen(out) >= CAP_NAME)
		out[CAP_NAME - 1] = '\0';
	gitm_i_sanitize(out);
	return out;
}

static int
is_safe_name(const char *s)
{
	size_t i;

	if (s[0] == '\0' || s[0] == '.' || strlen(s) >= CAP_NAME)
		return 0;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= 'A' && s[i] <= 'Z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		        s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

int
gitm_i_is_hex40(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

void
gitm_i_oid_hex(char out[GITM_SHA_SIZE], const git_oid *id)
{
	git_oid_tostr(out, GITM_SHA_SIZE, id);
}

/*
 * Translates the libgit2 error of a failed call into the handle's error,
 * once: "tree NAME: WHAT: why".  Returns ERR_AUTH when the remote wanted
 * credentials, else -1.
 */
int
gitm_i_gerr(struct gitm_repo *r, int rc, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char what[256], why[CAP_ERRMSG];
	int code = -1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->timed_out)
		snprintf(why, sizeof(why), "timed out after %ld s",
		    r->opts.timeout_ms / 1000);
	else if (r->cancelled)
		snprintf(why, sizeof(why), "cancelled");
	else if (r->auth_asked || rc == GIT_EAUTH) {
		snprintf(why, sizeof(why),
		    "the remote requires authentication "
		    "(perfwatch fetches anonymously)");
		code = ERR_AUTH;
	} else {
		snprintf(why, sizeof(why), "%s",
		    e && e->message ? e->message : "unknown libgit2 error");
		gitm_i_sanitize(why);
	}
	err_set(&r->err, "tree %s: %s: %s", r->name, what, why);
	return code;
}

/* ---- handles ---------------------------------------------------------- */

static struct gitm_repo *
repo_alloc(const char *dir, const char *file, const char *name, const char *url,
    const struct gitm_opts *opts)
{
	struct gitm_repo *r = xcalloc(1, sizeof(*r));

	r->name = xstrdup(name);
	r->url = xstrdup(url);
	r->dir = xstrdup(dir);
	r->path = xasprintf("%s/%s.git", dir, file);
	if (opts != NULL)
		r->opts = *opts;
	if (r->opts.timeout_ms <= 0)
		r->opts.timeout_ms = GITM_DEFAULT_TIMEOUT_MS;
	if (r->opts.git_path == NULL)
		r->opts.git_path = "git";
	r->opts.git_path = xstrdup(r->opts.git_path);
	r->prog.tree = r->name;
	return r;
}

struct gitm_repo *
gitm_repo_new(const char *dir, const char *name, const char *url,
    const struct gitm_opts *opts)
{
	struct gitm_repo *r;

	if (is_safe_name(name))
		return repo_alloc(dir, name, name, url, opts);
	/* Keep the handle usable for messages; every call fails. */
	r = repo_alloc(dir, "invalid", "(invalid)", url, opts);
	err_set(&r->err,
	    "tree name \"%.64s\": only letters, digits, "
	    "'.', '_' and '-', not starting with '.'",
	    name);
	r->corrupt = -1;
	return r;
}

struct gitm_repo *
gitm_repo_for_url(
    const char *workdir, const char *url, const struct gitm_opts *opts)
{
	char hex[GITM_SHA_SIZE], file[32], *name;
	struct gitm_repo *r;
	git_oid id;

	git_odb_hash(&id, url, strlen(url), GIT_OBJECT_BLOB);
	gitm_i_oid_hex(hex, &id);
	snprintf(file, sizeof(file), "u-%.16s", hex);
	name = redact_url(url);
	r = repo_alloc(workdir, file, name, url, opts);
	free(name);
	return r;
}

void
gitm_repo_free(struct gitm_repo *r)
{
	if (r == NULL)
		return;
	git_repository_free(r->repo);
	free(r->name);
	free(r->url);
	free(r->dir);
	free(r->path);
	free((char *)r->opts.git_path);
	free(r);
}

const char *
gitm_errmsg(const struct gitm_repo *r)
{
	return err_msg(&r->err);
}

void
gitm_clearerr(struct gitm_repo *r)
{
	err_clear(&r->err);
}

const char *
gitm_path(const struct gitm_repo *r)
{
	return r->path;
}

/* ---- opening, health, first copy -------------------------------------- */

/*
 * A mirror is healthy when it opens and every branch names a readable
 * commit with a readable tree.  Cheap (a few objects per branch), so it
 * runs at each open and after a failed fetch.
 */
int
gitm_i_repo_healthy(git_repository *repo, char *why, size_t whylen)
{
	git_branch_iterator *it = NULL;
	git_reference *ref, *res;
	git_branch_t type;
	git_commit *c;
	git_tree *t;
	int rc, ok = 1;

	if (git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL) < 0) {
		snprintf(why, whylen, "branches unreadable");
		return 0;
	}
	while (ok && (rc = git_branch_next(&ref, &type, it)) == 0) {
		res = NULL;
		c = NULL;
		t = NULL;
		if (git_reference_resolve(&res, ref) < 0 ||
		    git_commit_lookup(&c, repo, git_reference_target(res)) <
		        0 ||
		    git_commit_tree(&t, c) < 0) {
			snprintf(why, whylen,
			    "%.200s: missing or broken commit",
			    git_reference_name(ref));
			gitm_i_sanitize(why);
			ok = 0;
		}
		git_tree_free(t);
		git_commit_free(c);
		git_reference_free(res);
		git_reference_free(ref);
	}
	if (ok && rc != GIT_ITEROVER) {
		snprintf(why, whylen, "branches unreadable");
		ok = 0;
	}
	git_branch_iterator_free(it);
	return ok;
}

/* Opens the mirror: 0, ERR_NOTFOUND (no mirror yet) or ERR_CONFLICT
 * (it exists but is corrupt; why says how). */
int
gitm_i_repo_open(struct gitm_repo *r, char *why, size_t whylen)
{
	git_repository *repo = NULL;
	struct stat st;
	int rc;

	if (r->repo != NULL)
		return 0;
	if (lstat(r->path, &st) == -1 && errno == ENOENT)
		return ERR_NOTFOUND;
	rc = git_repository_open_ext(&repo, r->path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
	if (rc < 0) {
		const git_error *e = git_error_last();

		snprintf(why, whylen, "%.300s",
		    e && e->message ? e->message : "does not open");
		gitm_i_sanitize(why);
		return ERR_CONFLICT;
	}
	if (!gitm_i_repo_healthy(repo, why, whylen)) {
		git_repository_free(repo);
		return ERR_CONFLICT;
	}
	r->repo = repo;
	return 0;
}

/* Opens the mirror for reading, without fetching. */
int
gitm_i_repo_ready(struct gitm_repo *r)
{
	char why[256];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (r->repo != NULL)
		return 0;
	rc = gitm_i_repo_open(r, why, sizeof(why));
	if (rc == ERR_NOTFOUND)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no mirror at %s yet (not fetched)", r->name,
		    r->path);
	if (rc < 0)
		return err_set(&r->err, "tree %s: mirror %s is corrupt: %s",
		    r->name, r->path, why);
	return 0;
}
