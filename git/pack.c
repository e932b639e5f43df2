/*
 * The git module's packs (git/git.h): series commits sent from the
 * daemon to a remote runner, and checked before they are added.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2/sys/odb_backend.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- series commits as packs (daemon -> remote runner) ---------------- */

int
gitm_has_commit(struct gitm_repo *r, const char *sha)
{
	if (sha == NULL || !gitm_i_is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if (gitm_i_repo_ready(r) != 0) {
		err_clear(&r->err);
		return 0;
	}
	return gitm_i_have_commit(r, sha);
}

struct pack_sink {
	struct buf *out;
	int toobig;
};

static int
pack_chunk(void *data, size_t len, void *arg)
{
	struct pack_sink *k = arg;

	if (buf_add(k->out, data, len) == -1) {
		k->toobig = 1;
		return -1; /* stops git_packbuilder_foreach */
	}
	return 0;
}

/* A walk of tip ^have. */
static int
pack_walk(
    git_revwalk **out, struct gitm_repo *r, git_commit *tip, git_commit *have)
{
	int rc;

	if ((rc = git_revwalk_new(out, r->repo)) < 0 ||
	    (rc = git_revwalk_push(*out, git_commit_id(tip))) < 0 ||
	    (rc = git_revwalk_hide(*out, git_commit_id(have))) < 0)
		return gitm_i_gerr(r, rc, "walk for the pack");
	return 0;
}

int
gitm_pack_build(struct buf *out, size_t *out_commits, struct gitm_repo *r,
    const char *tip, const char *have)
{
	git_commit *ct = NULL, *ch = NULL;
	git_revwalk *w = NULL;
	git_packbuilder *pb = NULL;
	struct pack_sink k = { out, 0 };
	git_oid id;
	size_t n = 0;
	int rc;

	if (out_commits != NULL)
		*out_commits = 0;
	buf_reset(out);
	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&ct, r, tip)) < 0 ||
	    (rc = gitm_i_lookup_commit(&ch, r, have)) < 0)
		goto out;
	if ((rc = gitm_is_ancestor(r, have, tip)) < 0)
		goto out;
	if (rc == 0) {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: %s is not an ancestor of %s", r->name, have, tip);
		goto out;
	}
	/* The commits, counted on a walk of their own: the packbuilder
	 * consumes the one it is given. */
	if ((rc = pack_walk(&w, r, ct, ch)) < 0)
		goto out;
	while ((rc = git_revwalk_next(&id, w)) == 0)
		n++;
	git_revwalk_free(w);
	w = NULL;
	if (rc != GIT_ITEROVER) {
		rc = gitm_i_walk_fail(r, rc, "walk for the pack");
		goto out;
	}
	if ((rc = pack_walk(&w, r, ct, ch)) < 0)
		goto out;
	if ((rc = git_packbuilder_new(&pb, r->repo)) < 0 ||
	    (rc = git_packbuilder_insert_walk(pb, w)) < 0) {
		rc = gitm_i_walk_fail(r, rc, "packing");
		goto out;
	}
	rc = git_packbuilder_foreach(pb, pack_chunk, &k);
	if (k.toobig) {
		buf_release(out);
		rc = err_setc(&r->err, ERR_TOOBIG,
		    "tree %s: the pack of %s (%zu commits over %s) is larger "
		    "than %zu bytes",
		    r->name, tip, n, have, out->max);
		goto out;
	}
	if (rc < 0) {
		rc = gitm_i_gerr(r, rc, "writing the pack");
		goto out;
	}
	if (out_commits != NULL)
		*out_commits = n;
	rc = 0;
out:
	git_packbuilder_free(pb);
	git_revwalk_free(w);
	git_commit_free(ct);
	git_commit_free(ch);
	return rc;
}

/* What a pack holds and the first object it names but does not bring. */
struct pack_scan {
	git_repository *view; /* the clone with the pack added */
	git_odb *all, *pack;
	git_oid commits[4]; /* the first commits of the pack */
	size_t ncommits;
	char missing[GITM_SHA_SIZE], by[GITM_SHA_SIZE];
	int failed; /* a libgit2 call failed: its error is current */
};

