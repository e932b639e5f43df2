/*
 * The public reads of the API (docs/API.md): jobs, runs' raw output,
 * hosts, pairs, trees, commits, series, alerts, bisections, and the
 * service's /healthz and /metrics.  No token; lists take limit and
 * cursor.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/jobspec.h"
#include "daemon/kfacts.h"
#include "daemon/series_latency.h"
#include "store/alerts.h"
#include "store/batch.h"
#include "store/bisect.h"
#include "store/dash.h"
#include "store/series.h"
#include "store/store.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/rows.h"
#include "web/rows_dash.h"
#include "web/rows_series.h"

/* The latency histogram's bounds as /metrics prints them (web/api.c's
 * lat_le). */
static const char *const lat_le_s[API_NLAT] = { "0.001", "0.0025", "0.005",
	"0.01", "0.025", "0.1", "1", "10" };

/* ---- read routes ---- */

void
api_read_jobs(struct ctx *x)
{
	const char *state = httpd_query(x->r, "state");
	struct store_jobs l;
	int64_t limit, cursor;
	json_t *out;
	int i, r;

	if (state != NULL && *state == '\0')
		state = NULL;
	if (state != NULL) {
		for (i = 0; i < 5; i++)
			if (strcmp(state, store_job_states[i]) == 0)
				break;
		if (i == 5) {
			api_reply_err(x, 400,
			    "parameter 'state': expected queued, "
			    "running, success, failed or cancelled");
			return;
		}
	}
	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = store_jobs_get(x->s, &l, state, limit, cursor)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	out = rows_jobs_json(&l);
	store_jobs_release(&l);
	api_reply_json(x, 200, out);
}

/* "kernel": what the job's measured runs say of the kernel they ran on
 * (daemon/kfacts.h); each run's own facts are in its host_state. */
static void
job_kernel(json_t *job)
{
	json_t *states = json_array(), *run;
	json_int_t max = json_integer_value(json_object_get(job, "max_runs"));
	struct kfacts k;
	const char *st;
	size_t i;

	json_array_foreach(json_object_get(job, "runs"), i, run)
	{
		st = json_string_value(json_object_get(run, "status"));
		if (st == NULL || strcmp(st, "ok") != 0 ||
		    json_integer_value(json_object_get(run, "index")) >= max)
			continue;
		json_array_append(states,
		    json_object_get(run, "host_state")
		        ? json_object_get(run, "host_state")
		        : json_null());
	}
	kfacts_side(&k, states);
	json_object_set_new(job, "kernel", kfacts_json(&k));
	json_decref(states);
}

int
api_job_json(struct store *s, int64_t id, json_t **out)
{
	struct store_job_detail d;
	int r;

	*out = NULL;
	if ((r = store_job_get(s, &d, id)) != 0)
		return r;
	*out = rows_job_detail_json(&d);
	store_job_detail_release(&d);
	job_kernel(*out);
	return 0;
}

void
api_read_job(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = api_job_json(x->s, x->id[0], &out)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}

void
api_read_raw(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_RAW_OUTPUT + 1);
	size_t len;
	int r;

	if ((r = store_run_raw(x->s, &b, x->id[0], x->id[1])) != 0) {
		buf_release(&b);
		{
			api_reply_store_err(x, r);
			return;
		}
	}
	len = b.len;
	/* A benchmark's output: text, whatever bytes it holds. */
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_take(
	    x->r, 200, "text/plain; charset=utf-8", buf_take(&b), len);
}

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
	r = store_hosts_get(
	    x->s, &l, limit, cursor, api_now_s(), 3 * api_heartbeat_s(x->conf));
	if (r != 0) {
		api_reply_store_err(x, r);
		return;
	}
	out = rows_hosts_json(&l);
	canary_hosts(x, json_object_get(out, "hosts"), &l);
	store_hosts_release(&l);
	api_reply_json(x, 200, out);
}

int
api_pair_json(struct store *s, int64_t id, json_t **out)
{
	struct store_pair p;
	struct store_run_metas rows;
	struct kfacts_pair k;
	int r;

	*out = NULL;
	if ((r = store_pair_read(s, &p, id)) != 0)
		return r;
	/* Which kernel each side ran (docs/KERNEL.md). */
	if (store_pair_run_meta(s, &rows, id) != 0) {
		store_pair_release(&p);
		return -1;
	}
	kfacts_pair(&k, &rows, p.jobs.n == 2 ? p.jobs.v[0].commit : NULL,
	    p.jobs.n == 2 ? p.jobs.v[1].commit : NULL);
	store_run_metas_release(&rows);
	*out = rows_pair_json(&p);
	store_pair_release(&p);
	rows_pair_kernels_json(*out, &k);
	return 0;
}

