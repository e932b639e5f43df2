#ifndef WEB_HTTPD_H
#define WEB_HTTPD_H

/*
 * The HTTP server: the one module that includes libmicrohttpd.  It owns
 * the listener, the thread pool, the limits (connections, per IP, idle
 * timeout, body cap -> 413) and hands each complete request to one
 * handler, which answers with httpd_reply*() or parks the request
 * (long-poll) with httpd_park() and is called again after httpd_unpark().
 *
 * The handler runs on a pool thread; it must not block for long.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct httpd;
struct httpd_req;

struct httpd_opts {
	const char *listen; /* "host:port"; port 0 = any free port */
	unsigned threads, max_connections, per_ip, timeout_s;
	/* Requests a second per address (an IPv6 one by its /64) and the
	 * burst above that rate: more get 429 before anything else is
	 * looked at.  0: no limit. */
	unsigned per_ip_rate, per_ip_burst;
	size_t max_body;
	/*
	 * Called on the headers, before any body byte is read: either
	 * answers (httpd_reply*; the body is then never buffered) or returns
	 * the most body bytes this request may send (capped again by
	 * max_body; a larger Content-Length or body is a 413).  May be NULL.
	 */
	size_t (*head)(struct httpd_req *, void *arg);
	/* PEM contents of the certificate (chain) and key: HTTPS (TLS 1.2
	 * and 1.3 only); both NULL: HTTP. */
	const char *tls_cert, *tls_key;
};

/* Called once the body is complete (and again after httpd_unpark()). */
typedef void (*httpd_handler)(struct httpd_req *, void *arg);
/* Called when a request ends; completed is 0 when the client went away
 * or the reply could not be sent.  May be NULL. */
typedef void (*httpd_done)(struct httpd_req *, int completed, void *arg);

/* 0 and a running server, or -1 with e set. */
int httpd_start(struct httpd **out, const struct httpd_opts *, httpd_handler,
    httpd_done, void *arg, struct err *e);
int httpd_port(const struct httpd *); /* the bound port */
/* 1 when the request came over TLS (its cookies get Secure). */
int httpd_tls(const struct httpd_req *);
/* The body cap of the requests that start from now on (a reload). */
void httpd_set_max_body(struct httpd *, size_t max_body);
/*
 * Stops accepting, waits up to wait_s for requests in flight (the caller
 * unparks its parked requests first), then stops the threads and frees
 * everything.  NULL ok.
 */
void httpd_stop(struct httpd *, int wait_s);
/* Requests in flight (between first byte and reply sent). */
unsigned httpd_inflight(struct httpd *);

/* ---- one request (valid until its done callback) ---- */
const char *httpd_method(const struct httpd_req *);
const char *httpd_path(const struct httpd_req *);
const char *httpd_query(const struct httpd_req *, const char *key);
const char *httpd_header(const struct httpd_req *, const char *name);
const char *httpd_body(const struct httpd_req *, size_t *len);
const char *httpd_peer(const struct httpd_req *); /* "127.0.0.1" */
/* How many times the handler has run for this request (1 at first). */
int httpd_calls(const struct httpd_req *);
/* A slot the handler may use across calls; freed by nobody. */
void **httpd_slot(struct httpd_req *);

/* The reply's status, 0 before one is set. */
int httpd_status(const struct httpd_req *);
/* Seconds since the request's headers arrived (monotonic clock). */
double httpd_age_s(const struct httpd_req *);
/* Replies (the first one wins); body is copied. */
void httpd_reply(struct httpd_req *, int status, const char *content_type,
    const char *body, size_t len);
/* Same, taking ownership of a malloc'd body. */
void httpd_reply_take(struct httpd_req *, int status, const char *content_type,
    char *body, size_t len);

/*
 * Adds a header to the reply (Set-Cookie, Location, Cache-Control), set
 * before or after httpd_reply*(); at most HTTPD_REPLY_HEADERS, copied.
 * The dashboard's sessions and redirects use it.
 */
#define HTTPD_REPLY_HEADERS 12
void httpd_reply_header(
    struct httpd_req *, const char *name, const char *value);

/*
 * The reply set so far (for a cache of replies, web/cache.h): its body
 * (NULL before one is set), content type and added headers.
 */
const char *httpd_reply_body(
    const struct httpd_req *, size_t *len, const char **content_type);
int httpd_reply_nheaders(const struct httpd_req *);
/* Drops the reply and its headers: r has none again (a reply made in
 * another thread for a parked request, copied out before it resumes). */
void httpd_reply_clear(struct httpd_req *);
void httpd_reply_header_at(
    const struct httpd_req *, int i, const char **name, const char **value);
/*
 * Appends the request's query arguments to b as they came, each
 * "key\x1fvalue\x1e" (a key without a value has none): a cache key.
 */
struct buf;
void httpd_query_all(const struct httpd_req *, struct buf *b);
/*
 * A body too large to hold (an artifact upload): from the head callback,
 * the body's bytes go to write(arg, data, len) as they arrive instead of
 * into memory, up to max bytes (a larger Content-Length or body is a
 * 413; max replaces http.max_body for this request).  A write that
 * returns -1 drops the rest of the body; the handler then sees
 * httpd_sink_failed.  close(arg) runs when the request ends, whatever
 * happened; the handler finds arg with httpd_sink_arg.
 */
void httpd_sink(struct httpd_req *, int (*write)(void *, const void *, size_t),
    void (*close)(void *), void *arg, uint64_t max);
void *httpd_sink_arg(const struct httpd_req *); /* NULL: no sink */
int httpd_sink_failed(const struct httpd_req *);
/*
 * Replies with len bytes of the open file fd from offset off (a
 * download; the server closes fd).  Headers may be added as for
 * httpd_reply.
 */
void httpd_reply_fd(struct httpd_req *, int status, const char *content_type,
    int fd, uint64_t off, uint64_t len);

/* Parks the request (from the handler, which then returns without a
 * reply).  httpd_unpark() from any thread runs the handler again. */
void httpd_park(struct httpd_req *);
void httpd_unpark(struct httpd_req *);

#endif
