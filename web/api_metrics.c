/*
 * The service's own state (docs/API.md): /healthz and the Prometheus
 * text of /metrics (counts, route times, caches, the dashboard's).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/buf.h"
#include "daemon/leases.h"
#include "daemon/series_latency.h"
#include "store/alerts.h"
#include "store/batch.h"
#include "store/dash.h"
#include "store/jobs.h"
#include "store/series.h"
#include "store/store.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"

/* The latency histogram's bounds as /metrics prints them (web/api.c's
 * lat_le). */
static const char *const lat_le_s[API_NLAT] = { "0.001", "0.0025", "0.005",
	"0.01", "0.025", "0.1", "1", "10" };

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

/*
 * Time to report of the series seen in the last 30 days (the newest
 * 1000), stage by stage (daemon/series_latency.h): pickup is the
 * pickup latency, queue the wait for a runner, total the time to
 * report.
 */
static void
series_metrics(struct ctx *x, struct buf *b)
{
	struct series_stage_hist h[SERIES_STAGES];
	struct store_series_latency *l = NULL;
	size_t n = 0, k, j;

	if (store_series_latency_list(
	        x->s, &l, &n, api_now_s() - 30 * 86400, 1000) != 0) {
		store_errclear(x->s);
		return;
	}
	series_latency_hist(h, l, n);
	free(l);
	buf_puts(b,
	    "# HELP perfwatch_series_stage_seconds A series' time from "
	    "posted to report mailed, by stage, over the series seen in the "
	    "last 30 days.\n"
	    "# TYPE perfwatch_series_stage_seconds histogram\n");
	for (k = 0; k < SERIES_STAGES; k++) {
		for (j = 0; j < SERIES_NLE; j++) {
			buf_puts(b,
			    "perfwatch_series_stage_seconds_bucket{stage=\"");
			buf_puts(b, series_stages[k].name);
			buf_printf(b, "\",le=\"%lld\"} %" PRIu64 "\n",
			    (long long)series_le_s[j], h[k].le[j]);
		}
		buf_puts(b, "perfwatch_series_stage_seconds_bucket{stage=\"");
		buf_puts(b, series_stages[k].name);
		buf_printf(b, "\",le=\"+Inf\"} %" PRIu64 "\n", h[k].count);
		sample(b, "perfwatch_series_stage_seconds_sum", "stage",
		    series_stages[k].name, (uint64_t)h[k].sum);
		sample(b, "perfwatch_series_stage_seconds_count", "stage",
		    series_stages[k].name, h[k].count);
	}
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
	if (store_ops_gauges_get(x->s, &alerts, &fetch) == 0)
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
	series_metrics(x, b);
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

/* The workers this daemon runs now: the leases it holds (several
 * daemons on one database, daemon/leases.h). */
static void
lease_metrics(struct api *a, struct buf *b)
{
	int w;

	if (a->leases == NULL)
		return;
	buf_puts(b,
	    "# HELP perfwatch_worker_held Background workers this daemon "
	    "runs now (holds the lease of).\n"
	    "# TYPE perfwatch_worker_held gauge\n");
	for (w = 0; w < LEASE_NWORKERS; w++)
		sample(b, "perfwatch_worker_held", "worker",
		    lease_worker_names[w],
		    (uint64_t)leases_held(a->leases, (enum lease_worker)w));
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
		reply_store_err(x, -1);
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
	api_builds_metrics(x, &b);
	lease_metrics(x->a, &b);
	write_metrics(x->a, &b);
	write_route_times(x->a, &b);
	web_metrics_add(x, &b);
	len = b.len;
	httpd_reply_take(
	    x->r, 200, "text/plain; version=0.0.4", buf_take(&b), len);
}
