#ifndef COMMON_HTTP_H
#define COMMON_HTTP_H

/*
 * HTTP and SMTP client over libcurl.  This module is the only place curl is
 * included; it translates curl's errors into struct err messages once.
 *
 * A struct http is one client handle (one curl easy handle, reused so
 * connections are kept alive).  Handles are not shared between threads:
 * each thread makes its own.  http_global_init() must be called once from
 * main() before any thread starts; it also ignores SIGPIPE, which curl
 * needs with CURLOPT_NOSIGNAL (child processes must reset it: see exec.c).
 *
 *	struct http *h = http_new();
 *	http_set_token(h, token);
 *	struct http_reply r = HTTP_REPLY_INIT;
 *	if (http_post_json(&r, h, url, body, len) < 0)
 *		log_warnx("%s", http_errmsg(h));
 *	else if (r.status / 100 != 2) ...
 *	http_reply_release(&r);
 */
#include <stdatomic.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

struct http;

/*
 * A reply: the HTTP status and the body, capped at CAP_HTTP_REPLY, and the
 * Retry-After header in seconds (delta-seconds form only; -1 when absent or
 * an HTTP date).
 */
struct http_reply {
	long status;
	struct buf body;
	long retry_after_s;
};
#define HTTP_REPLY_INIT            \
	{                          \
		0, BUF_INIT(0), -1 \
	}

void http_reply_release(struct http_reply *); /* NULL ok */

/* Once per process, from main(): 0 or -1 (message on stderr). */
int http_global_init(void);
void http_global_cleanup(void);

struct http *http_new(void);   /* never NULL */
void http_free(struct http *); /* NULL ok */
const char *http_errmsg(const struct http *);

/* Bearer token sent as "Authorization: Bearer TOKEN"; NULL removes it. */
void http_set_token(struct http *, const char *token);
/*
 * Extra request headers ("Name: value", already safe: no CR or LF), sent
 * by every later request until changed; NULL or n 0 removes them.  The
 * strings are copied.  A Content-Type among them replaces the JSON one
 * of a request body (a text body).
 */
void http_set_headers(struct http *, const char *const *hdrs, size_t n);
/* SMTP AUTH user and password for http_smtp_send(); NULL removes them. */
void http_set_login(struct http *, const char *user, const char *password);
/* A CA bundle for TLS (smtps://, STARTTLS, https://); NULL: the system's. */
void http_set_cainfo(struct http *, const char *path);
/* Defaults: connect 5000 ms, total 30000 ms.  0 keeps the current value. */
void http_set_timeouts(struct http *, long connect_ms, long total_ms);
/*
 * A flag polled during transfers (about once a second and on every chunk):
 * when it becomes non-zero the transfer is aborted, and the call fails with
 * ERR_AGAIN.  Lets a signal handler cut a long-poll short.
 */
void http_set_abort(struct http *, const atomic_int *flag);
/* The largest reply body accepted from now on (a git pack is larger than
 * any JSON reply); 0 restores CAP_HTTP_REPLY. */
void http_set_reply_max(struct http *, size_t max);

/*
 * One request.  method is "GET" or "POST" (any verb curl accepts); body may
 * be NULL for none and is sent as application/json.  Only http:// and
 * https:// URLs are allowed.
 *
 * Returns 0 when the server answered (any status; *out filled), ERR_AGAIN
 * for a transient transport failure (cannot connect, timeout, send/recv
 * error, aborted), ERR_TOOBIG when the reply exceeds CAP_HTTP_REPLY (or
 * http_set_reply_max()), or -1
 * for anything else (bad URL, protocol).  On failure http_errmsg() says
 * why and *out is left empty.  *out must be released by the caller.
 */
int http_request(struct http_reply *out, struct http *, const char *method,
    const char *url, const char *body, size_t len);
