/*
 * runners/client's failover between the servers of one database, against
 * servers on 127.0.0.1 in threads of the test that answer every request
 * with one status: which server a call reaches, what makes it go on to
 * the next, and that the client stays with the one that answered.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "runners/client.h"
#include "tests/unit/test.h"

struct fake {
	int fd, port;
	const char *status; /* "200 OK", "503 Service Unavailable", ... */
	atomic_int hits;
	pthread_t th;
};

/* Reads one request (headers, then a Content-Length body) and drops it. */
static void
drain_request(int c)
{
	char req[8192], *end, *cl;
	size_t len = 0, want = 0;
	ssize_t n;

	while (len < sizeof(req) - 1 &&
	    (n = read(c, req + len, sizeof(req) - 1 - len)) > 0) {
		len += (size_t)n;
		req[len] = '\0';
		if (want == 0 && (end = strstr(req, "\r\n\r\n")) != NULL) {
			cl = strstr(req, "Content-Length: ");
			want = (size_t)(end + 4 - req) +
			    (cl != NULL ? strtoul(cl + 16, NULL, 10) : 0);
		}
		if (want > 0 && len >= want)
			break;
	}
}

static void *
fake_main(void *arg)
{
	struct fake *f = arg;
	char reply[256];
	int c, n;

	while ((c = accept(f->fd, NULL, NULL)) != -1) {
		drain_request(c);
		atomic_fetch_add(&f->hits, 1);
		n = snprintf(reply, sizeof(reply),
		    "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
		    "Content-Length: 11\r\nConnection: close\r\n\r\n"
		    "{\"a\": true}",
		    f->status);
		if (write(c, reply, (size_t)n) != n)
			break;
		close(c);
	}
	return NULL;
}

static void
fake_start(struct fake *f, const char *status)
{
	f->status = status;
	atomic_init(&f->hits, 0);
	f->fd = test_listen(&f->port);
	pthread_create(&f->th, NULL, fake_main, f);
}

static void
fake_stop(struct fake *f)
{
	shutdown(f->fd, SHUT_RDWR);
	close(f->fd);
	pthread_join(f->th, NULL);
}

/* A port nothing listens on: bound, then closed. */
static int
dead_port(void)
{
	int port, fd = test_listen(&port);

	close(fd);
	return port;
}

/* A client of the servers at ports (0: a dead one), in that order. */
static struct client *
client_of(char url[][64], const int *ports, size_t n)
{
	const char *v[4];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(url[i], 64, "http://127.0.0.1:%d/",
		    ports[i] ? ports[i] : dead_port());
		v[i] = url[i];
	}
	return client_new_list(v, n, "tok");
}

TEST(test_client__unreachable_first_server_fails_over_to_the_next)
{
	struct fake b;
	char url[2][64];
	struct client *c;
	json_t *r = NULL;
	int ports[2] = { 0, 0 };

	log_init("client_test", 0);
	fake_start(&b, "200 OK");
	ports[1] = b.port;
	c = client_of(url, ports, 2);
	ASSERT_INTEQ(client_call(&r, NULL, c, "GET", "/api/v1/jobs", NULL), 0);
	ASSERT(r != NULL);
	json_decref(r);
	ASSERT_INTEQ(atomic_load(&b.hits), 1);
	/* The one that answered, without its trailing slash. */
	ASSERT(strncmp(client_server(c), url[1], strlen(url[1]) - 1) == 0);
	/* The client stays with it. */
	ASSERT_INTEQ(client_call(NULL, NULL, c, "GET", "/x", NULL), 0);
	ASSERT_INTEQ(atomic_load(&b.hits), 2);
	client_free(c);
	fake_stop(&b);
}

TEST(test_client__5xx_fails_over_4xx_and_429_do_not)
{
	/* The first server's answer; what the call gives; whether the
	 * second server (200) is asked. */
	static const struct {
		const char *status;
		int rc;
		long code;
		int second;
	} cases[] = {
		{ "503 Service Unavailable", 0, 200, 1 },
		{ "500 Internal Server Error", 0, 200, 1 },
		/* A refusal of the request is the answer, whichever server. */
		{ "404 Not Found", ERR_NOTFOUND, 404, 0 },
		{ "409 Conflict", ERR_CONFLICT, 409, 0 },
		/* Up, and asking to slow down: the caller backs off. */
		{ "429 Too Many Requests", ERR_AGAIN, 429, 0 },
	};
	struct fake a, b;
	char url[2][64];
	struct client *c;
	long status;
	size_t i;
	int ports[2];

	log_init("client_test", 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_start(&a, cases[i].status);
		fake_start(&b, "200 OK");
		ports[0] = a.port;
		ports[1] = b.port;
		c = client_of(url, ports, 2);
		status = 0;
		ASSERT_INTEQ(client_call(NULL, &status, c, "POST", "/p", NULL),
		    cases[i].rc);
		ASSERT_INTEQ(status, cases[i].code);
		ASSERT_INTEQ(atomic_load(&a.hits), 1);
		ASSERT_INTEQ(atomic_load(&b.hits), cases[i].second);
		client_free(c);
		fake_stop(&a);
		fake_stop(&b);
	}
}

TEST(test_client__every_server_down_is_err_again_after_one_round)
{
	char url[3][64];
	struct client *c;
	int ports[3] = { 0, 0, 0 };

	log_init("client_test", 0);
	c = client_of(url, ports, 3);
	ASSERT_INTEQ(client_call(NULL, NULL, c, "GET", "/p", NULL), ERR_AGAIN);
	/* Each tried once, the last one current: the next call starts
	 * there and goes round. */
	ASSERT(strncmp(client_server(c), url[2], strlen(url[2]) - 1) == 0);
	ASSERT(strstr(client_errmsg(c), "GET /p") != NULL);
	client_free(c);
}
