/*
 * Checkouts for jobs on a commit (see checkout.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "git/git.h"
#include "runners/checkout.h"
#include "runners/client.h"

#define CHECKOUT_TIMEOUT_MS (30L * 60 * 1000)
#define PACK_TIMEOUT_MS (10L * 60 * 1000)
#define PACK_PREFIX "/api/v1/packs/"
#define PACK_HAVE "?have="

static int
is_sha(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return n == GITM_SHA_SIZE - 1;
}

/* The base named by a pack route for commit sha: 0, or -1 (not one). */
static int
pack_base(char out[GITM_SHA_SIZE], const char *path, const char *sha)
{
	const size_t np = sizeof(PACK_PREFIX) - 1, nh = sizeof(PACK_HAVE) - 1;
	const size_t ns = GITM_SHA_SIZE - 1;

	if (strlen(path) != np + ns + nh + ns ||
	    strncmp(path, PACK_PREFIX, np) != 0 ||
	    strncmp(path + np, sha, ns) != 0 ||
	    strncmp(path + np + ns, PACK_HAVE, nh) != 0 ||
	    !is_sha(path + np + ns + nh, ns))
		return -1;
	memcpy(out, path + np + ns + nh, ns);
	out[ns] = '\0';
	return 0;
}

int
checkout_fetch(size_t *out_pack, struct gitm_repo *repo, const char *sha,
    const struct checkout_pack *pk, struct err *e)
{
	char base[GITM_SHA_SIZE];
	struct buf b;
	int rc;

	if (out_pack != NULL)
		*out_pack = 0;
	rc = gitm_fetch_commit(repo, sha);
	if (rc == 0)
		return 0;
	if (rc != ERR_NOTFOUND || pk == NULL || pk->path == NULL)
		return err_set(e, "fetch %.12s: %s", sha, gitm_errmsg(repo));
	if (pack_base(base, pk->path, sha) != 0)
		return err_set(e,
		    "tree field 'pack': '%.160s' is not %s%s%sBASE (40 hex "
		    "digits)",
		    pk->path, PACK_PREFIX, sha, PACK_HAVE);
	gitm_clearerr(repo);
	/* The pack holds only what the series adds to its base. */
	if (gitm_fetch_commit(repo, base) != 0)
		return err_set(e,
		    "fetch %.12s (the base of series commit %.12s): %s", base,
		    sha, gitm_errmsg(repo));
	rc =
	    client_get_raw(&b, pk->cl, pk->path, CAP_GIT_PACK, PACK_TIMEOUT_MS);
	if (rc != 0)
		return err_set(
		    e, "series commit %.12s: %s", sha, client_errmsg(pk->cl));
	rc = gitm_pack_add(repo, sha, b.data, b.len);
	if (rc != 0)
		err_set(e, "series commit %s: the pack from %s (%zu bytes): %s",
		    sha, pk->path, b.len, gitm_errmsg(repo));
	else if (out_pack != NULL)
		*out_pack = b.len;
	buf_release(&b);
	return rc == 0 ? 0 : -1;
}

int
checkout_prepare(size_t *out_pack, const char *workdir, const char *url,
    const char *sha, const struct checkout_pack *pk, const char *dir,
    struct err *e)
{
	struct gitm_opts o;
	struct gitm_repo *repo;
	char *clones = xasprintf("%s/trees", workdir);
	int r = -1;

	if (out_pack != NULL)
		*out_pack = 0;
	if (!is_sha(sha, strlen(sha))) {
		err_set(
		    e, "commit '%.64s': expected 40 lowercase hex digits", sha);
		free(clones);
		return -1;
	}
	if (mkdir(clones, 0755) == -1 && errno != EEXIST) {
		err_set(e, "%s: mkdir: %s", clones, strerror(errno));
		free(clones);
		return -1;
	}
	memset(&o, 0, sizeof(o));
	o.timeout_ms = CHECKOUT_TIMEOUT_MS;
	o.transfer = GITM_XFER_AUTO;
	repo = gitm_repo_for_url(clones, url, &o);
	if (checkout_fetch(out_pack, repo, sha, pk, e) != 0)
		;
	else if (gitm_checkout(repo, sha, dir) != 0)
		err_set(e, "checkout %.12s: %s", sha, gitm_errmsg(repo));
	else
		r = 0;
	gitm_repo_free(repo);
	free(clones);
	return r;
}