/* 0 when id is in the clone or the pack; else records it. */
static int
scan_need(struct pack_scan *sc, const git_oid *id, const git_oid *by)
{
	if (git_odb_exists(sc->all, id))
		return 0;
	gitm_i_oid_hex(sc->missing, id);
	gitm_i_oid_hex(sc->by, by);
	return -1;
}

static int
scan_one(const git_oid *id, void *arg)
{
	struct pack_scan *sc = arg;
	git_object_t type;
	git_commit *c = NULL;
	git_tree *t = NULL;
	size_t len, i;
	int rc = 0;

	if (git_odb_read_header(&len, &type, sc->pack, id) < 0) {
		sc->failed = 1;
		return -1;
	}
	if (type == GIT_OBJECT_COMMIT) {
		if (git_commit_lookup(&c, sc->view, id) < 0) {
			sc->failed = 1;
			return -1;
		}
		if (sc->ncommits < sizeof(sc->commits) / sizeof(sc->commits[0]))
			git_oid_cpy(&sc->commits[sc->ncommits], id);
		sc->ncommits++;
		rc = scan_need(sc, git_commit_tree_id(c), id);
		for (i = 0; rc == 0 && i < git_commit_parentcount(c); i++)
			rc = scan_need(sc, git_commit_parent_id(c, i), id);
		git_commit_free(c);
	} else if (type == GIT_OBJECT_TREE) {
		if (git_tree_lookup(&t, sc->view, id) < 0) {
			sc->failed = 1;
			return -1;
		}
		for (i = 0; rc == 0 && i < git_tree_entrycount(t); i++) {
			const git_tree_entry *te = git_tree_entry_byindex(t, i);

			/* A submodule's commit lives in another repository. */
			if (git_tree_entry_type(te) != GIT_OBJECT_COMMIT)
				rc = scan_need(sc, git_tree_entry_id(te), id);
		}
		git_tree_free(t);
	}
	return rc;
}

/*
 * Checks the indexed pack at IDX against the clone: 0, or ERR_INVALID /
 * ERR_NOTFOUND / -1 with the message set (see gitm_pack_add).
 */
static int
pack_check(struct gitm_repo *r, const char *idx, const char *sha)
{
	git_odb_backend *b1 = NULL, *b2 = NULL;
	struct pack_scan sc;
	char *objects = xasprintf("%s/objects", r->path);
	git_object_t type;
	git_oid want;
	size_t len, i;
	int rc;

	memset(&sc, 0, sizeof(sc));
	if ((rc = git_odb_new(&sc.pack)) < 0 ||
	    (rc = git_odb_backend_one_pack(&b1, idx)) < 0 ||
	    (rc = git_odb_add_backend(sc.pack, b1, 1)) < 0) {
		rc = gitm_i_gerr(r, rc, "opening the pack");
		goto out;
	}
	b1 = NULL; /* the odb owns it */
	if ((rc = git_odb_new(&sc.all)) < 0 ||
	    (rc = git_odb_backend_one_pack(&b2, idx)) < 0 ||
	    (rc = git_odb_add_backend(sc.all, b2, 2)) < 0) {
		rc = gitm_i_gerr(r, rc, "opening the pack");
		goto out;
	}
	b2 = NULL;
	if ((rc = git_odb_add_disk_alternate(sc.all, objects)) < 0 ||
	    (rc = git_repository_wrap_odb(&sc.view, sc.all)) < 0) {
		rc = gitm_i_gerr(r, rc, "opening the clone's objects");
		goto out;
	}
	rc = git_odb_foreach(sc.pack, scan_one, &sc);
	if (sc.failed) {
		rc = gitm_i_gerr(r, rc, "reading the pack");
		goto out;
	}
	if (sc.missing[0] != '\0') {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: the pack is incomplete: %s names object %s, "
		    "which is neither in the pack nor in the clone",
		    r->name, sc.by, sc.missing);
		goto out;
	}
	if (rc < 0) {
		rc = gitm_i_gerr(r, rc, "reading the pack");
		goto out;
	}
	git_oid_fromstr(&want, sha);
	if (git_odb_read_header(&len, &type, sc.all, &want) == 0 &&
	    type == GIT_OBJECT_COMMIT) {
		rc = 0;
		goto out;
	}
	{
		char held[4 * (GITM_SHA_SIZE + 2)] = "";
		size_t k = strlen(held);

		for (i = 0; i < sc.ncommits && i < 4; i++) {
			char hex[GITM_SHA_SIZE];

			gitm_i_oid_hex(hex, &sc.commits[i]);
			k += (size_t)snprintf(held + k, sizeof(held) - k,
			    "%s%s", i ? ", " : "", hex);
		}
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: the pack does not hold commit %s; it holds "
		    "%zu commit%s%s%s%s",
		    r->name, sha, sc.ncommits, sc.ncommits == 1 ? "" : "s",
		    sc.ncommits ? " (" : "", held,
		    sc.ncommits > 4   ? ", ...)"
		        : sc.ncommits ? ")"
		                      : "");
	}
