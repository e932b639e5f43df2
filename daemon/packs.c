/*
 * Packs of series commits for remote runners (see packs.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/caps.h"
#include "common/json.h"
#include "common/log.h"
#include "config/config.h"
#include "daemon/packs.h"
#include "git/git.h"
#include "store/series.h"
#include "store/series_pack.h"
#include "store/store.h"

static int
is_sha(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == GITM_SHA_SIZE - 1;
}

static const struct cfg_tree *
tree_named(const struct daemon_config *dc, const char *name)
{
	size_t i;

	for (i = 0; i < dc->ntrees; i++)
		if (strcmp(dc->trees[i].name, name) == 0)
			return &dc->trees[i];
	return NULL;
}

/*
 * The pack of sha's series kept in the store (packs_keep): the status,
 * as packs_build's; 404 with e set when none is kept.
 */
static int
kept_pack(struct buf *out, struct err *e, struct store *s, const char *tree,
    const char *sha, const char *ref)
{
	size_t commits = 0, bytes = 0;
	int rc = store_series_pack_get(s, out, &commits, &bytes, ref);

	if (rc == 0 && out->len == 0) {
		err_set(e,
		    "commit %s: its series' pack was larger than "
		    "http.max_pack (%zu bytes) when it was applied",
		    sha, bytes);
		return 413;
	}
	if (rc == 0) {
		log_info("tree %s: pack of %.12s from the store (%s): %zu "
		         "commit%s, %zu bytes",
		    tree, sha, ref, commits, commits == 1 ? "" : "s", out->len);
		return 200;
	}
	err_set(e, "%s", store_errmsg(s));
	store_errclear(s);
	if (rc == ERR_TOOBIG) {
		err_set(e, "commit %s: its series is larger than http.max_pack",
		    sha);
		return 413;
	}
	if (rc == ERR_NOTFOUND) {
		err_set(e,
		    "commit %s: not held by %s in the mirror of %s, and no "
		    "pack of its series is kept in the store",
		    sha, ref, tree);
		return 404;
	}
	return 500;
}

