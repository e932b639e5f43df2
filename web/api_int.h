#ifndef WEB_API_INT_H
#define WEB_API_INT_H

/*
 * Inside the HTTP surface: what web/api.c (the one route table, its
 * dispatch and the server's state) shares with the handler files of
 * each area, web/api_runner.c, web/api_admin.c, the public reads
 * web/api_{jobs,hosts,trees,series,alerts,bisect,metrics}.c and the
 * dashboard's web/page_*.c (one file per area, as cgit's ui-*.c per page).
 * Not for use outside web/.
 *
 * A handler runs after its route's authorisation, with a store
 * connection of its thread (x->s); it validates its input completely
 * before it touches the store and always replies, every refusal being
 * {"error": "..."} naming the field.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/json.h"
#include "web/session.h"

#define LIST_DEFAULT 50
#define LIST_MAX 500

struct buf;
struct dconf;
struct dconf_runner;
struct httpd;
struct httpd_req;
struct sched;
struct store;
struct workq;
struct web;

struct waiter {
	struct httpd_req *req;
	int64_t deadline_ms; /* monotonic */
};

/* Buckets of the request latency histogram (web/api.c has the bounds,
 * /metrics prints them). */
#define API_NLAT 8
/* Routes in the one table at most (web/api.c asserts it). */
#define API_MAX_ROUTES 80

/* How a request to a route was answered, for its timing in /metrics. */
enum api_answer {
	API_RENDERED, /* no reply cache for it (a cookie, a token, a POST) */
	API_MISS,     /* cacheable, rendered afresh */
	API_HIT,      /* from the reply cache */
	API_SHARED,   /* with the reply of a render it waited for */
	API_NANSWERS
};

/* A route's handling time, summed in microseconds; all __atomic. */
struct api_route_time {
	uint64_t n, wall_us, cpu_us;
};

struct api {
	pthread_mutex_t mu; /* conf, stores, waiters */
	struct dconf *conf;
	char *dbpath;
	struct httpd *httpd;
	struct sched *sched; /* the composition root's (perfwatchd/main.c) */
	struct store_batch *batch; /* group commit of uploads */
	struct workq *renders;     /* web/render_pool.c */
	/* PostgreSQL: the requests the cache does not answer render in
	 * the pool too (render_pool_park with no key). */
	int renders_private;
	int stopping;
	struct store **stores; /* one per server thread, closed at stop */
	struct cache **caches; /* the same threads' reply caches */
	size_t nstores;
	struct waiter *waiters;
	size_t nwaiters;
	uint64_t http_count[6]; /* by status class; __atomic */
	/* Request latency histogram (le buckets, then +Inf), and the sum
	 * in microseconds; all __atomic.  Parked long-poll claims are
	 * counted too: their latency is the wait. */
	uint64_t http_lat[API_NLAT + 1];
	uint64_t http_lat_sum_us;
	/* Requests the reply caches (web/cache.h) answered, and those they
	 * could have but had nothing fresh for; __atomic. */
	uint64_t cache_hits, cache_misses;
	/* Each route's time in handle() (web/api.c), by answer: from the
	 * route's match to its reply, in the server thread, wall and that
	 * thread's CPU time (/metrics). */
	struct api_route_time route_time[API_MAX_ROUTES][API_NANSWERS];
	uint64_t runs_stored; /* __atomic */
	/* Bytes of artifacts handed out (GET /api/v1/artifacts); __atomic. */
	uint64_t artifact_bytes_served;
	struct web *web; /* dashboard state: sessions, cache */
	/* perfwatchd --role web: every route but a GET answers 503. */
	int reads_only;
	struct leases *leases; /* the workers it runs (/metrics); borrowed */
};

