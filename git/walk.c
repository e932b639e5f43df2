/*
 * The git module's history: branch tips, commit lookups, the commits new
 * since a tip and the range of a bisection (git/git.h).
 */

#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- branch tips ------------------------------------------------------ */

static int
tip_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gitm_tip *)a)->branch,
	    ((const struct gitm_tip *)b)->branch);
}

int
gitm_tips(struct gitm_tip **out, size_t *n, struct gitm_repo *r)
{
	git_branch_iterator *it = NULL;
	struct gitm_tip *tips = NULL;
	size_t cnt = 0, cap = 0;
	git_reference *ref;
	git_object *obj;
	git_branch_t type;
	const char *name;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if ((rc = git_branch_iterator_new(&it, r->repo, GIT_BRANCH_LOCAL)) < 0)
		return gitm_i_gerr(r, rc, "listing branches");
	while ((rc = git_branch_next(&ref, &type, it)) == 0) {
		if (git_branch_name(&name, ref) < 0 ||
		    strlen(name) >= CAP_NAME ||
		    git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) < 0) {
			git_reference_free(ref);
			continue;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			tips = xreallocarray(tips, cap, sizeof(*tips));
		}
		tips[cnt].branch = xstrdup(name);
		gitm_i_oid_hex(tips[cnt].sha, git_object_id(obj));
		cnt++;
		git_object_free(obj);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	if (rc != GIT_ITEROVER) {
		gitm_tips_free(tips, cnt);
		return gitm_i_gerr(r, rc, "listing branches");
	}
	if (cnt > 1)
		qsort(tips, cnt, sizeof(*tips), tip_cmp);
	*out = tips;
	*n = cnt;
	return 0;
}

void
gitm_tips_free(struct gitm_tip *tips, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(tips[i].branch);
	free(tips);
}

int
gitm_tip(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *branch)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int rc;

	out[0] = '\0';
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	rc = git_branch_lookup(&ref, r->repo, branch, GIT_BRANCH_LOCAL);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no branch \"%.200s\"", r->name, branch);
	if (rc < 0)
		return gitm_i_gerr(r, rc, "branch %.200s", branch);
	rc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	if (rc < 0)
		rc = gitm_i_gerr(r, rc, "branch %.200s", branch);
	else
		gitm_i_oid_hex(out, git_object_id(obj));
	git_object_free(obj);
	git_reference_free(ref);
	return rc;
}

/* ---- commit lookup helpers -------------------------------------------- */

/* Parses a 40-digit id and checks it names a commit in the mirror. */
int
gitm_i_lookup_commit(git_commit **out, struct gitm_repo *r, const char *sha)
{
	git_oid id;
	int rc;

	*out = NULL;
	if (sha == NULL || !gitm_i_is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	git_oid_fromstr(&id, sha);
	rc = git_commit_lookup(out, r->repo, &id);
	if (rc == GIT_ENOTFOUND)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no commit %s in the mirror", r->name, sha);
	if (rc < 0)
		return gitm_i_gerr(r, rc, "commit %s", sha);
	return 0;
}

int
gitm_first_parent(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha)
{
	git_commit *c;
	int rc;

	out[0] = '\0';
	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&c, r, sha)) < 0)
		return rc;
	if (git_commit_parentcount(c) == 0)
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: commit %s has no parent", r->name, sha);
	else
		gitm_i_oid_hex(out, git_commit_parent_id(c, 0));
	git_commit_free(c);
	return rc;
}

int
gitm_merge_base(
    char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *a, const char *b)
{
	git_commit *ca = NULL, *cb = NULL;
	git_oid base;
	int rc;

	out[0] = '\0';
	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&ca, r, a)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cb, r, b)) < 0)
		goto out;
	rc = git_merge_base(
	    &base, r->repo, git_commit_id(ca), git_commit_id(cb));
	if (rc == GIT_ENOTFOUND)
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: %s and %s have no common ancestor", r->name, a,
		    b);
	else if (rc < 0)
		rc = gitm_i_gerr(r, rc, "merge base of %s and %s", a, b);
	else
		gitm_i_oid_hex(out, &base);
