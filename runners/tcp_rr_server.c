/*
 * perfwatch-tcp-rr's server (tcp_rr.h): threads of epoll loops answering
 * each request of each connection with a response of the asked size.
 */
#define _GNU_SOURCE /* getopt_long */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runners/tcp_rr_int.h"

/* ---- server ---- */

struct conn {
	int fd;
	uint8_t hello[HELLO_LEN];
	uint32_t hello_got;
	uint32_t req_size, resp_size;
	uint32_t in_got;   /* of the current request */
	uint64_t out_owed; /* response bytes not yet sent */
	int want_out;
	struct conn *prev, *next; /* in the owning thread's list */
};

struct sthread {
	int ep, stopfd;
	pthread_mutex_t mu; /* guards conns: main adds, the thread drops */
	struct conn *conns;
	int notify; /* main's eventfd: a session may have ended */
	atomic_int *active;
	uint64_t transactions;
	pthread_t tid;
};

static void
conn_link(struct sthread *t, struct conn *c)
{
	pthread_mutex_lock(&t->mu);
	c->prev = NULL;
	c->next = t->conns;
	if (t->conns != NULL)
		t->conns->prev = c;
	t->conns = c;
	pthread_mutex_unlock(&t->mu);
}

static void
conn_unlink(struct sthread *t, struct conn *c)
{
	pthread_mutex_lock(&t->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		t->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&t->mu);
}

static void
conn_close(struct sthread *t, struct conn *c)
{
	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
	conn_unlink(t, c);
	close(c->fd);
	free(c);
	if (atomic_fetch_sub(t->active, 1) == 1) {
		uint64_t one = 1;

		if (write(t->notify, &one, sizeof(one)) < 0) {
			/* The counter saturating is harmless. */
		}
	}
}

/* 0 ok, -1: drop the connection. */
static int
conn_flush(struct sthread *t, struct conn *c)
{
	static const char zeros[IOBUF];
	struct epoll_event ev;

	while (c->out_owed > 0) {
		size_t want = c->out_owed < IOBUF ? (size_t)c->out_owed : IOBUF;
		ssize_t n = send(c->fd, zeros, want, MSG_NOSIGNAL);

		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -1;
		c->out_owed -= (uint64_t)n;
	}
	if ((c->out_owed > 0) != c->want_out) {
		c->want_out = c->out_owed > 0;
		ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0);
		ev.data.ptr = c;
		if (epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
			return -1;
	}
	return 0;
}

/* Consumes n bytes read from the client; -1: protocol error. */
static int
conn_input(struct sthread *t, struct conn *c, const char *p, size_t n)
{
	while (n > 0) {
		if (c->hello_got < HELLO_LEN) {
			size_t k = HELLO_LEN - c->hello_got;
			uint32_t v;

			if (k > n)
				k = n;
			memcpy(c->hello + c->hello_got, p, k);
			c->hello_got += (uint32_t)k;
			p += k;
			n -= k;
			if (c->hello_got < HELLO_LEN)
				return 0;
			if (memcmp(c->hello, TCP_RR_MAGIC, 4) != 0)
				return -1;
			memcpy(&v, c->hello + 4, 4);
			c->req_size = ntohl(v);
			memcpy(&v, c->hello + 8, 4);
			c->resp_size = ntohl(v);
			if (c->req_size < 1 || c->req_size > TCP_RR_MAX_SIZE ||
			    c->resp_size < 1 || c->resp_size > TCP_RR_MAX_SIZE)
				return -1;
			continue;
		}
		if (n >= c->req_size - c->in_got) {
			n -= c->req_size - c->in_got;
			c->in_got = 0;
			c->out_owed += c->resp_size;
			t->transactions++;
			/* A client pipelining without reading is cut off. */
			if (c->out_owed > 16 * (uint64_t)TCP_RR_MAX_SIZE)
				return -1;
		} else {
			c->in_got += (uint32_t)n;
			n = 0;
		}
	}
	return 0;
}

static void *
server_thread(void *arg)
{
	struct sthread *t = arg;
	struct epoll_event evs[MAX_EVENTS];
	char buf[IOBUF];
	int i, n;

	for (;;) {
		n = epoll_wait(t->ep, evs, MAX_EVENTS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r;

			if (c == NULL)
				return NULL; /* the stop eventfd */
			while ((r = recv(c->fd, buf, sizeof(buf), 0)) > 0)
				if (conn_input(t, c, buf, (size_t)r) < 0)
					break;
			if (r > 0 || r == 0 ||
			    (errno != EAGAIN && errno != EINTR) ||
			    conn_flush(t, c) < 0) {
				conn_close(t, c);
				continue;
			}
		}
	}
	return NULL;
}