/* What a handler sees. */
struct ctx {
	struct api *a;
	struct httpd_req *r;
	struct dconf *conf;
	struct store *s;
	const struct dconf_runner *runner; /* runner routes */
	int64_t id[2];                     /* the path's '#' numbers */
	const char *rest; /* a '*' segment, or the path after a prefix */
	int64_t now;      /* the request's wall clock, seconds */
	int64_t online_s; /* a host is online when seen this recently */
	json_t *body;
	struct err err;
	/* Dashboard routes (web/page_*.c, web_begin). */
	json_t *keep; /* replies whose strings views borrow */
	int admin;    /* the request carries an admin session */
	char sid[SESSION_ID_LEN + 1];
	char csrf[SESSION_ID_LEN + 1];
};

typedef void api_handler(struct ctx *);

/*
 * Who may call a route: anyone, a runner's token, the admin token (401
 * without a bearer token, 403 with another), or an admin session posting
 * a dashboard form with its CSRF token (403).
 */
enum auth { AUTH_NONE, AUTH_RUNNER, AUTH_ADMIN, AUTH_SESSION };

/*
 * A row of the one table.  The pattern matches the whole path: '#' is a
 * decimal id of at most 63 bits (x->id[], two at most), '*' one last
 * segment, not empty (x->rest); a pattern ending in '/', other than "/",
 * is a prefix and what follows it, not empty and slashes allowed, is
 * x->rest; everything else is literal.
 */
struct route {
	const char *method;
	const char *pattern;
	enum auth auth;
	api_handler *fn;
	int page; /* the dashboard's (web/page_*.c): "web" in --routes */
};

/* The first route whose pattern and method match (x->id, x->rest
 * filled) and *status 200; NULL and *status 405 when only another
 * method's pattern matched the path, else 404. */
const struct route *api_route_find(const char *method, const char *path,
    int64_t id[2], const char **rest, int *status);

/* ---- what the dispatch (web/api.c) lends the render pool ---- */
struct cache_stamp;
/* The calling thread's store connection for a (opened on first use),
 * or NULL with e set. */
struct store *api_thread_store(struct api *a, struct err *e);
/* The route; a cacheable one's reads in one read transaction
 * (store_read_begin): one snapshot, one WAL read lock. */
void api_route_call(struct ctx *x, const struct route *rt, int cacheable);
/* Keeps the reply just made in the thread's reply cache under key k,
 * when it is a 200 without cookies and the store did not change while
 * it was made. */
void api_cache_keep(
    struct ctx *x, const struct buf *k, const struct cache_stamp *st);
/* Adds a request's wall and CPU seconds to its route's (struct api
 * route_time). */
void api_route_time_add(struct api *a, const struct route *rt,
    enum api_answer how, double wall, double cpu);

/* ---- replies: web/reply.h ---- */

/* ---- input: each 0, or -1 after replying 400 ---- */
/* The body as a JSON object (x->body); an empty body is {} when
 * allow_empty. */
int api_parse_body(struct ctx *, int allow_empty);
/* Replies 400 with x->err's message; returns -1. */
int api_bad(struct ctx *);
int api_only_keys(
    struct ctx *, json_t *o, const char *const *keys, const char *what);
/* A query parameter as an integer in [min, max]; dflt when absent. */
int api_query_int(struct ctx *, int64_t *out, const char *key, int64_t dflt,
    int64_t min, int64_t max);
/* A list's page: "limit" (LIST_DEFAULT, at most LIST_MAX) and "cursor"
 * (0, the first page); -1 after a 400 reply. */
int api_query_page(struct ctx *, int64_t *limit, int64_t *cursor);
/* A field that must be a string of at most max bytes (optional when
 * opt); the error names prefix + key. */
int api_str_field(struct ctx *, const char **out, json_t *o, const char *key,
    size_t max, int opt, const char *prefix);

/* ---- shared state ---- */
int64_t api_now_s(void); /* wall clock, seconds */
/* The heartbeat interval runners are told: lease/4 in [1, 10]. */
int64_t api_heartbeat_s(const struct dconf *);
/* The registered host of the calling runner, or -1 after replying. */
int64_t api_runner_host(struct ctx *);