out:
	git_commit_free(ca);
	git_commit_free(cb);
	return rc;
}

int
gitm_is_ancestor(struct gitm_repo *r, const char *ancestor, const char *commit)
{
	git_commit *ca = NULL, *cc = NULL;
	int rc;

	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&ca, r, ancestor)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cc, r, commit)) < 0)
		goto out;
	if (git_oid_equal(git_commit_id(ca), git_commit_id(cc)))
		rc = 1;
	else {
		rc = git_graph_descendant_of(
		    r->repo, git_commit_id(cc), git_commit_id(ca));
		if (rc < 0)
			rc = gitm_i_gerr(
			    r, rc, "is %s an ancestor of %s", ancestor, commit);
	}
out:
	git_commit_free(ca);
	git_commit_free(cc);
	return rc;
}

int
gitm_resolve(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *ref)
{
	static const char *prefixes[] = { "refs/heads/", "refs/tags/" };
	git_reference *rf = NULL;
	git_object *obj = NULL;
	git_commit *c;
	char *name;
	size_t i;
	int rc;

	out[0] = '\0';
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if (gitm_i_is_hex40(ref)) {
		if ((rc = gitm_i_lookup_commit(&c, r, ref)) < 0)
			return rc;
		gitm_i_oid_hex(out, git_commit_id(c));
		git_commit_free(c);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		if (strncmp(ref, "refs/", 5) == 0) {
			if (i > 0)
				break;
			name = xstrdup(ref);
		} else
			name = xasprintf("%s%s", prefixes[i], ref);
		rc = git_reference_lookup(&rf, r->repo, name);
		free(name);
		if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
			continue;
		if (rc < 0)
			return gitm_i_gerr(r, rc, "ref %.200s", ref);
		rc = git_reference_peel(&obj, rf, GIT_OBJECT_COMMIT);
		git_reference_free(rf);
		if (rc < 0)
			return gitm_i_gerr(
			    r, rc, "ref %.200s is not a commit", ref);
		gitm_i_oid_hex(out, git_object_id(obj));
		git_object_free(obj);
		return 0;
	}
	return err_setc(
	    &r->err, ERR_NOTFOUND, "tree %s: no ref \"%.200s\"", r->name, ref);
}

/* ---- new commits ------------------------------------------------------ */

/* The configured paths, split into literal paths and globs. */
struct pathset {
	size_t n;
	char **lit;          /* per path: normalised literal, or NULL */
	git_pathspec **glob; /* per path: compiled glob, or NULL */
	char **globs;        /* the glob strings, for the diff */
	size_t nglobs;
};

static void
pathset_free(struct pathset *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++) {
		free(ps->lit[i]);
		git_pathspec_free(ps->glob[i]);
	}
	free(ps->lit);
	free(ps->glob);
	free(ps->globs);
}

static int
pathset_init(
    struct pathset *ps, struct gitm_repo *r, const char *const *paths, size_t n)
{
	git_strarray one;
	size_t i, len;
	char *p;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->n = n;
	ps->lit = xcalloc(n ? n : 1, sizeof(*ps->lit));
	ps->glob = xcalloc(n ? n : 1, sizeof(*ps->glob));
	ps->globs = xcalloc(n ? n : 1, sizeof(*ps->globs));
	for (i = 0; i < n; i++) {
		if (strpbrk(paths[i], "*?[") != NULL) {
			one.strings = (char **)&paths[i];
			one.count = 1;
			rc = git_pathspec_new(&ps->glob[i], &one);
			if (rc < 0)
				return gitm_i_gerr(
				    r, rc, "path %.200s", paths[i]);
			ps->globs[ps->nglobs++] = (char *)paths[i];
			continue;
		}
		p = paths[i][0] == '/' ? xstrdup(paths[i] + 1)
		                       : xstrdup(paths[i]);
		len = strlen(p);
		while (len > 0 && p[len - 1] == '/')
			p[--len] = '\0';
		ps->lit[i] = p;
	}
	return 0;
}