int
packs_build(struct buf *out, struct err *e, struct store *s,
    const struct daemon_config *dc, const char *sha, const char *have)
{
	char tname[CAP_NAME], ref[CAP_NAME], tip[GITM_SHA_SIZE];
	char base[GITM_SHA_SIZE];
	const struct cfg_tree *tree;
	struct gitm_repo *repo;
	size_t n = 0;
	int rc, status;

	*out = BUF_INIT((size_t)dc->http_max_pack);
	if (!is_sha(sha)) {
		err_set(e,
		    "path: '%.64s' is not a commit id (40 lowercase hex "
		    "digits)",
		    sha);
		return 400;
	}
	if (have == NULL || have[0] == '\0') {
		err_set(e,
		    "query 'have': required: the commit the runner "
		    "already has (the series base)");
		return 400;
	}
	if (!is_sha(have)) {
		err_set(e,
		    "query 'have': '%.64s' is not a commit id (40 "
		    "lowercase hex digits)",
		    have);
		return 400;
	}
	rc = store_series_commit(s, tname, ref, sizeof(tname), base, sha);
	if (rc == ERR_NOTFOUND) {
		err_set(e,
		    "commit %s is not a series commit of this daemon "
		    "(only commits made from mail are served)",
		    sha);
		store_errclear(s);
		return 404;
	}
	if (rc != 0) {
		err_set(e, "%s", store_errmsg(s));
		return 500;
	}
	if ((tree = tree_named(dc, tname)) == NULL) {
		err_set(e, "commit %s: its tree %s is no longer configured",
		    sha, tname);
		return 404;
	}
	/* The work is bounded by the series: HAVE is its base or one of its
	 * commits, never an older commit of the tree (a pack of the tree's
	 * whole history, which the cap would refuse only once built). */
	if (strcmp(have, base) != 0) {
		char t2[CAP_NAME], r2[CAP_NAME], b2[GITM_SHA_SIZE];

		rc = store_series_commit(s, t2, r2, sizeof(t2), b2, have);
		store_errclear(s);
		if (rc != 0 || strcmp(r2, ref) != 0) {
			err_set(e,
			    "query 'have': %s is neither the base of the "
			    "series of %s (%s) nor one of its commits",
			    have, sha, base[0] ? base : "unknown");
			return 400;
		}
	}
	repo = gitm_repo_new(dc->mirrors, tree->name, tree->url, NULL);
	/* The series ref keeps the commit from git's garbage collection;
	 * a commit it no longer holds is not served. */
	rc = gitm_resolve(tip, repo, ref);
	if (rc != 0) {
		/* Not in this daemon's mirror: the pack the watcher kept. */
		gitm_clearerr(repo);
		status = kept_pack(out, e, s, tree->name, sha, ref);
		goto out;
	}
	if (rc == 0 && (rc = gitm_is_ancestor(repo, sha, tip)) == 0)
		rc = ERR_NOTFOUND;
	if (rc < 0 || rc == ERR_NOTFOUND) {
		err_set(e, "commit %s: not held by %s in the mirror of %s%s%s",
		    sha, ref, tree->name, rc < 0 ? ": " : "",
		    rc < 0 ? gitm_errmsg(repo) : "");
		status = rc == ERR_NOTFOUND || rc == ERR_INVALID ? 404 : 500;
		goto out;
	}
	rc = gitm_pack_build(out, &n, repo, sha, have);
	switch (rc) {
	case 0:
		log_info("tree %s: pack of %.12s over %.12s: %zu commit%s, "
		         "%zu bytes",
		    tree->name, sha, have, n, n == 1 ? "" : "s", out->len);
		status = 200;
		break;
	case ERR_INVALID:
		status = 400;
		break;
	case ERR_NOTFOUND:
		status = 404;
		break;
	case ERR_TOOBIG:
		status = 413;
		break;
	default:
		status = 500;
		break;
	}
	if (status != 200)
		err_set(e, "%s%s", gitm_errmsg(repo),
		    status == 413 ? " (http.max_pack)" : "");
out:
	if (status != 200)
		buf_release(out);
	gitm_repo_free(repo);
	return status;
}

int
packs_keep(struct store *s, const struct daemon_config *dc,
    struct gitm_repo *repo, int64_t series_id, const char *tip,
    const char *base, struct err *e)
{
	struct buf b = BUF_INIT((size_t)dc->http_max_pack);
	size_t n = 0;
	int rc = gitm_pack_build(&b, &n, repo, tip, base);

	if (rc != 0 && rc != ERR_TOOBIG) {
		err_set(e, "series %" PRId64 ": its pack: %s", series_id,
		    gitm_errmsg(repo));
		gitm_clearerr(repo);
		buf_release(&b);
		return -1;
	}
	if (rc == ERR_TOOBIG)
		gitm_clearerr(repo);
	rc =
	    store_series_pack_put(s, series_id, tip, n, rc == 0 ? b.data : NULL,
	        rc == 0 ? b.len : (size_t)dc->http_max_pack);
	buf_release(&b);
	if (rc != 0)
		return err_set(e, "series %" PRId64 ": its pack: %s", series_id,
		    store_errmsg(s));
	return 0;
}

void
packs_tree_spec(json_t *tree, struct store *s, const char *sha)
{
	char tname[CAP_NAME], ref[CAP_NAME], base[GITM_SHA_SIZE];
	char path[PACKS_ROUTE_SIZE];

	if (store_series_commit(s, tname, ref, sizeof(tname), base, sha) != 0) {
		store_errclear(s);
		return;
	}
	if (!is_sha(base) || strcmp(base, sha) == 0)
		return;
	packs_route(path, sizeof(path), sha, base);
	json_object_set_new(tree, "pack", json_string(path));
}

void
packs_route(char *out, size_t n, const char *sha, const char *base)
{
	snprintf(out, n, "/api/v1/packs/%s?have=%s", sha, base);
}
