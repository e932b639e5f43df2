/*
 * The parameter matrix of a job: expansion into points, and rendering of
 * argv templates against a point.  No YAML here: it works on the loaded
 * struct job_config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config.h"

static int
name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

int
config_next_placeholder(
    const char *s, size_t *pos, size_t *name_off, size_t *name_len)
{
	size_t i, j;

	for (i = *pos; s[i] != '\0'; i++) {
		if (s[i] != '{' || !name_start(s[i + 1]))
			continue;
		for (j = i + 1; name_char(s[j]); j++)
			;
		if (s[j] != '}')
			continue;
		*name_off = i + 1;
		*name_len = j - i - 1;
		*pos = j + 1;
		return 0;
	}
	*pos = i;
	return -1;
}

char *
config_point_label(const struct cfg_point *p)
{
	struct buf b = BUF_INIT(CAP_LINE);
	size_t i;

	for (i = 0; i < p->n; i++)
		buf_printf(
		    &b, "%s%s=%s", i ? "," : "", p->keys[i], p->values[i]);
	if (buf_failed(&b)) {
		/* Cannot happen within the loader's limits; stay defined. */
		buf_release(&b);
		return xstrdup("");
	}
	if (b.len == 0)
		return xstrdup("");
	return buf_take(&b);
}

const char *
config_point_get(const struct cfg_point *p, const char *key)
{
	size_t i;

	if (p == NULL || key == NULL)
		return NULL;
	for (i = 0; i < p->n; i++)
		if (strcmp(p->keys[i], key) == 0)
			return p->values[i];
	return NULL;
}

/* Does the full point (one value per axis) match the partial point ex? */
static int
excluded(const struct job_config *job, const size_t *idx)
{
	size_t e, k, a;

	for (e = 0; e < job->nexclude; e++) {
		const struct cfg_point *ex = &job->exclude[e];
		int all = 1;

		for (k = 0; k < ex->n && all; k++) {
			for (a = 0; a < job->naxes; a++)
				if (strcmp(job->axes[a].name, ex->keys[k]) == 0)
					break;
			if (a == job->naxes ||
			    strcmp(job->axes[a].values.v[idx[a]],
			        ex->values[k]) != 0)
				all = 0;
		}
		if (all && ex->n > 0)
			return 1;
	}
	return 0;
}

void
config_expand(struct cfg_point **out, size_t *n, const struct job_config *job)
{
	struct cfg_point *pts = NULL;
	size_t *idx, total = 1, npts = 0, a, i;

	for (a = 0; a < job->naxes; a++) {
		if (job->axes[a].values.n == 0) {
			*out = NULL;
			*n = 0;
			return;
		}
		total *= job->axes[a].values.n;
	}
	idx = xcalloc(job->naxes + 1, sizeof(*idx));
	pts = xcalloc(total, sizeof(*pts));
	for (i = 0; i < total; i++) {
		/* Decompose i, the last axis fastest. */
		size_t rem = i;

		for (a = job->naxes; a-- > 0;) {
			idx[a] = rem % job->axes[a].values.n;
			rem /= job->axes[a].values.n;
		}
		if (excluded(job, idx))
			continue;
		struct cfg_point *p = &pts[npts++];

		p->n = job->naxes;
		p->keys = xcalloc(job->naxes + 1, sizeof(char *));
		p->values = xcalloc(job->naxes + 1, sizeof(char *));
		for (a = 0; a < job->naxes; a++) {
			p->keys[a] = job->axes[a].name;
			p->values[a] = job->axes[a].values.v[idx[a]];
		}
		p->label = config_point_label(p);
	}
	free(idx);
	*out = pts;
	*n = npts;
}

void
config_points_free(struct cfg_point *pts, size_t n)
{
	size_t i;

	if (pts == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(pts[i].keys);
		free(pts[i].values);
		free(pts[i].label);
	}
	free(pts);
}

static const char *
lookup_param(const struct cfg_point *p, const char *const *extra,
    const char *name, size_t len)
{
	size_t i;

	if (p != NULL)
		for (i = 0; i < p->n; i++)
			if (strlen(p->keys[i]) == len &&
			    memcmp(p->keys[i], name, len) == 0)
				return p->values[i];
	for (i = 0; extra != NULL && extra[i] != NULL && extra[i + 1] != NULL;
	     i += 2)
		if (strlen(extra[i]) == len && memcmp(extra[i], name, len) == 0)
			return extra[i + 1];
	return NULL;
}

int
config_render_argv(char ***out, const struct strlist *tmpl,
    const struct cfg_point *p, const char *const *extra, char *errbuf,
    size_t errlen)
{
	char **argv;
	size_t i;

	*out = NULL;
	argv = xcalloc(tmpl->n + 1, sizeof(char *));
	for (i = 0; i < tmpl->n; i++) {
		const char *s = tmpl->v[i], *val;
		struct buf b = BUF_INIT(CAP_LINE);
		size_t pos = 0, last = 0, off, len;

		while (config_next_placeholder(s, &pos, &off, &len) == 0) {
			val = lookup_param(p, extra, s + off, len);
			if (val == NULL) {
				if (errbuf != NULL && errlen > 0)
					snprintf(errbuf, errlen,
					    "argument %zu \"%s\": no value for "
					    "{%.*s}",
					    i, s, (int)len, s + off);
				buf_release(&b);
				config_argv_free(argv);
				return -1;
			}
			buf_add(&b, s + last, off - 1 - last);
			buf_puts(&b, val);
			last = pos;
		}
		buf_puts(&b, s + last);
		if (buf_failed(&b)) {
			if (errbuf != NULL && errlen > 0)
				snprintf(errbuf, errlen,
				    "argument %zu: longer than %d bytes", i,
				    CAP_LINE);
			buf_release(&b);
			config_argv_free(argv);
			return -1;
		}
		argv[i] = b.len ? buf_take(&b) : xstrdup("");
		buf_release(&b);
	}
	*out = argv;
	return 0;
}

void
config_argv_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
