/*
 * The JSON API (docs/API.md).  Routes are a table, as cgit's commands;
 * each handler validates its input completely before it touches the
 * store, and every refusal is {"error": "..."} naming the field.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/alert_api.h"
#include "daemon/api.h"
#include "daemon/bisect.h"
#include "daemon/bisect_api.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/httpd.h"
#include "daemon/jobspec.h"
#include "daemon/kfacts.h"
#include "daemon/packs.h"
#include "daemon/sched.h"
#include "daemon/series.h"
#include "daemon/store.h"
#include "daemon/store_canary.h"
#include "daemon/store_fleet.h"
#include "daemon/verdict.h"
#include "web/reply.h"
#include "web/web.h"

#define LIST_DEFAULT 50
#define LIST_MAX 500
#define PROGRESS_MAX 256
#define SHA_BUF 41 /* 40 hex digits and the NUL */

struct waiter {
	struct httpd_req *req;
	int64_t deadline_ms; /* monotonic */
};

/* Upper bounds (seconds) of the latency histogram's buckets. */
static const double lat_le[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1,
	10 };
static const char *const lat_le_s[] = { "0.001", "0.0025", "0.005", "0.01",
	"0.025", "0.1", "1", "10" };
#define NLAT (sizeof(lat_le) / sizeof(lat_le[0]))

struct api {
	pthread_mutex_t mu; /* conf, stores, waiters */
	struct dconf *conf;
	char *dbpath;
	struct httpd *httpd;
	struct sched *sched;
	struct verdict_worker *verdict; /* verdicts of finished pairs */
	int stopping;
	struct store **stores; /* one per server thread, closed at stop */
	size_t nstores;
	struct waiter *waiters;
	size_t nwaiters;
	uint64_t http_count[6]; /* by status class; __atomic */
	/* Request latency histogram (le buckets below, then +Inf), and
	 * the sum in microseconds; all __atomic.  Parked long-poll claims
	 * are counted too: their latency is the wait. */
	uint64_t http_lat[9];
	uint64_t http_lat_sum_us;
	uint64_t runs_stored; /* __atomic */
	struct web *web;      /* dashboard state: sessions, cache */
};

/* What a handler sees. */
struct ctx {
	struct api *a;
	struct httpd_req *r;
	struct dconf *conf;
	struct store *s;
	const struct dconf_runner *runner; /* runner routes */
	int64_t id[2];                     /* numbers from the path */
	const char *seg;                   /* a '*' segment of the path */
	json_t *body;
	struct err err;
};

enum auth { AUTH_NONE, AUTH_RUNNER, AUTH_ADMIN };

struct route {
	const char *method;
	const char *pattern; /* '#' segment: a non-negative integer;
	                        '*': any other segment (ctx.seg) */
	enum auth auth;
	void (*fn)(struct ctx *);
};

static _Thread_local struct store *tl_store;
static _Thread_local struct api *tl_api;

static int64_t
now_s(void)
{
	return (int64_t)time(NULL);
}

/* ---- replies ---- */

static void
reply_json(struct ctx *x, int status, json_t *o)
{
	reply_json_take(x->r, status, o, NULL, NULL);
}

static void reply_err(struct ctx *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
reply_err(struct ctx *x, int status, const char *fmt, ...)
{
	char msg[CAP_ERRMSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (status >= 500)
		log_warnx("%s %s: %d %s", httpd_method(x->r), httpd_path(x->r),
		    status, msg);
	reply_json(
	    x, status, json_pack("{s:o}", "error", pwjson_string_lossy(msg)));
}

/* A store result to HTTP: the expected ERR_* codes become 4xx. */
static void
reply_store_err(struct ctx *x, int r)
{
	const char *m = store_errmsg(x->s);

	reply_err(x, reply_status_of(r), "%s", m[0] ? m : "store error");
}

/* ---- input ---- */

/* Parses the body as a JSON object; an empty body is {} when allowed.
 * 0, or -1 after replying 400. */
static int
parse_body(struct ctx *x, int allow_empty)
{
	size_t len;
	const char *p = httpd_body(x->r, &len);

	if (len == 0 && allow_empty) {
		x->body = json_object();
		return 0;
	}
	if ((x->body = pwjson_parse(p, len, &x->err)) == NULL) {
		reply_err(x, 400, "body: %s", err_msg(&x->err));
		return -1;
	}
	if (!json_is_object(x->body)) {
		reply_err(x, 400, "body: expected a JSON object");
		return -1;
	}
	return 0;
}

static int
bad(struct ctx *x)
{
	reply_err(x, 400, "%s", err_msg(&x->err));
	return -1;
}

static int
only_keys(struct ctx *x, json_t *o, const char *const *keys, const char *what)
{
	if (pwjson_only_keys(o, keys, what, &x->err) == -1)
		return bad(x);
	return 0;
}

/* A query parameter as an integer in [min, max]; dflt when absent. */
static int
query_int(struct ctx *x, int64_t *out, const char *key, int64_t dflt,
    int64_t min, int64_t max)
{
	const char *v = httpd_query(x->r, key);
	char *end;
	long long n;

	*out = dflt;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max) {
		reply_err(x, 400,
		    "parameter '%s': expected an integer in [%lld, %lld]", key,
		    (long long)min, (long long)max);
		return -1;
	}
	*out = n;
	return 0;
}

/* A field that must be a string of at most max bytes (optional when
 * opt). */
static int
str_field(struct ctx *x, const char **out, json_t *o, const char *key,
    size_t max, int opt, const char *prefix)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL || json_is_null(v)) {
		if (opt)
			return 0;
		reply_err(x, 400, "field '%s%s': missing", prefix, key);
		return -1;
	}
	if (!json_is_string(v)) {
		reply_err(
		    x, 400, "field '%s%s': expected a string", prefix, key);
		return -1;
	}
	if (json_string_length(v) > max) {
		reply_err(x, 400, "field '%s%s': longer than %zu bytes", prefix,
		    key, max);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* ---- per-thread store ---- */

static struct store *
thread_store(struct api *a, struct err *e)
{
	struct store *s;

	if (tl_store != NULL && tl_api == a) {
		store_errclear(tl_store);
		return tl_store;
	}
	if (store_open(&s, a->dbpath, e) == -1)
		return NULL;
	/* The scheduler's ticker checkpoints; commits here stay short. */
	store_set_autocheckpoint(s, 0);
	pthread_mutex_lock(&a->mu);
	a->stores =
	    xreallocarray(a->stores, a->nstores + 1, sizeof(*a->stores));
	a->stores[a->nstores++] = s;
	pthread_mutex_unlock(&a->mu);
	tl_store = s;
	tl_api = a;
	return s;
}

static struct dconf *
conf_get(struct api *a)
{
	struct dconf *c;

	pthread_mutex_lock(&a->mu);
	c = dconf_ref(a->conf);
	pthread_mutex_unlock(&a->mu);
	return c;
}

static int64_t
heartbeat_s(const struct dconf *c)
{
	int64_t h = c->dc->lease_s / 4;

	return h < 1 ? 1 : h > 10 ? 10 : h;
}

/* The registered host of the calling runner, or -1 after replying. */
static int64_t
runner_host(struct ctx *x)
{
	int64_t id = 0;
	int r = store_host_id(x->s, &id, x->runner->ref->name);

	if (r == ERR_NOTFOUND) {
		reply_err(x, 409, "runner '%s' is not registered",
		    x->runner->ref->name);
		return -1;
	}
	if (r != 0) {
		reply_store_err(x, r);
		return -1;
	}
	return id;
}

/* ---- runner routes ---- */

static int
check_inventory(struct ctx *x, json_t *inv)
{
	static const char *const strs[] = { "cpu_model", "cpu_vendor", "kernel",
		NULL };
	static const char *const ints[] = { "sockets", "cores", "threads",
		"numa_nodes", "memory_bytes", NULL };
	const char *cg = NULL;
	json_t *v;
	int i;

	if (!json_is_object(inv)) {
		reply_err(x, 400, "field 'inventory': expected an object");
		return -1;
	}
	for (i = 0; strs[i]; i++)
		if ((v = json_object_get(inv, strs[i])) != NULL &&
		    !json_is_null(v) &&
		    (!json_is_string(v) || json_string_length(v) > CAP_NAME)) {
			reply_err(x, 400,
			    "field 'inventory.%s': expected a string of at "
			    "most %d bytes",
			    strs[i], CAP_NAME);
			return -1;
		}
	for (i = 0; ints[i]; i++)
		if ((v = json_object_get(inv, ints[i])) != NULL &&
		    !json_is_null(v) &&
		    (!json_is_integer(v) || json_integer_value(v) < 0)) {
			reply_err(x, 400,
			    "field 'inventory.%s': expected a non-negative "
			    "integer",
			    ints[i]);
			return -1;
		}
	if (str_field(x, &cg, inv, "cgroup", 8, 1, "inventory.") == -1)
		return -1;
	if (cg != NULL && strcmp(cg, "v1") != 0 && strcmp(cg, "v2") != 0 &&
	    strcmp(cg, "none") != 0) {
		reply_err(x, 400,
		    "field 'inventory.cgroup': expected v1, v2 or none");
		return -1;
	}
	if (json_dumpb(inv, NULL, 0, JSON_COMPACT) > 64 * 1024) {
		reply_err(x, 400, "field 'inventory': larger than 64 KiB");
		return -1;
	}
	return 0;
}

static void
r_register(struct ctx *x)
{
	static const char *const keys[] = { "name", "labels", "inventory",
		NULL };
	const struct cfg_runner_ref *ref = x->runner->ref;
	const char *name = NULL;
	json_t *labels, *inv, *v;
	char *ltext, *itext;
	int64_t id = 0;
	size_t i;
	int r;

	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	if (str_field(x, &name, x->body, "name", CAP_NAME, 0, "") == -1)
		return;
	if (strcmp(name, ref->name) != 0) {
		reply_err(x, 403,
		    "field 'name': '%s' does not match this token's runner",
		    name);
		return;
	}
	labels = json_array();
	for (i = 0; i < ref->labels.n; i++)
		json_array_append_new(labels, json_string(ref->labels.v[i]));
	v = json_object_get(x->body, "labels");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > 64) {
			json_decref(labels);
			reply_err(x, 400,
			    "field 'labels': expected an array of at most 64 "
			    "strings");
			return;
		}
		for (i = 0; i < json_array_size(v); i++) {
			json_t *l = json_array_get(v, i);
			size_t k;

			if (!json_is_string(l) || json_string_length(l) == 0 ||
			    json_string_length(l) > CAP_NAME) {
				json_decref(labels);
				reply_err(x, 400,
				    "field 'labels[%zu]': expected a "
				    "non-empty string",
				    i);
				return;
			}
			for (k = 0; k < json_array_size(labels); k++)
				if (json_equal(json_array_get(labels, k), l))
					break;
			if (k == json_array_size(labels))
				json_array_append(labels, l);
		}
	}
	inv = json_object_get(x->body, "inventory");
	if (inv == NULL || json_is_null(inv)) {
		inv = json_object();
	} else {
		if (check_inventory(x, inv) == -1) {
			json_decref(labels);
			return;
		}
		json_incref(inv);
	}
	ltext = pwjson_dump(labels);
	itext = pwjson_dump(inv);
	r = store_host_register(x->s, &id, name, ltext, itext, now_s());
	free(ltext);
	free(itext);
	json_decref(labels);
	json_decref(inv);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("runner %s registered from %s (host %" PRId64 ")", name,
	    httpd_peer(x->r), id);
	sched_notify(x->a->sched);
	reply_json(x, 200,
	    json_pack("{s:I, s:I, s:I}", "host_id", (json_int_t)id,
	        "heartbeat_s", (json_int_t)heartbeat_s(x->conf), "lease_s",
	        (json_int_t)sched_lease_s(x->a->sched)));
}

