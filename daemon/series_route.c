/*
 * Series routing: subject tag to tree and branch (series_route.h).
 */
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "daemon/mail.h"
#include "daemon/series_route.h"

static const struct cfg_tree *
tree_named(const struct daemon_config *d, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < d->ntrees; i++)
		if (strcmp(d->trees[i].name, name) == 0)
			return &d->trees[i];
	return NULL;
}

/* The inbox tag equal (any case) to one word of prefix, or NULL. */
static const struct cfg_inbox_tag *
tag_in(const struct cfg_inbox *in, const char *prefix)
{
	const char *w = prefix;
	size_t i;

	while (*w) {
		size_t n = strcspn(w, " ");

		for (i = 0; i < in->ntags; i++)
			if (strlen(in->tags[i].tag) == n &&
			    strncasecmp(in->tags[i].tag, w, n) == 0)
				return &in->tags[i];
		w += n;
		while (*w == ' ')
			w++;
	}
	return NULL;
}

void
series_route(struct series_route *out, const struct daemon_config *d,
    const struct cfg_inbox *in, const struct mail_msg *msgs,
    const struct mail_series *ms)
{
	const struct cfg_inbox_tag *t;
	int k;

	memset(out, 0, sizeof(*out));
	/* The root's tag first: a PATCHSET cover names the branch, its
	 * "[PATCH 1/6]" patches do not. */
	t = tag_in(in, msgs[ms->root].tag.prefix);
	for (k = 0; t == NULL && k < ms->total; k++)
		if (ms->patches[k] >= 0)
			t = tag_in(in, msgs[ms->patches[k]].tag.prefix);
	if (t != NULL) {
		out->tree = tree_named(d, t->tree);
		out->branch = t->branch;
		out->tag = t->tag;
		return;
	}
	out->tree = tree_named(d, in->tree);
	out->branch = in->branch;
	if (out->branch == NULL && out->tree != NULL &&
	    out->tree->branches.n > 0)
		out->branch = out->tree->branches.v[0];
}

/* ASCII case-insensitive substring test. */
static int
has_word(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

int
series_wanted(const struct cfg_inbox *in, const struct mail_msg *msgs,
    const struct mail_series *ms)
{
	size_t i;
	int k;

	if (in->subjects.n == 0)
		return 1;
	for (k = -1; k < ms->total; k++) {
		long j = k < 0 ? (long)ms->root : ms->patches[k];

		if (j < 0)
			continue;
		for (i = 0; i < in->subjects.n; i++)
			if (has_word(msgs[j].subject, in->subjects.v[i]))
				return 1;
	}
	return 0;
}
