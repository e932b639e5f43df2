/*
 * libmicrohttpd glue: everything MHD-specific is here; web/api.c sees
 * requests through httpd.h only.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "web/httpd.h"
#include "web/ratelimit.h"

struct httpd {
	struct MHD_Daemon *d;
	httpd_handler handler;
	httpd_done done;
	size_t (*head)(struct httpd_req *, void *arg);
	void *arg;
	size_t max_body; /* __atomic: a reload may change it */
	int port;
	int tls;
	char *cert, *key;       /* PEM, kept while the server runs */
	struct ratelimit *rate; /* NULL: no limit */
	unsigned rate_per_s;
	unsigned inflight; /* __atomic */
	int stopping;      /* __atomic */
};

struct httpd_req {
	struct httpd *h;
	struct MHD_Connection *c;
	char *method, *path;
	struct buf body;
	int too_big;
	int route_cap; /* body.max is the route's cap, below max_body */
	int calls;
	int parked;
	void *slot;
	/* the reply, queued when the handler returns */
	int status;
	char *ctype;
	char *rbody;
	size_t rlen;
	char *hdr[2 * HTTPD_REPLY_HEADERS]; /* name, value pairs */
	int nhdr;
	double start; /* headers received (clock_mono_s) */
	/* httpd_sink: the body goes there, not into body. */
	int (*sink)(void *, const void *, size_t);
	void (*sink_close)(void *);
	void *sink_arg;
	uint64_t sink_max, sink_got;
	int sink_failed;
	/* httpd_reply_fd: the reply is a file's bytes (fd >= 0). */
	int rfd;
	uint64_t rfd_off, rfd_len;
};

static void
mhd_log(void *arg, const char *fmt, va_list ap)
{
	char line[512];

	(void)arg;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warnx("http: %s", line);
}

