/*
 * The hosts page, GET /hosts: each host's state, inventory, canary and
 * quarantine.  It reads the typed store (struct store_host), not JSON.
 */
#include <stdlib.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/canary.h"
#include "store/hosts.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* The host's canary and noise floor (daemon/canary.h). */
static void
host_canary(struct ctx *x, struct view_host *v)
{
	json_t *c =
	    v->name ? canary_host_json(x->s, x->conf, v->name, v->id) : NULL;
	json_t *arr, *z;
	struct view_noise *n;
	size_t i;

	if (c == NULL)
		return;
	web_keep(x, c);
	v->canary_job = web_jstr(c, "job");
	v->canary_every_s = web_jint(c, "every_s");
	v->canary_runs = web_jint(c, "runs_per_side");
	arr = json_object_get(c, "noise");
	n = xcalloc(json_array_size(arr) + 1, sizeof(*n)); /* p_hosts frees */
	json_array_foreach(arr, i, z)
	{
		n[i].metric = web_jstr(z, "metric");
		n[i].runs = web_jint(z, "runs");
		n[i].cv_pct = web_jnum(z, "cv_pct");
		n[i].mde_pct = web_jnum(z, "mde_pct");
		n[i].mde_max_runs_pct = web_jnum(z, "mde_max_runs_pct");
	}
	v->noise = n;
	v->nnoise = json_array_size(arr);
}

void
web_hosts(struct ctx *x)
{
	struct view_hosts v = { 0 };
	struct view_host *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct store_hosts l;
	char next[32];
	int64_t cursor;
	size_t i;
	int r;

	cursor = web_q_cursor(x);
	r = store_host_list(x->s, &l, PAGE_ROWS, cursor, x->now, x->online_s);
	if (r != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		const struct store_host *h = &l.v[i];
		json_t *inv =
		    web_keep(x, pwjson_doc(h->inventory_json, json_object()));
		json_t *labels = pwjson_doc(h->labels_json, json_array());
		struct view_host *v_ = &rows[i];

		v_->id = h->id;
		v_->name = h->name;
		if (json_array_size(labels)) {
			/* Labels as one comma-separated string. */
			struct buf lb = BUF_INIT(CAP_LINE);
			size_t k;
			json_t *lv, *s;

			json_array_foreach(labels, k, lv)
			{
				if (!json_is_string(lv))
					continue;
				if (lb.len)
					buf_puts(&lb, ", ");
				buf_puts(&lb, json_string_value(lv));
			}
			s = web_keep(x, json_stringn_nocheck(lb.data, lb.len));
			v_->labels = json_string_value(s);
			buf_release(&lb);
		}
		json_decref(labels);
		v_->cpu_model = web_jstr(inv, "cpu_model");
		v_->cpu_vendor = web_jstr(inv, "cpu_vendor");
		v_->sockets = (int)web_jint(inv, "sockets");
		v_->cores = (int)web_jint(inv, "cores");
		v_->threads = (int)web_jint(inv, "threads");
		v_->numa_nodes = (int)web_jint(inv, "numa_nodes");
		v_->memory_bytes =
		    json_is_number(json_object_get(inv, "memory_bytes"))
		    ? web_jint(inv, "memory_bytes")
		    : -1;
		v_->kernel = web_jstr(inv, "kernel");
		v_->cgroup = web_jstr(inv, "cgroup");
		v_->state = h->online ? "online" : "offline";
		v_->current_job = h->current_job;
		v_->last_seen = h->last_seen;
		v_->quarantined = h->quarantined;
		host_canary(x, v_);
	}
	v.now = x->now;
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	view_hosts_render(&b, &v);
	for (i = 0; i < v.nrows; i++)
		free((void *)rows[i].noise);
	free(rows);
	store_hosts_release(&l);
	reply_page(x, 200, &b);
}
