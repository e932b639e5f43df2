/*
 * Patch series from mail (mail.h): messages grouped into series by
 * thread and subject, covers found, rerolls and partial rerolls of one
 * patch joined to the version they answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xalloc.h"
#include "daemon/mail_int.h"

/* ---- series ---- */

struct idx_ent {
	const char *id;
	size_t i;
};

struct idx {
	const struct mail_msg *msgs;
	struct idx_ent *ord; /* sorted by message id, then position */
	size_t n;
};

static int
cmp_id(const void *a, const void *b)
{
	const struct idx_ent *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c != 0)
		return c;
	return x->i < y->i ? -1 : 1;
}

/* The first message with this id, or -1. */
static long
find_id(const struct idx *ix, const char *id)
{
	size_t lo = 0, hi = ix->n;

	if (id == NULL || id[0] == '\0')
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->ord[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && strcmp(ix->ord[lo].id, id) == 0)
		return (long)ix->ord[lo].i;
	return -1;
}

static int
is_cover(const struct mail_msg *m)
{
	return m->tag.patch && !m->tag.reply && m->tag.seq == 0 &&
	    (m->tag.total > 1 || m->tag.set);
}

/* Patch b may be in root a's series: same version and count, or a is a
 * PATCHSET cover letter, whose patches carry neither. */
static int
same_series(const struct mail_msg *a, const struct mail_msg *b)
{
	if (a->tag.set && a->tag.total == 0)
		return !b->tag.set;
	return a->tag.version == b->tag.version && a->tag.total == b->tag.total;
}

/* Among the ids p answers (In-Reply-To, then References newest first),
 * the first message that root_of says is a root and WANT accepts. */
static long
find_root(const struct idx *ix, const long *root_of, const struct mail_msg *p,
    int want_cover)
{
	size_t k;
	long j;

	for (k = 0; k <= p->nrefs; k++) {
		const char *id =
		    k == 0 ? p->in_reply_to : p->refs[p->nrefs - k];

		j = find_id(ix, id);
		if (j < 0 || root_of[j] != j || !same_series(&ix->msgs[j], p))
			continue;
		if (want_cover ? is_cover(&ix->msgs[j])
		               : ix->msgs[j].tag.seq == 1)
			return j;
	}
	return -1;
}

/*
 * A patch that answers an earlier version of itself ("[PATCH v2 3/5]"
 * in reply to v1's 3/5: a partial reroll, as b4 reads one): the
 * message it replaces (same seq and total, lower version, in a series),
 * or -1.
 */
static long
rerolled(const struct idx *ix, const long *root_of, const struct mail_msg *p)
{
	long j = find_id(ix, p->in_reply_to);
	const struct mail_msg *o;

	if (j < 0 || root_of[j] < 0)
		return -1;
	o = &ix->msgs[j];
	if (!mail_is_patch(o) || o->tag.seq != p->tag.seq ||
	    o->tag.total != p->tag.total || o->tag.version >= p->tag.version)
		return -1;
	return j;
}

/* The message names no message it answers. */
static int
threaded(const struct mail_msg *m)
{
	return m->in_reply_to[0] != '\0' || m->nrefs > 0;
}

/*
 * Mail that is not threaded (`git format-patch` without --thread, where
 * nothing says which series a patch is in): the nearest root before
 * message i in the run of unthreaded patch mail that i ends, with the
 * same version and total; a cover
 * letter only when cover_only.  Not the same sender: format-patch sends
 * the cover letter as the committer and each patch as its author.
 * -1 when none.
 */
static long
unthreaded_root(
    const struct mail_msg *msgs, const long *root_of, size_t i, int cover_only)
{
	const struct mail_msg *m = &msgs[i];
	size_t j;

	for (j = i; j-- > 0;) {
		const struct mail_msg *c = &msgs[j];

		/* Only a run of unthreaded patch mail, as format-patch
		 * writes it: an archive interleaves other mail. */
		if (threaded(c) || !c->tag.patch || c->tag.reply)
			return -1;
		if (root_of[j] != (long)j || !same_series(c, m) ||
		    c->tag.total == 1)
			continue;
		if (is_cover(c) || (!cover_only && c->tag.seq == 1))
			return (long)j;
	}
	return -1;
}

/* FNV-1a, for ids of mail that has no Message-ID. */
static unsigned long long
fnv(unsigned long long h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

void
mail_series_free(struct mail_series *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s != NULL; i++)
		free(s[i].patches);
	free(s);
}

