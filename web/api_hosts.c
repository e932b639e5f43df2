/*
 * The public read of the hosts (docs/API.md): each registered host with
 * its inventory, state and its canary's noise floor.
 */

#include "common/json.h"
#include "daemon/canary.h"
#include "store/hosts.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/rows.h"

/* Each host row gains "canary" (daemon/canary.h), or null. */
static void
canary_hosts(struct ctx *x, json_t *hosts, const struct store_hosts *l)
{
	size_t i;
	json_t *c;

	for (i = 0; i < l->n; i++) {
		const struct store_host *h = &l->v[i];

		c = h->name ? canary_host_json(x->s, x->conf, h->name, h->id)
		            : NULL;
		json_object_set_new(
		    json_array_get(hosts, i), "canary", c ? c : json_null());
	}
}

void
api_read_hosts(struct ctx *x)
{
	struct store_hosts l;
	int64_t limit, cursor;
	json_t *out;
	int r;

	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	r = store_host_list(
	    x->s, &l, limit, cursor, api_now_s(), 3 * api_heartbeat_s(x->conf));
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	out = rows_hosts_json(&l);
	canary_hosts(x, json_object_get(out, "hosts"), &l);
	store_hosts_release(&l);
	reply_json(x, 200, out);
}