static enum MHD_Result
queue(struct httpd_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int i;

	if (r->rfd >= 0) {
		resp = MHD_create_response_from_fd_at_offset64(
		    r->rfd_len, r->rfd, r->rfd_off);
		if (resp == NULL)
			return MHD_NO;
		r->rfd = -1; /* MHD closes it now */
	} else {
		resp = MHD_create_response_from_buffer(
		    r->rlen, r->rbody, MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			return MHD_NO;
		r->rbody = NULL; /* MHD frees it now */
	}
	if (r->ctype)
		MHD_add_response_header(
		    resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
	for (i = 0; i < r->nhdr; i++)
		MHD_add_response_header(resp, r->hdr[2 * i], r->hdr[2 * i + 1]);
	if (__atomic_load_n(&r->h->stopping, __ATOMIC_RELAXED))
		MHD_add_response_header(
		    resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(r->c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void
set_reply(
    struct httpd_req *r, int status, const char *ctype, char *body, size_t len)
{
	if (r->status != 0) {
		free(body);
		return;
	}
	r->status = status;
	r->ctype = xstrdup(ctype);
	r->rbody = body;
	r->rlen = len;
}

/* Bytes and count of one kind of values (headers, query arguments). */
struct head_size {
	size_t bytes, n;
};

static enum MHD_Result
count_value(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct head_size *hs = cls;

	(void)kind;
	hs->bytes += strlen(key) + (value ? strlen(value) : 0);
	hs->n++;
	return MHD_YES;
}

/*
 * The request's head against the caps (common/caps.h): 0, or the status
 * of the refusal with its JSON body in msg, naming the part and the cap.
 * libmicrohttpd itself refuses a head larger than its connection memory
 * (MHD_OPTION_CONNECTION_MEMORY_LIMIT, far above these caps).
 */
static int
head_refusal(struct MHD_Connection *c, const char *url, char *msg, size_t len)
{
	struct head_size q = { 0, 0 }, h = { 0, 0 };
	size_t i;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_value, &q);
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_value, &h);
	{
		const struct {
			size_t got, cap;
			int status;
			const char *what, *unit;
		} caps[] = {
			{ strlen(url), CAP_HTTP_PATH, 414, "path", "bytes" },
			{ q.bytes, CAP_HTTP_QUERY, 414, "query string",
			    "bytes of keys and values" },
			{ q.n, CAP_HTTP_QUERY_ARGS, 400, "query string",
			    "parameters" },
			{ h.bytes, CAP_HTTP_HEADERS, 431, "request headers",
			    "bytes of names and values" },
		};

		for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			if (caps[i].got <= caps[i].cap)
				continue;
			snprintf(msg, len,
			    "{\"error\":\"%s: %zu %s, more than the %zu "
			    "allowed\"}",
			    caps[i].what, caps[i].got, caps[i].unit,
			    caps[i].cap);
			return caps[i].status;
		}
	}
	return 0;
}

/* The 413 of a body over http.max_body or the route's own cap, naming
 * the cap. */
static void
reply_too_big(struct httpd_req *r, size_t max)
{
	char *msg = r->route_cap
	    ? xasprintf("{\"error\":\"request body too large: more than "
	                "the %zu bytes this route takes\"}",
	          max)
	    : xasprintf("{\"error\":\"request body too large: more "
	                "than http.max_body (%zu bytes)\"}",
	          max);

	set_reply(r, 413, "application/json", msg, strlen(msg));
}

/* The address a request counts against: an IPv6 one by its /64 (one
 * host may hold all of it), an IPv4 one whole. */
static void
rate_key(const struct httpd_req *r, char *out, size_t n)
{
	const union MHD_ConnectionInfo *ci;
	struct in6_addr a;

	ci = MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL &&
	    ci->client_addr->sa_family == AF_INET6) {
		a = ((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr;
		if (!IN6_IS_ADDR_V4MAPPED(&a))
			memset(a.s6_addr + 8, 0, 8);
		inet_ntop(AF_INET6, &a, out, (socklen_t)n);
		return;
	}
	snprintf(out, n, "%s", httpd_peer(r));
}

/* 1 when r's address is over http.per_ip_rate: r is answered 429. */
static int
rate_refusal(struct httpd_req *r)
{
	char key[INET6_ADDRSTRLEN + 1], after[24];
	long wait;
	char *msg;

	rate_key(r, key, sizeof(key));
	if ((wait = ratelimit_take(r->h->rate, key, clock_mono_ms())) == 0)
		return 0;
	snprintf(after, sizeof(after), "%ld", wait);
	httpd_reply_header(r, "Retry-After", after);
	msg = xasprintf("{\"error\":\"too many requests from %s: more than "
	                "http.per_ip_rate (%u a second)\"}",
	    key, r->h->rate_per_s);
	set_reply(r, 429, "application/json", msg, strlen(msg));
	return 1;
}

static enum MHD_Result
access_cb(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct httpd *h = cls;
	struct httpd_req *r = *con_cls;
	const char *cl;
	char msg[256];
	size_t max_body;
	int st;

	(void)version;
	if (r == NULL) {
		/* Call 1: headers only. */
		r = xcalloc(1, sizeof(*r));
		r->h = h;
		r->c = c;
		r->start = clock_mono_s();
		r->method = xstrdup(method);
		r->path = xstrdup(url);
		r->rfd = -1;
		max_body = __atomic_load_n(&h->max_body, __ATOMIC_RELAXED);
		buf_init(&r->body, 0);
		*con_cls = r;
		__atomic_add_fetch(&h->inflight, 1, __ATOMIC_RELAXED);
		/* Answer these before reading the body. */
		if (h->rate != NULL && rate_refusal(r))
			return queue(r);
		if ((st = head_refusal(c, url, msg, sizeof(msg))) != 0) {
			set_reply(r, st, "application/json", xstrdup(msg),
			    strlen(msg));
			return queue(r);
		}
		if (h->head != NULL) {
			size_t cap = h->head(r, h->arg);

			if (r->status != 0)
				return queue(r);
			if (r->sink != NULL) {
				max_body = r->sink_max;
				r->route_cap = 1;
			} else if (cap < max_body) {
				max_body = cap;
				r->route_cap = 1;
			}
		}
		r->body.max = r->sink != NULL ? 0 : max_body;
		cl = MHD_lookup_connection_value(
		    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl != NULL && strtoull(cl, NULL, 10) > max_body) {
			reply_too_big(r, max_body);
			return queue(r);
		}
		return MHD_YES;
	}
	if (*upload_data_size != 0 && r->sink != NULL) {
		if (r->status == 0 && !r->too_big && !r->sink_failed) {
			r->sink_got += *upload_data_size;
			if (r->sink_got > r->sink_max)
				r->too_big = 1;
			else if (r->sink(r->sink_arg, upload_data,
			             *upload_data_size) == -1)
				r->sink_failed = 1;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (r->status == 0 && !r->too_big &&
		    buf_add(&r->body, upload_data, *upload_data_size) == -1)
			r->too_big = 1;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->status != 0)
		return MHD_YES; /* already answered (413 above) */
	if (r->too_big) {
		reply_too_big(r, r->sink != NULL ? r->sink_max : r->body.max);
		return queue(r);
	}
	r->calls++;
	r->parked = 0;
	h->handler(r, h->arg);
	if (r->parked)
		return MHD_YES;
	if (r->status == 0)
		set_reply(r, 500, "application/json",
		    xstrdup("{\"error\":\"no reply\"}"), 20);
	return queue(r);
}

static void
completed_cb(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct httpd *h = cls;
	struct httpd_req *r = *con_cls;

	(void)c;
	if (r == NULL)
		return;
	if (h->done)
		h->done(r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK, h->arg);
	if (r->sink_close != NULL)
		r->sink_close(r->sink_arg);
	if (r->rfd >= 0)
		close(r->rfd);
	buf_release(&r->body);
	free(r->method);
	free(r->path);
	free(r->ctype);
	free(r->rbody);
	while (r->nhdr > 0) {
		r->nhdr--;
		free(r->hdr[2 * r->nhdr]);
		free(r->hdr[2 * r->nhdr + 1]);
	}
	free(r);
	*con_cls = NULL;
	__atomic_sub_fetch(&h->inflight, 1, __ATOMIC_RELAXED);
}

/* "host:port" or "[v6]:port" into a socket address. */
static int
parse_listen(struct sockaddr_storage *ss, const char *listen, struct err *e)
{
	char host[256];
	const char *colon, *hs = listen, *he;
	struct addrinfo hints, *ai = NULL;
	int rc;

	colon = strrchr(listen, ':');
	if (colon == NULL)
		return err_set(e, "listen '%s': expected host:port", listen);
	he = colon;
	if (*hs == '[' && he > hs && he[-1] == ']') {
		hs++;
		he--;
	}
	if ((size_t)(he - hs) >= sizeof(host))
		return err_set(e, "listen '%s': host too long", listen);
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (rc != 0)
		return err_set(e, "listen '%s': %s", listen, gai_strerror(rc));
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

int
httpd_start(struct httpd **out, const struct httpd_opts *o,
    httpd_handler handler, httpd_done done, void *arg, struct err *e)
{
	struct httpd *h;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC |
	    MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[4] = {
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	*out = NULL;
	if (parse_listen(&ss, o->listen, e) == -1)
		return -1;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h = xcalloc(1, sizeof(*h));
	h->handler = handler;
	h->done = done;
	h->head = o->head;
	h->arg = arg;
	h->max_body = o->max_body;
	if (o->per_ip_rate > 0) {
		h->rate = ratelimit_new(o->per_ip_rate,
		    o->per_ip_burst > 0 ? o->per_ip_burst : o->per_ip_rate);
		h->rate_per_s = o->per_ip_rate;
	}
	if (o->tls_cert != NULL && o->tls_key != NULL) {
		flags |= MHD_USE_TLS;
		h->tls = 1;
		h->cert = xstrdup(o->tls_cert);
		h->key = xstrdup(o->tls_key);
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
			h->cert };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
			h->key };
		tls[2] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES,
			0,
			(void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" };
	}
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, h,
	    MHD_OPTION_ARRAY, tls, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned)(o->threads ? o->threads : 4),
	    MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)(o->max_connections ? o->max_connections : 256),
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->per_ip,
	    MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)(o->timeout_s ? o->timeout_s : 30),
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)128,
	    MHD_OPTION_NOTIFY_COMPLETED, completed_cb, h, MHD_OPTION_END);
	if (h->d == NULL) {
		free(h->cert);
		free(h->key);
		ratelimit_free(h->rate);
		free(h);
		return err_set(e,
		    "listen '%s': cannot start the HTTP server "
		    "(address in use?%s)",
		    o->listen,
		    o->tls_cert != NULL ? " or tls: a certificate and key "
		                          "GnuTLS does not take"
		                        : "");
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	*out = h;
	return 0;
}

void
httpd_set_max_body(struct httpd *h, size_t max_body)
{
	__atomic_store_n(&h->max_body, max_body, __ATOMIC_RELAXED);
}

int
httpd_tls(const struct httpd_req *r)
{
	return r->h->tls;
}

int
httpd_port(const struct httpd *h)
{
	return h->port;
}

unsigned
httpd_inflight(struct httpd *h)
{
	return __atomic_load_n(&h->inflight, __ATOMIC_RELAXED);
}

void
httpd_stop(struct httpd *h, int wait_s)
{
	MHD_socket ls;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	if (h == NULL)
		return;
	__atomic_store_n(&h->stopping, 1, __ATOMIC_RELAXED);
	ls = MHD_quiesce_daemon(h->d);
	/* Let the requests in flight finish; idle keep-alive connections
	 * do not count, they are closed by MHD_stop_daemon. */
	for (i = 0; i < wait_s * 50 && httpd_inflight(h) > 0; i++)
		nanosleep(&ts, NULL);
	if (httpd_inflight(h) > 0)
		log_warnx("http: stopping with %u requests unfinished",
		    httpd_inflight(h));
	MHD_stop_daemon(h->d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	free(h->cert);
	if (h->key != NULL)
		memset(h->key, 0, strlen(h->key));
	free(h->key);
	ratelimit_free(h->rate);
	free(h);
}

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
	return MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, key);
}

