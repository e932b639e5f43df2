/*
 * The git module's patch series (git/git.h): a series applied onto
 * its base as synthetic commits, reverts, public-inbox archives.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- patch series ----------------------------------------------------- */

/* The file the apply is at, for messages (delta_cb of git_apply). */
struct apply_at {
	char path[256];
};

static int
on_apply_delta(const git_diff_delta *d, void *arg)
{
	struct apply_at *at = arg;
	const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;

	snprintf(at->path, sizeof(at->path), "%s", p ? p : "?");
	gitm_i_sanitize(at->path);
	return 0;
}

/*
 * Like git's ident.c crud() (git 2.39): what git strips from both ends of
 * an author's name and address.  A name of nothing else is empty to git,
 * which refuses it.
 */
static int
ident_crud(unsigned char c)
{
	return c <= 32 || c == '.' || c == ',' || c == ':' || c == ';' ||
	    c == '<' || c == '>' || c == '"' || c == '\\' || c == '\'';
}

/* s into out (size n), bad bytes as ' ' (as '_' in an address);
 * "unknown" when it has nothing but crud. */
static void
ident_clean(char *out, size_t n, const char *s, int email)
{
	size_t i;
	int real = 0;

	snprintf(out, n, "%s", s ? s : "");
	for (i = 0; out[i]; i++) {
		if (out[i] == '<' || out[i] == '>' ||
		    (unsigned char)out[i] < 0x20 || out[i] == 0x7f ||
		    (email && out[i] == ' '))
			out[i] = email ? '_' : ' ';
		real |= !ident_crud((unsigned char)out[i]);
	}
	if (!real)
		snprintf(out, n, "unknown");
}

void
gitm_patch_author(char name[CAP_NAME + 1], char email[CAP_NAME + 1],
    const struct gitm_patch *p)
{
	ident_clean(name, CAP_NAME + 1, p->author_name, 0);
	ident_clean(email, CAP_NAME + 1, p->author_email, 1);
}

/*
 * Whether a symlink at path with this target stays inside the tree: the
 * target is relative and its ".." never climb above the top.
 */
static int
link_stays_inside(const char *path, const char *target, size_t len)
{
	const char *s = target, *end = target + len, *e;
	long depth = 0;

	if (len == 0 || target[0] == '/' || memchr(target, '\0', len))
		return 0;
	for (e = path; (e = strchr(e, '/')) != NULL; e++)
		depth++; /* the directories the link sits in */
	while (s < end) {
		size_t n;

		e = memchr(s, '/', (size_t)(end - s));
		n = e ? (size_t)(e - s) : (size_t)(end - s);
		if (n == 2 && memcmp(s, "..", 2) == 0) {
			if (--depth < 0)
				return 0;
		} else if (n > 0 && !(n == 1 && s[0] == '.')) {
			depth++;
		}
		s += n + 1;
	}
	return 1;
}

/*
 * An absolute path as the patch text names it ("--- a//etc/x", "+++
 * /etc/x", "rename to /etc/x"): libgit2 makes such a name relative, so
 * it is looked for in the text itself.  NULL, or the line (its first 200
 * bytes in out).
 */
static const char *
absolute_in_text(char *out, size_t outlen, const char *diff, size_t len)
{
	static const char *const pre[] = { "--- ", "+++ ", "rename from ",
		"rename to ", "copy from ", "copy to " };
	const char *s = diff, *end = diff + len;
	size_t i;

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);
		int abs = 0;

		if (n > 14 && memcmp(s, "diff --git ", 11) == 0) {
			const char *q;

			abs = memcmp(s + 11, "a//", 3) == 0;
			for (q = s + 11; !abs && q + 4 <= s + n; q++)
				abs = memcmp(q, " b//", 4) == 0;
		}
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]) && !abs; i++) {
			size_t k = strlen(pre[i]);
			const char *p = s + k;

			if (n <= k || memcmp(s, pre[i], k) != 0)
				continue;
			if (n > k + 2 && (p[0] == 'a' || p[0] == 'b') &&
			    p[1] == '/')
				p += 2;
			abs = p < s + n && *p == '/' &&
			    !((size_t)(s + n - p) >= 9 &&
			        memcmp(p, "/dev/null", 9) == 0);
		}
		if (abs) {
			snprintf(
			    out, outlen, "%.*s", (int)(n < 200 ? n : 200), s);
			gitm_i_sanitize(out);
			return out;
		}
		s += n + 1;
	}
	return NULL;
}