int http_get(struct http_reply *out, struct http *, const char *url);
int http_post_json(struct http_reply *out, struct http *, const char *url,
    const char *body, size_t len);

/*
 * Receives a streamed 2xx reply body as it arrives (http_get_stream):
 * the reply's status (200, 206) and the next len bytes.  0 to go on, -1
 * to stop the transfer.
 */
typedef int http_sink_fn(void *arg, long status, const char *p, size_t len);
/*
 * A GET whose 2xx body goes to sink instead of memory (a file larger
 * than any reply body: a kernel image), with extra request headers
 * (n of them, "Range: bytes=N-"; this request only).  The body of any
 * other status is in out->body, capped as for http_request.  Returns
 * as http_request, and -1 when sink stopped the transfer.
 */
int http_get_stream(struct http_reply *out, struct http *, const char *url,
    const char *const *extra, size_t n, http_sink_fn *sink, void *arg);
/*
 * A PUT of the next size bytes of fd (not closed; Content-Length: size),
 * sent as content_type with extra headers (n of them), streamed: the
 * file is never held in memory.  Returns as http_request, and -1 when
 * fd ends before size bytes (nothing short is ever sent as complete).
 */
int http_put_fd(struct http_reply *out, struct http *, const char *url, int fd,
    long long size, const char *content_type, const char *const *extra,
    size_t n);

/*
 * Retry policy: up to max_attempts tries (1 = no retry), sleeping
 * base_ms * 2^(try-1), capped at max_ms, with the upper half jittered
 * ("equal jitter"), between tries.  Retried: ERR_AGAIN and HTTP 429 and
 * 5xx; never other 4xx.  stop (may be NULL) ends the waiting early.
 */
struct http_retry {
	int max_attempts;
	long base_ms, max_ms;
	const atomic_int *stop;
};
#define HTTP_RETRY_DEFAULT         \
	{                          \
		5, 200, 5000, NULL \
	}

/* Whether this outcome of http_request() is worth retrying. */
int http_retryable(int rc, long status);
/* Delay before try number `attempt` (1-based: the delay after try 1). */
long http_backoff_ms(const struct http_retry *, int attempt);
/* Sleeps ms milliseconds, waking early when *stop becomes non-zero. */
void http_sleep_ms(long ms, const atomic_int *stop);

/* http_request() under a retry policy; returns the last outcome. */
int http_request_retry(struct http_reply *out, struct http *,
    const struct http_retry *, const char *method, const char *url,
    const char *body, size_t len);

/*
 * Sends a prebuilt RFC 5322 message (headers, blank line, body; CRLF line
 * ends recommended — curl does the dot-stuffing) through an SMTP relay.
 * url is smtp://host[:port] or smtps://host[:port]; from and rcpt are bare
 * addresses ("a@example.org", angle brackets added here).  nrcpt > 0.
 * starttls: 1 to require STARTTLS on smtp://.  0, ERR_AGAIN (transient:
 * connect, timeout, 4xx reply), or -1 (permanent: 5xx reply, bad URL).
 */
int http_smtp_send(struct http *, const char *url, const char *from,
    const char *const *rcpt, size_t nrcpt, const char *msg, size_t len,
    int starttls);

/*
 * Reads a token file: its first line, surrounding white space removed.
 * *out is malloc'd.  0, or -1 with e set (missing, empty, too large,
 * or readable or writable by others: a token there is no secret).
 */
int http_token_load(char **out, const char *path, struct err *e);

/*
 * The shortest runner or admin token accepted: 32 bytes, as 32 random
 * bytes in hex give 64 (docs/DEPLOY.md).  A guess at a shorter one is a
 * matter of time; the daemon and the runner refuse it at load.
 */
#define HTTP_TOKEN_MIN 32
/*
 * http_token_load, and -1 with e naming the path when the token is
 * shorter than HTTP_TOKEN_MIN.
 */
int http_token_load_strong(char **out, const char *path, struct err *e);

#endif