const char *
httpd_header(const struct httpd_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

const char *
httpd_body(const struct httpd_req *r, size_t *len)
{
	*len = r->body.len;
	return r->body.data;
}

const char *
httpd_peer(const struct httpd_req *r)
{
	static __thread char s[INET6_ADDRSTRLEN];
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr *sa;

	ci = MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || (sa = ci->client_addr) == NULL)
		return "?";
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		    s, sizeof(s));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6,
		    &((const struct sockaddr_in6 *)sa)->sin6_addr, s,
		    sizeof(s));
	else
		return "?";
	return s;
}

int
httpd_calls(const struct httpd_req *r)
{
	return r->calls;
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

void
httpd_reply(struct httpd_req *r, int status, const char *ctype,
    const char *body, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, body, len);
	copy[len] = '\0';
	set_reply(r, status, ctype, copy, len);
}

void
httpd_reply_take(
    struct httpd_req *r, int status, const char *ctype, char *body, size_t len)
{
	set_reply(r, status, ctype, body, len);
}

void
httpd_sink(struct httpd_req *r, int (*write)(void *, const void *, size_t),
    void (*close_fn)(void *), void *arg, uint64_t max)
{
	r->sink = write;
	r->sink_close = close_fn;
	r->sink_arg = arg;
	r->sink_max = max;
}

