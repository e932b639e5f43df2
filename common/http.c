/*
 * libcurl, and nothing else, lives here: one easy handle per struct http,
 * reset and reconfigured for each request so a kept-alive connection is
 * reused while no option leaks from one request into the next.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/http.h"
#include "common/xalloc.h"

#define CAP_TOKEN 4096

struct http {
	CURL *curl;
	struct err err;
	char errbuf[CURL_ERROR_SIZE];
	char *token;
	long connect_ms, total_ms;
	const atomic_int *abort;
	int toobig;
	size_t reply_max; /* 0: CAP_HTTP_REPLY */
	char **hdrs;      /* http_set_headers() */
	size_t nhdrs;
	char *user, *password, *cainfo;
};

void
http_reply_release(struct http_reply *r)
{
	if (r == NULL)
		return;
	buf_release(&r->body);
	r->status = 0;
}

int
http_global_init(void)
{
	CURLcode rc;

	/*
	 * CURLOPT_NOSIGNAL stops curl from using SIGALRM for DNS timeouts,
	 * which is required with threads; a peer closing a socket then
	 * raises SIGPIPE, which must be ignored by the process instead.
	 */
	signal(SIGPIPE, SIG_IGN);
	if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
		fprintf(
		    stderr, "curl_global_init: %s\n", curl_easy_strerror(rc));
		return -1;
	}
	return 0;
}

void
http_global_cleanup(void)
{
	curl_global_cleanup();
}

struct http *
http_new(void)
{
	struct http *h = xcalloc(1, sizeof(*h));

	if ((h->curl = curl_easy_init()) == NULL) {
		fprintf(stderr, "curl_easy_init failed\n");
		abort();
	}
	h->connect_ms = 5000;
	h->total_ms = 30000;
	return h;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	curl_easy_cleanup(h->curl);
	free(h->token);
	http_set_headers(h, NULL, 0);
	http_set_login(h, NULL, NULL);
	free(h->cainfo);
	free(h);
}

const char *
http_errmsg(const struct http *h)
{
	return err_msg(&h->err);
}

void
http_set_token(struct http *h, const char *token)
{
	free(h->token);
	h->token = xstrdup(token);
}

void
http_set_headers(struct http *h, const char *const *hdrs, size_t n)
{
	size_t i;

	for (i = 0; i < h->nhdrs; i++)
		free(h->hdrs[i]);
	free(h->hdrs);
	h->hdrs = NULL;
	h->nhdrs = 0;
	if (hdrs == NULL || n == 0)
		return;
	h->hdrs = xcalloc(n, sizeof(*h->hdrs));
	for (i = 0; i < n; i++)
		h->hdrs[i] = xstrdup(hdrs[i]);
	h->nhdrs = n;
}

void
http_set_login(struct http *h, const char *user, const char *password)
{
	if (h->password != NULL)
		memset(h->password, 0, strlen(h->password));
	free(h->user);
	free(h->password);
	h->user = xstrdup(user);
	h->password = xstrdup(password);
}

void
http_set_cainfo(struct http *h, const char *path)
{
	free(h->cainfo);
	h->cainfo = xstrdup(path);
}

void
http_set_timeouts(struct http *h, long connect_ms, long total_ms)
{
	if (connect_ms > 0)
		h->connect_ms = connect_ms;
	if (total_ms > 0)
		h->total_ms = total_ms;
}

void
http_set_abort(struct http *h, const atomic_int *flag)
{
	h->abort = flag;
}

void
http_set_reply_max(struct http *h, size_t max)
{
	h->reply_max = max;
}

static size_t
reply_max(const struct http *h)
{
	return h->reply_max ? h->reply_max : CAP_HTTP_REPLY;
}

static size_t
write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct http_reply *r = arg;
	size_t len = size * n;

	/* Returning less than len makes curl fail with CURLE_WRITE_ERROR. */
	if (buf_add(&r->body, p, len) == -1)
		return 0;
	return len;
}

/* Retry-After: delta-seconds only (an HTTP date is left unparsed). */
static size_t
header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct http_reply *r = arg;
	size_t len = size * n, i;
	long v = 0;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		for (i = 12; i < len && (p[i] == ' ' || p[i] == '\t'); i++)
			;
		if (i < len && isdigit((unsigned char)p[i])) {
			for (; i < len && isdigit((unsigned char)p[i]) &&
			     v < 86400 * 7;
			     i++)
				v = v * 10 + (p[i] - '0');
			r->retry_after_s = v;
		}
	}
	return len;
}

static int
xferinfo_cb(
    void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct http *h = arg;

	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	return (h->abort != NULL && atomic_load(h->abort)) ? 1 : 0;
}

