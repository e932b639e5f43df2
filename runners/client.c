#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runners/client.h"

#define TIMEOUT_MS 30000

struct client {
	struct http *http;
	char **servers; /* base URLs, no trailing slash */
	size_t n, cur;  /* how many; the one talked to */
	const atomic_int *stop;
	struct err err;
	/* The claim being sent, kept from its first try until an answer
	 * comes (client_claim); "" between claims. */
	char claim_id[33];
	int no_claim_id; /* the server refuses the field */
};

struct client *
client_new_list(const char *const *servers, size_t n, const char *token)
{
	struct client *c = xcalloc(1, sizeof(*c));
	size_t i, len;

	c->servers = xcalloc(n, sizeof(char *));
	for (i = 0; i < n; i++) {
		/* "http://h:p/" and "http://h:p" name the same server. */
		len = strlen(servers[i]);
		while (len > 0 && servers[i][len - 1] == '/')
			len--;
		c->servers[i] = xstrndup(servers[i], len);
	}
	c->n = n;
	c->http = http_new();
	if (token != NULL)
		http_set_token(c->http, token);
	return c;
}

struct client *
client_new(const char *server, const char *token)
{
	return client_new_list(&server, 1, token);
}

void
client_set_ca(struct client *c, const char *path)
{
	if (path != NULL)
		http_set_cainfo(c->http, path);
}

void
client_free(struct client *c)
{
	size_t i;

	if (c == NULL)
		return;
	http_free(c->http);
	for (i = 0; i < c->n; i++)
		free(c->servers[i]);
	free(c->servers);
	free(c);
}

const char *
client_errmsg(const struct client *c)
{
	return err_msg(&c->err);
}

const char *
client_server(const struct client *c)
{
	return c->servers[c->cur];
}

void
client_set_stop(struct client *c, const atomic_int *stop)
{
	c->stop = stop;
	http_set_abort(c->http, stop);
}

/*
 * Whether a call that failed with rc (its HTTP status, 0: none) is for
 * the next server: this one did not answer (refused, cut off, timed
 * out) or answered 5xx.  Never a refusal of the request itself (4xx),
 * nor a 429 (the server is up and asks to slow down), nor a transfer
 * the stop flag cut.
 */
static int
fails_over(const struct client *c, int rc, long status)
{
	if (c->n < 2 || rc != ERR_AGAIN ||
	    (c->stop != NULL && atomic_load(c->stop)))
		return 0;
	return status == 0 || status >= 500;
}

/* From now on the next server, the current one's failure logged. */
static void
next_server(struct client *c)
{
	const char *from = c->servers[c->cur];

	c->cur = (c->cur + 1) % c->n;
	log_warnx("server %s: %s; failing over to %s", from, err_msg(&c->err),
	    c->servers[c->cur]);
}

static int
status_code(long status)
{
	if (status / 100 == 2)
		return 0;
	switch (status) {
	case 401:
		return ERR_AUTH;
	case 403:
		return ERR_FORBIDDEN;
	case 404:
		return ERR_NOTFOUND;
	case 409:
		return ERR_CONFLICT;
	case 413:
		return ERR_TOOBIG;
	case 429:
		return ERR_AGAIN;
	default:
		return status >= 500 ? ERR_AGAIN : ERR_INVALID;
	}
}

