/*
 * The hosts (GET /hosts: state, canary, quarantine) and the jobs (GET
 * /jobs, a job's log at /jobs/{id}/log).  They read the typed store
 * (struct store_host, struct store_job, struct store_job_detail), not
 * JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/canary.h"
#include "daemon/store.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- hosts and jobs ------------------------------------------------- */

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
	r = store_hosts_get(x->s, &l, PAGE_ROWS, cursor, x->now, x->online_s);
	if (r != 0) {
		web_page_store_err(x, r);
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
	web_reply_page(x, 200, &b);
}

static const char *
job_state_filter(struct ctx *x)
{
	const char *s = web_q(x, "state");
	int i;

	for (i = 0; s && i < 5; i++)
		if (strcmp(s, store_job_states[i]) == 0)
			return store_job_states[i];
	return NULL;
}

void
web_jobs(struct ctx *x)
{
	struct view_jobs v = { 0 };
	struct view_job *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct store_stats st;
	struct store_jobs l;
	char next[32];
	int64_t cursor;
	size_t i;
	int r;

	cursor = web_q_cursor(x);
	v.state = job_state_filter(x);
	r = store_jobs_get(x->s, &l, v.state, PAGE_ROWS, cursor);
	if (r != 0) {
		web_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		const struct store_job *j = &l.v[i];
		struct view_job *g = &rows[i];

		g->id = j->id;
		g->pair_id = j->pair_id;
		g->role = j->role;
		g->name = j->name;
		g->point = j->point;
		g->state = j->state;
		g->host = j->host;
		g->attempts = (int)j->attempts;
		g->runs = (int)j->runs;
		g->runs_done = (int)j->runs_done;
		g->progress = j->progress;
		g->error = j->error;
		g->created = j->created;
		g->updated = j->updated;
		g->commit = j->commit;
		g->tree = j->tree;
		g->subject = j->subject;
	}
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	if (store_stats(x->s, &st, x->now, x->online_s) == 0) {
		if (v.state == NULL)
			for (i = 0; i < 5; i++)
				v.pager.total += st.jobs[i];
		else
			for (i = 0; i < 5; i++)
				if (strcmp(v.state, store_job_states[i]) == 0)
					v.pager.total = st.jobs[i];
	}
	view_jobs_render(&b, &v);
	free(rows);
	store_jobs_release(&l);
	web_reply_page(x, 200, &b);
}

int
web_job_log_text(struct store *s, int64_t id, struct buf *out)
{
	struct store_job_detail d;
	json_t *v;
	int r;

	if ((r = store_job_get(s, &d, id)) != 0)
		return r;
	/* The log as the job's JSON gives it: "" when it is not UTF-8
	 * (jansson's own check, the one GET /api/v1/jobs/{id} makes). */
	v = json_stringn(d.log, d.log_len);
	r = v ? buf_add(out, d.log, d.log_len) : 0;
	json_decref(v);
	store_job_detail_release(&d);
	return r;
}

/* GET /jobs/ID/log: the log tail as text. */
void
web_job_log(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_JOB_LOG + 1);
	const char *end;
	int64_t id = web_parse_id(x->rest, &end);
	size_t len;
	int r;

	if (id == 0 || strcmp(end, "/log") != 0) {
		web_reply_message(x, 404, "Not found", "no such page");
		return;
	}
	if ((r = web_job_log_text(x->s, id, &b)) != 0) {
		buf_release(&b);
		web_page_store_err(x, r);
		return;
	}
	len = b.len;
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_take(
	    x->r, 200, "text/plain; charset=utf-8", buf_take(&b), len);
}
