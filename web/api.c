/*
 * The HTTP surface (docs/API.md): the one route table, as cgit's
 * commands, its matcher, the one authorisation step, the per-thread
 * store connections, the long-poll waiters and the server's start and
 * stop; the cache misses' renders are web/render_pool.c's.  The
 * handlers are in one file per area: web/api_runner.c (what runners
 * call), web/api_admin.c (what the admin token may change),
 * web/api_{jobs,hosts,trees,series,alerts,bisect,metrics}.c (the public
 * reads, one file an area) and web/page_*.c (the dashboard).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/database.h"
#include "common/files.h"
#include "common/json.h"
#include "common/log.h"
#include "common/workq.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "store/batch.h"
#include "store/hosts.h"
#include "store/store.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/cache.h"
#include "web/httpd.h"
#include "web/render_pool.h"
#include "web/reply.h"
#include "web/web.h"

/* Upper bounds (seconds) of the latency histogram's buckets. */
static const double lat_le[API_NLAT] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1,
	1, 10 };

static _Thread_local struct store *tl_store;
static _Thread_local struct cache *tl_cache; /* tl_store's replies */
static _Thread_local struct api *tl_api;

int64_t
api_now_s(void)
{
	return (int64_t)time(NULL);
}

/* ---- input ---- */

/* Parses the body as a JSON object; an empty body is {} when allowed.
 * 0, or -1 after replying 400. */
int
api_parse_body(struct ctx *x, int allow_empty)
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

int
api_bad(struct ctx *x)
{
	reply_err(x, 400, "%s", err_msg(&x->err));
	return -1;
}

int
api_only_keys(
    struct ctx *x, json_t *o, const char *const *keys, const char *what)
{
	if (pwjson_only_keys(o, keys, what, &x->err) == -1)
		return api_bad(x);
	return 0;
}