/*
 * Whether a proper prefix of path is a symlink: in tree (the parent's),
 * or made by this patch (links[0..nlinks)).  out gets the prefix (cut to
 * len), for the message.
 */
static int
through_link(char *out, size_t len, git_tree *tree, const char *path,
    const char *const *links, size_t nlinks)
{
	const char *e;
	size_t i;

	for (e = path; (e = strchr(e, '/')) != NULL; e++) {
		char *pre = xstrndup(path, (size_t)(e - path));
		git_tree_entry *te = NULL;
		int link = 0;

		for (i = 0; i < nlinks && !link; i++)
			link = strcmp(links[i], pre) == 0;
		if (!link && git_tree_entry_bypath(&te, tree, pre) == 0) {
			link = git_tree_entry_filemode(te) == GIT_FILEMODE_LINK;
			git_tree_entry_free(te);
		}
		snprintf(out, len, "%s", pre);
		free(pre);
		if (link)
			return 1;
	}
	return 0;
}

/* Whether text has a line that is exactly line. */
static int
has_line(const char *text, size_t len, const char *line)
{
	const char *s = text, *end = text + len;
	size_t k = strlen(line);

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);

		if (n == k && memcmp(s, line, k) == 0)
			return 1;
		s += n + 1;
	}
	return 0;
}

/*
 * The binary files a patch writes, by the sizes its "literal N" and
 * "delta N" lines declare (what git inflates, before it writes the
 * file): ERR_INVALID naming the file when one is over
 * CAP_PATCH_FILE_BYTES or all are over CAP_PATCH_BYTES, else 0.  Checked
 * before either applier runs, so a small mail holding a huge file is
 * refused without inflating it.
 */
static int
binary_refusal(struct gitm_repo *r, const struct gitm_patch *p)
{
	const char *s = p->diff, *end = p->diff + p->len;
	char path[256] = "";
	long long total = 0;

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);
		const char *num = NULL;

		if (n > 13 && strncmp(s, "diff --git a/", 13) == 0)
			snprintf(path, sizeof(path), "%.*s",
			    (int)strcspn(s + 13, " \n"), s + 13);
		else if (n > 8 && strncmp(s, "literal ", 8) == 0)
			num = s + 8;
		else if (n > 6 && strncmp(s, "delta ", 6) == 0)
			num = s + 6;
		if (num != NULL) {
			long long v = 0;

			while (num < s + n && *num >= '0' && *num <= '9' &&
			    v <= CAP_PATCH_BYTES)
				v = v * 10 + (*num++ - '0');
			total += v;
			gitm_i_sanitize(path);
			if (v > CAP_PATCH_FILE_BYTES)
				return err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch's binary file %s is "
				    "%s%lld bytes, more than the %lld a "
				    "patched file may have",
				    r->name, path,
				    v > CAP_PATCH_BYTES ? "over " : "", v,
				    (long long)CAP_PATCH_FILE_BYTES);
			if (total > CAP_PATCH_BYTES)
				return err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch's binary files are "
				    "over %lld bytes in all (at %s)",
				    r->name, (long long)CAP_PATCH_BYTES, path);
		}
		s += n + 1;
	}
	return 0;
}

/*
 * A symlink the patch makes (or changes) whose target, its one added
 * line, is absolute or climbs out of the tree: ERR_INVALID, else 0.
 */