void
api_read_pair(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = api_pair_json(x->s, x->id[0], &out)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}

/*
 * Trees: what the store knows, joined with the configuration (trees
 * configured but never polled yet are listed too).  status: "pending"
 * (not fetched yet), "ok", "warning" (fetched, but a branch or trigger has
 * a problem: last_error says which), "error" (the last fetch failed),
 * "unwatched" (no longer in the configuration).
 */
static int
tree_cmp(const void *a, const void *b)
{
	return strcmp(
	    json_string_value(json_object_get(*(json_t *const *)a, "name")),
	    json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

/*
 * One page of trees, by name: the names after cursor (a name; NULL from
 * the first), at most limit, and next_cursor when more follow.
 */
static json_t *
trees_page(json_t *arr, const char *cursor, int64_t limit)
{
	size_t n = json_array_size(arr), i, k = 0;
	json_t **v = xcalloc(n + 1, sizeof(*v)), *page = json_array(), *o;

	for (i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, n, sizeof(*v), tree_cmp);
	for (i = 0; i < n && (int64_t)k < limit; i++) {
		if (cursor != NULL &&
		    strcmp(json_string_value(json_object_get(v[i], "name")),
		        cursor) <= 0)
			continue;
		json_array_append(page, v[i]);
		k++;
	}
	o = json_pack("{s:o}", "trees", page);
	if (i < n && k > 0)
		json_object_set(
		    o, "next_cursor", json_object_get(v[i - 1], "name"));
	free(v);
	return o;
}

int
api_trees_json(struct store *s, const struct daemon_config *dc,
    const char *cursor, int64_t limit, json_t **out)
{
	struct store_trees l;
	json_t *all, *arr, *t = NULL;
	size_t i, k;
	int r;

	*out = NULL;
	if ((r = store_trees_get(s, &l)) != 0)
		return r;
	all = rows_trees_json(&l);
	store_trees_release(&l);
	arr = json_object_get(all, "trees");
	for (i = 0; i < dc->ntrees; i++) {
		json_array_foreach(arr, k, t)
		{
			if (strcmp(
			        json_string_value(json_object_get(t, "name")),
			        dc->trees[i].name) == 0)
				break;
		}
		if (k == json_array_size(arr)) {
			char *url = redact_userinfo(dc->trees[i].url);

			t = json_pack("{s:s, s:s, s:n, s:n, s:n, s:i, s:n, "
			              "s:i, s:[]}",
			    "name", dc->trees[i].name, "url", url, "last_fetch",
			    "last_ok", "last_error", "failures", 0,
			    "next_fetch", "commits", 0, "branches");
			free(url);
			json_array_append_new(arr, t);
		}
		json_object_set_new(t, "watched", json_true());
		json_object_set_new(
		    t, "poll_s", json_integer(dc->trees[i].poll_s));
		json_object_set_new(t, "watched_branches",
		    jobspec_strlist(&dc->trees[i].branches));
		json_object_set_new(
		    t, "paths", jobspec_strlist(&dc->trees[i].paths));
	}
	json_array_foreach(arr, k, t)
	{
		json_t *lf = json_object_get(t, "last_fetch");
		json_t *lo = json_object_get(t, "last_ok");
		const char *st;

		if (json_object_get(t, "watched") == NULL)
			json_object_set_new(t, "watched", json_false());
		if (!json_is_true(json_object_get(t, "watched")))
			st = "unwatched";
		else if (json_is_null(lf) || lf == NULL)
			st = "pending";
		else if (!json_is_integer(lo) ||
		    json_integer_value(lo) != json_integer_value(lf))
			st = "error";
		else if (!json_is_null(json_object_get(t, "last_error")))
			st = "warning";
		else
			st = "ok";
		json_object_set_new(t, "status", json_string(st));
	}
	*out = trees_page(arr, cursor, limit);
	json_decref(all);
	return 0;
}

void
api_read_trees(struct ctx *x)
{
	const char *cursor = httpd_query(x->r, "cursor");
	json_t *out = NULL;
	int64_t limit;
	int r;

	if (api_query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1)
		return;
	if (cursor != NULL && *cursor == '\0')
		cursor = NULL;
	if ((r = api_trees_json(x->s, x->conf->dc, cursor, limit, &out)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}

int
api_commits_json(struct store *s, const char *tree, const char *branch,
    int64_t limit, int64_t cursor, json_t **out)
{
	struct store_commits l;
	int r;

	*out = NULL;
	if ((r = store_commits_get(s, &l, tree, branch, limit, cursor)) != 0)
		return r;
	*out = rows_commits_json(&l);
	store_commits_release(&l);
	return 0;
}

void
api_read_commits(struct ctx *x)
{
	const char *tree = httpd_query(x->r, "tree");
	const char *branch = httpd_query(x->r, "branch");
	int64_t limit, cursor;
	json_t *out = NULL;
	int r;

	if (tree != NULL && *tree == '\0')
		tree = NULL;
	if (branch != NULL && *branch == '\0')
		branch = NULL;
	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	r = api_commits_json(x->s, tree, branch, limit, cursor, &out);
	if (r != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}

void
api_read_series(struct ctx *x)
{
	struct store_series_list l;
	int64_t limit, cursor;
	json_t *out;
	int r;

	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = store_series_list(x->s, &l, limit, cursor)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	out = rows_series_list_json(&l);
	store_series_list_release(&l);
	api_reply_json(x, 200, out);
}

/*
 * GET /api/v1/latency[?days=N]: time to report over the series seen in
 * the last N days (default 30, the newest 1000): per stage, the median
 * and 90th percentile (daemon/series_latency.h).
 */
void
api_read_latency(struct ctx *x)
{
	struct store_series_latency *l;
	struct series_stage_sum sum[SERIES_STAGES];
	int64_t days, since;
	size_t n;
	int r;

	if (api_query_int(x, &days, "days", 30, 1, 3650) == -1)
		return;
	since = api_now_s() - days * 86400;
	if ((r = store_series_latencies(x->s, &l, &n, since, 1000)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	series_latency_summary(sum, l, n);
	free(l);
	api_reply_json(x, 200, rows_latency_summary_json(sum, n, since));
}

void
api_read_healthz(struct ctx *x)
{
	httpd_reply(x->r, 200, "text/plain", "ok\n", 3);
}

/*
 * One sample of a labelled metric, name{label="value"} n: the value is
 * put, not formatted, as web/ keeps %s out of buf_printf (the HTML lint;
 * the values here are the store's state names and fixed strings).
 */
static void
sample(struct buf *b, const char *name, const char *label, const char *value,
    uint64_t n)
{
	buf_puts(b, name);
	buf_putc(b, '{');
	buf_puts(b, label);
	buf_puts(b, "=\"");
	buf_puts(b, value);
	buf_printf(b, "\"} %" PRIu64 "\n", n);
}

/* Dashboard gauges: regressions by triage state, alerts, fetch errors. */
static void
web_metrics_add(struct ctx *x, struct buf *b)
{
	struct store_regression_counts counts;
	int64_t alerts = 0, fetch = 0, apend = 0, afail = 0;
	int i;

	if (store_regression_counts_get(x->s, &counts) == 0) {
		buf_puts(b,
		    "# HELP perfwatch_regressions Regressions by "
		    "triage state.\n"
		    "# TYPE perfwatch_regressions gauge\n");
		for (i = 0; i < STORE_REGRESSION_STATES; i++)
			sample(b, "perfwatch_regressions", "state",
			    store_regression_states[i], (uint64_t)counts.n[i]);
	}
	if (store_web_ops(x->s, &alerts, &fetch) == 0)
		buf_printf(b,
		    "# HELP perfwatch_alerts_pending Alerts not sent yet.\n"
		    "# TYPE perfwatch_alerts_pending gauge\n"
		    "perfwatch_alerts_pending %lld\n"
		    "# HELP perfwatch_fetch_errors Trees whose last fetch "
		    "failed.\n"
		    "# TYPE perfwatch_fetch_errors gauge\n"
		    "perfwatch_fetch_errors %lld\n",
		    (long long)alerts, (long long)fetch);
	if (store_alert_counts(x->s, &apend, &afail) == 0)
		buf_printf(b,
		    "# HELP perfwatch_alerts_failed_total Deliveries given "
		    "up on.\n"
		    "# TYPE perfwatch_alerts_failed_total counter\n"
		    "perfwatch_alerts_failed_total %lld\n",
		    (long long)afail);
}

/* The store's write lock by writer class, and the upload batches. */
/* A metric's "# HELP" and "# TYPE" lines; fixed strings only, as in
 * sample(). */
static void
help_type(struct buf *b, const char *name, const char *help, const char *type)
{
	buf_puts(b, "# HELP ");
	buf_puts(b, name);
	buf_putc(b, ' ');
	buf_puts(b, help);
	buf_puts(b, "\n# TYPE ");
	buf_puts(b, name);
	buf_putc(b, ' ');
	buf_puts(b, type);
	buf_putc(b, '\n');
}

static void
write_metrics(struct api *a, struct buf *b)
{
	struct store_write_stat w[STORE_WRITERS];
	struct store_batch_stats bs;
	static const char *const what[4][2] = {
		{ "perfwatch_store_write_wait_seconds_total",
		    "Time writers waited for the write lock." },
		{ "perfwatch_store_write_hold_seconds_total",
		    "Time writers held the write lock." },
		{ "perfwatch_store_write_wait_max_seconds",
		    "The longest wait for the write lock." },
		{ "perfwatch_store_write_hold_max_seconds",
		    "The longest hold of the write lock." },
	};
	int i, k;

	store_write_stats(w);
	buf_puts(b,
	    "# HELP perfwatch_store_writes_total Write transactions, by "
	    "writer.\n"
	    "# TYPE perfwatch_store_writes_total counter\n");
	for (i = 0; i < STORE_WRITERS; i++)
		sample(b, "perfwatch_store_writes_total", "writer",
		    store_writer_names[i], w[i].n);
	/* Fixed strings only (the names above), as in sample(). */
	for (k = 0; k < 4; k++) {
		help_type(
		    b, what[k][0], what[k][1], k < 2 ? "counter" : "gauge");
		for (i = 0; i < STORE_WRITERS; i++) {
			buf_puts(b, what[k][0]);
			buf_puts(b, "{writer=\"");
			buf_puts(b, store_writer_names[i]);
			buf_printf(b, "\"} %.6f\n",
			    k == 0       ? w[i].wait_s
			        : k == 1 ? w[i].hold_s
			        : k == 2 ? w[i].wait_max_s
			                 : w[i].hold_max_s);
		}
	}
	store_batch_stats(a->batch, &bs);
	buf_printf(b,
	    "# HELP perfwatch_upload_batches_total Upload batches "
	    "(one transaction each).\n"
	    "# TYPE perfwatch_upload_batches_total counter\n"
	    "perfwatch_upload_batches_total %" PRIu64 "\n"
	    "# HELP perfwatch_upload_batch_uploads_total Uploads those "
	    "batches held.\n"
	    "# TYPE perfwatch_upload_batch_uploads_total counter\n"
	    "perfwatch_upload_batch_uploads_total %" PRIu64 "\n"
	    "# HELP perfwatch_upload_batch_max The largest batch.\n"
	    "# TYPE perfwatch_upload_batch_max gauge\n"
	    "perfwatch_upload_batch_max %" PRIu64 "\n"
	    "# HELP perfwatch_upload_batches_failed_total Batches whose "
	    "transaction failed (every upload of it got a 5xx).\n"
	    "# TYPE perfwatch_upload_batches_failed_total counter\n"
	    "perfwatch_upload_batches_failed_total %" PRIu64 "\n"
	    "# HELP perfwatch_upload_queue Uploads waiting for the batch "
	    "writer.\n"
	    "# TYPE perfwatch_upload_queue gauge\n"
	    "perfwatch_upload_queue %" PRIu64 "\n"
	    "# HELP perfwatch_upload_pending Uploads received and not "
	    "answered yet: queued or in the batch being written.\n"
	    "# TYPE perfwatch_upload_pending gauge\n"
	    "perfwatch_upload_pending %" PRIu64 "\n",
	    bs.batches, bs.uploads, bs.max_size, bs.failed, bs.queued,
	    bs.queued + bs.taken - bs.uploads);
	buf_printf(b,
	    "# HELP perfwatch_web_cache_hits_total Public GET requests "
	    "answered from the reply cache.\n"
	    "# TYPE perfwatch_web_cache_hits_total counter\n"
	    "perfwatch_web_cache_hits_total %" PRIu64 "\n"
	    "# HELP perfwatch_web_cache_misses_total Public GET requests "
	    "rendered afresh (nothing kept, or the store had changed).\n"
	    "# TYPE perfwatch_web_cache_misses_total counter\n"
	    "perfwatch_web_cache_misses_total %" PRIu64 "\n",
	    __atomic_load_n(&a->cache_hits, __ATOMIC_RELAXED),
	    __atomic_load_n(&a->cache_misses, __ATOMIC_RELAXED));
}

/*
 * Each route's requests and the time handle() spent on them, by how they
 * were answered (enum api_answer), routes never asked left out: the
 * server's own cost of a page, which wrk's latency under a shared
 * machine's load blurs (tests/bench/web_bench.sh reads these).
 */
static void
write_route_times(struct api *a, struct buf *b)
{
	static const char *const what[3][2] = {
		{ "perfwatch_http_route_requests_total",
		    "Requests each route answered, by how." },
		{ "perfwatch_http_route_seconds_total",
		    "Wall time each route's requests took in the server "
		    "thread." },
		{ "perfwatch_http_route_cpu_seconds_total",
		    "CPU time of the server thread each route's requests "
		    "took." },
	};
	static const char *const how[API_NANSWERS] = { "rendered", "miss",
		"hit", "shared" };
	const char *method, *pattern, *auth, *table;
	size_t i;
	int k, h;

	for (k = 0; k < 3; k++) {
		help_type(b, what[k][0], what[k][1], "counter");
		for (i = 0;
		     api_route_at(i, &method, &pattern, &auth, &table) == 0;
		     i++)
			for (h = 0; h < API_NANSWERS; h++) {
				const struct api_route_time *t =
				    &a->route_time[i][h];
				uint64_t n =
				    __atomic_load_n(&t->n, __ATOMIC_RELAXED);

				if (n == 0)
					continue;
				buf_puts(b, what[k][0]);
				buf_puts(b, "{method=\"");
				buf_puts(b, method);
				buf_puts(b, "\",route=\"");
				buf_puts(b, pattern);
				buf_puts(b, "\",answer=\"");
				buf_puts(b, how[h]);
				buf_puts(b, "\"} ");
				if (k == 0)
					buf_printf(b, "%" PRIu64 "\n", n);
				else
					buf_printf(b, "%.6f\n",
					    (double)__atomic_load_n(k == 1
					            ? &t->wall_us
					            : &t->cpu_us,
					        __ATOMIC_RELAXED) /
					        1e6);
			}
	}
}

void
api_read_metrics(struct ctx *x)
{
	static const char *const cls[6] = { "1xx", "1xx", "2xx", "3xx", "4xx",
		"5xx" };
	struct store_stats st;
	struct buf b = BUF_INIT(64 * 1024);
	size_t len, nw;
	int i;

	if (store_stats(x->s, &st, api_now_s(), 3 * api_heartbeat_s(x->conf)) !=
	    0) {
		api_reply_store_err(x, -1);
		return;
	}
	pthread_mutex_lock(&x->a->mu);
	nw = x->a->nwaiters;
	pthread_mutex_unlock(&x->a->mu);
	buf_puts(&b,
	    "# HELP perfwatch_jobs Jobs by state.\n"
	    "# TYPE perfwatch_jobs gauge\n");
	for (i = 0; i < 5; i++)
		sample(&b, "perfwatch_jobs", "state", store_job_states[i],
		    (uint64_t)st.jobs[i]);
	buf_printf(&b,
	    "# HELP perfwatch_queue_length Jobs waiting for a runner.\n"
	    "# TYPE perfwatch_queue_length gauge\n"
	    "perfwatch_queue_length %" PRId64 "\n"
	    "# HELP perfwatch_runners_online Runners seen within three "
	    "heartbeats.\n"
	    "# TYPE perfwatch_runners_online gauge\n"
	    "perfwatch_runners_online %" PRId64 "\n"
	    "# HELP perfwatch_runners Registered runners.\n"
	    "# TYPE perfwatch_runners gauge\n"
	    "perfwatch_runners %" PRId64 "\n"
	    "# HELP perfwatch_runs Stored runs.\n"
	    "# TYPE perfwatch_runs gauge\n"
	    "perfwatch_runs %" PRId64 "\n"
	    "# HELP perfwatch_claims_waiting Long-polling claims.\n"
	    "# TYPE perfwatch_claims_waiting gauge\n"
	    "perfwatch_claims_waiting %zu\n"
	    "# HELP perfwatch_http_requests_total HTTP requests answered, "
	    "by status class.\n"
	    "# TYPE perfwatch_http_requests_total counter\n",
	    st.jobs[0], st.hosts_online, st.hosts, st.runs, nw);
	for (i = 1; i < 6; i++)
		sample(&b, "perfwatch_http_requests_total", "code", cls[i],
		    __atomic_load_n(&x->a->http_count[i], __ATOMIC_RELAXED));
	buf_puts(&b,
	    "# HELP perfwatch_http_request_duration_seconds Time from a "
	    "request's headers to its reply.\n"
	    "# TYPE perfwatch_http_request_duration_seconds histogram\n");
	{
		uint64_t cum = 0;
		size_t k;

		for (k = 0; k <= API_NLAT; k++) {
			cum += __atomic_load_n(
			    &x->a->http_lat[k], __ATOMIC_RELAXED);
			sample(&b,
			    "perfwatch_http_request_duration_seconds_bucket",
			    "le", k < API_NLAT ? lat_le_s[k] : "+Inf", cum);
		}
		buf_printf(&b,
		    "perfwatch_http_request_duration_seconds_sum %.6f\n"
		    "perfwatch_http_request_duration_seconds_count %" PRIu64
		    "\n",
		    (double)__atomic_load_n(
		        &x->a->http_lat_sum_us, __ATOMIC_RELAXED) /
		        1e6,
		    cum);
	}
	write_metrics(x->a, &b);
	write_route_times(x->a, &b);
	web_metrics_add(x, &b);
	len = b.len;
	httpd_reply_take(
	    x->r, 200, "text/plain; version=0.0.4", buf_take(&b), len);
}

/* GET /api/v1/alerts?state=&kind=&commit=&limit=&cursor= (docs/API.md). */
void
api_read_alerts(struct ctx *x)
{
	struct store_alert_filter f = { 0 };
	struct store_alert_more more;
	struct store_alert *a = NULL;
	json_t *out;
	size_t n;
	int r;

	f.state = httpd_query(x->r, "state");
	f.kind = httpd_query(x->r, "kind");
	f.sha = httpd_query(x->r, "commit");
	if (f.state && strcmp(f.state, "pending") && strcmp(f.state, "sent") &&
	    strcmp(f.state, "failed")) {
		api_reply_err(x, 400,
		    "parameter 'state': expected pending, sent or failed");
		return;
	}
	if (f.kind && strcmp(f.kind, "email") && strcmp(f.kind, "webhook")) {
		api_reply_err(
		    x, 400, "parameter 'kind': expected email or webhook");
		return;
	}
	if (api_query_page(x, &f.limit, &f.cursor) == -1)
		return;
	if ((r = store_alert_list(x->s, &a, &n, &f, &more)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	out = rows_alerts_json(a, n, &more);
	store_alerts_free(a, n);
	api_reply_json(x, 200, out);
}

void
api_read_alert(struct ctx *x)
{
	struct store_alert *a = NULL;
	json_t *out;
	int r;

	if ((r = store_alert_get(x->s, &a, x->id[0])) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	out = rows_alert_json(a, 1);
	store_alerts_free(a, 1);
	api_reply_json(x, 200, out);
}

int
api_bisect_json(struct store *s, int64_t id, json_t **out)
{
	struct store_bisect *b = NULL;
	struct store_bisect_step *st = NULL;
	size_t n = 0;
	json_t *o;
	int r;

	*out = NULL;
	if ((r = store_bisect_get(s, &b, id)) != 0)
		return r;
	if ((r = store_bisect_steps(s, &st, &n, id)) != 0) {
		store_bisect_free(b);
		return r;
	}
	if ((o = rows_bisect_json(b)) != NULL)
		json_object_set_new(o, "steps", rows_bisect_steps_json(st, n));
	store_bisect_steps_free(st, n);
	store_bisect_free(b);
	if (o == NULL)
		return -1;
	*out = json_pack("{s:o}", "bisection", o);
	return 0;
}

int
api_bisects_json(struct store *s, int64_t limit, int64_t cursor, json_t **out)
{
	struct store_bisects l;
	int r;

	*out = NULL;
	if ((r = store_bisects_get(s, &l, limit, cursor)) != 0)
		return r;
	*out = rows_bisects_json(&l);
	store_bisects_release(&l);
	return 0;
}

void
api_read_bisect(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = api_bisect_json(x->s, x->id[0], &out)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}

void
api_read_bisects(struct ctx *x)
{
	json_t *out = NULL;
	int64_t limit, cursor;
	int r;

	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = api_bisects_json(x->s, limit, cursor, &out)) != 0) {
		api_reply_store_err(x, r);
		return;
	}
	api_reply_json(x, 200, out);
}
