/*
 * perfwatch-tcp-rr's client (tcp_rr.h): threads of epoll loops, each
 * flow a connection sending a request and waiting for its response, the
 * latency of each transaction into a histogram.
 */
#define _GNU_SOURCE /* getopt_long */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runners/tcp_rr_int.h"

#define CONNECT_TIMEOUT_S 10

/* ---- client ---- */

struct flow {
	int fd;
	uint32_t out_left, in_left; /* of the current request/response */
	uint32_t hello_left;
	uint64_t t_send;
};

struct cthread {
	const struct tcp_rr_opts *o;
	struct flow *flows;
	int nflows;
	int ep;
	uint64_t deadline;
	uint64_t transactions;
	struct tcp_rr_hist lat;
	struct err err;
	pthread_t tid;
};

/* Writes what the flow owes (hello, then request); 0 or -1 (errno). */
static int
flow_write(struct cthread *t, struct flow *fl)
{
	static const char zeros[IOBUF];
	char hello[HELLO_LEN];
	uint32_t v;

	while (fl->hello_left > 0) {
		ssize_t n;

		memcpy(hello, TCP_RR_MAGIC, 4);
		v = htonl(t->o->req_size);
		memcpy(hello + 4, &v, 4);
		v = htonl(t->o->resp_size);
		memcpy(hello + 8, &v, 4);
		n = send(fl->fd, hello + HELLO_LEN - fl->hello_left,
		    fl->hello_left, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		fl->hello_left -= (uint32_t)n;
	}
	while (fl->out_left > 0) {
		size_t want = fl->out_left < IOBUF ? fl->out_left : IOBUF;
		ssize_t n = send(fl->fd, zeros, want, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		fl->out_left -= (uint32_t)n;
	}
	return 0;
}

static int
flow_want_out(struct cthread *t, struct flow *fl, int on)
{
	struct epoll_event ev;

	ev.events = EPOLLIN | (on ? EPOLLOUT : 0);
	ev.data.ptr = fl;
	return epoll_ctl(t->ep, EPOLL_CTL_MOD, fl->fd, &ev);
}

static int
flow_start(struct cthread *t, struct flow *fl)
{
	int r;

	fl->out_left = t->o->req_size;
	fl->in_left = t->o->resp_size;
	fl->t_send = clock_mono_ns();
	if ((r = flow_write(t, fl)) < 0)
		return -1;
	return r == 1 ? flow_want_out(t, fl, 1) : 0;
}

static void *
client_thread(void *arg)
{
	struct cthread *t = arg;
	struct epoll_event evs[MAX_EVENTS];
	char buf[IOBUF];
	int i;

	for (i = 0; i < t->nflows; i++)
		if (flow_start(t, &t->flows[i]) < 0) {
			err_set(
			    &t->err, "flow %d: send: %s", i, strerror(errno));
			return NULL;
		}
	for (;;) {
		uint64_t now = clock_mono_ns();
		int n, ms;

		if (now >= t->deadline)
			break;
		ms = (int)((t->deadline - now + 999999) / 1000000);
		n = epoll_wait(t->ep, evs, MAX_EVENTS, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_set(&t->err, "epoll_wait: %s", strerror(errno));
			return NULL;
		}
		for (i = 0; i < n; i++) {
			struct flow *fl = evs[i].data.ptr;
			ssize_t r;

			if (evs[i].events & EPOLLOUT) {
				int w = flow_write(t, fl);

				if (w < 0 ||
				    (w == 0 && flow_want_out(t, fl, 0)))
					goto fail;
			}
			if (!(evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
				continue;
			while ((r = recv(fl->fd, buf, sizeof(buf), 0)) > 0) {
				if ((uint32_t)r > fl->in_left) {
					err_set(&t->err,
					    "server sent more than the "
					    "response size");
					return NULL;
				}
				fl->in_left -= (uint32_t)r;
				if (fl->in_left == 0 && fl->out_left == 0) {
					uint64_t done = clock_mono_ns();

					tcp_rr_hist_add(
					    &t->lat, done - fl->t_send);
					t->transactions++;
					if (flow_start(t, fl) < 0)
						goto fail;
				}
			}
			if (r == 0) {
				err_set(
				    &t->err, "the server closed a connection");
				return NULL;
			}
			if (errno != EAGAIN && errno != EINTR)
				goto fail;
		}
	}
	return NULL;
fail:
	err_set(&t->err, "flow I/O: %s", strerror(errno));
	return NULL;
}

static int
connect_flow(const struct addrinfo *ai, struct err *e)
{
	struct timeval tv = { CONNECT_TIMEOUT_S, 0 };
	int fd, one = 1;

	for (; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd < 0)
			continue;
		/* SO_SNDTIMEO bounds a blocking connect(). */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    tcp_rr_i_set_nonblock(fd) == 0)
			return fd;
		close(fd);
	}
	err_set(e, "connect: %s", strerror(errno));
	return -1;
}

int
tcp_rr_client(const struct tcp_rr_opts *o, FILE *out, struct err *e)
{
	struct addrinfo *ai = NULL;
	struct cthread *th;
	struct flow *flows;
	struct tcp_rr_result res;
	double t0, t1;
	int i, j, rc = -1, started = 0;
	uint64_t deadline;

	tcp_rr_i_raise_nofile();
	if (tcp_rr_i_resolve(&ai, o, 0, e) < 0)
		return -1;
	flows = xcalloc((size_t)o->flows, sizeof(*flows));
	th = xcalloc((size_t)o->threads, sizeof(*th));
	for (i = 0; i < o->flows; i++)
		flows[i].fd = -1;
	for (i = 0; i < o->threads; i++)
		th[i].ep = -1;
	/* Connect every flow before the clock starts, as neper does. */
	for (i = 0; i < o->flows; i++) {
		if ((flows[i].fd = connect_flow(ai, e)) < 0)
			goto out;
		flows[i].hello_left = HELLO_LEN;
	}
	tcp_rr_i_print_opts(out, o, o->port);
	tcp_rr_i_print_rusage(out, "start");
	for (i = 0, j = 0; i < o->threads; i++) {
		struct cthread *t = &th[i];
		int k,
		    per = o->flows / o->threads +
		    (i < o->flows % o->threads ? 1 : 0);

		t->o = o;
		t->flows = &flows[j];
		t->nflows = per;
		j += per;
		tcp_rr_hist_init(&t->lat);
		err_clear(&t->err);
		if ((t->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
			err_set(e, "epoll_create1: %s", strerror(errno));
			goto out;
		}
		for (k = 0; k < per; k++) {
			struct epoll_event ev = { .events = EPOLLIN };

			ev.data.ptr = &t->flows[k];
			if (epoll_ctl(t->ep, EPOLL_CTL_ADD, t->flows[k].fd,
			        &ev) < 0) {
				err_set(e, "epoll_ctl: %s", strerror(errno));
				goto out;
			}
		}
	}
	t0 = clock_mono_s();
	fprintf(out, "time_start=%.9f\n", t0);
	deadline = clock_mono_ns() + (uint64_t)(o->test_length * 1e9);
	for (i = 0; i < o->threads; i++) {
		th[i].deadline = deadline;
		if (pthread_create(&th[i].tid, NULL, client_thread, &th[i]) !=
		    0) {
			err_set(e, "pthread_create failed");
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	t1 = clock_mono_s();
	if (started < o->threads)
		goto out;
	memset(&res, 0, sizeof(res));
	tcp_rr_hist_init(&res.lat);
	for (i = 0; i < o->threads; i++) {
		if (th[i].err.set) {
			err_set(e, "thread %d: %s", i, th[i].err.msg);
			goto out;
		}
		res.transactions += th[i].transactions;
		tcp_rr_hist_merge(&res.lat, &th[i].lat);
	}
	if (res.transactions == 0) {
		err_set(e, "no transaction completed in %g s", o->test_length);
		goto out;
	}
	res.elapsed = t1 - t0;
	tcp_rr_i_print_rusage(out, "end");
	tcp_rr_print_result(out, o, &res);
	fprintf(out, "time_end=%.9f\n", t1);
	fflush(out);
	rc = 0;
out:
	for (i = 0; i < o->threads; i++)
		if (th[i].ep >= 0)
			close(th[i].ep);
	for (i = 0; i < o->flows; i++)
		if (flows[i].fd >= 0)
			close(flows[i].fd);
	free(th);
	free(flows);
	freeaddrinfo(ai);
	return rc;
}