static int
new_link_refusal(struct gitm_repo *r, const git_diff_delta *d, git_patch *pt,
    const char *clean)
{
	const git_diff_line *ln;
	char to[256];
	size_t k, n, len;

	if (d->new_file.mode != GIT_FILEMODE_LINK ||
	    git_patch_num_hunks(pt) == 0)
		return 0;
	n = (size_t)git_patch_num_lines_in_hunk(pt, 0);
	for (k = 0; k < n; k++) {
		if (git_patch_get_line_in_hunk(&ln, pt, 0, k) < 0 ||
		    ln->origin != GIT_DIFF_LINE_ADDITION)
			continue;
		/* Without its newline (stricter: "..\n" counts as ".."). */
		len = ln->content_len;
		if (len > 0 && ln->content[len - 1] == '\n')
			len--;
		if (link_stays_inside(d->new_file.path, ln->content, len))
			return 0;
		snprintf(to, sizeof(to), "%.*s", (int)(len < 200 ? len : 200),
		    ln->content);
		gitm_i_sanitize(to);
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch makes the symlink \"%.200s\" point "
		    "out of the tree (to \"%s\")",
		    r->name, clean, to);
	}
	return 0;
}

/*
 * A patch of a series is untrusted mail: before either applier (libgit2,
 * then git am --3way) sees it, refuse one that names a path outside the
 * tree or inside a .git, makes a symlink pointing out of the tree,
 * writes through a symlink (of the parent tree, or one it makes), or
 * carries a hunk or a file count over the caps.  0, or ERR_INVALID with
 * the reason in r's error.
 */
static int
patch_refusal(struct gitm_repo *r, const struct gitm_patch *p, git_diff *diff,
    git_tree *tree)
{
	size_t nd = git_diff_num_deltas(diff), i, h, nlinks = 0;
	const char **links;
	char pre[256];
	int rc = 0;

	if (absolute_in_text(pre, sizeof(pre), p->diff, p->len) != NULL)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch names an absolute path: \"%s\"",
		    r->name, pre);
	if (nd > CAP_PATCH_FILES)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch touches %zu files, more than the %d "
		    "allowed",
		    r->name, nd, CAP_PATCH_FILES);
	links = xcalloc(nd + 1, sizeof(*links));
	for (i = 0; i < nd && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (d->new_file.mode == GIT_FILEMODE_LINK &&
		    d->new_file.path != NULL)
			links[nlinks++] = d->new_file.path;
	}
	for (i = 0; i < nd && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *paths[2] = { d->old_file.path, d->new_file.path };
		const git_diff_hunk *hk;
		git_patch *pt = NULL;
		size_t k, nlines;
		char clean[256];

		for (k = 0; k < 2 && rc == 0; k++) {
			const char *why;

			if (k == 0 && d->status == GIT_DELTA_ADDED)
				continue; /* "/dev/null" */
			if (k == 1 && d->status == GIT_DELTA_DELETED)
				continue;
			snprintf(clean, sizeof(clean), "%s",
			    paths[k] ? paths[k] : "");
			gitm_i_sanitize(clean);
			if ((why = gitm_i_tree_path_problem(paths[k])) != NULL)
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch names \"%.200s\": %s",
				    r->name, clean, why);
			else if (through_link(pre, sizeof(pre), tree, paths[k],
			             links, nlinks)) {
				gitm_i_sanitize(pre);
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch writes \"%.200s\" "
				    "through the symlink \"%.200s\"",
				    r->name, clean, pre);
			}
		}
		if (rc != 0)
			break;
		if (git_patch_from_diff(&pt, diff, i) < 0 || pt == NULL)
			continue; /* the applier reports what does not parse */
		for (h = 0; h < git_patch_num_hunks(pt) && rc == 0; h++) {
			if (git_patch_get_hunk(&hk, &nlines, pt, h) < 0)
				break;
			if (hk->old_lines > CAP_PATCH_HUNK_LINES ||
			    hk->new_lines > CAP_PATCH_HUNK_LINES ||
			    nlines > CAP_PATCH_HUNK_LINES)
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: hunk %zu of \"%.200s\": %d old "
				    "and %d new lines, more than the %d "
				    "allowed",
				    r->name, h + 1, clean, hk->old_lines,
				    hk->new_lines, CAP_PATCH_HUNK_LINES);
		}
		if (rc == 0)
			rc = new_link_refusal(r, d, pt, clean);
		git_patch_free(pt);
	}
	free(links);
	return rc;
}