/*
 * Did PATH (a file or a directory, "" = everything) change from a to b?
 * Walks the path one component at a time and stops at the first level
 * where both sides hold the same object, so a commit that leaves mm/
 * alone costs two lookups in root trees already loaded, not two loads of
 * mm/.
 */
static int
path_changed(
    int *out, git_repository *repo, git_tree *a, git_tree *b, const char *path)
{
	git_tree *ta = a, *tb = b, *na, *nb;
	const git_tree_entry *ea, *eb;
	char comp[CAP_LINE];
	const char *p = path, *slash;
	size_t len;
	int rc = 0;

	*out = 0;
	if (path[0] == '\0') {
		*out = a == NULL
		    ? git_tree_entrycount(b) > 0
		    : !git_oid_equal(git_tree_id(a), git_tree_id(b));
		return 0;
	}
	for (;;) {
		slash = strchr(p, '/');
		len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || len >= sizeof(comp))
			break; /* "a//b" or absurd: matches nothing */
		memcpy(comp, p, len);
		comp[len] = '\0';
		ea = ta ? git_tree_entry_byname(ta, comp) : NULL;
		eb = tb ? git_tree_entry_byname(tb, comp) : NULL;
		if (ea == NULL || eb == NULL) {
			*out = (ea == NULL) != (eb == NULL);
			break;
		}
		if (git_oid_equal(
		        git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			break; /* same object: nothing below changed */
		if (slash == NULL) {
			*out = 1;
			break;
		}
		/* Both differ and the path goes deeper: both must be trees. */
		if (git_tree_entry_type(ea) != GIT_OBJECT_TREE ||
		    git_tree_entry_type(eb) != GIT_OBJECT_TREE) {
			*out = git_tree_entry_type(ea) == GIT_OBJECT_TREE ||
			    git_tree_entry_type(eb) == GIT_OBJECT_TREE;
			break;
		}
		if ((rc = git_tree_lookup(&na, repo, git_tree_entry_id(ea))) <
		    0)
			break;
		if ((rc = git_tree_lookup(&nb, repo, git_tree_entry_id(eb))) <
		    0) {
			git_tree_free(na);
			break;
		}
		if (ta != a)
			git_tree_free(ta);
		if (tb != b)
			git_tree_free(tb);
		ta = na;
		tb = nb;
		p = slash + 1;
	}
	if (ta != a)
		git_tree_free(ta);
	if (tb != b)
		git_tree_free(tb);
	return rc;
}

static int
touched_paths(struct gitm_commit *out, git_repository *repo, git_commit *c,
    const struct pathset *ps)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	size_t i, j, nd;
	int rc, ch;

	out->touches = xcalloc(ps->n ? ps->n : 1, 1);
	if (ps->n == 0)
		return 0;
	if ((rc = git_commit_tree(&b, c)) < 0)
		goto out;
	if (git_commit_parentcount(c) > 0) {
		if ((rc = git_commit_parent(&parent, c, 0)) < 0 ||
		    (rc = git_commit_tree(&a, parent)) < 0)
			goto out;
	}
	for (i = 0; i < ps->n; i++) {
		if (ps->lit[i] == NULL)
			continue;
		if ((rc = path_changed(&ch, repo, a, b, ps->lit[i])) < 0)
			goto out;
		out->touches[i] = (unsigned char)ch;
	}
	if (ps->nglobs > 0) {
		git_diff_options o = GIT_DIFF_OPTIONS_INIT;

		o.pathspec.strings = ps->globs;
		o.pathspec.count = ps->nglobs;
		if ((rc = git_diff_tree_to_tree(&diff, repo, a, b, &o)) < 0)
			goto out;
		nd = git_diff_num_deltas(diff);
		for (j = 0; j < nd; j++) {
			const git_diff_delta *d = git_diff_get_delta(diff, j);

			for (i = 0; i < ps->n; i++)
				if (ps->glob[i] != NULL &&
				    (git_pathspec_matches_path(
				         ps->glob[i], 0, d->new_file.path) ||
				        git_pathspec_matches_path(
				            ps->glob[i], 0, d->old_file.path)))
					out->touches[i] = 1;
		}
	}
	for (i = 0; i < ps->n; i++)
		if (out->touches[i])
			out->touches_any = 1;
	rc = 0;
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return rc;
}