void
mail_group(struct mail_series **out, size_t *n, size_t *out_orphans,
    const struct mail_msg *msgs, size_t nmsgs)
{
	struct idx ix = { msgs, NULL, nmsgs };
	long *root_of = xcalloc(nmsgs ? nmsgs : 1, sizeof(*root_of));
	long *slot = xcalloc(nmsgs ? nmsgs : 1, sizeof(*slot));
	long *reroll_of = xcalloc(nmsgs ? nmsgs : 1, sizeof(*reroll_of));
	struct mail_series *ser = NULL;
	size_t i, ns = 0, orphans = 0;

	ix.ord = xcalloc(nmsgs ? nmsgs : 1, sizeof(*ix.ord));
	for (i = 0; i < nmsgs; i++) {
		ix.ord[i].id = msgs[i].message_id;
		ix.ord[i].i = i;
	}
	qsort(ix.ord, nmsgs, sizeof(*ix.ord), cmp_id);
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];

		root_of[i] = reroll_of[i] = -1;
		if (is_cover(m) || (mail_is_patch(m) && m->tag.total == 1))
			root_of[i] = (long)i;
	}
	/* Patch 1/n is the root when it answers no cover letter. */
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];

		if (!mail_is_patch(m) || m->tag.total == 1 || m->tag.seq != 1)
			continue;
		if (find_root(&ix, root_of, m, 1) < 0 &&
		    (threaded(m) || unthreaded_root(msgs, root_of, i, 1) < 0))
			root_of[i] = (long)i;
	}
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		long r;

		if (!mail_is_patch(m) || m->tag.total == 1 ||
		    root_of[i] == (long)i)
			continue;
		r = find_root(&ix, root_of, m, 1);
		if (r < 0)
			r = find_root(&ix, root_of, m, 0);
		if (r < 0 && !threaded(m))
			r = unthreaded_root(msgs, root_of, i, 0);
		if (r < 0 && (reroll_of[i] = rerolled(&ix, root_of, m)) >= 0)
			root_of[i] = (long)i; /* its own series */
		else if (r < 0)
			orphans++;
		else
			root_of[i] = r; /* not a root: never matched above */
	}
	/* One series per root, in order. */
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		struct mail_series *s;
		int k;

		int total = m->tag.total;
		size_t j;

		slot[i] = -1;
		if (root_of[i] != (long)i)
			continue;
		/* A PATCHSET's count: the first patch answering it says. */
		for (j = i + 1; total == 0 && j < nmsgs; j++)
			if (root_of[j] == (long)i)
				total = msgs[j].tag.total;
		if (total < 1 || total > CAP_SERIES_PATCHES)
			continue;
		ser = xreallocarray(ser, ns + 1, sizeof(*ser));
		s = &ser[ns];
		memset(s, 0, sizeof(*s));
		s->root = i;
		s->cover = is_cover(m) ? (long)i : -1;
		s->total = total;
		s->version = m->tag.version;
		s->patches = xcalloc((size_t)s->total, sizeof(*s->patches));
		for (k = 0; k < s->total; k++)
			s->patches[k] = -1;
		s->title = m->tag.title;
		s->author = m->from;
		s->message_id = m->message_id;
		s->date = m->date;
		s->base_commit = "";
		slot[i] = (long)ns++;
	}
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		struct mail_series *s;
		long r = root_of[i];

		if (r < 0 || slot[r] < 0 || !mail_is_patch(m))
			continue;
		s = &ser[slot[r]];
		if (m->tag.seq < 1 || m->tag.seq > s->total ||
		    s->patches[m->tag.seq - 1] >= 0)
			continue; /* a resend of a seq already found */
		s->patches[m->tag.seq - 1] = (long)i;
		s->found++;
	}
	/* A partial reroll: the other patches are those of the series the
	 * patch it replaces is in (its cover letter too: the base). */
	for (i = 0; i < nmsgs; i++) {
		long j = reroll_of[i], r;
		struct mail_series *s, *old;

		if (j < 0 || slot[i] < 0 || (r = root_of[j]) < 0 || slot[r] < 0)
			continue;
		s = &ser[slot[i]];
		old = &ser[slot[r]];
		if (old->total != s->total)
			continue;
		s->cover = old->cover;
		s->title = old->title;
		for (int k = 0; k < s->total; k++)
			if (s->patches[k] < 0 && old->patches[k] >= 0) {
				s->patches[k] = old->patches[k];
				s->found++;
			}
	}
	for (i = 0; i < ns; i++) {
		struct mail_series *s = &ser[i];
		const struct mail_msg *m = &msgs[s->root];
		int k;

		if (m->message_id[0] == '\0') {
			char date[32];

			snprintf(date, sizeof(date), "%lld", m->date);
			snprintf(s->idbuf, sizeof(s->idbuf),
			    "no-message-id-%016llx@perfwatch",
			    fnv(fnv(fnv(14695981039346656037ULL, m->from),
			            m->subject),
			        date));
			s->message_id = s->idbuf;
		}
		s->complete = s->found == s->total;
		s->branch_tag = m->tag.branch;
		for (k = 0; k < s->total && !s->branch_tag[0]; k++)
			if (s->patches[k] >= 0)
				s->branch_tag = msgs[s->patches[k]].tag.branch;
		if (s->cover >= 0 && msgs[s->cover].base_commit[0])
			s->base_commit = msgs[s->cover].base_commit;
		for (k = 0; k < s->total && !s->base_commit[0]; k++)
			if (s->patches[k] >= 0 &&
			    msgs[s->patches[k]].base_commit[0])
				s->base_commit =
				    msgs[s->patches[k]].base_commit;
	}
	free(ix.ord);
	free(root_of);
	free(slot);
	free(reroll_of);
	*out = ser;
	*n = ns;
	if (out_orphans != NULL)
		*out_orphans = orphans;
}