/* The author's signature (gitm_patch_author). */
static int
mail_signature(git_signature **out, const struct gitm_patch *p)
{
	char n[CAP_NAME + 1], m[CAP_NAME + 1];

	gitm_patch_author(n, m, p);
	return git_signature_new(out, n, m,
	    (git_time_t)(p->author_time < 0 ? 0 : p->author_time),
	    p->author_tz);
}

int
gitm_apply_series(char (*out)[GITM_SHA_SIZE], size_t *out_failed,
    struct gitm_repo *r, const char *base, const struct gitm_patch *patches,
    size_t n, const char *ref)
{
	git_commit *parent = NULL, *next = NULL;
	git_reference *rf = NULL;
	git_oid cid;
	size_t i;
	int rc;

	*out_failed = 0;
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if ((rc = gitm_i_lookup_commit(&parent, r, base)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		const struct gitm_patch *p = &patches[i];
		git_apply_options ao = GIT_APPLY_OPTIONS_INIT;
		struct apply_at at = { "" };
		git_diff *diff = NULL;
		git_tree *tree = NULL, *nt = NULL;
		git_index *idx = NULL;
		git_signature *au = NULL, *co = NULL;
		const char *nul;
		git_oid tid;

		*out_failed = i;
		/* libgit2 1.5 reads past its buffers applying a hunk whose
		 * lines hold a NUL byte (ASan: heap-buffer-overflow in
		 * git_apply_to_tree); a text patch has none (binary ones are
		 * base85), but mail decoding can make one (=00). */
		if ((nul = memchr(p->diff, '\0', p->len)) != NULL) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: the patch holds a NUL byte (offset %zu "
			    "of its diff)",
			    r->name, (size_t)(nul - p->diff));
			goto next;
		}
		rc = git_diff_from_buffer(&diff, p->diff, p->len);
		if (rc < 0) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: the patch does not parse: %s", r->name,
			    git_error_last() ? git_error_last()->message : "?");
			goto next;
		}
		ao.delta_cb = on_apply_delta;
		ao.payload = &at;
		if ((rc = git_commit_tree(&tree, parent)) < 0) {
			rc = gitm_i_gerr(r, rc, "tree of %s", base);
			goto next;
		}
		if ((rc = patch_refusal(r, p, diff, tree)) != 0)
			goto next;
		/* libgit2 1.5 can spin for ever inflating a corrupt binary
		 * literal (found by the patch fuzz target: one flipped bit
		 * of a "literal 3"); git's own apply refuses one, so a
		 * binary patch goes to git am, as one libgit2 cannot apply. */
		if (has_line(p->diff, p->len, "GIT binary patch")) {
			if ((rc = binary_refusal(r, p)) != 0)
				goto next;
			rc = err_setc(&r->err, ERR_CONFLICT,
			    "tree %s: a binary patch (left to git am)",
			    r->name);
			goto next;
		}
		rc = git_apply_to_tree(&idx, r->repo, tree, diff, &ao);
		if (rc < 0) {
			char why[300];
			const git_error *ge = git_error_last();

			snprintf(why, sizeof(why), "%s",
			    ge && ge->message ? ge->message : "does not apply");
			gitm_i_sanitize(why);
			rc = err_setc(&r->err, ERR_CONFLICT,
			    "does not apply to %s: %s",
			    at.path[0] ? at.path : "(no file)", why);
			goto next;
		}
		if ((rc = git_index_write_tree_to(&tid, idx, r->repo)) < 0 ||
		    (rc = git_tree_lookup(&nt, r->repo, &tid)) < 0) {
			rc = gitm_i_gerr(r, rc, "write tree");
			goto next;
		}
		if ((rc = mail_signature(&au, p)) < 0 ||
		    (rc = git_signature_new(&co, "perfwatch",
		         "perfwatch@localhost",
		         (git_time_t)(p->author_time < 0 ? 0 : p->author_time),
		         p->author_tz)) < 0) {
			rc = gitm_i_gerr(r, rc, "signature");
			goto next;
		}
		rc = git_commit_create(&cid, r->repo, NULL, au, co, NULL,
		    p->message, nt, 1, (const git_commit **)&parent);
		if (rc < 0) {
			rc = gitm_i_gerr(r, rc, "commit");
			goto next;
		}
		gitm_i_oid_hex(out[i], &cid);
		if ((rc = git_commit_lookup(&next, r->repo, &cid)) < 0)
			rc = gitm_i_gerr(r, rc, "commit lookup");
	next:
		git_signature_free(au);
		git_signature_free(co);
		git_tree_free(nt);
		git_index_free(idx);
		git_tree_free(tree);
		git_diff_free(diff);
		if (rc < 0) {
			git_commit_free(parent);
			return rc;
		}
		git_commit_free(parent);
		parent = next;
		next = NULL;
	}
	*out_failed = n;
	if (ref != NULL) { /* n == 0: REF at BASE */
		rc = git_reference_create(&rf, r->repo, ref,
		    git_commit_id(parent), 1, "perfwatch: series applied");
		git_reference_free(rf);
		if (rc < 0) {
			git_commit_free(parent);
			return gitm_i_gerr(r, rc, "ref %.200s", ref);
		}
	}
	git_commit_free(parent);
	return 0;
}