static void
r_heartbeat(struct ctx *x)
{
	static const char *const keys[] = { "job_id", "progress", "boot_s",
		NULL };
	int64_t job = 0, host, exp = 0, runs = 0, boot_s = 0;
	const char *progress = NULL;
	int r;

	if (parse_body(x, 1) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	if (pwjson_int_opt(&job, x->body, "job_id", &x->err) == -1 ||
	    pwjson_int_opt(&boot_s, x->body, "boot_s", &x->err) == -1) {
		bad(x);
		return;
	}
	if (boot_s < 0 || boot_s > 86400) {
		reply_err(x, 400, "field 'boot_s': expected 0..86400 seconds");
		return;
	}
	if (job < 0) {
		reply_err(x, 400, "field 'job_id': expected a job id");
		return;
	}
	if (str_field(x, &progress, x->body, "progress", PROGRESS_MAX, 1, "") ==
	    -1)
		return;
	if ((host = runner_host(x)) < 0)
		return;
	r = sched_heartbeat_boot(
	    x->a->sched, x->s, &exp, &runs, host, job, progress, boot_s);
	if (r == ERR_CONFLICT) {
		reply_json(x, 200,
		    json_pack("{s:n, s:b, s:n, s:s}", "lease_expires", "cancel",
		        1, "runs", "reason", store_errmsg(x->s)));
		return;
	}
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	if (job == 0)
		reply_json(x, 200,
		    json_pack("{s:n, s:b, s:n}", "lease_expires", "cancel", 0,
		        "runs"));
	else
		reply_json(x, 200,
		    json_pack("{s:I, s:b, s:I}", "lease_expires",
		        (json_int_t)exp, "cancel", 0, "runs",
		        (json_int_t)runs));
}

/* Long-poll state kept on the request between handler calls. */
struct claim_state {
	int64_t deadline_ms;
};

static void
park(struct ctx *x, int64_t deadline_ms)
{
	struct api *a = x->a;

	/* Under the lock, so the ticker cannot unpark before the park. */
	pthread_mutex_lock(&a->mu);
	a->waiters =
	    xreallocarray(a->waiters, a->nwaiters + 1, sizeof(*a->waiters));
	a->waiters[a->nwaiters].req = x->r;
	a->waiters[a->nwaiters].deadline_ms = deadline_ms;
	a->nwaiters++;
	httpd_park(x->r);
	pthread_mutex_unlock(&a->mu);
}

static void
r_claim(struct ctx *x)
{
	static const char *const keys[] = { "wait_s", NULL };
	struct claim_state *cs = *httpd_slot(x->r);
	int64_t wait = 0, host;
	json_t *out = NULL;
	int r, stopping;

	if (cs == NULL) {
		if (parse_body(x, 1) == -1 ||
		    only_keys(x, x->body, keys, "body") == -1)
			return;
		if (pwjson_int_opt(&wait, x->body, "wait_s", &x->err) == -1) {
			bad(x);
			return;
		}
		if (wait < 0) {
			reply_err(x, 400, "field 'wait_s': must be >= 0");
			return;
		}
		if (wait > sched_claim_wait_s(x->a->sched))
			wait = sched_claim_wait_s(x->a->sched);
		cs = xcalloc(1, sizeof(*cs));
		cs->deadline_ms = clock_mono_ms() + wait * 1000;
		*httpd_slot(x->r) = cs;
	}
	if ((host = runner_host(x)) < 0)
		return;
	r = sched_claim(x->a->sched, x->s, &out, host);
	if (r == 0) {
		json_t *job = json_object_get(out, "job");

		log_info("job %" PRId64 " (%s) claimed by %s",
		    (int64_t)json_integer_value(json_object_get(job, "id")),
		    json_string_value(json_object_get(job, "role")),
		    x->runner->ref->name);
		reply_json(x, 200, out);
		return;
	}
	if (r != ERR_NOTFOUND) {
		reply_store_err(x, r);
		return;
	}
	pthread_mutex_lock(&x->a->mu);
	stopping = x->a->stopping;
	pthread_mutex_unlock(&x->a->mu);
	if (stopping || clock_mono_ms() >= cs->deadline_ms) {
		httpd_reply(x->r, 204, "application/json", "", 0);
		return;
	}
	park(x, cs->deadline_ms);
}

/* The number in the path for a job route; replies 404 when missing. */
static int
job_path(struct ctx *x, int64_t *out)
{
	*out = x->id[0];
	return 0;
}

static int
parse_metric(struct ctx *x, struct store_metric *m, json_t *o, size_t i)
{
	static const char *const keys[] = { "name", "value", "unit", "better",
		NULL };
	char pfx[64];
	json_t *v;

	snprintf(pfx, sizeof(pfx), "metrics[%zu].", i);
	if (!json_is_object(o)) {
		reply_err(
		    x, 400, "field 'metrics[%zu]': expected an object", i);
		return -1;
	}
	snprintf(pfx, sizeof(pfx), "metrics[%zu]", i);
	if (only_keys(x, o, keys, pfx) == -1)
		return -1;
	snprintf(pfx, sizeof(pfx), "metrics[%zu].", i);
	m->unit = NULL;
	if (str_field(x, &m->name, o, "name", CAP_NAME, 0, pfx) == -1 ||
	    str_field(x, &m->unit, o, "unit", 64, 1, pfx) == -1 ||
	    str_field(x, &m->better, o, "better", 16, 0, pfx) == -1)
		return -1;
	if (m->name[0] == '\0') {
		reply_err(x, 400, "field '%sname': empty", pfx);
		return -1;
	}
	/* info: shown, never judged (memcg telemetry, docs/MEMCG.md). */
	if (strcmp(m->better, "higher") != 0 &&
	    strcmp(m->better, "lower") != 0 && strcmp(m->better, "info") != 0) {
		reply_err(x, 400,
		    "field '%sbetter': expected higher, lower or info", pfx);
		return -1;
	}
	v = json_object_get(o, "value");
	if (v == NULL || !json_is_number(v)) {
		reply_err(x, 400, "field '%svalue': expected a number", pfx);
		return -1;
	}
	m->value = json_number_value(v);
	return 0;
}

static void
r_run(struct ctx *x)
{
	static const char *const keys[] = { "index", "status", "duration_s",
		"metrics", "raw", "error", "profile", "host_state", NULL };
	struct buf hstate = BUF_INIT(CAP_HOST_STATE);
	struct store_run run;
	struct store_metric *ms = NULL;
	struct buf prof = BUF_INIT(CAP_PROFILE_BLOB);
	json_t *arr, *raw, *pj;
	int64_t host;
	size_t i, n = 0;
	int r;

	memset(&run, 0, sizeof(run));
	job_path(x, &run.job_id);
	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	run.duration_s = -1;
	if (pwjson_int(&run.index, x->body, "index", &x->err) == -1 ||
	    pwjson_num_opt(&run.duration_s, x->body, "duration_s", &x->err) ==
	        -1) {
		bad(x);
		return;
	}
	if (str_field(x, &run.status, x->body, "status", 16, 0, "") == -1 ||
	    str_field(x, &run.error, x->body, "error", CAP_ERRMSG * 8, 1, "") ==
	        -1)
		return;
	if (strcmp(run.status, "ok") != 0 &&
	    strcmp(run.status, "failed") != 0) {
		reply_err(x, 400, "field 'status': expected ok or failed");
		return;
	}
	if (json_object_get(x->body, "duration_s") != NULL &&
	    !json_is_null(json_object_get(x->body, "duration_s")) &&
	    run.duration_s < 0) {
		reply_err(x, 400, "field 'duration_s': must be >= 0");
		return;
	}
	raw = json_object_get(x->body, "raw");
	if (raw != NULL && !json_is_null(raw)) {
		if (!json_is_string(raw)) {
			reply_err(x, 400, "field 'raw': expected a string");
			return;
		}
		run.raw = json_string_value(raw);
		run.raw_len = json_string_length(raw);
	}
	/* The profiled run's blob: an object, kept as compact JSON. */
	pj = json_object_get(x->body, "profile");
	if (pj != NULL && !json_is_null(pj)) {
		if (!json_is_object(pj)) {
			reply_err(
			    x, 400, "field 'profile': expected an object");
			return;
		}
		if (pwjson_dump_buf(&prof, pj) != 0) {
			buf_release(&prof);
			buf_release(&hstate);
			reply_err(x, 400, "field 'profile': more than %d bytes",
			    CAP_PROFILE_BLOB);
			return;
		}
		run.profile = prof.data;
	}
	/* The host state the run ran under (docs/HOST.md). */
	pj = json_object_get(x->body, "host_state");
	if (pj != NULL && !json_is_null(pj)) {
		if (!json_is_object(pj) || pwjson_dump_buf(&hstate, pj) != 0) {
			buf_release(&prof);
			buf_release(&hstate);
			reply_err(x, 400,
			    "field 'host_state': expected an object of at "
			    "most %d bytes",
			    CAP_HOST_STATE);
			return;
		}
		run.host_state = hstate.data;
	}
	arr = json_object_get(x->body, "metrics");
	if (arr != NULL && !json_is_null(arr)) {
		if (!json_is_array(arr)) {
			buf_release(&prof);
			buf_release(&hstate);
			reply_err(x, 400, "field 'metrics': expected an array");
			return;
		}
		n = json_array_size(arr);
		if (n > CAP_METRICS_PER_RUN) {
			buf_release(&prof);
			buf_release(&hstate);
			reply_err(x, 400, "field 'metrics': more than %d",
			    CAP_METRICS_PER_RUN);
			return;
		}
		ms = xcalloc(n + 1, sizeof(*ms));
		for (i = 0; i < n; i++)
			if (parse_metric(
			        x, &ms[i], json_array_get(arr, i), i) == -1) {
				free(ms);
				buf_release(&prof);
				buf_release(&hstate);
				return;
			}
	}
	run.metrics = ms;
	run.nmetrics = n;
	if ((host = runner_host(x)) < 0) {
		free(ms);
		buf_release(&prof);
		buf_release(&hstate);
		return;
	}
	r = store_run_add(x->s, host, &run, now_s());
	free(ms);
	buf_release(&prof);
	buf_release(&hstate);
	if (r == 0) {
		__atomic_add_fetch(&x->a->runs_stored, 1, __ATOMIC_RELAXED);
		reply_json(x, 201, json_pack("{s:b}", "stored", 1));
	} else if (r == ERR_EXISTS) {
		reply_json(x, 200, json_pack("{s:b}", "stored", 0));
	} else {
		reply_store_err(x, r);
	}
}

static void
r_log(struct ctx *x)
{
	static const char *const keys[] = { "text", NULL };
	const char *text = NULL;
	int64_t job, host;
	size_t kept = 0;
	int r;

	job_path(x, &job);
	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	if (str_field(x, &text, x->body, "text", CAP_LOG_APPEND, 0, "") == -1)
		return;
	if ((host = runner_host(x)) < 0)
		return;
	r = store_log_append(x->s, &kept, host, job, text,
	    json_string_length(json_object_get(x->body, "text")), now_s());
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, json_pack("{s:I}", "stored", (json_int_t)kept));
}

