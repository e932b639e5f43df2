#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/memcg_tax.h"
#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"

#define TAX_AXIS MEMCG_TAX_AXIS
#define TAX_ROOT MEMCG_TAX_ROOT

/* A label split into key=value pairs; cg is the cgroup value or NULL;
 * rest is the other pairs, sorted, joined by ',' (the pairing key). */
struct parsed {
	char *cg;
	char *rest;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
parse_label(struct parsed *out, const char *label, struct err *e)
{
	char *copy = xstrdup(label ? label : ""), *tok, *save = NULL;
	char **pairs = NULL;
	struct buf rest = BUF_INIT(CAP_LINE);
	size_t n = 0, i;

	out->cg = out->rest = NULL;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || eq == tok) {
			err_set(e,
			    "memcg_tax: point '%.128s': '%.64s' is not "
			    "key=value",
			    label, tok);
			free(pairs);
			free(copy);
			free(out->cg);
			out->cg = NULL;
			return -1;
		}
		if ((size_t)(eq - tok) == strlen(TAX_AXIS) &&
		    strncmp(tok, TAX_AXIS, strlen(TAX_AXIS)) == 0) {
			free(out->cg);
			out->cg = xstrdup(eq + 1);
			continue;
		}
		pairs = xreallocarray(pairs, n + 1, sizeof(*pairs));
		pairs[n++] = tok;
	}
	if (n)
		qsort(pairs, n, sizeof(*pairs), cmp_str);
	for (i = 0; i < n; i++)
		buf_printf(&rest, "%s%s", i ? "," : "", pairs[i]);
	free(pairs);
	if (buf_failed(&rest)) {
		buf_release(&rest);
		free(copy);
		free(out->cg);
		out->cg = NULL;
		return err_set(e, "memcg_tax: point label too long");
	}
	out->rest = rest.len ? buf_take(&rest) : xstrdup("");
	free(copy);
	return 0;
}

char *
memcg_tax_label_get(const char *label, const char *key)
{
	const char *p = label;
	size_t kl = strlen(key);

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);

		if (l > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
			return xstrndup(p + kl + 1, l - kl - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

static const struct memcg_tax_metric *
find_metric(const struct memcg_tax_point *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->metrics[i].name, name) == 0)
			return &p->metrics[i];
	return NULL;
}

int
memcg_tax_compute(struct memcg_tax_result **out, size_t *nout,
    const struct memcg_tax_point *pts, size_t n, struct err *e)
{
	struct parsed *pp = xcalloc(n ? n : 1, sizeof(*pp));
	size_t i, j, k, got = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < n; i++)
		if (parse_label(&pp[i], pts[i].label, e)) {
			rc = -1;
			goto out;
		}
	for (i = 0; i < n; i++) {
		const struct memcg_tax_point *root = NULL;
		size_t ri = 0;

		if (pp[i].cg == NULL || strcmp(pp[i].cg, TAX_ROOT) == 0)
			continue;
		for (j = 0; j < n && root == NULL; j++)
			if (pp[j].cg && strcmp(pp[j].cg, TAX_ROOT) == 0 &&
			    strcmp(pp[j].rest, pp[i].rest) == 0) {
				root = &pts[j];
				ri = j;
			}
		if (root == NULL)
			continue;
		for (k = 0; k < pts[i].n; k++) {
			const struct memcg_tax_metric *m = &pts[i].metrics[k];
			const struct memcg_tax_metric *r;
			struct memcg_tax_result *res;

			if (m->better != MEMCG_TAX_HIGHER ||
			    !memcg_tax_taxed(m->name, "higher", -1))
				continue;
			r = find_metric(root, m->name);
			if (r == NULL || r->better != MEMCG_TAX_HIGHER ||
			    !(r->value > 0) || !(m->value >= 0))
				continue;
			*out = xreallocarray(*out, got + 1, sizeof(**out));
			res = &(*out)[got++];
			res->point = xstrdup(pts[i].label);
			res->root_point = xstrdup(pts[ri].label);
			res->name =
			    xasprintf("%s%s", MEMCG_TAX_PREFIX, m->name);
			res->nested = m->value;
			res->root = r->value;
			res->value = m->value / r->value;
		}
	}
	*nout = got;
out:
	for (i = 0; i < n; i++) {
		free(pp[i].cg);
		free(pp[i].rest);
	}
	free(pp);
	return rc;
}

void
memcg_tax_free(struct memcg_tax_result *r, size_t n)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(r[i].point);
		free(r[i].root_point);
		free(r[i].name);
	}
	free(r);
}

int
memcg_tax_taxed(const char *name, const char *better, int listed)
{
	static const char *const skip[] = { "memcg.", "system.",
		MEMCG_TAX_PREFIX };
	size_t i;

	if (name == NULL || better == NULL || strcmp(better, "higher") != 0 ||
	    listed == 0)
		return 0;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strncmp(name, skip[i], strlen(skip[i])) == 0)
			return 0;
	return 1;
}

size_t
memcg_tax_ratios(double *out, const struct memcg_tax_run *nested, size_t nn,
    const struct memcg_tax_run *root, size_t nr)
{
	size_t i, j, k = 0;

	for (i = 0; i < nn; i++) {
		for (j = 0; j < nr; j++)
			if (root[j].idx == nested[i].idx)
				break;
		if (j == nr || !(root[j].value > 0) ||
		    !isfinite(root[j].value) || !isfinite(nested[i].value) ||
		    !(nested[i].value >= 0))
			continue;
		out[k++] = nested[i].value / root[j].value;
	}
	return k;
}