int
gitm_revert(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha,
    const char *onto, const char *ref)
{
	git_commit *c = NULL, *base = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_signature *who = NULL;
	git_reference *rf = NULL;
	git_oid tid, cid;
	char *msg = NULL;
	const char *subj, *eol;
	int rc;

	if ((rc = gitm_i_repo_ready(r)) < 0 ||
	    (rc = gitm_i_lookup_commit(&c, r, sha)) < 0 ||
	    (rc = gitm_i_lookup_commit(&base, r, onto)) < 0)
		goto out;
	rc = git_revert_commit(&idx, r->repo, c, base,
	    git_commit_parentcount(c) > 1 ? 1 : 0, NULL);
	if (rc < 0) {
		rc = gitm_i_gerr(r, rc, "revert of %.12s", sha);
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		const git_index_entry *anc, *ours, *theirs;
		git_index_conflict_iterator *it = NULL;
		char path[256] = "(unknown)";

		if (git_index_conflict_iterator_new(&it, idx) == 0 &&
		    git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
			const git_index_entry *e = ours ? ours : theirs;

			if (e == NULL)
				e = anc;
			if (e != NULL)
				snprintf(path, sizeof(path), "%s", e->path);
		}
		git_index_conflict_iterator_free(it);
		gitm_i_sanitize(path);
		rc = err_setc(&r->err, ERR_CONFLICT,
		    "tree %s: the revert of %.12s does not apply cleanly on "
		    "%.12s: conflict in %s",
		    r->name, sha, onto, path);
		goto out;
	}
	if ((rc = git_index_write_tree_to(&tid, idx, r->repo)) < 0 ||
	    (rc = git_tree_lookup(&tree, r->repo, &tid)) < 0) {
		rc = gitm_i_gerr(r, rc, "write tree");
		goto out;
	}
	subj = git_commit_message(c);
	subj = subj ? subj : "";
	eol = strchr(subj, '\n');
	msg = xasprintf("Revert \"%.*s\"\n\nThis reverts commit %s.\n"
	                "(made by perfwatch to verify a bisection)\n",
	    (int)(eol ? eol - subj : (ptrdiff_t)strlen(subj)), subj, sha);
	if ((rc = git_signature_new(&who, "perfwatch", "perfwatch@localhost",
	         git_commit_time(base), git_commit_time_offset(base))) < 0 ||
	    (rc = git_commit_create(&cid, r->repo, NULL, who, who, NULL, msg,
	         tree, 1, (const git_commit **)&base)) < 0) {
		rc = gitm_i_gerr(r, rc, "revert commit");
		goto out;
	}
	gitm_i_oid_hex(out, &cid);
	if (ref != NULL) {
		rc = git_reference_create(
		    &rf, r->repo, ref, &cid, 1, "perfwatch: bisect revert");
		if (rc < 0)
			rc = gitm_i_gerr(r, rc, "ref %.200s", ref);
	}
out:
	free(msg);
	git_reference_free(rf);
	git_signature_free(who);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(base);
	git_commit_free(c);
	return rc < 0 ? rc : 0;
}