static void
r_finish(struct ctx *x)
{
	static const char *const keys[] = { "status", "error", NULL };
	const char *status = NULL, *error = NULL;
	int64_t job, host;
	int ok, r;

	job_path(x, &job);
	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	if (str_field(x, &status, x->body, "status", 16, 0, "") == -1 ||
	    str_field(x, &error, x->body, "error", CAP_ERRMSG * 8, 1, "") == -1)
		return;
	if (strcmp(status, "success") == 0) {
		ok = 1;
	} else if (strcmp(status, "failure") == 0) {
		ok = 0;
	} else {
		reply_err(
		    x, 400, "field 'status': expected success or failure");
		return;
	}
	if ((host = runner_host(x)) < 0)
		return;
	r = sched_finish(x->a->sched, x->s, host, job, ok, error);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("job %" PRId64 " finished by %s: %s", job,
	    x->runner->ref->name, ok ? "success" : "failure");
	reply_json(x, 200,
	    json_pack("{s:I, s:s}", "id", (json_int_t)job, "state",
	        ok ? "success" : "failed"));
}

/* ---- admin routes ---- */

/* A side of a pair: params (scalars as strings) and an optional tree. */
struct side {
	json_t *params;    /* object of strings */
	json_t *tree;      /* {"url", "commit"} or NULL */
	int64_t commit_id; /* the commit's row for a configured tree */
};