/* The server's {"error": "..."} text, else the start of the body. */
static void
server_error(struct buf *out, const struct http_reply *r)
{
	struct err e = { 0 };
	const char *msg = NULL;
	json_t *v;

	v = pwjson_parse(r->body.data, r->body.len, &e);
	if (v != NULL && json_is_object(v) &&
	    pwjson_str(&msg, v, "error", &e) == 0) {
		buf_puts(out, msg);
	} else {
		size_t n = r->body.len < 200 ? r->body.len : 200;
		size_t i;

		for (i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)r->body.data[i];

			buf_putc(
			    out, (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?');
		}
	}
	json_decref(v);
}

/* One try of call_raw, on the current server. */
static int
call_once(json_t **reply, long *status, struct client *c, const char *method,
    const char *path, const char *body, size_t len, long total_ms)
{
	struct http_reply r = HTTP_REPLY_INIT;
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct err e = { 0 };
	char *url = xasprintf("%s%s", client_server(c), path);
	int rc;

	err_clear(&c->err);
	if (reply != NULL)
		*reply = NULL;
	if (status != NULL)
		*status = 0;
	http_set_timeouts(c->http, 0, total_ms);
	rc = http_request(&r, c->http, method, url, body, len);
	free(url);
	if (rc < 0)
		return err_setc(&c->err, rc, "%s %s: %s", method, path,
		    http_errmsg(c->http));
	if (status != NULL)
		*status = r.status;
	if ((rc = status_code(r.status)) != 0) {
		server_error(&why, &r);
		err_set(&c->err, "%s %s: HTTP %ld: %s", method, path, r.status,
		    why.data);
		goto out;
	}
	if (reply != NULL && r.status != 204 && r.body.len > 0) {
		*reply = pwjson_parse(r.body.data, r.body.len, &e);
		if (*reply == NULL)
			rc = err_setc(&c->err, ERR_INVALID,
			    "%s %s: reply is not JSON: %s", method, path,
			    err_msg(&e));
	}
out:
	buf_release(&why);
	http_reply_release(&r);
	return rc;
}

/* A call with its body in memory: tried on each server in turn while
 * they fail over (fails_over), at most once each. */
static int
call_raw(json_t **reply, long *status, struct client *c, const char *method,
    const char *path, const char *body, size_t len, long total_ms)
{
	long st = 0;
	size_t k;
	int rc;

	for (k = 0;; k++) {
		rc =
		    call_once(reply, &st, c, method, path, body, len, total_ms);
		if (k + 1 >= c->n || !fails_over(c, rc, st))
			break;
		next_server(c);
	}
	if (status != NULL)
		*status = st;
	return rc;
}

/* A POST of text that is not JSON (a build's log); no reply kept. */
static int
call_raw_type(struct client *c, const char *method, const char *path,
    const char *body, size_t len, const char *content_type)
{
	const char *hdrs[] = { content_type };
	int rc;

	http_set_headers(c->http, hdrs, 1);
	rc = call_raw(NULL, NULL, c, method, path, body, len, TIMEOUT_MS);
	http_set_headers(c->http, NULL, 0);
	return rc;
}

/* One try of client_get_raw, on the current server; *status as
 * call_once's. */
static int
get_once(struct buf *out, long *status, struct client *c, const char *path,
    size_t max, long total_ms)
{
	struct http_reply r = HTTP_REPLY_INIT;
	struct buf why = BUF_INIT(CAP_ERRMSG);
	char *url = xasprintf("%s%s", client_server(c), path);
	int rc;

	err_clear(&c->err);
	*out = BUF_INIT(0);
	*status = 0;
	http_set_timeouts(c->http, 0, total_ms);
	http_set_reply_max(c->http, max);
	rc = http_request(&r, c->http, "GET", url, NULL, 0);
	http_set_reply_max(c->http, 0);
	free(url);
	if (rc < 0)
		return err_setc(
		    &c->err, rc, "GET %s: %s", path, http_errmsg(c->http));
	*status = r.status;
	if ((rc = status_code(r.status)) != 0) {
		server_error(&why, &r);
		err_set(
		    &c->err, "GET %s: HTTP %ld: %s", path, r.status, why.data);
	} else {
		*out = r.body;
		r.body = BUF_INIT(0);
	}
	buf_release(&why);
	http_reply_release(&r);
	return rc;
}

int
client_get_raw(struct buf *out, struct client *c, const char *path, size_t max,
    long total_ms)
{
	long st;
	size_t k;
	int rc;

	for (k = 0;; k++) {
		rc = get_once(out, &st, c, path, max, total_ms);
		if (k + 1 >= c->n || !fails_over(c, rc, st))
			return rc;
		next_server(c);
	}
}

int
client_call(json_t **reply, long *status, struct client *c, const char *method,
    const char *path, const json_t *body)
{
	char *s = body != NULL ? pwjson_dump(body) : NULL;
	int rc;

	rc = call_raw(
	    reply, status, c, method, path, s, s ? strlen(s) : 0, TIMEOUT_MS);
	free(s);
	return rc;
}

int
client_register(int64_t *heartbeat_s, int64_t *lease_s, struct client *c,
    const json_t *body)
{
	json_t *r = NULL;
	int rc;

	rc = client_call(&r, NULL, c, "POST", "/api/v1/runners/register", body);
	if (rc != 0)
		return rc;
	if (r == NULL || !json_is_object(r) ||
	    pwjson_int_opt(heartbeat_s, r, "heartbeat_s", &c->err) == -1 ||
	    pwjson_int_opt(lease_s, r, "lease_s", &c->err) == -1)
		rc = err_setc(
		    &c->err, ERR_INVALID, "register: unexpected reply");
	json_decref(r);
	return rc;
}

int
client_heartbeat(int *cancel, int64_t *runs, struct client *c, int64_t job_id,
    const char *progress)
{
	return client_heartbeat_boot(cancel, runs, c, job_id, progress, 0);
}

int
client_heartbeat_boot(int *cancel, int64_t *runs, struct client *c,
    int64_t job_id, const char *progress, int64_t boot_s)
{
	json_t *body = json_object(), *r = NULL;
	int rc, flag = 0;

	if (job_id > 0)
		json_object_set_new(body, "job_id", json_integer(job_id));
	if (boot_s > 0)
		json_object_set_new(body, "boot_s", json_integer(boot_s));
	if (progress != NULL)
		json_object_set_new(body, "progress", json_string(progress));
	rc =
	    client_call(&r, NULL, c, "POST", "/api/v1/runners/heartbeat", body);
	json_decref(body);
	if (rc != 0)
		return rc;
	if (r != NULL && json_is_object(r)) {
		if (pwjson_bool_opt(&flag, r, "cancel", &c->err) == -1 ||
		    (runs != NULL &&
		        pwjson_int_opt(runs, r, "runs", &c->err) == -1))
			rc = ERR_INVALID;
	}
	if (cancel != NULL)
		*cancel = flag;
	json_decref(r);
	return rc;
}

/* A new claim id in c->claim_id: 32 random hex digits. */
static void
claim_id_new(struct client *c)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[16];
	size_t got = 0, i;
	ssize_t n;

	while (got < sizeof(raw) &&
	    ((n = getrandom(raw + got, sizeof(raw) - got, 0)) > 0 ||
	        (n == -1 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	if (got < sizeof(raw)) {
		/* No getrandom: unique enough among one host's claims. */
		struct timespec ts;
		uint64_t v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		for (i = 0; i < sizeof(raw); i++)
			raw[i] = (unsigned char)((v >> (8 * (i % 8))) ^
			    ((uint64_t)getpid() >> (i % 4)) ^ (i * 37));
	}
	for (i = 0; i < sizeof(raw); i++) {
		c->claim_id[2 * i] = hex[raw[i] >> 4];
		c->claim_id[2 * i + 1] = hex[raw[i] & 15];
	}
	c->claim_id[2 * sizeof(raw)] = '\0';
}

int
client_claim(json_t **job, json_t **build, struct client *c, int64_t wait_s,
    int pairs, int builds)
{
	json_t *body;
	json_t *r = NULL, *j, *b;
	char *s;
	long status = 0;
	int rc;

	*job = NULL;
	*build = NULL;
again:
	/*
	 * Each try of one claim carries the same id, so a daemon that
	 * leased a job for a try whose answer was lost (it died, the link
	 * broke) hands that job back to the next try, on any daemon,
	 * without counting another attempt.  A new claim gets a new id.
	 */
	if (c->claim_id[0] == '\0' && !c->no_claim_id)
		claim_id_new(c);
	body =
	    json_pack("{sI, sb}", "wait_s", (json_int_t)wait_s, "pairs", pairs);
	if (!c->no_claim_id)
		json_object_set_new(body, "claim_id", json_string(c->claim_id));
	/* Absent means true: a daemon without shared builds never sees it
	 * from a runner that builds. */
	if (!builds)
		json_object_set_new(body, "builds", json_false());
	s = pwjson_dump(body);
	rc = call_raw(&r, &status, c, "POST", "/api/v1/jobs/claim", s,
	    strlen(s), (long)(wait_s + 15) * 1000);
	free(s);
	json_decref(body);
	/* The claim's own answer, a job or none: the next claim is
	 * another.  Any other (cut off, timed out, 4xx, 5xx) says nothing
	 * of a try before it, so the next try is this claim again. */
	if (status / 100 == 2)
		c->claim_id[0] = '\0';
	/* A daemon older than claim ids refuses the field: claims go
	 * without one from then on, each lost answer costing the job an
	 * attempt as on that daemon. */
	if (rc == ERR_INVALID && status == 400 && !c->no_claim_id &&
	    strstr(err_msg(&c->err), "unknown field 'claim_id'") != NULL) {
		log_warnx("%s: %s; claiming without claim ids",
		    client_server(c), err_msg(&c->err));
		c->no_claim_id = 1;
		goto again;
	}
	if (rc != 0)
		return rc;
	if (status == 204 || r == NULL) {
		json_decref(r);
		return ERR_NOTFOUND;
	}
	j = json_object_get(r, "job");
	b = json_object_get(r, "build");
	if (builds && json_is_object(b) && j == NULL) {
		*build = json_incref(b);
		json_decref(r);
		return 0;
	}
	if (!json_is_object(j)) {
		json_decref(r);
		return err_setc(&c->err, ERR_INVALID,
		    "claim: reply has no \"job\"%s object",
		    builds ? " or \"build\"" : "");
	}
	*job = json_incref(j);
	json_decref(r);
	return 0;
}

int
client_heartbeat_build(
    int *cancel, struct client *c, int64_t build_id, const char *progress)
{
	json_t *body = json_pack("{sI}", "build_id", (json_int_t)build_id),
	       *r = NULL;
	int rc, flag = 0;

	if (progress != NULL)
		json_object_set_new(body, "progress", json_string(progress));
	rc =
	    client_call(&r, NULL, c, "POST", "/api/v1/runners/heartbeat", body);
	json_decref(body);
	if (rc == 0 && r != NULL && json_is_object(r) &&
	    pwjson_bool_opt(&flag, r, "cancel", &c->err) == -1)
		rc = ERR_INVALID;
	if (cancel != NULL)
		*cancel = flag;
	json_decref(r);
	return rc;
}

int
client_build_log(struct client *c, int64_t build_id, const char *text)
{
	char path[96];

	snprintf(
	    path, sizeof(path), "/api/v1/builds/%" PRId64 "/log", build_id);
	return call_raw_type(c, "POST", path, text, strlen(text),
	    "Content-Type: text/plain; charset=utf-8");
}

/* The outcome of a streamed transfer (rc and reply r, released here)
 * as the calls return it, with its error named by method and path. */
static int
streamed_outcome(struct client *c, int rc, struct http_reply *r,
    const char *method, const char *path)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);

	if (rc < 0)
		return err_setc(&c->err, rc, "%s %s: %s", method, path,
		    http_errmsg(c->http));
	if ((rc = status_code(r->status)) != 0) {
		server_error(&why, r);
		err_set(&c->err, "%s %s: HTTP %ld: %s", method, path, r->status,
		    why.data);
	}
	buf_release(&why);
	http_reply_release(r);
	return rc;
}

int
client_build_put(struct client *c, int64_t build_id, const char *name, int fd,
    int64_t size, const char *sha256, long total_ms)
{
	struct http_reply r = HTTP_REPLY_INIT;
	char path[160], hdr[96];
	const char *hdrs[] = { hdr };
	char *url;
	long st;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/builds/%" PRId64 "/files/%s",
	    build_id, name);
	snprintf(hdr, sizeof(hdr), "X-Perfwatch-Sha256: %s", sha256);
	url = xasprintf("%s%s", client_server(c), path);
	err_clear(&c->err);
	http_set_timeouts(c->http, 0, total_ms);
	rc = http_put_fd(
	    &r, c->http, url, fd, size, "application/octet-stream", hdrs, 1);
	free(url);
	st = rc < 0 ? 0 : r.status;
	rc = streamed_outcome(c, rc, &r, "PUT", path);
	/* fd has moved: the caller's next try goes to the next server. */
	if (fails_over(c, rc, st))
		next_server(c);
	return rc;
}

