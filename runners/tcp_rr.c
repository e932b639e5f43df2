#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/xalloc.h"
#include "runners/tcp_rr.h"
#include "runners/tcp_rr_int.h"

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

void
tcp_rr_i_print_opts(FILE *f, const struct tcp_rr_opts *o, int port)
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

void
tcp_rr_i_print_rusage(FILE *f, const char *suffix)
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

int
tcp_rr_i_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void
tcp_rr_i_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int
tcp_rr_i_resolve(struct addrinfo **out, const struct tcp_rr_opts *o,
    int passive, struct err *e)
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