/* Transport failures that a later try may not see again. */
static int
curl_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_ABORTED_BY_CALLBACK:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* Options every transfer gets: timeouts, no signals, error buffer. */
static void
common_opts(struct http *h)
{
	CURL *c = h->curl;

	curl_easy_reset(c);
	h->errbuf[0] = '\0';
	h->toobig = 0;
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->total_ms);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
	if (h->cainfo != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->cainfo);
}

/* Records why a transfer failed and maps it to our codes. */
static int
transfer_error(struct http *h, CURLcode rc, const char *what)
{
	const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc);

	if (rc == CURLE_ABORTED_BY_CALLBACK)
		why = "interrupted";
	if (h->toobig || rc == CURLE_WRITE_ERROR) {
		err_set(&h->err, "%s: reply larger than %zu bytes", what,
		    reply_max(h));
		return ERR_TOOBIG;
	}
	err_set(&h->err, "%s: %s", what, why);
	return curl_transient(rc) ? ERR_AGAIN : -1;
}

static int
is_http_url(const char *url)
{
	return strncmp(url, "http://", 7) == 0 ||
	    strncmp(url, "https://", 8) == 0;
}

/*
 * The request's headers: JSON replies accepted, content (NULL: none;
 * a Content-Type among the handle's headers replaces it),
 * no "Expect: 100-continue" round trip for bodies over 1 MB, the token
 * (*auth keeps its line until the caller frees it), the handle's headers
 * and extra (n of them, this request's).
 */
static struct curl_slist *
request_headers(struct http *h, char **auth, const char *content,
    const char *const *extra, size_t n)
{
	struct curl_slist *hdrs = NULL;
	size_t i;

	*auth = NULL;
	/* The handle's own Content-Type (a text body) replaces the JSON
	 * one: a server takes the first of two. */
	for (i = 0; content != NULL && i < h->nhdrs; i++)
		if (strncasecmp(h->hdrs[i], "Content-Type:", 13) == 0)
			content = NULL;
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (content != NULL && hdrs != NULL)
		hdrs = curl_slist_append(hdrs, content);
	if (hdrs != NULL)
		hdrs = curl_slist_append(hdrs, "Expect:");
	if (h->token != NULL && hdrs != NULL) {
		*auth = xasprintf("Authorization: Bearer %s", h->token);
		hdrs = curl_slist_append(hdrs, *auth);
	}
	for (i = 0; i < h->nhdrs && hdrs != NULL; i++)
		hdrs = curl_slist_append(hdrs, h->hdrs[i]);
	for (i = 0; i < n && hdrs != NULL; i++)
		hdrs = curl_slist_append(hdrs, extra[i]);
	if (hdrs == NULL) {
		fprintf(stderr, "curl_slist_append: out of memory\n");
		abort();
	}
	return hdrs;
}

/* What every request starts with: an http(s) URL, the handle's
 * options, the reply's headers to r.  0, or -1 (a bad URL). */
static int
request_begin(struct http_reply *out, struct http *h, const char *url,
    struct http_reply *r)
{
	CURL *c = h->curl;

	err_clear(&h->err);
	*out = (struct http_reply)HTTP_REPLY_INIT;
	if (!is_http_url(url)) {
		buf_release(&r->body);
		return err_set(
		    &h->err, "%s: only http:// and https:// URLs", url);
	}
	common_opts(h);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	return 0;
}

int
http_request(struct http_reply *out, struct http *h, const char *method,
    const char *url, const char *body, size_t len)
{
	struct curl_slist *hdrs = NULL;
	struct http_reply r = { 0, BUF_INIT(reply_max(h)), -1 };
	CURL *c = h->curl;
	CURLcode rc;
	char *auth = NULL;
	int ret = 0;

	if (request_begin(out, h, url, &r) != 0)
		return -1;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(body ? len : 0));
		if (strcmp(method, "POST") != 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	hdrs = request_headers(h, &auth,
	    body != NULL ? "Content-Type: application/json" : NULL, NULL, 0);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);

	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		h->toobig = r.body.overflow;
		ret = transfer_error(h, rc, url);
		buf_release(&r.body);
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
		*out = r;
	}
	/* The handle keeps a pointer to the list: unset before freeing. */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	free(auth);
	return ret;
}

int
http_get(struct http_reply *out, struct http *h, const char *url)
{
	return http_request(out, h, "GET", url, NULL, 0);
}

int
http_post_json(struct http_reply *out, struct http *h, const char *url,
    const char *body, size_t len)
{
	return http_request(out, h, "POST", url, body, len);
}

