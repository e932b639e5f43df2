#ifndef WEB_SIDES_H
#define WEB_SIDES_H

/*
 * What the comparison pages (commit, series, pair) and the bisection
 * page say about where each side ran: the hosts' CPU model, family
 * (common/cpufamily.h) and running kernel from their inventories, and
 * each side of a set of pairs (struct view_side) with its JSON.  Not for
 * use outside web/.
 */
#include <stddef.h>

#include "common/json.h"
#include "web/views.h"

struct ctx;
struct store_pair;
struct store_run_metas;

/* A host as its runner registered it; NULL where it said nothing. */
struct web_host_facts {
	const char *name, *cpu_model, *family, *kernel;
};
struct web_hosts_facts {
	struct web_host_facts *v;
	size_t n;
};
/*
 * The hosts of pairs[0..n) (each pair's and each side's), each once,
 * from the inventories the pairs were read with (store_pair); the
 * strings are the pairs' or kept by x (web_keep).
 */
void web_pairs_hosts_facts(struct ctx *x, struct web_hosts_facts *out,
    const struct store_pair *const *pairs, size_t n);
/* name's facts, NULL when no host has that name. */
const struct web_host_facts *web_hosts_facts_find(
    const struct web_hosts_facts *h, const char *name);
void web_hosts_facts_release(struct web_hosts_facts *);

/*
 * Both sides of pairs[0..n), base then candidate, into *out (the
 * caller frees it; its strings are the pairs' or x's), with the
 * kernels their runs ran from metas[i] (pairs[i]'s runs), or, metas
 * NULL, from one read of every pair's runs: 0 (a failed read of the
 * runs leaves the kernels unknown).
 */
int web_sides_get(struct ctx *x, const struct store_pair *const *pairs,
    const struct store_run_metas *metas, size_t n, struct view_side **out,
    size_t *nout);
/* The sides as the JSON's "sides". */
json_t *web_sides_json(const struct view_side *s, size_t n);

#endif
