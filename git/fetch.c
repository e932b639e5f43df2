/*
 * The git module's first copy and fetch of a mirror (git/git.h:
 * gitm_fetch), with libgit2 and the git-CLI fallback.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/*
 * Makes a fresh copy in a temporary directory next to the mirror and
 * renames it into place, so a crash or a failed clone never leaves a
 * half-made mirror where a good one is expected, and a corrupt one is
 * replaced only once its replacement is complete.
 */
static int
make_copy(struct gitm_repo *r, struct gitm_fetch_stats *st)
{
	char *tmp = xasprintf("%s.tmp", r->path), *old = NULL;
	git_repository *repo = NULL;
	int rc = -1, cli = r->opts.transfer != GITM_XFER_LIBGIT2;

	git_repository_free(r->repo);
	r->repo = NULL;
	if (files_mkdir_p(r->dir) == -1) {
		err_set(&r->err, "tree %s: creating %s: %s", r->name, r->dir,
		    strerror(errno));
		goto out;
	}
	if (files_rm_rf(tmp) == -1) {
		err_set(&r->err, "tree %s: removing %s: %s", r->name, tmp,
		    strerror(errno));
		goto out;
	}
	gitm_i_xfer_begin(r);
	if (cli) {
		const char *args[] = { "clone", "--bare", "--quiet", "--",
			r->url, tmp };

		rc = gitm_i_cli_git(r, "clone", args, 6);
		if (rc == ERR_NOTFOUND && r->opts.transfer == GITM_XFER_AUTO) {
			/* No git program: libgit2 does the copy. */
			err_clear(&r->err);
			cli = 0;
		} else if (rc < 0) {
			files_rm_rf(tmp);
			rc = -1;
			goto out;
		} else
			st->by_cli = 1;
	}
	if (!cli) {
		rc = git_repository_init(&repo, tmp, 1);
		if (rc < 0) {
			rc = gitm_i_gerr(r, rc, "creating %s", tmp);
			goto out;
		}
		rc = gitm_i_fetch_specs(r, repo, gitm_i_mirror_specs, 2, 1, st);
		git_repository_free(repo);
		if (rc < 0) {
			files_rm_rf(tmp);
			goto out;
		}
	}
	old = xasprintf("%s.old", r->path);
	files_rm_rf(old);
	if (rename(r->path, old) == -1 && errno != ENOENT) {
		rc = err_set(&r->err, "tree %s: moving %s away: %s", r->name,
		    r->path, strerror(errno));
		goto out;
	}
	if (rename(tmp, r->path) == -1) {
		rc = err_set(&r->err, "tree %s: renaming %s: %s", r->name, tmp,
		    strerror(errno));
		goto out;
	}
	files_rm_rf(old);
	rc = git_repository_open_bare(&r->repo, r->path);
	if (rc < 0)
		rc = gitm_i_gerr(r, rc, "opening %s", r->path);
	r->corrupt = 0;
out:
	free(tmp);
	free(old);
	return rc;
}

static int
count_ref(const char *name, void *arg)
{
	if (strncmp(name, "refs/heads/", 11) == 0 ||
	    strncmp(name, "refs/tags/", 10) == 0)
		(*(size_t *)arg)++;
	return 0;
}

/*
 * Lists the remote's branches and tags with libgit2 (no objects move)
 * and compares them with the mirror's: 1 when any differs or exists on
 * one side only, 0 when all match, ERR_AUTH or -1.
 */
