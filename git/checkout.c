/*
 * The git module's checkout for the runner (git/git.h): a commit
 * fetched by its id when needed, written into a build directory.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- checkout for the runner ------------------------------------------ */

int
gitm_i_have_commit(struct gitm_repo *r, const char *sha)
{
	git_commit *c = NULL;
	git_oid id;
	int rc;

	git_oid_fromstr(&id, sha);
	rc = git_commit_lookup(&c, r->repo, &id);
	git_commit_free(c);
	return rc == 0;
}

int
gitm_fetch_commit(struct gitm_repo *r, const char *sha)
{
	char spec[GITM_SHA_SIZE + 64];
	const char *specs[1];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (sha == NULL || !gitm_i_is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if (gitm_i_repo_ready(r) == 0 && gitm_i_have_commit(r, sha))
		return 0;
	err_clear(&r->err);
	if ((rc = gitm_fetch(NULL, r)) < 0)
		return rc;
	if (gitm_i_have_commit(r, sha))
		return 0;
	/* Not on a branch or tag: ask for the object itself. */
	snprintf(spec, sizeof(spec), "+%s:refs/perfwatch/fetched", sha);
	specs[0] = spec;
	rc = gitm_i_fetch_specs(r, r->repo, specs, 1, 0, NULL);
	if (rc == ERR_AUTH)
		return rc;
	err_clear(&r->err);
	if (rc == 0 && gitm_i_have_commit(r, sha))
		return 0;
	/*
	 * libgit2's file:// transport never sends unadvertised objects,
	 * whatever the server's uploadpack.allowAnySHA1InWant; git does.
	 */
	if (r->opts.transfer != GITM_XFER_LIBGIT2) {
		const char *args[] = { "--git-dir", r->path, "fetch", "--quiet",
			"--no-tags", "--", r->url, spec };

		gitm_i_xfer_begin(r);
		rc = gitm_i_cli_git(r, "fetch", args, 8);
		err_clear(&r->err);
		if (rc == 0 && gitm_i_have_commit(r, sha))
			return 0;
	}
	return err_setc(&r->err, ERR_NOTFOUND,
	    "tree %s: commit %s is on no branch or tag and the server "
	    "did not send it",
	    r->name, sha);
}

int
gitm_checkout(struct gitm_repo *r, const char *sha, const char *dir)
{
	git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
	git_commit *c = NULL;
	git_tree *t = NULL;
	int rc;

	if (dir[0] == '\0' || strcmp(dir, "/") == 0)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: refusing to check out into \"%s\"", r->name, dir);
	if ((rc = gitm_fetch_commit(r, sha)) < 0)
		return rc;
	if ((rc = gitm_i_lookup_commit(&c, r, sha)) < 0)
		return rc;
	if ((rc = git_commit_tree(&t, c)) < 0) {
		rc = gitm_i_walk_fail(r, rc, "tree of the commit");
		goto out;
	}
	if (files_rm_rf(dir) == -1 || files_mkdir_p(dir) == -1) {
		rc = err_set(&r->err, "tree %s: preparing %s: %s", r->name, dir,
		    strerror(errno));
		goto out;
	}
	/* Exact bytes as committed: no .gitattributes filters run. */
	co.checkout_strategy =
	    GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
	co.disable_filters = 1;
	co.target_directory = dir;
	rc = git_checkout_tree(r->repo, (const git_object *)t, &co);
	if (rc < 0)
		rc = gitm_i_gerr(r, rc, "checking out %s into %s", sha, dir);
out:
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

/*
 * Why a tree path could leave the directory it is written in, or write
 * into a .git: NULL when it cannot.
 */
const char *
gitm_i_tree_path_problem(const char *p)
{
	const char *s = p, *e;
	size_t n;

	if (p == NULL || *p == '\0')
		return "an empty path";
	if (*p == '/')
		return "an absolute path";
	for (;;) {
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			return "an empty or \".\" component";
		if (n == 2 && memcmp(s, "..", 2) == 0)
			return "a \"..\" component";
		if (n == 4 && strncasecmp(s, ".git", 4) == 0)
			return "a \".git\" component";
		if (e == NULL)
			return NULL;
		s = e + 1;
	}
}

/* A tree path that cannot leave DIR or write into a .git. */
static int
safe_tree_path(const char *p)
{
	return gitm_i_tree_path_problem(p) == NULL;
}

/* Writes blob id at dir/path (mode from the tree: file, +x, symlink). */
static int
write_blob(struct gitm_repo *r, const char *dir, const char *path,
    const git_oid *id, uint16_t mode)
{
	char *full = xasprintf("%s/%s", dir, path), *slash;
	git_blob *b = NULL;
	const char *data;
	size_t len;
	FILE *f;
	int rc = -1;

	if (git_blob_lookup(&b, r->repo, id) < 0) {
		rc = gitm_i_gerr(r, -1, "blob of %s", path);
		goto out;
	}
	data = git_blob_rawcontent(b);
	len = (size_t)git_blob_rawsize(b);
	slash = strrchr(full, '/');
	*slash = '\0';
	if (files_mkdir_p(full) == -1) {
		rc = err_set(&r->err, "tree %s: mkdir %s: %s", r->name, full,
		    strerror(errno));
		goto out;
	}
	*slash = '/';
	if (unlink(full) == -1 && errno != ENOENT) {
		rc = err_set(&r->err, "tree %s: unlink %s: %s", r->name, full,
		    strerror(errno));
		goto out;
	}
	if (mode == GIT_FILEMODE_LINK) {
		char *target = xmalloc(len + 1);

		memcpy(target, data, len);
		target[len] = '\0';
		rc = symlink(target, full);
		free(target);
	} else if ((f = fopen(full, "wb")) == NULL)
		rc = -1;
	else {
		rc = fwrite(data, 1, len, f) == len ? 0 : -1;
		if (fclose(f) != 0)
			rc = -1;
		if (rc == 0 && mode == GIT_FILEMODE_BLOB_EXECUTABLE)
			rc = chmod(full, 0755);
	}
	if (rc == -1)
		err_set(&r->err, "tree %s: writing %s: %s", r->name, full,
		    strerror(errno));
out:
	git_blob_free(b);
	free(full);
	return rc;
}

int
gitm_checkout_update(size_t *out_n, struct gitm_repo *r, const char *from,
    const char *to, const char *dir)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	size_t i, n = 0;
	int rc;

	if (out_n != NULL)
		*out_n = 0;
	if ((rc = gitm_fetch_commit(r, to)) < 0 ||
	    (rc = gitm_i_lookup_commit(&ca, r, from)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cb, r, to)) < 0)
		goto out;
	if ((rc = git_commit_tree(&ta, ca)) < 0 ||
	    (rc = git_commit_tree(&tb, cb)) < 0) {
		rc = gitm_i_walk_fail(r, rc, "tree of the commit");
		goto out;
	}
	/* Type changes as a delete plus an add, so both sides are seen. */
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if ((rc = git_diff_tree_to_tree(&d, r->repo, ta, tb, &o)) < 0) {
		rc = gitm_i_gerr(r, rc, "diff %.12s..%.12s", from, to);
		goto out;
	}
	n = git_diff_num_deltas(d);
	for (i = 0; i < n && rc == 0; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		const char *op = dd->old_file.path, *np = dd->new_file.path;

		if (!safe_tree_path(op) || !safe_tree_path(np)) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: refusing path \"%.200s\"", r->name,
			    safe_tree_path(op) ? np : op);
			break;
		}
		if (dd->status == GIT_DELTA_DELETED ||
		    dd->status == GIT_DELTA_RENAMED ||
		    dd->status == GIT_DELTA_TYPECHANGE) {
			char *full = xasprintf("%s/%s", dir, op);

			if (unlink(full) == -1 && errno != ENOENT)
				rc = err_set(&r->err, "tree %s: unlink %s: %s",
				    r->name, full, strerror(errno));
			free(full);
		}
		if (rc == 0 && dd->status != GIT_DELTA_DELETED &&
		    dd->new_file.mode != GIT_FILEMODE_COMMIT)
			rc = write_blob(
			    r, dir, np, &dd->new_file.id, dd->new_file.mode);
	}
	if (rc == 0 && out_n != NULL)
		*out_n = n;
out:
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	return rc;
}

int
gitm_borrow_objects(struct gitm_repo *r, const char *other)
{
	git_odb *odb = NULL;
	struct stat st;
	char *dir;
	int rc;

	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	/* A bare clone (DIR/NAME.git) or a work tree's .git. */
	dir = xasprintf("%s/objects", other);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(dir);
		dir = xasprintf("%s/.git/objects", other);
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: %.200s has no objects directory", r->name, other);
		free(dir);
		return rc;
	}
	if ((rc = git_repository_odb(&odb, r->repo)) < 0 ||
	    (rc = git_odb_add_disk_alternate(odb, dir)) < 0)
		rc = gitm_i_gerr(r, rc, "objects of %.200s", other);
	else
		rc = 0;
	git_odb_free(odb);
	free(dir);
	return rc;
}