/*
 * The commit of a side on tree url (name: a configured tree, else NULL).
 * A configured tree's commit may be a unique prefix of a recorded commit;
 * otherwise the runner fetches it by id, so all 40 digits are needed.
 * The job is linked to the commit's row (a stub until the watcher
 * records it).  0, or -1 after replying.
 */
static int
side_commit(struct ctx *x, struct side *sd, const char *what, const char *name,
    const char *url, const char *commit)
{
	char full[SHA_BUF] = "";
	int64_t tree_id = 0;
	size_t i, n = strlen(commit);
	int r;

	if (name != NULL) {
		r = store_tree_sync(x->s, &tree_id, name, url);
		if (r == 0)
			r = store_commit_find(x->s, &sd->commit_id, full,
			    sizeof(full), tree_id, commit);
		if (r == ERR_CONFLICT) {
			reply_err(x, 400, "field '%s.commit': %s", what,
			    store_errmsg(x->s));
			return -1;
		}
		if (r != 0 && r != ERR_NOTFOUND) {
			reply_store_err(x, r);
			return -1;
		}
		store_errclear(x->s);
	}
	if (full[0] == '\0') {
		if (n != SHA_BUF - 1) {
			reply_err(x, 400,
			    "field '%s.commit': '%s' is not a recorded commit "
			    "of this tree; give all 40 hex digits",
			    what, commit);
			return -1;
		}
		for (i = 0; i < n; i++)
			full[i] = (char)(commit[i] >= 'A' && commit[i] <= 'F'
			        ? commit[i] - 'A' + 'a'
			        : commit[i]);
		full[n] = '\0';
		if (tree_id > 0 &&
		    (r = store_commit_stub(
		         x->s, &sd->commit_id, tree_id, full)) != 0) {
			reply_store_err(x, r);
			return -1;
		}
	}
	sd->tree = json_pack("{s:s, s:s}", "url", url, "commit", full);
	if (tree_id > 0)
		packs_tree_spec(sd->tree, x->s, full);
	return 0;
}

static int
parse_side(struct ctx *x, struct side *sd, const char *what)
{
	static const char *const keys[] = { "params", "tree", "commit", NULL };
	json_t *o = json_object_get(x->body, what), *p, *v;
	const char *k, *tree = NULL, *commit = NULL, *url = NULL;
	const char *name = NULL;
	char pfx[32];
	size_t i;

	sd->params = json_object();
	sd->tree = NULL;
	sd->commit_id = 0;
	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		reply_err(x, 400, "field '%s': expected an object", what);
		return -1;
	}
	snprintf(pfx, sizeof(pfx), "%s", what);
	if (only_keys(x, o, keys, pfx) == -1)
		return -1;
	p = json_object_get(o, "params");
	if (p != NULL && !json_is_null(p)) {
		if (!json_is_object(p)) {
			reply_err(x, 400,
			    "field '%s.params': expected an object", what);
			return -1;
		}
		json_object_foreach(p, k, v)
		{
			char num[64];

			if (json_is_string(v)) {
				json_object_set(sd->params, k, v);
				continue;
			}
			if (json_is_integer(v))
				snprintf(num, sizeof(num),
				    "%" JSON_INTEGER_FORMAT,
				    json_integer_value(v));
			else if (json_is_real(v))
				snprintf(num, sizeof(num), "%.17g",
				    json_real_value(v));
			else if (json_is_boolean(v))
				snprintf(num, sizeof(num), "%s",
				    json_is_true(v) ? "true" : "false");
			else {
				reply_err(x, 400,
				    "field '%s.params.%s': expected a string, "
				    "number or boolean",
				    what, k);
				return -1;
			}
			json_object_set_new(sd->params, k, json_string(num));
		}
	}
	snprintf(pfx, sizeof(pfx), "%s.", what);
	if (str_field(x, &tree, o, "tree", 1024, 1, pfx) == -1 ||
	    str_field(x, &commit, o, "commit", 64, 1, pfx) == -1)
		return -1;
	if ((tree == NULL) != (commit == NULL)) {
		reply_err(x, 400,
		    "field '%s.%s': missing (tree and commit go "
		    "together)",
		    what, tree ? "commit" : "tree");
		return -1;
	}
	if (tree == NULL)
		return 0;
	for (i = 0; commit[i]; i++)
		if (!strchr("0123456789abcdefABCDEF", commit[i]))
			break;
	if (commit[i] != '\0' || i < 4) {
		reply_err(x, 400,
		    "field '%s.commit': expected a hexadecimal "
		    "commit id",
		    what);
		return -1;
	}
	for (i = 0; i < x->conf->dc->ntrees; i++)
		if (strcmp(x->conf->dc->trees[i].name, tree) == 0 ||
		    strcmp(x->conf->dc->trees[i].url, tree) == 0) {
			url = x->conf->dc->trees[i].url;
			name = x->conf->dc->trees[i].name;
		}
	if (url == NULL && (strstr(tree, "://") != NULL || tree[0] == '/'))
		url = tree;
	if (url == NULL) {
		reply_err(
		    x, 400, "field '%s.tree': unknown tree '%s'", what, tree);
		return -1;
	}
	return side_commit(x, sd, what, name, url, commit);
}

static void
r_submit(struct ctx *x)
{
	static const char *const keys[] = { "job", "job_yaml", "base",
		"candidate", "runs", NULL };
	const char *name = NULL, *yaml = NULL;
	struct job_config *own = NULL;
	const struct job_config *jc;
	struct side sides[2] = { { NULL, NULL }, { NULL, NULL } };
	struct cfg_point *pts = NULL, empty = { 0, NULL, NULL, NULL };
	size_t npts = 0, i;
	int64_t runs = 0, max_runs, now = now_s();
	json_t *out = NULL, *labels = NULL;
	char *ltext = NULL;
	int failed = 0;

	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	if (str_field(x, &name, x->body, "job", CAP_NAME, 1, "") == -1 ||
	    str_field(x, &yaml, x->body, "job_yaml", CAP_CONFIG_FILE, 1, "") ==
	        -1)
		return;
	if ((name == NULL) == (yaml == NULL)) {
		reply_err(x, 400,
		    "field 'job': give exactly one of 'job' and "
		    "'job_yaml'");
		return;
	}
	if (pwjson_int_opt(&runs, x->body, "runs", &x->err) == -1) {
		bad(x);
		return;
	}
	if (json_object_get(x->body, "runs") != NULL &&
	    (runs < 1 || runs > 1000)) {
		reply_err(x, 400, "field 'runs': expected 1..1000");
		return;
	}
	if (parse_side(x, &sides[0], "base") == -1 ||
	    parse_side(x, &sides[1], "candidate") == -1)
		goto out;
	if (name != NULL) {
		if ((jc = dconf_job(x->conf, name)) == NULL) {
			reply_err(
			    x, 404, "field 'job': no job named '%s'", name);
			goto out;
		}
	} else {
		struct cfg_errors errs = { NULL, 0 };

		if (config_parse_job_for(&own, "job_yaml", yaml, strlen(yaml),
		        x->conf->dc, &errs) == -1) {
			reply_err(x, 400, "field 'job_yaml': %s",
			    errs.n ? errs.msg[0] : "invalid job");
			cfg_errors_free(&errs);
			goto out;
		}
		cfg_errors_free(&errs);
		jc = own;
	}
	if (runs == 0)
		runs = jc->runs;
	max_runs = jc->max_runs > runs ? jc->max_runs : runs;
	config_expand(&pts, &npts, jc);
	if (npts == 0 && jc->naxes > 0) {
		reply_err(x, 400,
		    "job '%s': the matrix has no points left "
		    "after exclude",
		    jc->name);
		goto out;
	}
	labels = jobspec_strlist(&jc->hosts);
	ltext = pwjson_dump(labels);
	out = json_array();
	/* One transaction and one sibling-group scope for all the pairs of
	 * a submit: its cgroup points share a host (store_fleet.h). */
	if (store_begin(x->s) == -1) {
		reply_store_err(x, -1);
		goto out;
	}
	store_group_begin(x->s);
	for (i = 0; i < (npts ? npts : 1) && !failed; i++) {
		const struct cfg_point *pt = npts ? &pts[i] : &empty;
		json_t *specs[2];
		char *texts[2];
		struct store_job_new jn[2];
		int64_t pair = 0, ids[2] = { 0, 0 };
		int k;

		for (k = 0; k < 2; k++) {
			specs[k] = jobspec_build(jc, pt, sides[k].params,
			    sides[k].tree, runs, max_runs);
			texts[k] = pwjson_dump(specs[k]);
			json_decref(specs[k]);
			memset(&jn[k], 0, sizeof(jn[k]));
			jn[k].commit_id = sides[k].commit_id;
			jn[k].role = k == 0 ? "base" : "candidate";
			jn[k].spec_json = texts[k];
			jn[k].labels_json = ltext;
			jn[k].runs = runs;
			jn[k].max_runs = max_runs;
			jn[k].max_attempts = x->conf->dc->max_attempts;
		}
		if (store_pair_create(x->s, &pair, &ids[0], &ids[1], jc->name,
		        pt->label ? pt->label : "", &jn[0], &jn[1], now) != 0)
			failed = 1;
		else
			json_array_append_new(out,
			    json_pack("{s:I, s:I, s:I, s:s}", "pair_id",
			        (json_int_t)pair, "base_job",
			        (json_int_t)ids[0], "candidate_job",
			        (json_int_t)ids[1], "point",
			        pt->label ? pt->label : ""));
		free(texts[0]);
		free(texts[1]);
	}
	store_group_end(x->s);
	if (failed) {
		store_rollback(x->s);
		reply_store_err(x, -1);
		goto out;
	}
	if (store_commit(x->s) == -1) {
		reply_store_err(x, -1);
		goto out;
	}
	log_info(
	    "submitted %zu pair(s) of job %s", json_array_size(out), jc->name);
	sched_notify(x->a->sched);
	reply_json(x, 201, json_pack("{s:O}", "pairs", out));
out:
	json_decref(out);
	json_decref(labels);
	free(ltext);
	config_points_free(pts, npts);
	job_config_free(own);
	for (i = 0; i < 2; i++) {
		json_decref(sides[i].params);
		json_decref(sides[i].tree);
	}
}