int
gitm_tree_id(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha)
{
	git_commit *c;
	int rc;

	out[0] = '\0';
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if ((rc = gitm_i_lookup_commit(&c, r, sha)) < 0)
		return rc;
	gitm_i_oid_hex(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

struct largest {
	git_odb *odb;
	int64_t max;
	int err;
};

static int
largest_cb(const char *root, const git_tree_entry *e, void *arg)
{
	struct largest *l = arg;
	git_object_t type;
	size_t len;

	(void)root;
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	if (git_odb_read_header(&len, &type, l->odb, git_tree_entry_id(e)) <
	    0) {
		l->err = 1;
		return -1;
	}
	if ((int64_t)len > l->max)
		l->max = (int64_t)len;
	return 0;
}

int
gitm_largest_blob(int64_t *out, struct gitm_repo *r, const char *sha)
{
	struct largest l = { NULL, 0, 0 };
	git_commit *c;
	git_tree *t = NULL;
	int rc;

	*out = 0;
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if ((rc = gitm_i_lookup_commit(&c, r, sha)) < 0)
		return rc;
	if ((rc = git_commit_tree(&t, c)) < 0 ||
	    (rc = git_repository_odb(&l.odb, r->repo)) < 0)
		rc = gitm_i_gerr(r, rc, "tree");
	else if (git_tree_walk(t, GIT_TREEWALK_PRE, largest_cb, &l) < 0 ||
	    l.err)
		rc = gitm_i_gerr(r, -1, "tree walk");
	else
		*out = l.max;
	git_odb_free(l.odb);
	git_tree_free(t);
	git_commit_free(c);
	return rc < 0 ? rc : 0;
}

int
gitm_inbox_read(char out_last[GITM_SHA_SIZE], size_t *out_n,
    struct gitm_repo *r, const char *old, size_t max,
    int (*cb)(const char *sha, const char *data, size_t len, void *arg),
    void *arg)
{
	git_revwalk *w = NULL;
	git_oid head, oid, old_id;
	size_t n = 0;
	int rc;

	out_last[0] = '\0';
	*out_n = 0;
	if ((rc = gitm_i_repo_ready(r)) < 0)
		return rc;
	if (git_reference_name_to_id(&head, r->repo, "HEAD") < 0 &&
	    git_reference_name_to_id(&head, r->repo, "refs/heads/master") < 0)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "inbox %s: the archive has no HEAD or master", r->name);
	if ((rc = git_revwalk_new(&w, r->repo)) < 0)
		return gitm_i_gerr(r, rc, "revwalk");
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if ((rc = git_revwalk_push(w, &head)) < 0) {
		rc = gitm_i_gerr(r, rc, "revwalk push");
		goto out;
	}
	if (old != NULL && gitm_i_is_hex40(old)) {
		git_oid_fromstr(&old_id, old);
		if (git_revwalk_hide(w, &old_id) < 0)
			git_error_clear(); /* gone (rewritten): read all */
	}
	while (n < max && (rc = git_revwalk_next(&oid, w)) == 0) {
		git_commit *c = NULL;
		git_tree *t = NULL;
		git_tree_entry *te = NULL;
		git_blob *b = NULL;
		char hex[GITM_SHA_SIZE];
		int stop = 0;

		gitm_i_oid_hex(hex, &oid);
		if (cb != NULL && git_commit_lookup(&c, r->repo, &oid) == 0 &&
		    git_commit_tree(&t, c) == 0 &&
		    git_tree_entry_bypath(&te, t, "m") == 0 &&
		    git_blob_lookup(&b, r->repo, git_tree_entry_id(te)) == 0)
			stop = cb(hex, git_blob_rawcontent(b),
			    (size_t)git_blob_rawsize(b), arg);
		git_error_clear();
		git_blob_free(b);
		git_tree_entry_free(te);
		git_tree_free(t);
		git_commit_free(c);
		snprintf(out_last, GITM_SHA_SIZE, "%s", hex);
		n++;
		if (stop)
			break;
	}
	if (rc == GIT_ITEROVER || rc == 0)
		rc = 0;
	else
		rc = gitm_i_gerr(r, rc, "revwalk");
out:
	git_revwalk_free(w);
	*out_n = n;
	return rc;
}