/* A query parameter as an integer in [min, max]; dflt when absent. */
int
api_query_int(struct ctx *x, int64_t *out, const char *key, int64_t dflt,
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

int
api_query_page(struct ctx *x, int64_t *limit, int64_t *cursor)
{
	if (api_query_int(x, limit, "limit", LIST_DEFAULT, 1, LIST_MAX) == -1)
		return -1;
	return api_query_int(x, cursor, "cursor", 0, 0, INT64_MAX);
}

/* A field that must be a string of at most max bytes (optional when
 * opt). */
int
api_str_field(struct ctx *x, const char **out, json_t *o, const char *key,
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

struct store *
api_thread_store(struct api *a, struct err *e)
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
	tl_cache = cache_new();
	pthread_mutex_lock(&a->mu);
	a->stores =
	    xreallocarray(a->stores, a->nstores + 1, sizeof(*a->stores));
	a->caches =
	    xreallocarray(a->caches, a->nstores + 1, sizeof(*a->caches));
	a->caches[a->nstores] = tl_cache;
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

int64_t
api_heartbeat_s(const struct dconf *c)
{
	int64_t h = c->dc->lease_s / 4;

	return h < 1 ? 1 : h > 10 ? 10 : h;
}

/* The registered host of the calling runner, or -1 after replying. */
int64_t
api_runner_host(struct ctx *x)
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

/*
 * The one route table: every route the server answers, with who may
 * call it (web/api_int.h: struct route, enum auth).  The first row
 * whose pattern and method match wins; `perfwatchd --routes` prints
 * the rows in this order, and t0305 sweeps them.
 */
static const struct route routes[] = {
	/* Bisections (web/api_admin.c, web/api_bisect.c). */
	{ "POST", "/api/v1/bisect", AUTH_ADMIN, api_admin_bisect_post, 0 },
	{ "GET", "/api/v1/bisect", AUTH_NONE, api_read_bisects, 0 },
	/* Page-like: its JSON borrows from x->keep as its page
	   (web_bisect_json). */
	{ "GET", "/api/v1/bisect/#", AUTH_NONE, api_read_bisect, 1 },
	{ "POST", "/api/v1/bisect/#/cancel", AUTH_ADMIN,
	    api_admin_bisect_cancel, 0 },
	{ "GET", "/api/v1/alerts", AUTH_NONE, api_read_alerts, 0 },
	{ "GET", "/api/v1/alerts/#", AUTH_NONE, api_read_alert, 0 },
	/* Runners (web/api_runner.c). */
	{ "POST", "/api/v1/runners/register", AUTH_RUNNER, api_runner_register,
	    0 },
	{ "POST", "/api/v1/runners/heartbeat", AUTH_RUNNER,
	    api_runner_heartbeat, 0 },
	{ "POST", "/api/v1/jobs/claim", AUTH_RUNNER, api_runner_claim, 0 },
	{ "POST", "/api/v1/jobs/#/runs", AUTH_RUNNER, api_runner_run, 0 },
	{ "POST", "/api/v1/jobs/#/log", AUTH_RUNNER, api_runner_log, 0 },
	{ "POST", "/api/v1/jobs/#/finish", AUTH_RUNNER, api_runner_finish, 0 },
	{ "GET", "/api/v1/packs/*", AUTH_RUNNER, api_runner_pack, 0 },
	/* Shared kernel builds (web/api_builds.c). */
	{ "POST", "/api/v1/builds/#/log", AUTH_RUNNER, api_builds_log, 0 },
	{ "PUT", "/api/v1/builds/#/files/*", AUTH_RUNNER, api_builds_put, 0 },
	{ "POST", "/api/v1/builds/#/finish", AUTH_RUNNER, api_builds_finish,
	    0 },
	{ "GET", "/api/v1/artifacts/*", AUTH_RUNNER, api_artifact_get, 0 },
	{ "GET", "/api/v1/builds", AUTH_NONE, api_read_builds, 0 },
	{ "GET", "/api/v1/builds/#", AUTH_NONE, api_read_build, 0 },
	{ "POST", "/api/v1/builds/#/cancel", AUTH_ADMIN, api_builds_cancel, 0 },
	/* Admin (web/api_admin.c) and reads (web/api_*.c by area). */
	{ "POST", "/api/v1/submit", AUTH_ADMIN, api_admin_submit, 0 },
	{ "POST", "/api/v1/jobs/#/cancel", AUTH_ADMIN, api_admin_cancel, 0 },
	{ "POST", "/api/v1/jobs/#/retry", AUTH_ADMIN, api_admin_retry, 0 },
	{ "GET", "/api/v1/jobs", AUTH_NONE, api_read_jobs, 0 },
	{ "GET", "/api/v1/jobs/#", AUTH_NONE, api_read_job, 0 },
	{ "GET", "/api/v1/jobs/#/runs/#/raw", AUTH_NONE, api_read_raw, 0 },
	{ "GET", "/api/v1/hosts", AUTH_NONE, api_read_hosts, 0 },
	{ "POST", "/api/v1/hosts/#/clear", AUTH_ADMIN, api_admin_host_clear,
	    0 },
	{ "GET", "/api/v1/pairs/#", AUTH_NONE, api_read_pair, 0 },
	{ "GET", "/api/v1/trees", AUTH_NONE, api_read_trees, 0 },
	{ "GET", "/api/v1/commits", AUTH_NONE, api_read_commits, 0 },
	{ "POST", "/api/v1/series", AUTH_ADMIN, api_admin_series_post, 0 },
	{ "GET", "/api/v1/series", AUTH_NONE, api_read_series, 0 },
	{ "GET", "/api/v1/latency", AUTH_NONE, api_read_latency, 0 },
	{ "GET", "/healthz", AUTH_NONE, api_read_healthz, 0 },
	{ "GET", "/metrics", AUTH_NONE, api_read_metrics, 0 },
	/* The dashboard (web/page_*.c): pages, login, and their JSON. */
	{ "GET", "/", AUTH_NONE, web_overview, 1 },
	{ "GET", "/commit/", AUTH_NONE, web_commit, 1 },
	{ "GET", "/series/", AUTH_NONE, web_series, 1 },
	{ "GET", "/pair/", AUTH_NONE, web_pair, 1 },
	{ "GET", "/history", AUTH_NONE, web_history, 1 },
	{ "GET", "/regressions", AUTH_NONE, web_regressions, 1 },
	{ "GET", "/bisect/", AUTH_NONE, web_bisect, 1 },
	{ "POST", "/regressions/", AUTH_SESSION, web_triage, 1 },
	{ "GET", "/hosts", AUTH_NONE, web_hosts, 1 },
	{ "GET", "/jobs", AUTH_NONE, web_jobs, 1 },
	{ "GET", "/jobs/", AUTH_NONE, web_job, 1 },
	{ "GET", "/builds", AUTH_NONE, web_builds, 1 },
	{ "GET", "/builds/", AUTH_NONE, web_build, 1 },
	{ "GET", "/series", AUTH_NONE, web_series_list, 1 },
	{ "GET", "/trees", AUTH_NONE, web_trees, 1 },
	{ "GET", "/commits", AUTH_NONE, web_commits, 1 },
	{ "GET", "/bisect", AUTH_NONE, web_bisects, 1 },
	{ "GET", "/alerts", AUTH_NONE, web_alerts, 1 },
	{ "GET", "/alerts/", AUTH_NONE, web_alert, 1 },
	{ "GET", "/login", AUTH_NONE, web_login, 1 },
	{ "POST", "/login", AUTH_NONE, web_login_post, 1 },
	{ "POST", "/logout", AUTH_SESSION, web_logout, 1 },
	{ "GET", "/favicon.ico", AUTH_NONE, web_favicon, 1 },
	{ "GET", "/api/v1/overview", AUTH_NONE, web_overview_json, 1 },
	{ "GET", "/api/v1/commits/", AUTH_NONE, web_commit_json, 1 },
	{ "GET", "/api/v1/series/", AUTH_NONE, web_series_json, 1 },
	{ "GET", "/api/v1/comparisons", AUTH_NONE, web_comparisons_json, 1 },
	{ "GET", "/api/v1/regressions", AUTH_NONE, web_regressions_json, 1 },
	{ "GET", "/api/v1/history", AUTH_NONE, web_history_json, 1 },
	{ "POST", "/api/v1/regressions/", AUTH_ADMIN, web_triage_json, 1 },
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))
_Static_assert(NROUTES <= API_MAX_ROUTES, "raise API_MAX_ROUTES");

int
api_route_at(size_t i, const char **method, const char **pattern,
    const char **auth, const char **table)
{
	static const char *const names[] = { [AUTH_NONE] = "none",
		[AUTH_RUNNER] = "runner",
		[AUTH_ADMIN] = "admin",
		[AUTH_SESSION] = "session" };

	if (i >= NROUTES)
		return -1;
	*method = routes[i].method;
	*pattern = routes[i].pattern;
	*auth = names[routes[i].auth];
	*table = routes[i].page ? "web" : "api";
	return 0;
}

/* 1 when path matches pattern (struct route says how); the '#' numbers
 * go to id[], a '*' segment or a prefix's rest to *rest (pointing into
 * path, up to its end). */
static int
match(const char *pattern, const char *path, int64_t id[2], const char **rest)
{
	const char *start = pattern;
	int n = 0;

	while (*pattern && *path) {
		if (*pattern == '*') {
			if (*path == '/' || strchr(path, '/') != NULL)
				return 0;
			*rest = path;
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
	if (*pattern == '\0' && *path != '\0' && pattern - start > 1 &&
	    pattern[-1] == '/') {
		*rest = path;
		return 1;
	}
	return *pattern == '\0' && *path == '\0';
}

const struct route *
api_route_find(const char *method, const char *path, int64_t id[2],
    const char **rest, int *status)
{
	size_t i;

	*status = 404;
	for (i = 0; i < NROUTES; i++) {
		*rest = "";
		if (!match(routes[i].pattern, path, id, rest))
			continue;
		*status = 405;
		if (strcmp(routes[i].method, method) == 0) {
			*status = 200;
			return &routes[i];
		}
	}
	*rest = "";
	return NULL;
}

/* The bearer token against the route's role: 0, or -1 after replying
 * 401/403. */
static int
authorise_token(struct ctx *x, enum auth need)
{
	const char *tok;
	int who;

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

/* Authorisation, before the route's handler: 0, or -1 after replying
 * 401/403. */
static int
authorise(struct ctx *x, enum auth need)
{
	if (need == AUTH_NONE)
		return 0;
	if (need == AUTH_SESSION)
		return web_session_ok(x);
	return authorise_token(x, need);
}

/*
 * The body a route takes, decided on its head: a GET none; the run
 * upload (raw output, host state, profile), the log append, the submit
 * (an inline job_yaml) and the series mbox up to http.max_body (all need
 * a token, checked before the body is read); the login form, the one
 * anonymous POST, a few form fields; every other route a small JSON
 * object or form.
 */
static size_t
route_body_cap(const struct route *rt)
{
	static const char *const big[] = { "/api/v1/jobs/#/runs",
		"/api/v1/jobs/#/log", "/api/v1/submit", "/api/v1/series",
		"/api/v1/builds/#/log" };
	size_t i;

	if (strcmp(rt->method, "GET") == 0)
		return 0;
	if (rt->auth == AUTH_NONE)
		return (size_t)CAP_HTTP_ANON_BODY;
	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		if (!rt->page && strcmp(rt->pattern, big[i]) == 0)
			return SIZE_MAX;
	return (size_t)CAP_HTTP_SMALL_BODY;
}

/* A daemon of role web answers reads only: 0, or -1 after replying
 * 503. */
static int
role_refuses(struct ctx *x, const struct route *rt)
{
	if (!x->a->reads_only || strcmp(rt->method, "GET") == 0)
		return 0;
	reply_err(x, 503,
	    "this perfwatchd serves reads only (--role web): send %s %s to "
	    "a perfwatchd of role all",
	    rt->method, httpd_path(x->r));
	return -1;
}

/* The route of the request, or NULL after replying 404/405. */
static const struct route *
route_of(struct ctx *x)
{
	const struct route *rt;
	int status;

	rt = api_route_find(
	    httpd_method(x->r), httpd_path(x->r), x->id, &x->rest, &status);
	if (rt == NULL && status == 405)
		reply_err(
		    x, 405, "method %s not allowed here", httpd_method(x->r));
	else if (rt == NULL)
		reply_err(x, 404, "no route %s", httpd_path(x->r));
	return rt;
}

/*
 * The request's head (httpd_opts.head), before any body byte is read:
 * the route and method (404/405), the token of a token route and the
 * login session of a form route (401/403) are decided here, so nobody
 * without them makes the daemon buffer a body; the reply is the
 * route's body cap, which httpd applies to Content-Length and to the
 * bytes as they come.  handle() checks all of it again on the whole
 * request.
 */
static size_t
head(struct httpd_req *r, void *arg)
{
	struct ctx x;
	const struct route *rt;
	int ok;
	size_t cap = 0;

	memset(&x, 0, sizeof(x));
	x.a = arg;
	x.r = r;
	x.conf = conf_get(x.a);
	x.now = api_now_s();
	if ((rt = route_of(&x)) == NULL || role_refuses(&x, rt))
		goto out;
	if (rt->auth == AUTH_RUNNER || rt->auth == AUTH_ADMIN) {
		if (authorise_token(&x, rt->auth) == -1)
			goto out;
	} else if (rt->auth == AUTH_SESSION) {
		web_begin(&x);
		ok = web_session_head_ok(&x);
		web_end(&x);
		if (ok == -1)
			goto out;
	}
	/* An artifact upload streams its body to the store (its own
	 * checks and cap, web/api_builds.c). */
	if (rt->fn == api_builds_put) {
		cap = api_builds_put_head(&x);
		goto out;
	}
	cap = route_body_cap(rt);
	{
		const char *cl = httpd_header(r, "Content-Length");
		unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;

		if (cap != SIZE_MAX && n > cap)
			reply_err(&x, 413,
			    "body: %llu bytes, more than the %zu %s %s takes",
			    n, cap, rt->method, rt->pattern);
	}
out:
	dconf_unref(x.conf);
	return cap;
}

/*
 * Whether a route's replies may be kept (web/cache.h): the public GET
 * routes whose reply is a function of the store, the configuration and
 * the clock.  Not /healthz and /metrics (the process's own state), the
 * login and logout pages (cookies).
 */
static int
route_cacheable(const struct route *rt)
{
	static const char *const skip[] = { "/healthz", "/metrics", "/login",
		"/favicon.ico" };
	size_t i;

	if (rt->auth != AUTH_NONE || strcmp(rt->method, "GET") != 0)
		return 0;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(rt->pattern, skip[i]) == 0)
			return 0;
	return 1;
}

/* The cache key of a request: its path and query arguments. */
static void
cache_key(struct httpd_req *r, struct buf *k)
{
	buf_puts(k, httpd_path(r));
	buf_putc(k, '?');
	httpd_query_all(r, k);
}

/* 1 after replying from the cache. */
static int
cache_serve(struct ctx *x, const struct buf *k, const struct cache_stamp *st)
{
	struct cache_reply cr;
	int i;

	if (!cache_get(tl_cache, &cr, k->data, k->len, st))
		return 0;
	httpd_reply(x->r, 200, cr.content_type, cr.body, cr.len);
	for (i = 0; i < cr.nhdr; i++)
		httpd_reply_header(x->r, cr.hdr[2 * i], cr.hdr[2 * i + 1]);
	return 1;
}

void
api_cache_keep(struct ctx *x, const struct buf *k, const struct cache_stamp *st)
{
	struct cache_reply cr;
	struct store_version now;
	int i;

	if (httpd_status(x->r) != 200 || store_data_version(x->s, &now) != 0 ||
	    now.gen != st->v.gen)
		return;
	memset(&cr, 0, sizeof(cr));
	cr.body = httpd_reply_body(x->r, &cr.len, &cr.content_type);
	cr.nhdr = httpd_reply_nheaders(x->r);
	if (cr.body == NULL || cr.nhdr > CACHE_HEADERS)
		return;
	for (i = 0; i < cr.nhdr; i++) {
		httpd_reply_header_at(
		    x->r, i, &cr.hdr[2 * i], &cr.hdr[2 * i + 1]);
		if (strcasecmp(cr.hdr[2 * i], "Set-Cookie") == 0)
			return;
	}
	cache_put(tl_cache, k->data, k->len, &cr, st);
}

void
api_route_time_add(struct api *a, const struct route *rt, enum api_answer how,
    double wall, double cpu)
{
	struct api_route_time *t = &a->route_time[rt - routes][how];

	__atomic_add_fetch(&t->n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->wall_us, (uint64_t)(wall > 0 ? wall * 1e6 : 0),
	    __ATOMIC_RELAXED);
	__atomic_add_fetch(
	    &t->cpu_us, (uint64_t)(cpu > 0 ? cpu * 1e6 : 0), __ATOMIC_RELAXED);
}

/* Adds a request's time in this thread since wall0 and cpu0. */
static void
route_timed(struct api *a, const struct route *rt, enum api_answer how,
    double wall0, double cpu0)
{
	api_route_time_add(
	    a, rt, how, clock_mono_s() - wall0, clock_thread_cpu_s() - cpu0);
}

void
api_route_call(struct ctx *x, const struct route *rt, int cacheable)
{
	int reading = cacheable && store_read_begin(x->s) == 0;

	if (cacheable && !reading)
		store_errclear(x->s); /* the reads go on without */
	rt->fn(x);
	if (reading)
		store_read_end(x->s);
}

static void
handle(struct httpd_req *r, void *arg)
{
	struct ctx x;
	const struct route *rt;
	struct cache_stamp st;
	struct buf key = BUF_INIT(CAP_HTTP_PATH + 64 * 1024);
	enum api_answer how = API_RENDERED;
	double wall0 = clock_mono_s(), cpu0 = clock_thread_cpu_s();
	int cacheable, parked = 0;

	/* A request parked on a render (render_pool_park) is answered
	 * now. */
	if (httpd_calls(r) > 1 && render_pool_resume(arg, r))
		return;
	memset(&x, 0, sizeof(x));
	memset(&st, 0, sizeof(st));
	x.a = arg;
	x.r = r;
	x.conf = conf_get(x.a);
	x.now = api_now_s();
	x.online_s = 3 * api_heartbeat_s(x.conf);
	if ((rt = route_of(&x)) == NULL)
		goto out;
	if (role_refuses(&x, rt)) {
		rt = NULL;
		goto out;
	}
	/* A page's session is read first: its auth, headers and forms
	 * depend on it. */
	if (rt->page)
		web_begin(&x);
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
	if ((x.s = api_thread_store(x.a, &x.err)) == NULL) {
		reply_err(&x, 503, "database: %s", err_msg(&x.err));
		goto out;
	}
	/* Anonymous requests only: a session or a token may change what a
	 * page shows. */
	cacheable = route_cacheable(rt);
	if (cacheable && httpd_header(r, "Cookie") == NULL &&
	    httpd_header(r, "Authorization") == NULL &&
	    store_data_version(x.s, &st.v) == 0) {
		st.conf = x.conf;
		st.now_ms = clock_mono_ms();
		cache_key(r, &key);
		if (!buf_failed(&key)) {
			if (cache_serve(&x, &key, &st)) {
				how = API_HIT;
				__atomic_add_fetch(
				    &x.a->cache_hits, 1, __ATOMIC_RELAXED);
			} else {
				enum render_park p = render_pool_park(
				    &x, rt, &key, &st, wall0, cpu0);

				how =
				    p == RENDER_SHARED ? API_SHARED : API_MISS;
				if (p == RENDER_NOT_PARKED || p == RENDER_LEADS)
					__atomic_add_fetch(&x.a->cache_misses,
					    1, __ATOMIC_RELAXED);
				if (p == RENDER_LEADS || p == RENDER_WAITS) {
					parked = 1; /* timed when answered */
					goto out;
				}
				if (p == RENDER_NOT_PARKED) {
					api_route_call(&x, rt, cacheable);
					api_cache_keep(&x, &key, &st);
				}
			}
			goto out;
		}
	}
	/* On PostgreSQL a render mostly waits on the server: off the
	 * event thread, which meanwhile serves its other connections. */
	if (cacheable && x.a->renders_private &&
	    render_pool_park(&x, rt, NULL, NULL, wall0, cpu0) == RENDER_LEADS) {
		parked = 1; /* timed when answered */
		goto out;
	}
	api_route_call(&x, rt, cacheable);
out:
	if (rt != NULL && rt->page)
		web_end(&x);
	if (rt != NULL && !parked)
		route_timed(x.a, rt, how, wall0, cpu0);
	json_decref(x.body);
	dconf_unref(x.conf);
	buf_release(&key);
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
	render_pool_gone(r);
	if (cls >= 1 && cls <= 5)
		__atomic_add_fetch(&a->http_count[cls], 1, __ATOMIC_RELAXED);
	for (i = 0; i < API_NLAT && age > lat_le[i]; i++)
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

/* Ticker (the scheduler's thread, api_tick in sched_start): wake parked
 * claims when the queue moved or their time is up. */
void
api_tick(void *arg, int changed)
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

struct api *
api_new(struct dconf *conf, struct sched *sched)
{
	struct api *a = xcalloc(1, sizeof(*a));

	pthread_mutex_init(&a->mu, NULL);
	a->conf = dconf_ref(conf);
	a->dbpath = xstrdup(conf->dc->database);
	a->sched = sched;
	a->web = web_new();
	return a;
}

int
api_listen(struct api *a, struct err *e)
{
	const struct daemon_config *dc = a->conf->dc;
	struct httpd_opts o;
	struct buf cert = BUF_INIT(1 << 20), key = BUF_INIT(1 << 20);
	int rc = -1;

	memset(&o, 0, sizeof(o));
	o.listen = dc->listen;
	o.threads = (unsigned)dc->http_threads;
	o.max_connections = (unsigned)dc->http_max_connections;
	o.per_ip = (unsigned)dc->http_per_ip;
	o.per_ip_rate = (unsigned)dc->http_per_ip_rate;
	o.per_ip_burst = (unsigned)dc->http_per_ip_burst;
	o.timeout_s = (unsigned)dc->http_timeout_s;
	o.max_body = (size_t)dc->http_max_body;
	o.head = head;
	if (dc->tls_cert_file != NULL && dc->tls_key_file != NULL) {
		if (files_read(&cert, dc->tls_cert_file, 1 << 20) != 0 ||
		    files_read(&key, dc->tls_key_file, 1 << 20) != 0) {
			err_set(e, "tls: %s: %s",
			    cert.len == 0 ? dc->tls_cert_file
			                  : dc->tls_key_file,
			    strerror(errno));
			goto out;
		}
		o.tls_cert = cert.data;
		o.tls_key = key.data;
	}
	if (a->batch == NULL &&
	    store_batch_start(&a->batch, a->dbpath, e) == -1)
		goto out;
	/* Cache misses render here, off the event threads
	 * (render_pool_park): on SQLite a thread a CPU (at most 8), each
	 * busy for all of its render.  On PostgreSQL a render thread
	 * mostly waits on the server, a round trip a statement: four a
	 * CPU (at most 32, a connection each), and the requests the
	 * cache does not answer render there too. */
	if (a->renders == NULL) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		int pg = database_is_pg(a->dbpath);

		n = n < 1 ? 1 : n;
		if (pg)
			n = 4 * n > 32 ? 32 : 4 * n;
		else
			n = n > 8 ? 8 : n;
		a->renders = workq_new((int)n);
		a->renders_private = pg;
	}
	rc = httpd_start(&a->httpd, &o, handle, done, a, e);
out:
	buf_release(&cert);
	if (key.len > 0)
		memset(key.data, 0, key.len);
	buf_release(&key);
	return rc;
}

void
api_set_role(struct api *a, int reads_only, struct leases *leases)
{
	a->reads_only = reads_only;
	a->leases = leases;
}

int
api_port(const struct api *a)
{
	return httpd_port(a->httpd);
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
		{ "http.per_ip_rate",
		    offsetof(struct daemon_config, http_per_ip_rate) },
		{ "http.per_ip_burst",
		    offsetof(struct daemon_config, http_per_ip_burst) },
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

	old = dconf_swap(&a->conf, &a->mu, conf);
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
	api_tick(a, 1);
	/* Store and answer the parked uploads; later ones are refused. */
	store_batch_stop(a->batch);
	/* Render what is queued and unpark its requests; later misses
	 * render in their event thread. */
	if (a->renders != NULL)
		workq_stop(a->renders);
	httpd_stop(a->httpd, (int)a->conf->dc->http_timeout_s);
	workq_free(a->renders);
	store_batch_release(a->batch);
	for (i = 0; i < a->nstores; i++) {
		store_close(a->stores[i]);
		cache_free(a->caches[i]);
	}
	free(a->stores);
	free(a->caches);
	free(a->waiters);
	web_free(a->web);
	dconf_unref(a->conf);
	free(a->dbpath);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