static void
r_cancel_retry(struct ctx *x, int cancel)
{
	int r;

	if (cancel)
		r = sched_cancel(x->a->sched, x->s, x->id[0]);
	else
		r = sched_retry(x->a->sched, x->s, x->id[0]);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("job %" PRId64 " %s", x->id[0],
	    cancel ? "cancelled" : "queued again");
	reply_json(x, 200,
	    json_pack("{s:I, s:s}", "id", (json_int_t)x->id[0], "state",
	        cancel ? "cancelled" : "queued"));
}

static void
r_cancel(struct ctx *x)
{
	r_cancel_retry(x, 1);
}

static void
r_retry(struct ctx *x)
{
	r_cancel_retry(x, 0);
}

/* ---- read routes ---- */

static void
r_jobs(struct ctx *x)
{
	const char *state = httpd_query(x->r, "state");
	int64_t limit, cursor;
	json_t *out = NULL;
	int i, r;

	if (state != NULL && *state == '\0')
		state = NULL;
	if (state != NULL) {
		for (i = 0; i < 5; i++)
			if (strcmp(state, store_job_states[i]) == 0)
				break;
		if (i == 5) {
			reply_err(x, 400,
			    "parameter 'state': expected queued, "
			    "running, success, failed or cancelled");
			return;
		}
	}
	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	if ((r = store_jobs_list(x->s, &out, state, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
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

static void
r_job(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = store_job_get(x->s, &out, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	job_kernel(out);
	reply_json(x, 200, out);
}

static void
r_raw(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_RAW_OUTPUT + 1);
	size_t len;
	int r;

	if ((r = store_run_raw(x->s, &b, x->id[0], x->id[1])) != 0) {
		buf_release(&b);
		{
			reply_store_err(x, r);
			return;
		}
	}
	len = b.len;
	httpd_reply_take(
	    x->r, 200, "text/plain; charset=utf-8", buf_take(&b), len);
}

/* Each host row gains "canary" (daemon/canary.h), or null. */
static void
canary_hosts(struct ctx *x, json_t *hosts)
{
	size_t i;
	json_t *h, *c;

	json_array_foreach(hosts, i, h)
	{
		const char *name =
		    json_string_value(json_object_get(h, "name"));

		c = name ? canary_host_json(x->s, x->conf, name,
		               json_integer_value(json_object_get(h, "id")))
		         : NULL;
		json_object_set_new(h, "canary", c ? c : json_null());
	}
}

static void
r_hosts(struct ctx *x)
{
	int64_t limit, cursor;
	json_t *out = NULL;
	int r;

	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	r = store_hosts_list(
	    x->s, &out, limit, cursor, now_s(), 3 * heartbeat_s(x->conf));
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	canary_hosts(x, json_object_get(out, "hosts"));
	reply_json(x, 200, out);
}

/* POST /api/v1/hosts/{id}/clear: the operator lifts a quarantine. */
static void
r_host_clear(struct ctx *x)
{
	json_t *out = NULL, *h;
	const char *name = NULL;
	size_t i;
	int r;

	if ((r = store_hosts_list(x->s, &out, 1, x->id[0] - 1, now_s(),
	         3 * heartbeat_s(x->conf))) != 0) {
		reply_store_err(x, r);
		return;
	}
	json_array_foreach(json_object_get(out, "hosts"), i,
	    h) if (json_integer_value(json_object_get(h, "id")) == x->id[0])
	    name = json_string_value(json_object_get(h, "name"));
	if (name == NULL) {
		json_decref(out);
		reply_err(x, 404, "no host %lld", (long long)x->id[0]);
		return;
	}
	if ((r = store_host_clear(x->s, name)) != 0) {
		json_decref(out);
		reply_store_err(x, r);
		return;
	}
	log_info("host %s: quarantine cleared by the operator", name);
	json_decref(out);
	reply_json(x, 200,
	    json_pack("{s:I, s:n}", "id", (json_int_t)x->id[0], "quarantined"));
}

static void
r_pair(struct ctx *x)
{
	json_t *out = NULL, *rows = NULL;
	int r;

	if ((r = store_pair_get(x->s, &out, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	/* Which kernel each side ran (docs/KERNEL.md). */
	if (store_pair_run_meta(x->s, &rows, x->id[0]) != 0) {
		json_decref(out);
		reply_store_err(x, -1);
		return;
	}
	kfacts_pair_json(out, json_object_get(rows, "rows"));
	json_decref(rows);
	reply_json(x, 200, out);
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

static void
r_trees(struct ctx *x)
{
	const struct daemon_config *dc = x->conf->dc;
	const char *cursor = httpd_query(x->r, "cursor");
	json_t *out = NULL, *arr, *t = NULL;
	int64_t limit;
	size_t i, k;
	int r;

	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1)
		return;
	if (cursor != NULL && *cursor == '\0')
		cursor = NULL;
	if ((r = store_trees_list(x->s, &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	arr = json_object_get(out, "trees");
	for (i = 0; i < dc->ntrees; i++) {
		json_array_foreach(arr, k, t)
		{
			if (strcmp(
			        json_string_value(json_object_get(t, "name")),
			        dc->trees[i].name) == 0)
				break;
		}
		if (k == json_array_size(arr)) {
			t = json_pack("{s:s, s:s, s:n, s:n, s:n, s:i, s:n, "
			              "s:i, s:[]}",
			    "name", dc->trees[i].name, "url", dc->trees[i].url,
			    "last_fetch", "last_ok", "last_error", "failures",
			    0, "next_fetch", "commits", 0, "branches");
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
	t = trees_page(arr, cursor, limit);
	json_decref(out);
	reply_json(x, 200, t);
}

static void
r_commits(struct ctx *x)
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
	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	r = store_commits_list(x->s, &out, tree, branch, limit, cursor);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

/* ---- series (daemon/series) ---- */

/*
 * POST /api/v1/series: the body is an mbox (or one message); query tree
 * and branch say where the series go (defaults: the only tree, its
 * first branch).  The series are recorded 'waiting' and the mbox is
 * queued: the watcher's upload thread applies and triggers them.
 */
static void
r_series_post(struct ctx *x)
{
	const struct daemon_config *dc = x->conf->dc;
	const char *tname = httpd_query(x->r, "tree");
	const char *branch = httpd_query(x->r, "branch");
	const struct cfg_tree *tree = NULL;
	struct series_ingest in;
	struct series_result res;
	size_t len, i;
	const char *body = httpd_body(x->r, &len);
	json_t *ids, *states, *out;
	int r;

	if (tname != NULL && *tname != '\0') {
		for (i = 0; i < dc->ntrees; i++)
			if (strcmp(dc->trees[i].name, tname) == 0)
				tree = &dc->trees[i];
		if (tree == NULL) {
			reply_err(x, 400, "query 'tree': unknown tree '%.64s'",
			    tname);
			return;
		}
	} else if (dc->ntrees == 1) {
		tree = &dc->trees[0];
	} else {
		reply_err(x, 400,
		    "query 'tree': required (%zu trees are configured)",
		    dc->ntrees);
		return;
	}
	if (branch == NULL || *branch == '\0') {
		if (tree->branches.n == 0) {
			reply_err(x, 400,
			    "query 'branch': required (tree %s names no "
			    "branch)",
			    tree->name);
			return;
		}
		branch = tree->branches.v[0];
	}
	if (strlen(branch) > CAP_NAME || strstr(branch, "..") != NULL ||
	    strspn(branch,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789._-/") != strlen(branch)) {
		reply_err(x, 400, "query 'branch': not a branch name");
		return;
	}
	if (len == 0) {
		reply_err(x, 400, "body: expected an mbox, got nothing");
		return;
	}
	memset(&in, 0, sizeof(in));
	in.conf = x->conf;
	in.tree = tree;
	in.branch = branch;
	in.inbox = NULL;
	in.now = now_s();
	r = series_enqueue_mbox(&res, x->s, &in, body, len, &x->err);
	if (r == ERR_INVALID || r == ERR_TOOBIG) {
		reply_err(x, r == ERR_TOOBIG ? 413 : 400, "body: %s",
		    err_msg(&x->err));
		series_result_release(&res);
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		series_result_release(&res);
		return;
	}
	if (res.n == 0) {
		reply_err(x, 400,
		    "body: no patch series in %zu message(s) (%zu patches, "
		    "%zu without their series)",
		    res.messages, res.patches, res.orphans);
		series_result_release(&res);
		return;
	}
	ids = json_array();
	states = json_array();
	for (i = 0; i < res.n; i++) {
		json_array_append_new(ids, json_integer(res.ids[i]));
		json_array_append_new(states, json_string(res.states[i]));
	}
	out = json_pack("{s:o, s:o, s:i, s:i, s:i, s:i, s:o}", "series", ids,
	    "states", states, "messages", (json_int_t)res.messages, "patches",
	    (json_int_t)res.patches, "orphans", (json_int_t)res.orphans,
	    "known", (json_int_t)res.known, "queue",
	    res.queue_id ? json_integer(res.queue_id) : json_null());
	series_result_release(&res);
	reply_json(x, 202, out);
}

static void
r_series_list(struct ctx *x)
{
	int64_t limit, cursor;
	json_t *out = NULL;
	int r;

	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	if ((r = store_series_list(x->s, &out, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

static void
r_healthz(struct ctx *x)
{
	httpd_reply(x->r, 200, "text/plain", "ok\n", 3);
}

/* Dashboard gauges: regressions by triage state, alerts, fetch errors. */
static void
web_metrics_add(struct ctx *x, struct buf *b)
{
	json_t *counts = NULL, *v;
	int64_t alerts = 0, fetch = 0, apend = 0, afail = 0;
	const char *k;

	if (store_web_regression_counts(x->s, &counts) == 0) {
		buf_puts(b,
		    "# HELP perfwatch_regressions Regressions by "
		    "triage state.\n"
		    "# TYPE perfwatch_regressions gauge\n");
		json_object_foreach(counts, k, v)
		{
			buf_printf(b,
			    "perfwatch_regressions{state=\"%s\"} %lld\n", k,
			    (long long)json_integer_value(v));
		}
		json_decref(counts);
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

static void
r_metrics(struct ctx *x)
{
	static const char *const cls[6] = { "1xx", "1xx", "2xx", "3xx", "4xx",
		"5xx" };
	struct store_stats st;
	struct buf b = BUF_INIT(64 * 1024);
	size_t len, nw;
	int i;

	if (store_stats(x->s, &st, now_s(), 3 * heartbeat_s(x->conf)) != 0) {
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
		buf_printf(&b, "perfwatch_jobs{state=\"%s\"} %" PRId64 "\n",
		    store_job_states[i], st.jobs[i]);
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
		buf_printf(&b,
		    "perfwatch_http_requests_total{code=\"%s\"} %" PRIu64 "\n",
		    cls[i],
		    __atomic_load_n(&x->a->http_count[i], __ATOMIC_RELAXED));
	buf_puts(&b,
	    "# HELP perfwatch_http_request_duration_seconds Time from a "
	    "request's headers to its reply.\n"
	    "# TYPE perfwatch_http_request_duration_seconds histogram\n");
	{
		uint64_t cum = 0;
		size_t k;

		for (k = 0; k <= NLAT; k++) {
			cum += __atomic_load_n(
			    &x->a->http_lat[k], __ATOMIC_RELAXED);
			buf_printf(&b,
			    "perfwatch_http_request_duration_seconds_bucket"
			    "{le=\"%s\"} %" PRIu64 "\n",
			    k < NLAT ? lat_le_s[k] : "+Inf", cum);
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
	web_metrics_add(x, &b);
	len = b.len;
	httpd_reply_take(
	    x->r, 200, "text/plain; version=0.0.4", buf_take(&b), len);
}

/* GET /api/v1/alerts?state=&kind=&commit=&limit=&cursor= (docs/API.md). */
static void
r_alerts(struct ctx *x)
{
	struct store_alert_filter f = { 0 };
	json_t *out = NULL;
	int r;

	f.state = httpd_query(x->r, "state");
	f.kind = httpd_query(x->r, "kind");
	f.sha = httpd_query(x->r, "commit");
	if (f.state && strcmp(f.state, "pending") && strcmp(f.state, "sent") &&
	    strcmp(f.state, "failed")) {
		reply_err(x, 400,
		    "parameter 'state': expected pending, sent or failed");
		return;
	}
	if (f.kind && strcmp(f.kind, "email") && strcmp(f.kind, "webhook")) {
		reply_err(
		    x, 400, "parameter 'kind': expected email or webhook");
		return;
	}
	if (query_int(x, &f.limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &f.cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	if ((r = alert_api_list(&out, x->s, &f)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

static void
r_alert(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = alert_api_get(&out, x->s, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

/* The pack of a series commit for a runner that cannot see the mirror. */
static void
r_pack(struct ctx *x)
{
	struct buf b;
	int status = packs_build(
	    &b, &x->err, x->s, x->conf->dc, x->seg, httpd_query(x->r, "have"));
	size_t len = b.len;

	if (status != 200) {
		reply_err(x, status, "%s", err_msg(&x->err));
		return;
	}
	httpd_reply_take(
	    x->r, 200, "application/x-git-packfile", buf_take(&b), len);
}

/* ---- bisections (daemon/bisect.c, docs/API.md) ---- */

static void
r_bisect_post(struct ctx *x)
{
	static const char *const keys[] = { "regression", "change_point",
		NULL };
	json_t *out = NULL, *jr, *jc;
	const char *field;
	int64_t from = 0, id = 0;
	int r;

	if (parse_body(x, 0) == -1 || only_keys(x, x->body, keys, "body") == -1)
		return;
	/* One origin: a regression row, or a history change point. */
	jr = json_object_get(x->body, "regression");
	jc = json_object_get(x->body, "change_point");
	field = jc != NULL ? "change_point" : "regression";
	if (jr != NULL && jc != NULL) {
		reply_err(x, 400,
		    "fields 'regression' and 'change_point': give one of "
		    "them");
		return;
	}
	if (!json_is_integer(jc ? jc : jr) ||
	    (from = json_integer_value(jc ? jc : jr)) <= 0) {
		reply_err(x, 400, "field '%s': expected a %s id", field,
		    jc ? "change point" : "regression");
		return;
	}
	r = jc ? bisect_begin_cp(
	             x->s, x->conf, &id, from, "manual", now_s(), &x->err)
	       : bisect_begin(
	             x->s, x->conf, &id, from, "manual", now_s(), &x->err);
	if (r == ERR_NOTFOUND) {
		reply_err(x, 404, "field '%s': %s", field, err_msg(&x->err));
		return;
	}
	if (r == ERR_INVALID) {
		reply_err(x, 400, "field '%s': %s", field, err_msg(&x->err));
		return;
	}
	if (r == ERR_EXISTS) {
		reply_err(x, 409, "%s", err_msg(&x->err));
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		return;
	}
	sched_notify(x->a->sched); /* the bisect worker looks at once */
	if ((r = bisect_api_get(&out, x->s, id)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 201, out);
}

static void
r_bisect_get(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = bisect_api_get(&out, x->s, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

static void
r_bisect_list(struct ctx *x)
{
	json_t *out = NULL;
	int64_t limit, cursor;
	int r;

	if (query_int(x, &limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1 ||
	    query_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		return;
	if ((r = bisect_api_list(&out, x->s, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

static void
r_bisect_cancel(struct ctx *x)
{
	json_t *out = NULL;
	int r = bisect_cancel(x->s, x->id[0], now_s(), &x->err);

	if (r == ERR_NOTFOUND || r == ERR_CONFLICT) {
		reply_err(
		    x, r == ERR_NOTFOUND ? 404 : 409, "%s", err_msg(&x->err));
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		return;
	}
	sched_notify(x->a->sched);
	if ((r = bisect_api_get(&out, x->s, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

static const struct route routes[] = {
	{ "POST", "/api/v1/bisect", AUTH_ADMIN, r_bisect_post },
	{ "GET", "/api/v1/bisect", AUTH_NONE, r_bisect_list },
	{ "GET", "/api/v1/bisect/#", AUTH_NONE, r_bisect_get },
	{ "POST", "/api/v1/bisect/#/cancel", AUTH_ADMIN, r_bisect_cancel },
	{ "GET", "/api/v1/alerts", AUTH_NONE, r_alerts },
	{ "GET", "/api/v1/alerts/#", AUTH_NONE, r_alert },
	{ "POST", "/api/v1/runners/register", AUTH_RUNNER, r_register },
	{ "POST", "/api/v1/runners/heartbeat", AUTH_RUNNER, r_heartbeat },
	{ "POST", "/api/v1/jobs/claim", AUTH_RUNNER, r_claim },
	{ "POST", "/api/v1/jobs/#/runs", AUTH_RUNNER, r_run },
	{ "POST", "/api/v1/jobs/#/log", AUTH_RUNNER, r_log },
	{ "POST", "/api/v1/jobs/#/finish", AUTH_RUNNER, r_finish },
	{ "GET", "/api/v1/packs/*", AUTH_RUNNER, r_pack },
	{ "POST", "/api/v1/submit", AUTH_ADMIN, r_submit },
	{ "POST", "/api/v1/jobs/#/cancel", AUTH_ADMIN, r_cancel },
	{ "POST", "/api/v1/jobs/#/retry", AUTH_ADMIN, r_retry },
	{ "GET", "/api/v1/jobs", AUTH_NONE, r_jobs },
	{ "GET", "/api/v1/jobs/#", AUTH_NONE, r_job },
	{ "GET", "/api/v1/jobs/#/runs/#/raw", AUTH_NONE, r_raw },
	{ "GET", "/api/v1/hosts", AUTH_NONE, r_hosts },
	{ "POST", "/api/v1/hosts/#/clear", AUTH_ADMIN, r_host_clear },
	{ "GET", "/api/v1/pairs/#", AUTH_NONE, r_pair },
	{ "GET", "/api/v1/trees", AUTH_NONE, r_trees },
	{ "GET", "/api/v1/commits", AUTH_NONE, r_commits },
	{ "POST", "/api/v1/series", AUTH_ADMIN, r_series_post },
	{ "GET", "/api/v1/series", AUTH_NONE, r_series_list },
	{ "GET", "/healthz", AUTH_NONE, r_healthz },
	{ "GET", "/metrics", AUTH_NONE, r_metrics },
};

int
api_route_at(
    size_t i, const char **method, const char **pattern, const char **auth)
{
	static const char *const names[] = { [AUTH_NONE] = "none",
		[AUTH_RUNNER] = "runner",
		[AUTH_ADMIN] = "admin" };

	if (i >= sizeof(routes) / sizeof(routes[0]))
		return -1;
	*method = routes[i].method;
	*pattern = routes[i].pattern;
	*auth = names[routes[i].auth];
	return 0;
}

/* 1 when path matches pattern; '#' segments are stored in id[], a '*'
 * segment in *seg (pointing into path, up to its end). */
static int
match(const char *pattern, const char *path, int64_t id[2], const char **seg)
{
	int n = 0;

	while (*pattern && *path) {
		if (*pattern == '*') {
			if (*path == '/' || strchr(path, '/') != NULL)
				return 0;
			*seg = path;
			return pattern[1] == '\0';
		}
		if (*pattern == '#') {
			int64_t v = 0;
			int digits = 0;

			while (*path >= '0' && *path <= '9') {
				if (v > (INT64_MAX - 9) / 10)
					return 0;
				v = v * 10 + (*path++ - '0');
				digits++;
			}
			if (digits == 0 || n == 2)
				return 0;
			id[n++] = v;
			pattern++;
			continue;
		}
		if (*pattern++ != *path++)
			return 0;
	}
	return *pattern == '\0' && *path == '\0';
}

/* Authorisation; 0, or -1 after replying 401/403. */
static int
authorise(struct ctx *x, enum auth need)
{
	const char *tok;
	int who;

	if (need == AUTH_NONE)
		return 0;
	if ((tok = reply_bearer(x->r)) == NULL)
		return -1;
	who = dconf_auth(x->conf, tok, &x->runner);
	if (who == 0) {
		reply_err(x, 403, "unknown token");
		return -1;
	}
	if (need == AUTH_ADMIN && who != 1) {
		reply_err(x, 403, "this route needs the admin token");
		return -1;
	}
	if (need == AUTH_RUNNER && who != 2) {
		reply_err(x, 403, "this route needs a runner token");
		return -1;
	}
	return 0;
}

/* The dashboard (web/): pages, their JSON mirrors, login and triage. */
static void
web_page(struct ctx *x)
{
	struct web_env env;

	if ((x->s = thread_store(x->a, &x->err)) == NULL) {
		reply_err(x, 503, "database: %s", err_msg(&x->err));
		return;
	}
	memset(&env, 0, sizeof(env));
	env.r = x->r;
	env.s = x->s;
	env.conf = x->conf;
	env.web = x->a->web;
	env.now = now_s();
	env.online_s = 3 * heartbeat_s(x->conf);
	web_serve(&env);
}

/*
 * The body a route takes: a small JSON object, except the run upload
 * (raw output, host state, profile), the log append, the submit (an
 * inline job_yaml) and the series mbox, which take up to http.max_body.
 */
static size_t
route_body_cap(const struct route *rt)
{
	static const char *const big[] = { "/api/v1/jobs/#/runs",
		"/api/v1/jobs/#/log", "/api/v1/submit", "/api/v1/series" };
	size_t i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		if (strcmp(rt->pattern, big[i]) == 0)
			return SIZE_MAX;
	return (size_t)CAP_HTTP_SMALL_BODY;
}

static void
handle(struct httpd_req *r, void *arg)
{
	struct ctx x;
	const struct route *rt = NULL;
	int path_ok = 0;
	size_t i;

	memset(&x, 0, sizeof(x));
	x.a = arg;
	x.r = r;
	x.conf = conf_get(x.a);
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!match(routes[i].pattern, httpd_path(r), x.id, &x.seg))
			continue;
		path_ok = 1;
		if (strcmp(routes[i].method, httpd_method(r)) == 0) {
			rt = &routes[i];
			break;
		}
	}
	if (rt == NULL && !path_ok &&
	    web_match(httpd_method(r), httpd_path(r))) {
		web_page(&x);
		goto out;
	}
	if (rt == NULL) {
		if (path_ok)
			reply_err(&x, 405, "method %s not allowed here",
			    httpd_method(r));
		else
			reply_err(&x, 404, "no route %s", httpd_path(r));
		goto out;
	}
	if (authorise(&x, rt->auth) == -1)
		goto out;
	{
		size_t len;

		httpd_body(r, &len);
		if (len > route_body_cap(rt)) {
			reply_err(&x, 413,
			    "body: %zu bytes, more than the %zu %s %s takes",
			    len, route_body_cap(rt), rt->method, rt->pattern);
			goto out;
		}
	}
	if ((x.s = thread_store(x.a, &x.err)) == NULL) {
		reply_err(&x, 503, "database: %s", err_msg(&x.err));
		goto out;
	}
	rt->fn(&x);
out:
	json_decref(x.body);
	dconf_unref(x.conf);
}

static void
unwait(struct api *a, struct httpd_req *r)
{
	size_t i;

	for (i = 0; i < a->nwaiters; i++)
		if (a->waiters[i].req == r) {
			a->waiters[i] = a->waiters[--a->nwaiters];
			return;
		}
}

static void
done(struct httpd_req *r, int completed, void *arg)
{
	struct api *a = arg;
	void **slot = httpd_slot(r);

	int cls = httpd_status(r) / 100;
	double age = httpd_age_s(r);
	size_t i;

	(void)completed;
	if (cls >= 1 && cls <= 5)
		__atomic_add_fetch(&a->http_count[cls], 1, __ATOMIC_RELAXED);
	for (i = 0; i < NLAT && age > lat_le[i]; i++)
		;
	__atomic_add_fetch(&a->http_lat[i], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(
	    &a->http_lat_sum_us, (uint64_t)(age * 1e6), __ATOMIC_RELAXED);
	pthread_mutex_lock(&a->mu);
	unwait(a, r);
	pthread_mutex_unlock(&a->mu);
	free(*slot);
	*slot = NULL;
}

/* Ticker (scheduler thread): wake parked claims when the queue moved or
 * their time is up. */
static void
tick(void *arg, int changed)
{
	struct api *a = arg;
	int64_t now = clock_mono_ms();
	size_t i = 0;

	pthread_mutex_lock(&a->mu);
	while (i < a->nwaiters) {
		if (changed || a->stopping ||
		    now >= a->waiters[i].deadline_ms) {
			httpd_unpark(a->waiters[i].req);
			a->waiters[i] = a->waiters[--a->nwaiters];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&a->mu);
}

int
api_start(struct api **out, struct dconf *conf, struct err *e)
{
	struct api *a = xcalloc(1, sizeof(*a));
	struct store *s = NULL;
	struct httpd_opts o;
	const struct daemon_config *dc = conf->dc;

	*out = NULL;
	pthread_mutex_init(&a->mu, NULL);
	a->conf = dconf_ref(conf);
	a->dbpath = xstrdup(dc->database);
	a->web = web_new();
	/* Create and migrate the database once, up front. */
	if (store_open(&s, a->dbpath, e) == -1)
		goto fail;
	store_close(s);
	a->sched = sched_new(dc->lease_s, dc->claim_wait_s);
	if (sched_start(a->sched, a->dbpath, 500, tick, a, e) == -1)
		goto fail;
	/* Its first pass gives verdicts to pairs that finished before a
	 * crash or restart; later ones follow each finish. */
	if (verdict_start(&a->verdict, a->sched, a->dbpath, e) == -1)
		goto fail;
	memset(&o, 0, sizeof(o));
	o.listen = dc->listen;
	o.threads = (unsigned)dc->http_threads;
	o.max_connections = (unsigned)dc->http_max_connections;
	o.per_ip = (unsigned)dc->http_per_ip;
	o.timeout_s = (unsigned)dc->http_timeout_s;
	o.max_body = (size_t)dc->http_max_body;
	if (httpd_start(&a->httpd, &o, handle, done, a, e) == -1)
		goto fail;
	*out = a;
	return 0;
fail:
	verdict_stop(a->verdict);
	web_free(a->web);
	sched_free(a->sched);
	dconf_unref(a->conf);
	free(a->dbpath);
	pthread_mutex_destroy(&a->mu);
	free(a);
	return -1;
}

int
api_port(const struct api *a)
{
	return httpd_port(a->httpd);
}

struct sched *
api_sched(struct api *a)
{
	return a->sched;
}

/*
 * The http.* keys on a reload.  The body caps apply to the requests that
 * start from now on; the others belong to the listener and its threads,
 * which libmicrohttpd takes at start only, so each change is refused by
 * name and the running value stays until a restart.
 */
static void
reload_http(
    struct api *a, const struct daemon_config *o, const struct daemon_config *n)
{
	static const struct {
		const char *key;
		size_t off;
	} fixed[] = {
		{ "http.threads",
		    offsetof(struct daemon_config, http_threads) },
		{ "http.max_connections",
		    offsetof(struct daemon_config, http_max_connections) },
		{ "http.per_ip", offsetof(struct daemon_config, http_per_ip) },
		{ "http.timeout",
		    offsetof(struct daemon_config, http_timeout_s) },
	};
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		int64_t ov = *(const int64_t *)((const char *)o + fixed[i].off);
		int64_t nv = *(const int64_t *)((const char *)n + fixed[i].off);

		if (ov != nv)
			log_warnx("reload: %s changed from %" PRId64
			          " to %" PRId64 ": it needs a restart; "
			          "keeping %" PRId64 " until then",
			    fixed[i].key, ov, nv, ov);
	}
	if (o->http_max_body != n->http_max_body) {
		httpd_set_max_body(a->httpd, (size_t)n->http_max_body);
		log_info("reload: http.max_body changed from %" PRId64
		         " to %" PRId64 " bytes: applied to new requests",
		    o->http_max_body, n->http_max_body);
	}
	if (o->http_max_pack != n->http_max_pack)
		log_info("reload: http.max_pack changed from %" PRId64
		         " to %" PRId64 " bytes: applied to new requests",
		    o->http_max_pack, n->http_max_pack);
}

void
api_reload(struct api *a, struct dconf *conf)
{
	struct dconf *old;

	pthread_mutex_lock(&a->mu);
	old = a->conf;
	a->conf = dconf_ref(conf);
	pthread_mutex_unlock(&a->mu);
	sched_set_params(a->sched, conf->dc->lease_s, conf->dc->claim_wait_s);
	if (strcmp(old->dc->listen, conf->dc->listen) != 0 ||
	    strcmp(old->dc->database, conf->dc->database) != 0)
		log_warnx("reload: listen and database changes need a "
		          "restart; keeping %s and %s",
		    old->dc->listen, old->dc->database);
	reload_http(a, old->dc, conf->dc);
	dconf_unref(old);
}

void
api_stop(struct api *a)
{
	size_t i;

	if (a == NULL)
		return;
	pthread_mutex_lock(&a->mu);
	a->stopping = 1;
	pthread_mutex_unlock(&a->mu);
	/* Answer the parked long-polls (204) so they end in flight. */
	tick(a, 1);
	httpd_stop(a->httpd, (int)a->conf->dc->http_timeout_s);
	verdict_stop(a->verdict);
	sched_free(a->sched);
	for (i = 0; i < a->nstores; i++)
		store_close(a->stores[i]);
	free(a->stores);
	free(a->waiters);
	web_free(a->web);
	dconf_unref(a->conf);
	free(a->dbpath);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
