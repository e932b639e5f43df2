/*
 * A branch's tip on a remote, listed without fetching (git/git.h:
 * gitm_remote_branch): what a "#perfwatch test <url> <branch>" names.
 */

#include <stdio.h>
#include <string.h>

#include "git/git_int.h"

int
gitm_remote_branch(
    char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *branch)
{
	git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
	const git_remote_head **heads;
	git_remote *remote = NULL;
	char want[300];
	size_t n, i;
	int rc;

	out[0] = '\0';
	if (snprintf(want, sizeof(want), "refs/heads/%s", branch) >=
	    (int)sizeof(want))
		return err_setc(&r->err, ERR_NOTFOUND,
		    "remote %s: branch name too long", r->name);
	gitm_i_xfer_begin(r);
	cb.sideband_progress = gitm_i_on_sideband;
	cb.credentials = gitm_i_on_credentials;
	cb.certificate_check = gitm_i_on_certificate;
	cb.payload = r;
	if ((rc = git_remote_create_detached(&remote, r->url)) < 0)
		return gitm_i_gerr(r, rc, "remote %s", r->name);
	if ((rc = git_remote_connect(
	         remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL)) < 0 ||
	    (rc = git_remote_ls(&heads, &n, remote)) < 0) {
		rc = gitm_i_gerr(r, rc, "listing %s", r->name);
		git_remote_free(remote);
		return rc;
	}
	for (i = 0; i < n; i++)
		if (strcmp(heads[i]->name, want) == 0) {
			git_oid_tostr(out, GITM_SHA_SIZE, &heads[i]->oid);
			break;
		}
	git_remote_disconnect(remote);
	git_remote_free(remote);
	if (out[0] == '\0')
		return err_setc(&r->err, ERR_NOTFOUND, "%s has no branch %s",
		    r->name, branch);
	return 0;
}