static int
remote_differs(struct gitm_repo *r)
{
	git_remote_create_options co = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
	const git_remote_head **heads;
	git_remote *remote = NULL;
	size_t n, i, nremote = 0, nlocal = 0, len;
	int rc, differs = 0;
	git_oid id;

	gitm_i_xfer_begin(r);
	cb.sideband_progress = gitm_i_on_sideband;
	cb.credentials = gitm_i_on_credentials;
	cb.certificate_check = gitm_i_on_certificate;
	cb.payload = r;
	co.repository = r->repo;
	co.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	if ((rc = git_remote_create_with_opts(&remote, r->url, &co)) < 0)
		return gitm_i_gerr(r, rc, "remote %s", r->name);
	if ((rc = git_remote_connect(
	         remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL)) < 0 ||
	    (rc = git_remote_ls(&heads, &n, remote)) < 0) {
		rc = gitm_i_gerr(r, rc, "fetch");
		git_remote_free(remote);
		return rc;
	}
	for (i = 0; i < n && !differs; i++) {
		const char *name = heads[i]->name;

		len = strlen(name);
		if ((strncmp(name, "refs/heads/", 11) != 0 &&
		        strncmp(name, "refs/tags/", 10) != 0) ||
		    (len > 3 && strcmp(name + len - 3, "^{}") == 0))
			continue;
		nremote++;
		if (git_reference_name_to_id(&id, r->repo, name) < 0 ||
		    !git_oid_equal(&id, &heads[i]->oid))
			differs = 1;
	}
	git_remote_disconnect(remote);
	git_remote_free(remote);
	if (differs)
		return 1;
	if (git_reference_foreach_name(r->repo, count_ref, &nlocal) < 0)
		return 1; /* let the fetch sort it out */
	return nlocal != nremote;
}

/* Incremental fetch by git: 0, ERR_NOTFOUND (no git) or -1. */
static int
cli_fetch(struct gitm_repo *r)
{
	const char *args[] = { "--git-dir", r->path, "fetch", "--quiet",
		"--prune", "--no-tags", "--", r->url, gitm_i_mirror_specs[0],
		gitm_i_mirror_specs[1] };

	gitm_i_xfer_begin(r);
	return gitm_i_cli_git(r, "fetch", args, 10);
}

/* Fetches into the open mirror by the configured means. */
static int
fetch_mirror(struct gitm_repo *r, struct gitm_fetch_stats *st)
{
	int rc;

	if (r->opts.transfer == GITM_XFER_LIBGIT2) {
		st->changed = -1; /* unknown: libgit2 fetches whatever moved */
		return gitm_i_fetch_specs(
		    r, r->repo, gitm_i_mirror_specs, 2, 1, st);
	}
	if ((rc = remote_differs(r)) <= 0)
		return rc;
	st->changed = 1;
	rc = cli_fetch(r);
	if (rc == ERR_NOTFOUND && r->opts.transfer == GITM_XFER_AUTO) {
		/* No git program: libgit2 does it. */
		err_clear(&r->err);
		return gitm_i_fetch_specs(
		    r, r->repo, gitm_i_mirror_specs, 2, 1, st);
	}
	if (rc == 0) {
		st->by_cli = 1;
		/* git wrote packs and refs behind libgit2's back. */
		git_repository_free(r->repo);
		r->repo = NULL;
		rc = git_repository_open_bare(&r->repo, r->path);
		if (rc < 0)
			rc = gitm_i_gerr(r, rc, "opening %s", r->path);
	}
	return rc;
}

int
gitm_fetch(struct gitm_fetch_stats *out, struct gitm_repo *r)
{
	struct gitm_fetch_stats st = { 0 };
	long long t0 = clock_mono_ms();
	char why[320];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (r->corrupt) {
		/* A walk found a broken object: start again. */
		st.recreated = 1;
		rc = make_copy(r, &st);
		goto done;
	}
	rc = gitm_i_repo_open(r, why, sizeof(why));
	if (rc == ERR_NOTFOUND || rc == ERR_CONFLICT) {
		st.cloned = rc == ERR_NOTFOUND;
		st.recreated = rc == ERR_CONFLICT;
		rc = make_copy(r, &st);
		goto done;
	}
	rc = fetch_mirror(r, &st);
	if (rc < 0 && rc != ERR_AUTH && !r->timed_out && !r->cancelled &&
	    r->repo != NULL &&
	    !gitm_i_repo_healthy(r->repo, why, sizeof(why))) {
		/* The failure was ours, not the remote's. */
		err_clear(&r->err);
		st.recreated = 1;
		rc = make_copy(r, &st);
	}
done:
	st.ms = (long)(clock_mono_ms() - t0);
	if (out != NULL)
		*out = st;
	return rc;
}