static void
commit_release(struct gitm_commit *c)
{
	free(c->parents);
	free(c->author_name);
	free(c->author_email);
	free(c->committer_name);
	free(c->committer_email);
	free(c->subject);
	free(c->touches);
}

/* Fills out from commit c: ids, people, dates, subject, paths touched. */
static int
commit_info(struct gitm_commit *out, git_repository *repo, git_commit *c,
    const struct pathset *ps)
{
	const git_signature *au = git_commit_author(c);
	const git_signature *co = git_commit_committer(c);
	const char *msg = git_commit_message_raw(c), *eol;
	size_t i;

	memset(out, 0, sizeof(*out));
	gitm_i_oid_hex(out->sha, git_commit_id(c));
	out->nparents = git_commit_parentcount(c);
	out->parents =
	    xcalloc(out->nparents ? out->nparents : 1, sizeof(*out->parents));
	for (i = 0; i < out->nparents; i++)
		gitm_i_oid_hex(
		    out->parents[i], git_commit_parent_id(c, (unsigned)i));
	out->author_name =
	    gitm_i_cap_copy(au->name, strlen(au->name), CAP_NAME);
	out->author_email =
	    gitm_i_cap_copy(au->email, strlen(au->email), CAP_NAME);
	out->committer_name =
	    gitm_i_cap_copy(co->name, strlen(co->name), CAP_NAME);
	out->committer_email =
	    gitm_i_cap_copy(co->email, strlen(co->email), CAP_NAME);
	out->author_time = au->when.time;
	out->author_tz = au->when.offset;
	out->commit_time = co->when.time;
	out->commit_tz = co->when.offset;
	if (msg == NULL)
		msg = "";
	while (*msg == '\n' || *msg == '\r')
		msg++;
	eol = strchr(msg, '\n');
	i = eol ? (size_t)(eol - msg) : strlen(msg);
	if (i > 0 && msg[i - 1] == '\r')
		i--;
	out->subject = gitm_i_cap_copy(msg, i, CAP_SUBJECT);
	return touched_paths(out, repo, c, ps);
}

static int
commit_sha_cmp(const void *a, const void *b)
{
	const struct gitm_commit *const *x = a, *const *y = b;

	return strcmp((*x)->sha, (*y)->sha);
}

/*
 * Orders the walked commits parents first.  The walk gives them newest
 * first; reversing that is enough for a topological walk, but a capped
 * walk of a new branch is sorted by date only, so clock skew could put a
 * child before its parent: a depth-first post-order over the parents
 * inside the set fixes that, keeping the reversed walk order otherwise.
 */
static void
order_parents_first(struct gitm_commit *v, size_t n)
{
	struct gitm_commit **byid, *out, key, *kp, **hit;
	size_t *stack, *pos, top, i, emitted = 0, cur;
	unsigned char *state;

	if (n < 2)
		return;
	byid = xcalloc(n, sizeof(*byid));
	for (i = 0; i < n; i++)
		byid[i] = &v[i];
	qsort(byid, n, sizeof(*byid), commit_sha_cmp);
	state = xcalloc(n, 1);
	stack = xcalloc(n, sizeof(*stack));
	pos = xcalloc(n, sizeof(*pos));
	out = xcalloc(n, sizeof(*out));
	for (i = n; i-- > 0;) {
		if (state[i])
			continue;
		top = 0;
		stack[top++] = i;
		state[i] = 1;
		pos[i] = 0;
		while (top > 0) {
			cur = stack[top - 1];
			if (pos[cur] < v[cur].nparents) {
				memcpy(key.sha, v[cur].parents[pos[cur]++],
				    GITM_SHA_SIZE);
				kp = &key;
				hit = bsearch(&kp, byid, n, sizeof(*byid),
				    commit_sha_cmp);
				if (hit != NULL) {
					size_t k = (size_t)(*hit - v);

					if (state[k] == 0) {
						state[k] = 1;
						pos[k] = 0;
						stack[top++] = k;
					}
				}
				continue;
			}
			state[cur] = 2;
			out[emitted++] = v[cur];
			top--;
		}
	}
	memcpy(v, out, n * sizeof(*v));
	free(out);
	free(pos);
	free(stack);
	free(state);
	free(byid);
}