int
client_build_finish(struct client *c, int64_t build_id, const json_t *body)
{
	char path[96];

	snprintf(
	    path, sizeof(path), "/api/v1/builds/%" PRId64 "/finish", build_id);
	return client_call(NULL, NULL, c, "POST", path, body);
}

/* Where an artifact's body goes: appended to fd, or from its start
 * when the server sent the whole file (200) to a ranged request. */
struct artifact_sink {
	int fd;
	int64_t from, got;
	int restarted, started;
};

static int
artifact_write(void *arg, long status, const char *p, size_t len)
{
	struct artifact_sink *s = arg;
	ssize_t w;

	if (!s->started) {
		s->started = 1;
		if (status != 206 && s->from > 0) {
			if (ftruncate(s->fd, 0) != 0 ||
			    lseek(s->fd, 0, SEEK_SET) != 0)
				return -1;
			s->restarted = 1;
		}
	}
	while (len > 0) {
		w = write(s->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
		s->got += w;
	}
	return 0;
}

int
client_artifact_get(long *status, int64_t *got, int *restarted,
    struct client *c, const char *sha256, int fd, int64_t from, long total_ms)
{
	struct http_reply r = HTTP_REPLY_INIT;
	struct artifact_sink sk = { fd, from, 0, 0, 0 };
	char path[128], range[64];
	const char *hdrs[] = { range };
	char *url;
	int rc;

	*status = 0;
	*got = 0;
	*restarted = 0;
	snprintf(path, sizeof(path), "/api/v1/artifacts/%s", sha256);
	snprintf(range, sizeof(range), "Range: bytes=%" PRId64 "-", from);
	url = xasprintf("%s%s", client_server(c), path);
	err_clear(&c->err);
	http_set_timeouts(c->http, 0, total_ms);
	rc = http_get_stream(
	    &r, c->http, url, hdrs, from > 0 ? 1 : 0, artifact_write, &sk);
	free(url);
	*got = sk.got;
	*restarted = sk.restarted;
	*status = rc < 0 ? 0 : r.status;
	rc = streamed_outcome(c, rc, &r, "GET", path);
	/* What arrived is written: the caller resumes on the next server. */
	if (fails_over(c, rc, *status))
		next_server(c);
	return rc;
}

int
client_upload_run(
    struct client *c, int64_t job_id, const char *body, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/api/v1/jobs/%" PRId64 "/runs", job_id);
	return call_raw(NULL, NULL, c, "POST", path, body, len, TIMEOUT_MS);
}

int
client_log(struct client *c, int64_t job_id, const char *text)
{
	json_t *body = json_pack("{ss}", "text", text);
	char path[96];
	int rc;

	if (body == NULL) /* not UTF-8: callers pass sanitized text */
		return err_setc(&c->err, ERR_INVALID, "log: invalid text");
	snprintf(path, sizeof(path), "/api/v1/jobs/%" PRId64 "/log", job_id);
	rc = client_call(NULL, NULL, c, "POST", path, body);
	json_decref(body);
	return rc;
}

int
client_finish(
    struct client *c, int64_t job_id, const char *status, const char *error)
{
	json_t *body = json_pack("{ss}", "status", status);
	char path[96];
	int rc;

	if (error != NULL)
		json_object_set_new(body, "error", json_string(error));
	snprintf(path, sizeof(path), "/api/v1/jobs/%" PRId64 "/finish", job_id);
	rc = client_call(NULL, NULL, c, "POST", path, body);
	json_decref(body);
	return rc;
}
