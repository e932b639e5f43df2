/*
 * common/http against real sockets: a tiny HTTP/SMTP server on 127.0.0.1
 * in a thread of the test, answering canned replies in order.
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/xalloc.h"
#include "tests/unit/test.h"

struct srv {
	int fd, port;
	const char *const *replies; /* one per connection, last repeats */
	int nreplies, max_conns, smtp;
	int delay_ms;     /* before answering */
	size_t big_reply; /* send a 200 with this many bytes instead */
	atomic_int nreq;
	char req[65536]; /* the last request, as received */
	size_t reqlen;
	pthread_t th;
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0 && (w = write(fd, p, n)) > 0) {
		p += w;
		n -= (size_t)w;
	}
}

/* Reads an HTTP request (headers and Content-Length body) into s->req. */
static void
read_request(struct srv *s, int c)
{
	size_t len = 0, want = 0;
	ssize_t n;
	char *h, *cl;

	for (;;) {
		n = read(c, s->req + len, sizeof(s->req) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		s->req[len] = '\0';
		if ((h = strstr(s->req, "\r\n\r\n")) == NULL)
			continue;
		if (want == 0) {
			cl = strcasestr(s->req, "Content-Length:");
			want = (size_t)(h + 4 - s->req) +
			    (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (len >= want || len == sizeof(s->req) - 1)
			break;
	}
	s->reqlen = len;
}

/* A minimal SMTP dialogue that records the whole session in s->req. */
static void
smtp_session(struct srv *s, int c)
{
	char line[4096];
	size_t len = 0;
	int data = 0;
	ssize_t n;
	char ch;

	write_all(c, "220 test ESMTP\r\n", 16);
	s->reqlen = 0;
	for (;;) {
		n = read(c, &ch, 1);
		if (n <= 0)
			return;
		if (s->reqlen < sizeof(s->req) - 1)
			s->req[s->reqlen++] = ch;
		s->req[s->reqlen] = '\0';
		if (len < sizeof(line) - 1)
			line[len++] = ch;
		if (ch != '\n')
			continue;
		line[len] = '\0';
		len = 0;
		if (data) {
			if (strcmp(line, ".\r\n") == 0) {
				data = 0;
				write_all(c, "250 queued\r\n", 12);
			}
			continue;
		}
		if (strncmp(line, "EHLO", 4) == 0)
			write_all(c, "250 test\r\n", 10);
		else if (strncmp(line, "DATA", 4) == 0) {
			data = 1;
			write_all(c, "354 go\r\n", 8);
		} else if (strncmp(line, "QUIT", 4) == 0) {
			write_all(c, "221 bye\r\n", 9);
			return;
		} else if (strncmp(line, "RCPT TO:<nobody@", 16) == 0)
			write_all(c, "550 no such user\r\n", 18);
		else
			write_all(c, "250 ok\r\n", 8);
	}
}

static void *
srv_main(void *arg)
{
	struct srv *s = arg;
	int c, i, k;

	for (i = 0; i < s->max_conns; i++) {
		if ((c = accept(s->fd, NULL, NULL)) == -1)
			break;
		k = atomic_fetch_add(&s->nreq, 1);
		if (s->smtp) {
			smtp_session(s, c);
			close(c);
			continue;
		}
		read_request(s, c);
		if (s->delay_ms)
			sleep_ms(s->delay_ms);
		if (s->big_reply) {
			char hdr[128], *z = xcalloc(1, 65536);
			size_t left = s->big_reply, n;

			n = (size_t)snprintf(hdr, sizeof(hdr),
			    "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
			    "Connection: close\r\n\r\n",
			    s->big_reply);
			write_all(c, hdr, n);
			while (left > 0) {
				n = left < 65536 ? left : 65536;
				write_all(c, z, n);
				left -= n;
			}
			free(z);
		} else {
			const char *r =
			    s->replies[k < s->nreplies ? k : s->nreplies - 1];

			write_all(c, r, strlen(r));
		}
		close(c);
	}
	return NULL;
}

static void
srv_start(struct srv *s)
{
	atomic_init(&s->nreq, 0);
	s->fd = test_listen(&s->port);
	pthread_create(&s->th, NULL, srv_main, s);
}

static void
srv_stop(struct srv *s)
{
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->th, NULL);
}

static const char *const ok_reply[] = { "HTTP/1.1 200 OK\r\n"
	                                "Content-Length: 11\r\n"
	                                "Connection: close\r\n\r\n"
	                                "{\"a\": true}" };

TEST(test_http__post_json_with_token)
{
	struct srv s = { .replies = ok_reply, .nreplies = 1, .max_conns = 1 };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h;
	char url[128];

	srv_start(&s);
	h = http_new();
	http_set_token(h, "s3cret");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/x", s.port);
	ASSERT_INTEQ(http_post_json(&r, h, url, "{\"k\":1}", 7), 0);
	ASSERT_INTEQ(r.status, 200);
	ASSERT_STREQ(r.body.data, "{\"a\": true}");
	srv_stop(&s);
	ASSERT(strncmp(s.req, "POST /api/v1/x HTTP/1.1\r\n", 25) == 0);
	ASSERT(strstr(s.req, "\r\nAuthorization: Bearer s3cret\r\n") != NULL);
	ASSERT(strstr(s.req, "\r\nContent-Type: application/json\r\n") != NULL);
	ASSERT(strstr(s.req, "\r\n\r\n{\"k\":1}") != NULL);
	http_reply_release(&r);
	http_free(h);
}

/* A file PUT streamed from a descriptor: its length, its type, the
 * extra header, the bytes; a file shorter than announced is not sent. */
TEST(test_http__put_fd)
{
	static const char *const created[] = { "HTTP/1.1 201 Created\r\n"
		                               "Content-Length: 2\r\n"
		                               "Connection: close\r\n\r\n"
		                               "{}" };
	struct srv s = { .replies = created, .nreplies = 1, .max_conns = 2 };
	struct http_reply r = HTTP_REPLY_INIT;
	const char *hdrs[] = { "X-Perfwatch-Sha256: abc" };
	struct http *h;
	char url[128], path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/put.bin", test_tmpdir());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	ASSERT_INTEQ(write(fd, "0123456789", 10), 10);
	ASSERT_INTEQ(lseek(fd, 2, SEEK_SET), 2);
	srv_start(&s);
	h = http_new();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/f", s.port);
	ASSERT_INTEQ(
	    http_put_fd(&r, h, url, fd, 8, "application/octet-stream", hdrs, 1),
	    0);
	ASSERT_INTEQ(r.status, 201);
	ASSERT(strncmp(s.req, "PUT /api/v1/f HTTP/1.1\r\n", 24) == 0);
	ASSERT(strstr(s.req, "\r\nContent-Length: 8\r\n") != NULL);
	ASSERT(strstr(s.req,
	           "\r\nContent-Type: application/octet-stream\r\n") != NULL);
	ASSERT(strstr(s.req, "\r\nX-Perfwatch-Sha256: abc\r\n") != NULL);
	ASSERT(strstr(s.req, "\r\n\r\n23456789") != NULL);
	http_reply_release(&r);
	/* 8 bytes announced, 2 left in the file: refused, not sent short. */
	ASSERT_INTEQ(lseek(fd, 8, SEEK_SET), 8);
	ASSERT_INTEQ(
	    http_put_fd(&r, h, url, fd, 8, "application/octet-stream", NULL, 0),
	    -1);
	ASSERT(strstr(http_errmsg(h), "ended early") != NULL);
	srv_stop(&s);
	close(fd);
	http_free(h);
}

TEST(test_http__retries_5xx_and_429_then_succeeds)
{
	static const char *const replies[] = {
		"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
		"Connection: close\r\n\r\n",
		"HTTP/1.1 429 Slow down\r\nContent-Length: 0\r\n"
		"Connection: close\r\n\r\n",
		"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n"
		"Connection: close\r\n\r\n{}",
	};
	struct srv s = { .replies = replies, .nreplies = 3, .max_conns = 3 };
	struct http_retry p = { 5, 10, 40, NULL };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	ASSERT_INTEQ(http_request_retry(&r, h, &p, "GET", url, NULL, 0), 0);
	ASSERT_INTEQ(r.status, 201);
	ASSERT_INTEQ(atomic_load(&s.nreq), 3);
	srv_stop(&s);
	http_reply_release(&r);
	http_free(h);
}

TEST(test_http__no_retry_on_4xx)
{
	static const char *const replies[] = {
		"HTTP/1.1 400 Bad\r\nContent-Length: 17\r\n"
		"Connection: close\r\n\r\n{\"error\": \"bad\"}\n",
	};
	struct srv s = { .replies = replies, .nreplies = 1, .max_conns = 5 };
	struct http_retry p = { 5, 10, 40, NULL };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	ASSERT_INTEQ(http_request_retry(&r, h, &p, "POST", url, "{}", 2), 0);
	ASSERT_INTEQ(r.status, 400);
	ASSERT(strstr(r.body.data, "bad") != NULL);
	ASSERT_INTEQ(atomic_load(&s.nreq), 1);
	srv_stop(&s);
	http_reply_release(&r);
	http_free(h);
}

/* A port with nothing listening: bound, then closed. */
static int
dead_port(void)
{
	struct srv s = { .max_conns = 0 };

	srv_start(&s);
	srv_stop(&s);
	return s.port;
}

TEST(test_http__connect_refused_is_retried_with_backoff)
{
	struct http_retry p = { 3, 100, 1000, NULL };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	struct timespec t0, t1;
	char url[128];
	double dt;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", dead_port());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_INTEQ(
	    http_request_retry(&r, h, &p, "GET", url, NULL, 0), ERR_AGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* Two sleeps: >= 50 + 100 ms (equal jitter keeps half). */
	ASSERT_MSG(dt >= 0.15 && dt < 3, "took %.3f s", dt);
	ASSERT(strstr(http_errmsg(h), url) != NULL);
	ASSERT_INTEQ(r.status, 0);
	http_free(h);
}

TEST(test_http__timeout_is_transient)
{
	struct srv s = { .replies = ok_reply,
		.nreplies = 1,
		.max_conns = 1,
		.delay_ms = 1500 };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	http_set_timeouts(h, 1000, 300);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	ASSERT_INTEQ(http_get(&r, h, url), ERR_AGAIN);
	ASSERT(strstr(http_errmsg(h), "imed out") != NULL);
	srv_stop(&s);
	http_free(h);
}

TEST(test_http__abort_flag_cuts_a_long_poll)
{
	static atomic_int flag = 1;
	struct srv s = { .replies = ok_reply,
		.nreplies = 1,
		.max_conns = 1,
		.delay_ms = 3000 };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	struct timespec t0, t1;
	char url[128];

	srv_start(&s);
	http_set_abort(h, &flag);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_INTEQ(http_get(&r, h, url), ERR_AGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT(t1.tv_sec - t0.tv_sec < 3);
	ASSERT(strstr(http_errmsg(h), "interrupted") != NULL);
	srv_stop(&s);
	http_free(h);
}

TEST(test_http__reply_over_cap_fails)
{
	struct srv s = { .max_conns = 1, .big_reply = CAP_HTTP_REPLY + 10 };
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	ASSERT_INTEQ(http_get(&r, h, url), ERR_TOOBIG);
	ASSERT(strstr(http_errmsg(h), "larger than") != NULL);
	ASSERT_INTEQ(r.body.len, 0);
	srv_stop(&s);
	http_free(h);
}

TEST(test_http__only_http_urls)
{
	struct http_reply r = HTTP_REPLY_INIT;
	struct http *h = http_new();

	ASSERT_INTEQ(http_get(&r, h, "file:///etc/passwd"), -1);
	ASSERT(strstr(http_errmsg(h), "only http") != NULL);
	ASSERT_INTEQ(http_get(&r, h, "gopher://127.0.0.1/"), -1);
	http_free(h);
}

TEST(test_http__backoff_grows_and_is_capped)
{
	struct http_retry p = { 10, 100, 1000, NULL };
	long d;
	int i;

	for (i = 0; i < 50; i++) {
		d = http_backoff_ms(&p, 1);
		ASSERT(d >= 50 && d <= 100);
		d = http_backoff_ms(&p, 3);
		ASSERT(d >= 200 && d <= 400);
		d = http_backoff_ms(&p, 30);
		ASSERT(d >= 500 && d <= 1000);
	}
	ASSERT(http_retryable(ERR_AGAIN, 0));
	ASSERT(http_retryable(0, 500));
	ASSERT(http_retryable(0, 429));
	ASSERT(!http_retryable(0, 404));
	ASSERT(!http_retryable(0, 200));
	ASSERT(!http_retryable(-1, 0));
}

TEST(test_http__smtp_send)
{
	static const char msg[] = "From: a@example.org\r\n"
	                          "To: b@example.org\r\n"
	                          "Subject: [perfwatch] x\r\n\r\n"
	                          "body line\r\n.leading dot\r\n";
	const char *rcpt[] = { "b@example.org", "c@example.org" };
	struct srv s = { .max_conns = 1, .smtp = 1 };
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	snprintf(url, sizeof(url), "smtp://127.0.0.1:%d", s.port);
	ASSERT_INTEQ(http_smtp_send(h, url, "a@example.org", rcpt, 2, msg,
	                 sizeof(msg) - 1, 0),
	    0);
	/* curl keeps the SMTP connection until the handle goes: QUIT. */
	http_free(h);
	h = NULL;
	srv_stop(&s);
	ASSERT(strstr(s.req, "MAIL FROM:<a@example.org>") != NULL);
	ASSERT(strstr(s.req, "RCPT TO:<b@example.org>") != NULL);
	ASSERT(strstr(s.req, "RCPT TO:<c@example.org>") != NULL);
	ASSERT(strstr(s.req, "Subject: [perfwatch] x\r\n\r\nbody line\r\n") !=
	    NULL);
	/* Dot-stuffed by curl. */
	ASSERT(strstr(s.req, "\r\n..leading dot\r\n") != NULL);
}

TEST(test_http__smtp_refusal_is_permanent)
{
	const char *rcpt[] = { "nobody@example.org" };
	struct srv s = { .max_conns = 1, .smtp = 1 };
	struct http *h = http_new();
	char url[128];

	srv_start(&s);
	snprintf(url, sizeof(url), "smtp://127.0.0.1:%d", s.port);
	ASSERT_INTEQ(
	    http_smtp_send(h, url, "a@example.org", rcpt, 1, "x\r\n", 3, 0),
	    -1);
	ASSERT(http_errmsg(h)[0] != '\0');
	http_free(h);
	h = http_new();
	srv_stop(&s);
	ASSERT_INTEQ(
	    http_smtp_send(h, "http://x/", "a@b", rcpt, 1, "x", 1, 0), -1);
	http_free(h);
}

TEST(test_http__token_file)
{
	char *p = xasprintf("%s/tok", test_tmpdir());
	struct err e = { 0 };
	char *tok = NULL;
	FILE *f;

	ASSERT((f = fopen(p, "w")) != NULL);
	fputs("  abc-123 \n# ignored\n", f);
	fclose(f);
	/* Others may read it: refused, saying how to fix it. */
	ASSERT(chmod(p, 0644) == 0);
	ASSERT_INTEQ(http_token_load(&tok, p, &e), -1);
	ASSERT(tok == NULL);
	ASSERT(strstr(err_msg(&e),
	           "readable or writable by others (mode "
	           "0644); chmod o-rwx") != NULL);
	ASSERT(strstr(err_msg(&e), "abc-123") == NULL);
	err_clear(&e);
	ASSERT(chmod(p, 0602) == 0);
	ASSERT_INTEQ(http_token_load(&tok, p, &e), -1);
	err_clear(&e);
	/* The owner and the group may: 0640 is fine. */
	ASSERT(chmod(p, 0640) == 0);
	ASSERT_INTEQ(http_token_load(&tok, p, &e), 0);
	ASSERT_STREQ(tok, "abc-123");
	free(tok);
	ASSERT((f = fopen(p, "w")) != NULL);
	fputs(" \n", f);
	fclose(f);
	ASSERT_INTEQ(http_token_load(&tok, p, &e), -1);
	ASSERT(strstr(err_msg(&e), "empty") != NULL);
	err_clear(&e);
	ASSERT_INTEQ(http_token_load(&tok, "/nonexistent/tok", &e), -1);
	ASSERT(strstr(err_msg(&e), "/nonexistent/tok") != NULL);
	free(p);
}
