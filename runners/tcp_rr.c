#define _GNU_SOURCE /* getopt_long */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runners/tcp_rr.h"

#define HELLO_LEN 12
#define IOBUF (64 * 1024)
#define MAX_EVENTS 256
#define CONNECT_TIMEOUT_S 10

static const char magic[4] = { 'P', 'W', 'R', '1' };

/* ---- options ---- */

void
tcp_rr_opts_init(struct tcp_rr_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 12867;
	o->flows = 1;
	o->threads = 1;
	o->test_length = 10;
	o->req_size = 1;
	o->resp_size = 1;
	o->pcts[0] = 50;
	o->pcts[1] = 90;
	o->pcts[2] = 99;
	o->pcts[3] = 99.9;
	o->npcts = 4;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : (x > y);
}

int
tcp_rr_parse_percentiles(double *out, int *nout, const char *s, struct err *e)
{
	char *copy = xstrdup(s), *p = copy, *tok, *end;
	int n = 0;

	while ((tok = strsep(&p, ",")) != NULL) {
		double v;

		if (*tok == '\0')
			continue;
		errno = 0;
		v = strtod(tok, &end);
		if (end == tok || *end != '\0' || errno || !(v > 0) ||
		    v > 100) {
			err_set(e, "percentiles: '%s' is not in (0, 100]", tok);
			free(copy);
			return -1;
		}
		if (n == TCP_RR_MAX_PCTS) {
			err_set(
			    e, "percentiles: more than %d", TCP_RR_MAX_PCTS);
			free(copy);
			return -1;
		}
		out[n++] = v;
	}
	free(copy);
	qsort(out, (size_t)n, sizeof(double), cmp_dbl);
	*nout = n;
	return 0;
}

static int
parse_long(
    long *out, const char *s, long lo, long hi, const char *what, struct err *e)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno || v < lo || v > hi)
		return err_set(
		    e, "%s: '%s' is not a number in %ld..%ld", what, s, lo, hi);
	*out = v;
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: perfwatch-tcp-rr [-c -H HOST] [-P PORT] [-F FLOWS] "
	    "[-T THREADS] [-l SECONDS]\n"
	    "           [-Q|--request-size N] [-R|--response-size N] "
	    "[-p 50,90,99]\n"
	    "           [--port-file FILE] [--once]\n"
	    "  server (default): answers clients until SIGINT/SIGTERM "
	    "(--once: after the first client)\n"
	    "  client (-c): F flows over T threads for -l seconds; "
	    "prints neper-style key=value lines\n");
}

