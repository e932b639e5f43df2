/*
 * Fuzzes the request bodies of the API's POST routes (web/api*.c):
 * runner register, heartbeat, claim, run upload, log, finish, the admin
 * submit, series (mbox) and bisect routes, the dashboard's triage (JSON) and
 * login (a form), through the daemon's own
 * dispatch (handle(): route table, authorisation, the handler).  No
 * server: this file includes web/api.c and answers the httpd_* calls
 * the handlers make (the one part replaced; web/httpd.c is
 * libmicrohttpd's).  The store is real: SQLite in a scratch directory,
 * made once per process with a registered runner and one submitted pair,
 * so uploads reach the store's checks too.
 *
 * The first byte picks the request.  Below 0x80 it is a POST: the byte
 * picks the route and the rest is the body.  From 0x80 it is a GET of
 * every route table (the API's and the dashboard's): the rest is the
 * path and query string ("/api/v1/jobs?limit=5&cursor=3"), both fuzzed,
 * the query split and %-decoded as libmicrohttpd does, and the low two
 * bits pick the token (none, the runner's, the admin's, a wrong one).
 * The contract: every request gets a reply (or is parked, a claim's
 * long-poll), no reply is a 5xx (an input the handler let through to
 * fail later), and every 4xx of /api/ is {"error": "..."}.
 *
 * make fuzz (clang -fsanitize=fuzzer,address,undefined).
 */
#include "daemon/sched.h"
#include "web/api.c"

#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* ---- the request, as the handlers see it ---- */

#define FUZZ_QUERY_ARGS 64

struct httpd_req {
	const char *method, *path, *auth;
	const char *body;
	size_t len;
	char *qk[FUZZ_QUERY_ARGS], *qv[FUZZ_QUERY_ARGS]; /* decoded */
	size_t nq;
	int calls, status, parked;
	void *slot;
	char *reply;
	size_t reply_len;
};

const char *
httpd_method(const struct httpd_req *r)
{
	return r->method;
}

const char *
httpd_path(const struct httpd_req *r)
{
	return r->path;
}

const char *
httpd_query(const struct httpd_req *r, const char *key)
{
	size_t i;

	/* The first one, as MHD_lookup_connection_value finds it. */
	for (i = 0; i < r->nq; i++)
		if (strcmp(r->qk[i], key) == 0)
			return r->qv[i];
	return NULL;
}