/* A streamed transfer: the 2xx body to the sink, another one to r. */
struct stream_dst {
	struct http *h;
	struct http_reply *r;
	http_sink_fn *sink;
	void *arg;
	int sink_failed;
};

static size_t
stream_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct stream_dst *d = arg;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(d->h->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status / 100 != 2)
		return buf_add(&d->r->body, p, len) == -1 ? 0 : len;
	if (d->sink(d->arg, status, p, len) != 0) {
		d->sink_failed = 1;
		return 0;
	}
	return len;
}

/* A PUT body read from a descriptor. */
struct fd_src {
	int fd;
	long long left;
	int failed;
};

static size_t
fd_read_cb(char *dst, size_t size, size_t n, void *arg)
{
	struct fd_src *s = arg;
	size_t want = size * n;
	ssize_t got;

	if ((long long)want > s->left)
		want = (size_t)s->left;
	if (want == 0)
		return 0;
	do
		got = read(s->fd, dst, want);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		/* A file shorter than announced: abort, never send less. */
		s->failed = 1;
		return CURL_READFUNC_ABORT;
	}
	s->left -= got;
	return (size_t)got;
}

/* The common part of the streamed requests: perform, map the outcome. */
static int
stream_perform(struct http_reply *out, struct http *h, struct http_reply *r,
    struct curl_slist *hdrs, const struct stream_dst *d,
    const struct fd_src *src, const char *url)
{
	CURL *c = h->curl;
	CURLcode rc;
	int ret = 0;

	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK && d != NULL && d->sink_failed) {
		err_set(&h->err, "%s: the receiver of the body failed", url);
		ret = -1;
	} else if (rc != CURLE_OK && src != NULL && src->failed) {
		err_set(&h->err, "%s: the body's file ended early", url);
		ret = -1;
	} else if (rc != CURLE_OK) {
		h->toobig = r->body.overflow;
		ret = transfer_error(h, rc, url);
	}
	if (ret != 0)
		buf_release(&r->body);
	else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		*out = *r;
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	return ret;
}

int
http_get_stream(struct http_reply *out, struct http *h, const char *url,
    const char *const *extra, size_t n, http_sink_fn *sink, void *arg)
{
	struct http_reply r = { 0, BUF_INIT(reply_max(h)), -1 };
	struct stream_dst d = { h, &r, sink, arg, 0 };
	struct curl_slist *hdrs;
	CURL *c = h->curl;
	char *auth;
	int ret;

	if (request_begin(out, h, url, &r) != 0)
		return -1;
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &d);
	hdrs = request_headers(h, &auth, NULL, extra, n);
	ret = stream_perform(out, h, &r, hdrs, &d, NULL, url);
	free(auth);
	return ret;
}

int
http_put_fd(struct http_reply *out, struct http *h, const char *url, int fd,
    long long size, const char *content_type, const char *const *extra,
    size_t n)
{
	struct http_reply r = { 0, BUF_INIT(reply_max(h)), -1 };
	struct fd_src src = { fd, size, 0 };
	struct curl_slist *hdrs;
	CURL *c = h->curl;
	char *auth, *ct;
	int ret;

	if (request_begin(out, h, url, &r) != 0)
		return -1;
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, fd_read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &src);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	ct = xasprintf("Content-Type: %s", content_type);
	hdrs = request_headers(h, &auth, ct, extra, n);
	ret = stream_perform(out, h, &r, hdrs, NULL, &src, url);
	free(ct);
	free(auth);
	return ret;
}

int
http_retryable(int rc, long status)
{
	if (rc == ERR_AGAIN)
		return 1;
	if (rc < 0)
		return 0;
	return status == 429 || status >= 500;
}