out:
	if (b1 != NULL)
		b1->free(b1);
	if (b2 != NULL)
		b2->free(b2);
	git_repository_free(sc.view);
	git_odb_free(sc.all);
	git_odb_free(sc.pack);
	free(objects);
	return rc;
}

int
gitm_pack_add(
    struct gitm_repo *r, const char *sha, const void *pack, size_t len)
{
	git_indexer_options io = GIT_INDEXER_OPTIONS_INIT;
	git_indexer_progress st;
	git_indexer *ix = NULL;
	git_odb *odb = NULL;
	char *tmp = NULL, *src[2] = { NULL, NULL }, *dst[2] = { NULL, NULL };
	const char *name;
	int rc, k;

	if (sha == NULL || !gitm_i_is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	/* Inside the clone, so the final renames stay on one file system;
	 * not in objects/pack, where git and libgit2 look for packs. */
	tmp = xasprintf("%s/pack-in-XXXXXX", r->path);
	if (mkdtemp(tmp) == NULL) {
		rc = err_set(&r->err, "tree %s: mkdtemp %s: %s", r->name, tmp,
		    strerror(errno));
		free(tmp);
		return rc;
	}
	memset(&st, 0, sizeof(st));
	if ((rc = git_indexer_new(&ix, tmp, 0444, NULL, &io)) < 0) {
		rc = gitm_i_gerr(r, rc, "indexer");
		goto out;
	}
	if ((rc = git_indexer_append(ix, pack, len, &st)) < 0 ||
	    (rc = git_indexer_commit(ix, &st)) < 0) {
		gitm_i_gerr(r, rc, "indexing the pack (%zu bytes)", len);
		rc = ERR_INVALID;
		goto out;
	}
	name = git_indexer_name(ix);
	src[0] = xasprintf("%s/pack-%s.pack", tmp, name);
	src[1] = xasprintf("%s/pack-%s.idx", tmp, name);
	if ((rc = pack_check(r, src[1], sha)) != 0)
		goto out;
	dst[0] = xasprintf("%s/objects/pack/pack-%s.pack", r->path, name);
	dst[1] = xasprintf("%s/objects/pack/pack-%s.idx", r->path, name);
	/* The pack before its index: a reader finds packs by their index. */
	for (k = 0; k < 2; k++)
		if (rename(src[k], dst[k]) == -1) {
			rc = err_set(&r->err, "tree %s: rename %s: %s", r->name,
			    src[k], strerror(errno));
			if (k == 1)
				unlink(dst[0]);
			goto out;
		}
	if (git_repository_odb(&odb, r->repo) == 0)
		git_odb_refresh(odb);
	git_odb_free(odb);
	if (!gitm_i_have_commit(r, sha))
		rc = err_set(&r->err,
		    "tree %s: commit %s not readable after adding its pack",
		    r->name, sha);
out:
	git_indexer_free(ix);
	files_rm_rf(tmp);
	for (k = 0; k < 2; k++) {
		free(src[k]);
		free(dst[k]);
	}
	free(tmp);
	return rc;
}