/* %XX and '+' decoded in place, as libmicrohttpd does query arguments. */
static void
unescape(char *s)
{
	char *o = s, hex[3] = { 0, 0, 0 };

	for (; *s; s++) {
		if (*s == '+') {
			*o++ = ' ';
		} else if (*s == '%' && isxdigit((unsigned char)s[1]) &&
		    isxdigit((unsigned char)s[2])) {
			hex[0] = s[1];
			hex[1] = s[2];
			*o++ = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Splits "k=v&k2=v2" (modified in place) into r's arguments. */
static void
split_query(struct httpd_req *r, char *q)
{
	char *save = NULL, *kv, *eq;

	for (kv = strtok_r(q, "&", &save);
	     kv != NULL && r->nq < FUZZ_QUERY_ARGS;
	     kv = strtok_r(NULL, "&", &save)) {
		eq = strchr(kv, '=');
		if (eq != NULL)
			*eq++ = '\0';
		unescape(kv);
		if (eq != NULL)
			unescape(eq);
		r->qk[r->nq] = kv;
		r->qv[r->nq++] = eq != NULL ? eq : (char *)"";
	}
}

const char *
httpd_header(const struct httpd_req *r, const char *name)
{
	return strcmp(name, "Authorization") == 0 ? r->auth : NULL;
}

const char *
httpd_body(const struct httpd_req *r, size_t *len)
{
	*len = r->len;
	return r->body;
}

const char *
httpd_peer(const struct httpd_req *r)
{
	(void)r;
	return "127.0.0.1";
}

int
httpd_calls(const struct httpd_req *r)
{
	return r->calls;
}

int
httpd_tls(const struct httpd_req *r)
{
	(void)r;
	return 0;
}

void **
httpd_slot(struct httpd_req *r)
{
	return &r->slot;
}

int
httpd_status(const struct httpd_req *r)
{
	return r->status;
}

double
httpd_age_s(const struct httpd_req *r)
{
	(void)r;
	return 0;
}

void
httpd_reply_take(struct httpd_req *r, int status, const char *content_type,
    char *body, size_t len)
{
	(void)content_type;
	if (r->status != 0) {
		free(body);
		return;
	}
	r->status = status;
	r->reply = body;
	r->reply_len = len;
}

void
httpd_reply(struct httpd_req *r, int status, const char *content_type,
    const char *body, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, body, len);
	copy[len] = '\0';
	httpd_reply_take(r, status, content_type, copy, len);
}

void
httpd_reply_header(struct httpd_req *r, const char *name, const char *value)
{
	(void)r;
	(void)name;
	(void)value;
}

/* The reply cache's view of the reply (web/cache.h): no headers are
 * kept here, and the content type is not. */
const char *
httpd_reply_body(
    const struct httpd_req *r, size_t *len, const char **content_type)
{
	*len = r->reply_len;
	*content_type = "application/octet-stream";
	return r->reply;
}

void
httpd_reply_clear(struct httpd_req *r)
{
	free(r->reply);
	r->reply = NULL;
	r->reply_len = 0;
	r->status = 0;
}

int
httpd_reply_nheaders(const struct httpd_req *r)
{
	(void)r;
	return 0;
}

void
httpd_reply_header_at(
    const struct httpd_req *r, int i, const char **name, const char **value)
{
	(void)r;
	(void)i;
	*name = *value = "";
}

void
httpd_query_all(const struct httpd_req *r, struct buf *b)
{
	size_t i;

	for (i = 0; i < r->nq; i++) {
		buf_puts(b, r->qk[i]);
		buf_putc(b, '\x1f');
		buf_puts(b, r->qv[i] ? r->qv[i] : "");
		buf_putc(b, '\x1e');
	}
}

void
httpd_park(struct httpd_req *r)
{
	r->parked = 1;
}

void
httpd_unpark(struct httpd_req *r)
{
	/* From the upload batch writer's thread. */
	__atomic_store_n(&r->parked, 0, __ATOMIC_RELEASE);
}

/* Uploads and downloads (web/api_builds.c): the fuzzed requests hold
 * their body in memory, so an upload finds no sink and is refused, and
 * a download's file is closed at once with its status kept. */
void
httpd_sink(struct httpd_req *r, int (*write)(void *, const void *, size_t),
    void (*close_fn)(void *), void *arg, uint64_t max)
{
	(void)r;
	(void)write;
	(void)max;
	close_fn(arg);
}

void *
httpd_sink_arg(const struct httpd_req *r)
{
	(void)r;
	return NULL;
}

int
httpd_sink_failed(const struct httpd_req *r)
{
	(void)r;
	return 0;
}

void
httpd_reply_fd(struct httpd_req *r, int status, const char *content_type,
    int fd, uint64_t off, uint64_t len)
{
	(void)off;
	(void)len;
	close(fd);
	httpd_reply(r, status, content_type, "", 0);
}

/* The server itself is never started here. */
int
httpd_start(struct httpd **out, const struct httpd_opts *o, httpd_handler h,
    httpd_done d, void *arg, struct err *e)
{
	(void)out;
	(void)o;
	(void)h;
	(void)d;
	(void)arg;
	(void)e;
	abort();
}

int
httpd_port(const struct httpd *h)
{
	(void)h;
	abort();
}

void
httpd_stop(struct httpd *h, int wait_s)
{
	(void)h;
	(void)wait_s;
}

unsigned
httpd_inflight(struct httpd *h)
{
	(void)h;
	return 0;
}

void
httpd_set_max_body(struct httpd *h, size_t max_body)
{
	(void)h;
	(void)max_body;
}

/* ---- the daemon's state, made once ---- */

static struct api *api;
static char runner_auth[128], admin_auth[128];

static const struct {
	const char *path;
	int admin;
} posts[] = {
	{ "/api/v1/runners/register", 0 },
	{ "/api/v1/runners/heartbeat", 0 },
	{ "/api/v1/jobs/claim", 0 },
	{ "/api/v1/jobs/1/runs", 0 },
	{ "/api/v1/jobs/1/log", 0 },
	{ "/api/v1/jobs/1/finish", 0 },
	{ "/api/v1/submit", 1 },
	{ "/api/v1/series", 1 },
	{ "/api/v1/regressions/1/triage", 1 }, /* web/: JSON too */
	{ "/login", 0 },                       /* web/: a form */
	{ "/api/v1/bisect", 1 },
};
#define NPOSTS (sizeof(posts) / sizeof(posts[0]))

static void
put(const char *dir, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
	chmod(p, 0600);
	free(p);
}

/* The reply's contract; then the request ends. */
static void
check_reply(struct httpd_req *r, const char *path)
{
	assert(r->status != 0 || r->parked);
	assert(r->status < 500);
	if (r->status >= 400 && strncmp(path, "/api/", 5) == 0) {
		json_t *o = json_loadb(r->reply, r->reply_len, 0, NULL);

		assert(json_is_string(json_object_get(o, "error")));
		json_decref(o);
	}
	/* A parked claim: the connection goes away. */
	done(r, r->status != 0, api);
	free(r->reply);
}

/*
 * A GET of "path?query" (modified in place), with token k: 0 none, 1 the
 * runner's, 2 the admin's, 3 a wrong one.
 */
static void
get_request(char *target, int k)
{
	static const char wrong[] = "Bearer not-a-token";
	struct httpd_req r;
	char *q = strchr(target, '?');

	memset(&r, 0, sizeof(r));
	if (q != NULL) {
		*q++ = '\0';
		split_query(&r, q);
	}
	r.method = "GET";
	r.path = target;
	r.auth = k == 1 ? runner_auth
	    : k == 2    ? admin_auth
	    : k == 3    ? wrong
	                : NULL;
	r.body = "";
	r.calls = 1;
	handle(&r, api);
	check_reply(&r, target);
}

/* One request through the daemon's dispatch; returns the status. */
static int
request(const char *path, int admin, const char *body, size_t len)
{
	struct httpd_req r;
	int status;

	memset(&r, 0, sizeof(r));
	r.method = "POST";
	r.path = path;
	r.auth = admin ? admin_auth : runner_auth;
	r.body = body;
	r.len = len;
	r.calls = 1;
	handle(&r, api);
	/* A parked upload (group commit, store/batch.h) is answered
	 * once its batch committed: called again, as httpd.c does. */
	if (r.status == 0 && r.slot != NULL &&
	    strstr(path, "/runs") == path + strlen(path) - 5) {
		while (__atomic_load_n(&r.parked, __ATOMIC_ACQUIRE))
			usleep(100);
		r.calls++;
		handle(&r, api);
	}
	status = r.status;
	check_reply(&r, path);
	return status;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char *dir =
	    xasprintf("%s/pwfuzz-api.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *yaml, *jobs;
	struct cfg_errors errs = { NULL, 0 };
	struct dconf *conf;
	struct store *s;
	struct err e = { 0 };
	static const char submit[] =
	    "{\"job\": \"fuzz\", \"base\": {\"params\": {\"n\": 1}}}";

	(void)argc;
	(void)argv;
	if (mkdtemp(dir) == NULL)
		abort();
	put(dir, "admin.token", "fuzz-admin-token-0123456789abcdef\n");
	put(dir, "r1.token", "fuzz-runner-token-0123456789abcdef\n");
	jobs = xasprintf("%s/jobs", dir);
	mkdir(jobs, 0755);
	free(jobs);
	put(dir, "jobs/fuzz.yaml",
	    "name: fuzz\nparser: keyvalue\ncommand: [echo, \"x={n}\"]\n"
	    "matrix:\n  n: [1, 2]\nruns: 2\n");
	yaml = xasprintf("listen: 127.0.0.1:0\ndatabase: %s/pw.db\n"
	                 "mirrors: %s/git\nadmin_token_file: %s/admin.token\n"
	                 "jobs: [%s/jobs/*.yaml]\n"
	                 "trees:\n  - name: mm\n    url: file://%s/up.git\n"
	                 "    branches: [mm-new]\n"
	                 "runners:\n  - name: r1\n"
	                 "    token_file: %s/r1.token\n    labels: [test]\n",
	    dir, dir, dir, dir, dir, dir);
	put(dir, "daemon.yaml", yaml);
	free(yaml);
	yaml = xasprintf("%s/daemon.yaml", dir);
	if (dconf_load(&conf, yaml, &errs) != 0) {
		fprintf(stderr, "api_fuzz: %s\n", errs.n ? errs.msg[0] : "?");
		abort();
	}
	free(yaml);
	snprintf(runner_auth, sizeof(runner_auth),
	    "Bearer fuzz-runner-token-0123456789abcdef");
	snprintf(admin_auth, sizeof(admin_auth),
	    "Bearer fuzz-admin-token-0123456789abcdef");

	/* perfwatchd's start without its threads and listener. */
	if (store_open(&s, conf->dc->database, &e) == -1) {
		fprintf(stderr, "api_fuzz: %s\n", err_msg(&e));
		abort();
	}
	store_close(s);
	api = api_new(conf, sched_new(conf->dc->lease_s, 0));
	dconf_unref(conf);
	/* Uploads are stored by the batch writer (store/batch.h). */
	if (store_batch_start(&api->batch, api->dbpath, &e) == -1) {
		fprintf(stderr, "api_fuzz: %s\n", err_msg(&e));
		abort();
	}
	if (request(posts[0].path, 0, "{\"name\": \"r1\"}", 14) != 200 ||
	    request(posts[6].path, 1, submit, sizeof(submit) - 1) != 201)
		abort();
	free(dir);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body;

	if (size < 1)
		return 0;
	/* NUL-terminated past its length, as web/httpd's buffer is. */
	body = xmalloc(size);
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	if (data[0] >= 0x80)
		get_request(body, data[0] & 3); /* up to a NUL: a C string */
	else
		request(posts[data[0] % NPOSTS].path,
		    posts[data[0] % NPOSTS].admin, body, size - 1);
	free(body);
	return 0;
}