/* Counts the commits of old ^base (a rewrite's losses), up to cap. */
static int
count_dropped(size_t *out, git_repository *repo, const git_oid *old,
    const git_oid *base, size_t cap)
{
	git_revwalk *w = NULL;
	git_oid id;
	size_t n = 0;
	int rc;

	*out = 0;
	if ((rc = git_revwalk_new(&w, repo)) < 0 ||
	    (rc = git_revwalk_push(w, old)) < 0 ||
	    (base != NULL && (rc = git_revwalk_hide(w, base)) < 0))
		goto out;
	while (n < cap && (rc = git_revwalk_next(&id, w)) == 0)
		n++;
	rc = rc == GIT_ITEROVER || n == cap ? 0 : rc;
	*out = n;
out:
	git_revwalk_free(w);
	return rc;
}

/* An object read failure in the middle of a walk means a broken mirror:
 * the next gitm_fetch makes it again. */
int
gitm_i_walk_fail(struct gitm_repo *r, int rc, const char *what)
{
	const git_error *e = git_error_last();

	if (rc == GIT_ENOTFOUND ||
	    (e != NULL &&
	        (e->klass == GIT_ERROR_ODB || e->klass == GIT_ERROR_ZLIB)))
		r->corrupt = 1;
	return gitm_i_gerr(r, rc, "%s", what);
}

/*
 * The commits walk w yields, at most max (then out->truncated), with
 * their infos, parents before children: 0, or < 0 with r's error set.
 */
static int
collect(struct gitm_walk *out, struct gitm_repo *r, git_revwalk *w, size_t max,
    struct pathset *ps)
{
	git_commit *c;
	git_oid id;
	size_t cap = out->n;
	int rc;

	while ((rc = git_revwalk_next(&id, w)) == 0) {
		if (out->n == max) {
			out->truncated = 1;
			break;
		}
		if ((rc = git_commit_lookup(&c, r->repo, &id)) < 0)
			return gitm_i_walk_fail(r, rc, "walk");
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->commits = xreallocarray(
			    out->commits, cap, sizeof(*out->commits));
		}
		rc = commit_info(&out->commits[out->n], r->repo, c, ps);
		out->n++;
		git_commit_free(c);
		if (rc < 0)
			return gitm_i_walk_fail(r, rc, "reading a commit");
	}
	if (rc < 0 && rc != GIT_ITEROVER && !out->truncated)
		return gitm_i_walk_fail(r, rc, "walk");
	order_parents_first(out->commits, out->n);
	return 0;
}