int
tcp_rr_opts_parse(struct tcp_rr_opts *o, int argc, char **argv, struct err *e)
{
	static const struct option longopts[] = {
		{ "client", no_argument, NULL, 'c' },
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'P' },
		{ "num-flows", required_argument, NULL, 'F' },
		{ "num-threads", required_argument, NULL, 'T' },
		{ "test-length", required_argument, NULL, 'l' },
		{ "request-size", required_argument, NULL, 'Q' },
		{ "response-size", required_argument, NULL, 'R' },
		{ "percentiles", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'f' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;
	char *end;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(
	            argc, argv, "cH:P:F:T:l:Q:R:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->client = 1;
			break;
		case 'H':
			o->host = optarg;
			break;
		case 'P':
			if (parse_long(&v, optarg, 0, 65535, "port", e) < 0)
				return -1;
			o->port = (int)v;
			break;
		case 'F':
			if (parse_long(&v, optarg, 1, TCP_RR_MAX_FLOWS,
			        "num-flows", e) < 0)
				return -1;
			o->flows = (int)v;
			break;
		case 'T':
			if (parse_long(&v, optarg, 1, TCP_RR_MAX_THREADS,
			        "num-threads", e) < 0)
				return -1;
			o->threads = (int)v;
			break;
		case 'l':
			errno = 0;
			o->test_length = strtod(optarg, &end);
			if (end == optarg || *end || errno ||
			    !(o->test_length > 0) || o->test_length > 86400)
				return err_set(e,
				    "test-length: '%s' is not a number of "
				    "seconds in (0, 86400]",
				    optarg);
			break;
		case 'Q':
		case 'R':
			if (parse_long(&v, optarg, 1, TCP_RR_MAX_SIZE,
			        c == 'Q' ? "request-size" : "response-size",
			        e) < 0)
				return -1;
			if (c == 'Q')
				o->req_size = (uint32_t)v;
			else
				o->resp_size = (uint32_t)v;
			break;
		case 'p':
			if (tcp_rr_parse_percentiles(
			        o->pcts, &o->npcts, optarg, e) < 0)
				return -1;
			break;
		case 'f':
			o->port_file = optarg;
			break;
		case 'o':
			o->once = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return err_set(e, "unknown or incomplete option '%s'",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return err_set(e, "unexpected argument '%s'", argv[optind]);
	if (o->client && o->host == NULL)
		return err_set(e, "client mode (-c) needs -H HOST");
	if (o->client && o->port == 0)
		return err_set(e, "client mode needs a port (-P)");
	if (o->client && o->threads > o->flows)
		o->threads = o->flows;
	return 0;
}

/* ---- latency histogram ---- */

void
tcp_rr_hist_init(struct tcp_rr_hist *h)
{
	memset(h, 0, sizeof(*h));
}

static unsigned
bucket_of(uint64_t v)
{
	unsigned e;

	if (v < 128)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v); /* >= 7 */
	return 128 + (e - 7) * 64 + (unsigned)((v >> (e - 6)) - 64);
}

/* The middle of a bucket. */
static uint64_t
bucket_mid(unsigned i)
{
	unsigned e, m;

	if (i < 128)
		return i;
	e = (i - 128) / 64 + 7;
	m = (i - 128) % 64 + 64;
	return ((uint64_t)m << (e - 6)) + (((uint64_t)1 << (e - 6)) >> 1);
}

void
tcp_rr_hist_add(struct tcp_rr_hist *h, uint64_t ns)
{
	double d;

	if (h->count == 0 || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	d = (double)ns - h->mean;
	h->mean += d / (double)h->count;
	h->m2 += d * ((double)ns - h->mean);
	h->b[bucket_of(ns)]++;
}

void
tcp_rr_hist_merge(struct tcp_rr_hist *dst, const struct tcp_rr_hist *src)
{
	double n, d;
	size_t i;

	if (src->count == 0)
		return;
	if (dst->count == 0) {
		*dst = *src;
		return;
	}
	n = (double)dst->count + (double)src->count;
	d = src->mean - dst->mean;
	dst->m2 +=
	    src->m2 + d * d * (double)dst->count * (double)src->count / n;
	dst->mean += d * (double)src->count / n;
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (i = 0; i < TCP_RR_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

uint64_t
tcp_rr_hist_percentile(const struct tcp_rr_hist *h, double p)
{
	uint64_t rank, sum = 0, v;
	unsigned i;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < TCP_RR_HIST_BUCKETS; i++) {
		sum += h->b[i];
		if (sum >= rank)
			break;
	}
	v = i < TCP_RR_HIST_BUCKETS ? bucket_mid(i) : h->max;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

double
tcp_rr_hist_stddev(const struct tcp_rr_hist *h)
{
	return h->count > 1 ? sqrt(h->m2 / (double)h->count) : 0;
}

/* ---- output ---- */

static void
print_opts(FILE *f, const struct tcp_rr_opts *o, int port)
{
	int i;

	fprintf(f, "percentiles=");
	for (i = 0; i < o->npcts; i++)
		fprintf(f, "%s%g", i ? "," : "", o->pcts[i]);
	fprintf(f, "\nport=%d\nhost=%s\nclient=%d\n", port,
	    o->host ? o->host : "", o->client);
	fprintf(f, "request_size=%u\nresponse_size=%u\n", o->req_size,
	    o->resp_size);
	fprintf(f, "test_length=%g\nnum_threads=%d\nnum_flows=%d\n",
	    o->test_length, o->threads, o->flows);
	fflush(f);
}

static void
print_rusage(FILE *f, const char *suffix)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "utime_%s=%.6f\n", suffix,
	    (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6);
	fprintf(f, "stime_%s=%.6f\n", suffix,
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	fprintf(f, "maxrss_%s=%ld\nminflt_%s=%ld\nmajflt_%s=%ld\n", suffix,
	    ru.ru_maxrss, suffix, ru.ru_minflt, suffix, ru.ru_majflt);
	fprintf(f, "nvcsw_%s=%ld\nnivcsw_%s=%ld\n", suffix, ru.ru_nvcsw, suffix,
	    ru.ru_nivcsw);
}

/* Percentile keys as neper prints them: latency_p99, latency_p99.9. */
static void
print_pct_key(FILE *f, double p)
{
	char s[32];

	snprintf(s, sizeof(s), "%g", p);
	fprintf(f, "latency_p%s=", s);
}

void
tcp_rr_print_result(
    FILE *f, const struct tcp_rr_opts *o, const struct tcp_rr_result *r)
{
	double tput = r->elapsed > 0 ? (double)r->transactions / r->elapsed : 0;
	int i;

	fprintf(
	    f, "num_transactions=%llu\n", (unsigned long long)r->transactions);
	fprintf(f, "throughput=%.2f\n", tput);
	if (o->client) {
		fprintf(f, "local_throughput=%.2f\n", tput);
		fprintf(f, "latency_min=%.9f\n", (double)r->lat.min / 1e9);
		fprintf(f, "latency_max=%.9f\n", (double)r->lat.max / 1e9);
		fprintf(f, "latency_mean=%.9f\n", r->lat.mean / 1e9);
		fprintf(f, "latency_stddev=%.9f\n",
		    tcp_rr_hist_stddev(&r->lat) / 1e9);
		for (i = 0; i < o->npcts; i++) {
			print_pct_key(f, o->pcts[i]);
			fprintf(f, "%.9f\n",
			    (double)tcp_rr_hist_percentile(
			        &r->lat, o->pcts[i]) /
			        1e9);
		}
	}
}

/* ---- sockets ---- */

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int
resolve(struct addrinfo **out, const struct tcp_rr_opts *o, int passive,
    struct err *e)
{
	struct addrinfo hints;
	char port[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	snprintf(port, sizeof(port), "%d", o->port);
	if ((rc = getaddrinfo(o->host, port, &hints, out)) != 0)
		return err_set(e, "%s port %s: %s", o->host ? o->host : "*",
		    port, gai_strerror(rc));
	return 0;
}

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

		memcpy(hello, magic, 4);
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
		    set_nonblock(fd) == 0)
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

	raise_nofile();
	if (resolve(&ai, o, 0, e) < 0)
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
	print_opts(out, o, o->port);
	print_rusage(out, "start");
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
	print_rusage(out, "end");
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
			if (memcmp(c->hello, magic, 4) != 0)
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

	if (resolve(&ai, o, 1, e) < 0)
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

	raise_nofile();
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
	print_opts(out, o, port);
	if (o->port_file && write_port_file(o->port_file, port, e) < 0)
		goto out;
	print_rusage(out, "start");
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
		print_rusage(out, "end");
		fflush(out);
	} else if (rc == 0) {
		memset(&res, 0, sizeof(res));
		for (i = 0; i < started; i++)
			res.transactions += th[i].transactions;
		if (atomic_load(&active) > 0 || t_last < t_first)
			t_last = clock_mono_s();
		res.elapsed = t_last - t_first;
		fprintf(out, "time_start=%.9f\n", t_first);
		print_rusage(out, "end");
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