/* ---- the handlers of the table (web/api.c) ---- */
/* web/api_runner.c */
api_handler api_runner_register, api_runner_heartbeat, api_runner_claim,
    api_runner_run, api_runner_log, api_runner_finish, api_runner_pack;
/* web/api_builds.c: the routes of shared builds; a builder's claim
 * (1 after replying with a build, 0 when there is none) and heartbeat;
 * the upload's head (the body cap, 0 after replying) and a build's
 * JSON. */
api_handler api_builds_log, api_builds_put, api_builds_finish, api_artifact_get,
    api_read_builds, api_read_build, api_builds_cancel;
int api_builds_claim(struct ctx *, int64_t host, const char *claim_id);
void api_builds_heartbeat(struct ctx *, int64_t host, int64_t build);
size_t api_builds_put_head(struct ctx *);
/* The builds' lines of GET /metrics. */
void api_builds_metrics(struct ctx *, struct buf *);
struct store_build_row;
json_t *api_build_json(struct ctx *, const struct store_build_row *);
/* "build" of a job's JSON: the shared build it is linked to, {"id",
 * "state", "build_id", "error"}, or null.  0, or the store's error. */
int api_job_build_json(struct store *, int64_t job_id, json_t **out);
/* Each job's of job_ids[0..n) into out[0..n), in one read: 0, or the
 * store's error (out[] NULL). */
int api_jobs_build_json(
    struct store *, const int64_t *job_ids, size_t n, json_t **out);
/* web/api_admin.c */
api_handler api_admin_submit, api_admin_cancel, api_admin_retry,
    api_admin_host_clear, api_admin_series_post, api_admin_bisect_post,
    api_admin_bisect_cancel;
/* The public reads: web/api_jobs.c (jobs, raw output, pairs),
 * web/api_hosts.c, web/api_trees.c (trees, commits), web/api_series.c
 * (series, latency), web/api_alerts.c, web/api_bisect.c and
 * web/api_metrics.c (/healthz, /metrics). */
api_handler api_read_jobs, api_read_job, api_read_raw, api_read_hosts,
    api_read_pair, api_read_trees, api_read_commits, api_read_series,
    api_read_healthz, api_read_metrics, api_read_alerts, api_read_alert,
    api_read_bisect, api_read_bisects, api_read_latency;
/* What GET /api/v1/jobs/{id} answers: the job, its runs, its log tail
 * and the kernel its runs ran.  0, or a store error (*out NULL). */
int api_job_json(struct store *, int64_t id, json_t **out);
/* What GET /api/v1/pairs/{id} answers: the pair, its two jobs, its
 * comparisons, the kernel of each side and its sides as the pair page
 * shows them (web/sides.h, strings kept by x).  0, or a store error. */
int api_pair_json(struct ctx *x, int64_t id, json_t **out);
/* What GET /api/v1/trees and /api/v1/commits answer (dc: the configured
 * trees; cursor NULL from the first): 0, or a store error. */
struct daemon_config;
int api_trees_json(struct store *, const struct daemon_config *dc,
    const char *cursor, int64_t limit, json_t **out);
int api_commits_json(struct store *, const char *tree, const char *branch,
    int64_t limit, int64_t cursor, json_t **out);
/* What GET /api/v1/bisections/{id} answers ({"bisection": {..., "steps"}}:
 * 0, ERR_NOTFOUND or -1) and GET /api/v1/bisections (newest first, older
 * than cursor, 0: from the newest; 0 or -1). */
int api_bisect_json(struct store *, int64_t id, json_t **out);
/* Time to report over the series seen since since (the newest 1000),
 * per stage (daemon/series_latency.h), as GET /api/v1/latency and the
 * series page show it; *nseries how many: 0, or a store error. */
struct series_stage_sum;
int api_latency_sum(struct store *, int64_t since, struct series_stage_sum *sum,
    size_t *nseries);
int api_bisects_json(
    struct store *, int64_t limit, int64_t cursor, json_t **out);

#endif