static unsigned
jitter_rand(void)
{
	static _Thread_local unsigned seed;

	if (seed == 0)
		seed = (unsigned)time(NULL) ^ (unsigned)getpid() ^
		    (unsigned)(size_t)&seed;
	/* xorshift32: enough to spread clients apart, not cryptographic. */
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

long
http_backoff_ms(const struct http_retry *p, int attempt)
{
	long d = p->base_ms > 0 ? p->base_ms : 1;
	int i;

	for (i = 1; i < attempt && d < p->max_ms; i++)
		d *= 2;
	if (p->max_ms > 0 && d > p->max_ms)
		d = p->max_ms;
	/* Equal jitter: half fixed, half random, so retries spread out. */
	return d / 2 + (long)(jitter_rand() % (unsigned long)(d / 2 + 1));
}

void
http_sleep_ms(long ms, const atomic_int *stop)
{
	long step;

	while (ms > 0 && (stop == NULL || !atomic_load(stop))) {
		step = ms < 50 ? ms : 50;
		clock_sleep_ms(step);
		ms -= step;
	}
}

int
http_request_retry(struct http_reply *out, struct http *h,
    const struct http_retry *p, const char *method, const char *url,
    const char *body, size_t len)
{
	int attempt, rc;

	for (attempt = 1;; attempt++) {
		rc = http_request(out, h, method, url, body, len);
		if (!http_retryable(rc, out->status) ||
		    attempt >= p->max_attempts ||
		    (p->stop != NULL && atomic_load(p->stop)))
			return rc;
		if (rc == 0) {
			/* Keep the status in the message for the last try. */
			http_reply_release(out);
		}
		http_sleep_ms(http_backoff_ms(p, attempt), p->stop);
	}
}

/* ---- SMTP ---- */

struct smtp_src {
	const char *p;
	size_t len, off;
};

static size_t
read_cb(char *dst, size_t size, size_t n, void *arg)
{
	struct smtp_src *s = arg;
	size_t want = size * n, left = s->len - s->off;

	if (want > left)
		want = left;
	memcpy(dst, s->p + s->off, want);
	s->off += want;
	return want;
}

int
http_smtp_send(struct http *h, const char *url, const char *from,
    const char *const *rcpt, size_t nrcpt, const char *msg, size_t len,
    int starttls)
{
	struct curl_slist *to = NULL;
	struct smtp_src src = { msg, len, 0 };
	CURL *c = h->curl;
	CURLcode rc;
	char *mfrom, *a;
	long code = 0;
	size_t i;
	int ret = 0;

	err_clear(&h->err);
	if (strncmp(url, "smtp://", 7) != 0 && strncmp(url, "smtps://", 8) != 0)
		return err_set(
		    &h->err, "%s: only smtp:// and smtps:// URLs", url);
	if (nrcpt == 0)
		return err_set(&h->err, "%s: no recipients", url);
	common_opts(h);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	if (starttls)
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (h->user != NULL) {
		curl_easy_setopt(c, CURLOPT_USERNAME, h->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, h->password);
	}
	mfrom = xasprintf("<%s>", from);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, mfrom);
	for (i = 0; i < nrcpt; i++) {
		a = xasprintf("<%s>", rcpt[i]);
		to = curl_slist_append(to, a);
		free(a);
		if (to == NULL) {
			fprintf(stderr, "curl_slist_append: out of memory\n");
			abort();
		}
	}
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, to);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &src);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);

	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		ret = transfer_error(h, rc, url);
		/*
		 * curl reports a refused command as a send error; the reply
		 * code tells: 4xx asks to come back later, 5xx is final.
		 */
		if (code >= 400 && code < 500)
			ret = ERR_AGAIN;
		else if (code >= 500)
			ret = -1;
	}
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(to);
	free(mfrom);
	return ret;
}

/* ---- tokens ---- */

int
http_token_load(char **out, const char *path, struct err *e)
{
	char buf[CAP_TOKEN + 1];
	struct stat st;
	size_t n = 0, s, end;
	ssize_t r;
	int fd;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return err_set(e, "%s: %s", path, strerror(errno));
	/* A secret others can read is no secret (ssh refuses such keys). */
	if (fstat(fd, &st) == -1 || (st.st_mode & (S_IROTH | S_IWOTH))) {
		close(fd);
		return err_set(e,
		    "%s: readable or writable by others (mode %04o); "
		    "chmod o-rwx %s (0600 is usual)",
		    path, (unsigned)(st.st_mode & 07777), path);
	}
	while (n < sizeof(buf)) {
		r = read(fd, buf + n, sizeof(buf) - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > CAP_TOKEN)
		return err_set(
		    e, "%s: token file larger than %d bytes", path, CAP_TOKEN);
	for (s = 0; s < n && isspace((unsigned char)buf[s]); s++)
		;
	for (end = s; end < n && buf[end] != '\n' && buf[end] != '\r'; end++)
		;
	while (end > s && isspace((unsigned char)buf[end - 1]))
		end--;
	if (end == s)
		return err_set(e, "%s: empty token file", path);
	*out = xstrndup(buf + s, end - s);
	memset(buf, 0, sizeof(buf));
	return 0;
}

int
http_token_load_strong(char **out, const char *path, struct err *e)
{
	size_t n;

	if (http_token_load(out, path, e) != 0)
		return -1;
	if ((n = strlen(*out)) >= HTTP_TOKEN_MIN)
		return 0;
	explicit_bzero(*out, n);
	free(*out);
	*out = NULL;
	return err_set(e,
	    "%s: the token is %zu bytes, at least %d are needed (head -c 32 "
	    "/dev/urandom | od -An -tx1 | tr -d ' \\n' >%s)",
	    path, n, HTTP_TOKEN_MIN, path);
}