/* Whether series s has msgs[i] as root, cover letter or a patch. */
static int
in_series(const struct mail_series *s, size_t i)
{
	int k;

	if (s->root == i || s->cover == (long)i)
		return 1;
	for (k = 0; k < s->total; k++)
		if (s->patches[k] == (long)i)
			return 1;
	return 0;
}

void
mail_orphan_why(char *out, size_t n, const struct mail_msg *msgs, size_t nmsgs,
    const struct mail_series *ser, size_t ns, size_t i)
{
	const struct mail_msg *m = &msgs[i];
	const char *irt = m->in_reply_to[0] ? m->in_reply_to
	    : m->nrefs > 0                  ? m->refs[m->nrefs - 1]
	                                    : "";
	size_t j;

	out[0] = '\0';
	if (i < nmsgs && m->tag.patch && !m->tag.reply && m->patch_off < 0 &&
	    m->tag.seq >= 1 && !m->tag.set) {
		snprintf(out, n,
		    "patch %d/%d has no diff perfwatch reads (no \"diff "
		    "--git\" line, nor a \"--- \" \"+++ \" \"@@ \" file diff)",
		    m->tag.seq, m->tag.total);
		return;
	}
	if (i >= nmsgs || !mail_is_patch(m))
		return;
	for (j = 0; j < ns; j++)
		if (in_series(&ser[j], i))
			return;
	if (m->tag.total > CAP_SERIES_PATCHES) {
		snprintf(out, n, "a series of %d patches: more than %d",
		    m->tag.total, CAP_SERIES_PATCHES);
		return;
	}
	if (m->tag.total > 0 && (m->tag.seq < 1 || m->tag.seq > m->tag.total)) {
		snprintf(out, n, "patch %d/%d: its number is outside its count",
		    m->tag.seq, m->tag.total);
		return;
	}
	for (j = 0; j < ns; j++) {
		const struct mail_series *s = &ser[j];

		if (s->total == m->tag.total && s->version == m->tag.version &&
		    m->tag.seq >= 1 && m->tag.seq <= s->total &&
		    s->patches[m->tag.seq - 1] >= 0 &&
		    (strcmp(irt, s->message_id) == 0 ||
		        strcmp(irt, msgs[s->root].message_id) == 0)) {
			snprintf(out, n,
			    "a second copy of patch %d/%d of the series "
			    "<%.200s> (the first one is used)",
			    m->tag.seq, m->tag.total, s->message_id);
			return;
		}
	}
	if (irt[0] == '\0') {
		snprintf(out, n,
		    "it names no mail it answers, and no cover letter or "
		    "patch 1/%d of v%d comes before it",
		    m->tag.total, m->tag.version);
		return;
	}
	for (j = 0; j < nmsgs; j++)
		if (strcmp(msgs[j].message_id, irt) == 0)
			break;
	if (j == nmsgs)
		snprintf(out, n,
		    "it answers <%.200s>, which is not among the mail read "
		    "(no cover letter or patch 1/%d of v%d yet)",
		    irt, m->tag.total, m->tag.version);
	else
		snprintf(out, n,
		    "it answers <%.200s>, which starts no series of %d "
		    "patches v%d",
		    irt, m->tag.total, m->tag.version);
}