static int
write_port_file(const char *path, int port, struct err *e)
{
	char tmp[4096];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return err_set(e, "port file path too long");
	if ((f = fopen(tmp, "w")) == NULL)
		return err_set(e, "%s: %s", tmp, strerror(errno));
	fprintf(f, "%d\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return err_set(e, "%s: %s", path, strerror(errno));
	return 0;
}

static int
listen_on(const struct tcp_rr_opts *o, int *port, struct err *e)
{
	struct addrinfo *ai = NULL, *a;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1;

	if (tcp_rr_i_resolve(&ai, o, 1, e) < 0)
		return -1;
	for (a = ai; a != NULL; a = a->ai_next) {
		fd = socket(a->ai_family,
		    a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
		    listen(fd, SOMAXCONN) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		err_set(e, "listen on %s port %d: %s", o->host ? o->host : "*",
		    o->port, strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		*port = ntohs(ss.ss_family == AF_INET6
		        ? ((struct sockaddr_in6 *)&ss)->sin6_port
		        : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int
tcp_rr_server(const struct tcp_rr_opts *o, FILE *out, struct err *e)
{
	struct sthread *th;
	struct epoll_event ev, evs[16];
	struct tcp_rr_result res;
	sigset_t mask, old;
	atomic_int active;
	int lfd, sfd = -1, nfd = -1, ep = -1, port = o->port, i, started = 0;
	int rc = -1, stop = 0, sessions = 0, next = 0;
	double t_first = 0, t_last = 0;

	tcp_rr_i_raise_nofile();
	atomic_init(&active, 0);
	/* Signals arrive through a signalfd, in the main loop only. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	if ((lfd = listen_on(o, &port, e)) < 0)
		goto out_mask;
	th = xcalloc((size_t)o->threads, sizeof(*th));
	for (i = 0; i < o->threads; i++) {
		th[i].ep = th[i].stopfd = -1;
		pthread_mutex_init(&th[i].mu, NULL);
	}
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0 ||
	    (nfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		err_set(e, "signalfd/eventfd/epoll: %s", strerror(errno));
		goto out;
	}
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.fd = nfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, nfd, &ev);
	for (i = 0; i < o->threads; i++) {
		struct epoll_event sev = { .events = EPOLLIN };

		th[i].notify = nfd;
		th[i].active = &active;
		if ((th[i].ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
		    (th[i].stopfd = eventfd(0, EFD_CLOEXEC)) < 0) {
			err_set(e, "epoll/eventfd: %s", strerror(errno));
			goto out;
		}
		sev.data.ptr = NULL;
		epoll_ctl(th[i].ep, EPOLL_CTL_ADD, th[i].stopfd, &sev);
		if (pthread_create(&th[i].tid, NULL, server_thread, &th[i]) !=
		    0) {
			err_set(e, "pthread_create failed");
			goto out;
		}
		started++;
	}
	tcp_rr_i_print_opts(out, o, port);
	if (o->port_file && write_port_file(o->port_file, port, e) < 0)
		goto out;
	tcp_rr_i_print_rusage(out, "start");
	fflush(out);
	while (!stop) {
		int n = epoll_wait(ep, evs, 16, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_set(e, "epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == sfd) {
				struct signalfd_siginfo si;

				/* Consume it: restoring the mask at the end
				 * must not deliver it again. */
				if (read(sfd, &si, sizeof(si)) < 0) {
					/* Stop all the same. */
				}
				stop = 1;
			} else if (fd == nfd) {
				uint64_t v;

				if (read(nfd, &v, sizeof(v)) < 0) {
					/* Spurious wakeup. */
				}
				t_last = clock_mono_s();
				if (o->once && sessions > 0 &&
				    atomic_load(&active) == 0)
					stop = 1;
			} else {
				int cfd, one = 1;

				while (
				    (cfd = accept4(lfd, NULL, NULL,
				         SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct conn *c = xcalloc(1, sizeof(*c));
					struct epoll_event cev;

					setsockopt(cfd, IPPROTO_TCP,
					    TCP_NODELAY, &one, sizeof(one));
					c->fd = cfd;
					cev.events = EPOLLIN;
					cev.data.ptr = c;
					if (sessions++ == 0)
						t_first = clock_mono_s();
					atomic_fetch_add(&active, 1);
					conn_link(&th[next], c);
					if (epoll_ctl(th[next].ep,
					        EPOLL_CTL_ADD, cfd, &cev) < 0) {
						conn_unlink(&th[next], c);
						close(cfd);
						free(c);
						atomic_fetch_sub(&active, 1);
					}
					next = (next + 1) % o->threads;
				}
			}
		}
	}
	rc = 0;
out:
	for (i = 0; i < started; i++) {
		uint64_t one = 1;

		if (write(th[i].stopfd, &one, sizeof(one)) < 0) {
			/* The thread would not stop: join would hang. */
			abort();
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	/* No client came: nothing was measured, so no result lines. */
	if (rc == 0 && sessions == 0) {
		tcp_rr_i_print_rusage(out, "end");
		fflush(out);
	} else if (rc == 0) {
		memset(&res, 0, sizeof(res));
		for (i = 0; i < started; i++)
			res.transactions += th[i].transactions;
		if (atomic_load(&active) > 0 || t_last < t_first)
			t_last = clock_mono_s();
		res.elapsed = t_last - t_first;
		fprintf(out, "time_start=%.9f\n", t_first);
		tcp_rr_i_print_rusage(out, "end");
		tcp_rr_print_result(out, o, &res);
		fprintf(out, "time_end=%.9f\n", t_last);
		fflush(out);
	}
	for (i = 0; i < o->threads; i++) {
		/* Connections still open at the stop. */
		while (th[i].conns != NULL) {
			struct conn *c = th[i].conns;

			th[i].conns = c->next;
			close(c->fd);
			free(c);
		}
		pthread_mutex_destroy(&th[i].mu);
		if (th[i].ep >= 0)
			close(th[i].ep);
		if (th[i].stopfd >= 0)
			close(th[i].stopfd);
	}
	free(th);
	if (ep >= 0)
		close(ep);
	if (nfd >= 0)
		close(nfd);
	if (sfd >= 0)
		close(sfd);
	close(lfd);
out_mask:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
