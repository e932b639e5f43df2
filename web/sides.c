/*
 * Where each side of a comparison ran (web/sides.h): from the
 * pairs as the store read them, their runs' kernel facts
 * (daemon/kfacts.h) and the hosts' registered inventories.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/cpufamily.h"
#include "common/xalloc.h"
#include "daemon/kfacts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/sides.h"
#include "web/web_int.h"

/* The facts of host name from its inventory (JSON) into h, unless h
 * has them already; its strings kept by x. */
static void
facts_add(struct ctx *x, struct web_hosts_facts *h, size_t cap,
    const char *name, const char *inventory_json)
{
	struct web_host_facts *f;
	json_t *inv;

	if (name == NULL || web_hosts_facts_find(h, name) || h->n == cap)
		return;
	f = &h->v[h->n++];
	f->name = name;
	inv = inventory_json ? json_loads(inventory_json, 0, NULL) : NULL;
	if (!json_is_object(inv)) {
		json_decref(inv);
		return;
	}
	web_keep(x, inv);
	f->cpu_model = web_jstr(inv, "cpu_model");
	f->family = cpufamily_of(f->cpu_model);
	f->kernel = web_jstr(inv, "kernel");
}

void
web_pairs_hosts_facts(struct ctx *x, struct web_hosts_facts *out,
    const struct store_pair *const *pairs, size_t n)
{
	size_t i, side, cap = 3 * n;

	memset(out, 0, sizeof(*out));
	out->v = xcalloc(cap + 1, sizeof(*out->v));
	for (i = 0; i < n; i++) {
		const struct store_pair *p = pairs[i];

		facts_add(x, out, cap, p->host, p->host_inventory);
		for (side = 0; side < 2 && side < p->jobs.n; side++)
			facts_add(x, out, cap,
			    p->jobs.v[side].host ? p->jobs.v[side].host
			                         : p->host,
			    p->inventory[side]);
	}
}

const struct web_host_facts *
web_hosts_facts_find(const struct web_hosts_facts *h, const char *name)
{
	size_t k;

	for (k = 0; name && k < h->n; k++)
		if (strcmp(h->v[k].name, name) == 0)
			return &h->v[k];
	return NULL;
}

void
web_hosts_facts_release(struct web_hosts_facts *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/*
 * The kernel a side ran: its runs' build; for runs that said nothing of
 * it (an older runner), the host's running one; before any run, NULL
 * (unknown: a kernel job boots another kernel than the host runs now).
 */
static const char *
side_kernel(struct ctx *x, const struct kfacts *k, int64_t runs,
    const struct web_host_facts *hf)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	const char *s;

	if (k->runs > 0)
		kfacts_line(&b, k);
	else if (runs > 0 && hf && hf->kernel) {
		/* Text, escaped where a page shows it. */
		buf_puts(&b, hf->kernel);
		buf_puts(&b, " (the host's running kernel)");
	} else
		return NULL;
	s = json_string_value(web_keep(x, json_string(b.data)));
	buf_release(&b);
	return s;
}

int
web_sides_get(struct ctx *x, const struct store_pair *const *pairs,
    const struct store_run_metas *metas, size_t n, struct view_side **out,
    size_t *nout)
{
	struct web_hosts_facts hosts;
	struct view_side *v = xcalloc(2 * n + 1, sizeof(*v));
	struct store_run_metas *read = NULL;
	size_t i, k = 0;
	int side;

	*out = v;
	*nout = 0;
	if (n == 0)
		return 0;
	web_pairs_hosts_facts(x, &hosts, pairs, n);
	if (metas == NULL) {
		/* Every pair's runs in one read; none known if it fails. */
		int64_t *ids = xcalloc(n, sizeof(*ids));

		for (i = 0; i < n; i++)
			ids[i] = pairs[i]->id;
		read = xcalloc(n, sizeof(*read));
		if (store_pairs_run_meta_list(x->s, read, ids, n) != 0) {
			store_errclear(x->s);
			free(read);
			read = NULL;
		}
		free(ids);
	}
	for (i = 0; i < n; i++) {
		const struct store_pair *p = pairs[i];
		const struct store_run_metas *meta = metas ? &metas[i]
		    : read                                 ? &read[i]
		                                           : NULL;
		struct kfacts kf[2];

		if (p->jobs.n != 2)
			continue;
		kfacts_sides(kf, meta);
		for (side = 0; side < 2; side++) {
			const struct store_job *j = &p->jobs.v[side];
			const char *host = j->host ? j->host : p->host;
			const struct web_host_facts *hf =
			    web_hosts_facts_find(&hosts, host);
			struct view_side *s = &v[k++];

			s->pair_id = p->id;
			s->job = p->name;
			s->point = p->point;
			s->role = side == 0 ? "base" : "candidate";
			s->commit.sha = j->commit;
			s->commit.subject = j->subject;
			s->tree = j->tree;
			s->host = host;
			s->cpu_model = hf ? hf->cpu_model : NULL;
			s->family = hf ? hf->family : NULL;
			s->kernel = side_kernel(x, &kf[side], j->runs_done, hf);
			s->runs = j->runs_done;
			s->rounds = p->rounds[side];
		}
	}
	web_hosts_facts_release(&hosts);
	for (i = 0; read && i < n; i++)
		store_run_metas_release(&read[i]);
	free(read);
	*nout = k;
	return 0;
}

/* key: s, or null when s is NULL or no UTF-8 (untrusted text). */
static void
set_str(json_t *o, const char *key, const char *s)
{
	json_t *v = s ? json_string(s) : NULL;

	json_object_set_new(o, key, v ? v : json_null());
}

json_t *
web_sides_json(const struct view_side *s, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "pair_id", json_integer(s[i].pair_id));
		set_str(o, "job", s[i].job);
		set_str(o, "point", s[i].point);
		set_str(o, "role", s[i].role);
		set_str(o, "commit", s[i].commit.sha);
		set_str(o, "subject", s[i].commit.subject);
		set_str(o, "tree", s[i].tree);
		set_str(o, "host", s[i].host);
		set_str(o, "cpu_model", s[i].cpu_model);
		set_str(o, "cpu_family", s[i].family);
		set_str(o, "kernel", s[i].kernel);
		json_object_set_new(o, "runs", json_integer(s[i].runs));
		json_object_set_new(o, "rounds", json_integer(s[i].rounds));
		json_array_append_new(arr, o);
	}
	return arr;
}