int
gitm_new_commits(struct gitm_walk *out, struct gitm_repo *r, const char *old,
    const char *new_tip, const char *const *paths, size_t npaths, size_t max)
{
	git_commit *cnew = NULL, *cold = NULL;
	git_revwalk *w = NULL;
	struct pathset ps = { 0 };
	git_oid base;
	int rc, hide = 0;

	memset(out, 0, sizeof(*out));
	if (max == 0 || max > GITM_MAX_WALK)
		max = GITM_MAX_WALK;
	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cnew, r, new_tip)) < 0)
		return rc;
	if (old != NULL && old[0] != '\0') {
		rc = gitm_i_lookup_commit(&cold, r, old);
		if (rc == ERR_NOTFOUND) {
			err_clear(&r->err);
			out->old_missing = 1;
		} else if (rc < 0)
			goto fail;
	}
	if (cold != NULL &&
	    git_oid_equal(git_commit_id(cold), git_commit_id(cnew)))
		goto done;
	if ((rc = pathset_init(&ps, r, paths, npaths)) < 0)
		goto fail;
	if ((rc = git_revwalk_new(&w, r->repo)) < 0 ||
	    (rc = git_revwalk_push(w, git_commit_id(cnew))) < 0) {
		rc = gitm_i_walk_fail(r, rc, "walk");
		goto fail;
	}
	if (cold != NULL) {
		rc = git_merge_base(
		    &base, r->repo, git_commit_id(cold), git_commit_id(cnew));
		if (rc < 0 && rc != GIT_ENOTFOUND) {
			rc = gitm_i_walk_fail(r, rc, "merge base");
			goto fail;
		}
		if (rc == 0 && git_oid_equal(&base, git_commit_id(cold))) {
			hide = 1; /* fast-forward */
		} else {
			out->rewrite = 1;
			if (rc == 0) {
				gitm_i_oid_hex(out->base, &base);
				hide = 1;
			}
			rc = count_dropped(&out->dropped, r->repo,
			    git_commit_id(cold), hide ? &base : NULL, max);
			if (rc < 0) {
				rc = gitm_i_walk_fail(
				    r, rc, "walk of the old tip");
				goto fail;
			}
		}
		if (hide && (rc = git_revwalk_hide(w, &base)) < 0) {
			rc = gitm_i_walk_fail(r, rc, "walk");
			goto fail;
		}
	}
	/* Topological order needs the whole range first: fine when it is
	 * bounded by a hidden commit, not for a new branch. */
	git_revwalk_sorting(
	    w, hide ? GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME : GIT_SORT_TIME);
	if ((rc = collect(out, r, w, max, &ps)) < 0)
		goto fail;
done:
	git_revwalk_free(w);
	pathset_free(&ps);
	git_commit_free(cold);
	git_commit_free(cnew);
	return 0;
fail:
	git_revwalk_free(w);
	if (ps.lit != NULL)
		pathset_free(&ps);
	git_commit_free(cold);
	git_commit_free(cnew);
	gitm_walk_release(out);
	return rc < 0 ? rc : -1;
}

int
gitm_range(struct gitm_walk *out, struct gitm_repo *r, const char *good,
    const char *bad, int first_parent, const char *const *paths, size_t npaths,
    size_t max)
{
	git_commit *cgood = NULL, *cbad = NULL;
	git_revwalk *w = NULL;
	struct pathset ps = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (max == 0 || max > GITM_MAX_WALK)
		max = GITM_MAX_WALK;
	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cgood, r, good)) < 0 ||
	    (rc = gitm_i_lookup_commit(&cbad, r, bad)) < 0)
		goto fail;
	rc = git_graph_descendant_of(
	    r->repo, git_commit_id(cbad), git_commit_id(cgood));
	if (rc < 0) {
		rc = gitm_i_walk_fail(r, rc, "ancestry");
		goto fail;
	}
	if (rc == 0) {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: %.12s is not an ancestor of %.12s", r->name, good,
		    bad);
		goto fail;
	}
	if ((rc = pathset_init(&ps, r, paths, npaths)) < 0)
		goto fail;
	if ((rc = git_revwalk_new(&w, r->repo)) < 0 ||
	    (rc = git_revwalk_push(w, git_commit_id(cbad))) < 0 ||
	    (rc = git_revwalk_hide(w, git_commit_id(cgood))) < 0) {
		rc = gitm_i_walk_fail(r, rc, "walk");
		goto fail;
	}
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	if (first_parent && (rc = git_revwalk_simplify_first_parent(w)) < 0) {
		rc = gitm_i_walk_fail(r, rc, "walk");
		goto fail;
	}
	if ((rc = collect(out, r, w, max, &ps)) < 0)
		goto fail;
	git_revwalk_free(w);
	pathset_free(&ps);
	git_commit_free(cgood);
	git_commit_free(cbad);
	return 0;
fail:
	git_revwalk_free(w);
	if (ps.lit != NULL)
		pathset_free(&ps);
	git_commit_free(cgood);
	git_commit_free(cbad);
	gitm_walk_release(out);
	return rc < 0 ? rc : -1;
}

void
gitm_walk_release(struct gitm_walk *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->n; i++)
		commit_release(&w->commits[i]);
	free(w->commits);
	memset(w, 0, sizeof(*w));
}