void *
httpd_sink_arg(const struct httpd_req *r)
{
	return r->sink_arg;
}

int
httpd_sink_failed(const struct httpd_req *r)
{
	return r->sink_failed;
}

void
httpd_reply_fd(struct httpd_req *r, int status, const char *ctype, int fd,
    uint64_t off, uint64_t len)
{
	if (r->status != 0) {
		close(fd);
		return;
	}
	r->status = status;
	r->ctype = xstrdup(ctype);
	r->rfd = fd;
	r->rfd_off = off;
	r->rfd_len = len;
}

void
httpd_park(struct httpd_req *r)
{
	r->parked = 1;
	MHD_suspend_connection(r->c);
}

void
httpd_unpark(struct httpd_req *r)
{
	MHD_resume_connection(r->c);
}

void
httpd_reply_header(struct httpd_req *r, const char *name, const char *value)
{
	if (r->nhdr == HTTPD_REPLY_HEADERS) {
		log_warnx("http: reply header %s dropped: too many", name);
		return;
	}
	r->hdr[2 * r->nhdr] = xstrdup(name);
	r->hdr[2 * r->nhdr + 1] = xstrdup(value);
	r->nhdr++;
}

const char *
httpd_reply_body(
    const struct httpd_req *r, size_t *len, const char **content_type)
{
	*len = r->rlen;
	*content_type = r->ctype;
	return r->rbody;
}

void
httpd_reply_clear(struct httpd_req *r)
{
	free(r->ctype);
	free(r->rbody);
	r->ctype = NULL;
	r->rbody = NULL;
	r->rlen = 0;
	r->status = 0;
	while (r->nhdr > 0) {
		r->nhdr--;
		free(r->hdr[2 * r->nhdr]);
		free(r->hdr[2 * r->nhdr + 1]);
	}
}

int
httpd_reply_nheaders(const struct httpd_req *r)
{
	return r->nhdr;
}

void
httpd_reply_header_at(
    const struct httpd_req *r, int i, const char **name, const char **value)
{
	*name = r->hdr[2 * i];
	*value = r->hdr[2 * i + 1];
}

static enum MHD_Result
query_arg(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct buf *b = cls;

	(void)kind;
	buf_add(b, key, strlen(key));
	if (value != NULL) {
		buf_add(b, "\x1f", 1);
		buf_add(b, value, strlen(value));
	}
	buf_add(b, "\x1e", 1);
	return MHD_YES;
}

void
httpd_query_all(const struct httpd_req *r, struct buf *b)
{
	MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, query_arg, b);
}

double
httpd_age_s(const struct httpd_req *r)
{
	return clock_mono_s() - r->start;
}
