/*
 * Checkouts for jobs on a commit (see checkout.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/git.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runners/checkout.h"

#define CHECKOUT_TIMEOUT_MS (30L * 60 * 1000)

int
checkout_prepare(const char *workdir, const char *url, const char *sha,
    const char *dir, struct err *e)
{
	struct gitm_opts o;
	struct gitm_repo *repo;
	char *clones = xasprintf("%s/trees", workdir);
	size_t i, n = strlen(sha);
	int r = -1, rc;

	for (i = 0; i < n; i++)
		if (!((sha[i] >= '0' && sha[i] <= '9') ||
		        (sha[i] >= 'a' && sha[i] <= 'f')))
			break;
	if (n != GITM_SHA_SIZE - 1 || i != n) {
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
	if ((rc = gitm_fetch_commit(repo, sha)) != 0)
		err_set(e, "fetch %.12s: %s", sha, gitm_errmsg(repo));
	else if ((rc = gitm_checkout(repo, sha, dir)) != 0)
		err_set(e, "checkout %.12s: %s", sha, gitm_errmsg(repo));
	else
		r = 0;
	gitm_repo_free(repo);
	free(clones);
	return r;
}
