#ifndef RUNNERS_TCP_RR_H
#define RUNNERS_TCP_RR_H

/*
 * perfwatch-tcp-rr: a neper-compatible TCP request/response load
 * generator.  The client opens F flows (connections) spread over T
 * threads, each thread driving its flows with epoll on nonblocking
 * sockets; a flow sends a request of request_size bytes, waits for the
 * response_size-byte reply, and starts over, for test_length seconds.
 * Output is neper's key=value format (latencies in seconds), so the
 * neper parser reads it.
 *
 * Wire protocol (not neper's): each connection starts with a 12-byte
 * hello, "PWR1" then request and response sizes as 32-bit big-endian
 * numbers, so the server needs no size options; then requests and
 * responses of zero bytes follow.  The server echoes a response for every
 * complete request, on any number of concurrent connections, until
 * SIGINT/SIGTERM (or, with --once, until the first client's connections
 * are all closed), then prints its totals.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

#define TCP_RR_MAX_PCTS 16
#define TCP_RR_MAX_SIZE (1024 * 1024) /* request or response */
#define TCP_RR_MAX_FLOWS 100000
#define TCP_RR_MAX_THREADS 1024
#define TCP_RR_HIST_BUCKETS (128 + 57 * 64)

struct tcp_rr_opts {
	int client;       /* -c */
	const char *host; /* -H: server to reach, or address to bind */
	int port;         /* -P, 0: any (server) */
	const char *port_file;
	int flows, threads;           /* -F, -T */
	double test_length;           /* -l, seconds */
	uint32_t req_size, resp_size; /* -Q, -R */
	double pcts[TCP_RR_MAX_PCTS]; /* -p, ascending */
	int npcts;
	int once; /* server: exit after the first client session */
};

/* Defaults: server, port 12867, 1 flow, 1 thread, 10 s, 1-byte sizes,
 * percentiles 50,90,99,99.9. */
void tcp_rr_opts_init(struct tcp_rr_opts *);
/* 0, 1 when help was asked (usage printed to stdout), or -1 with e. */
int tcp_rr_opts_parse(
    struct tcp_rr_opts *out, int argc, char **argv, struct err *e);
/* "50,90,99.9" -> ascending list; 0 or -1 with e. */
int tcp_rr_parse_percentiles(
    double *out, int *nout, const char *s, struct err *e);

/*
 * A latency histogram in nanoseconds: exact count, min, max, mean and
 * standard deviation (Welford), and log-linear buckets (64 per power of
 * two above 128 ns) for percentiles, whose relative error is below 1/128.
 */
struct tcp_rr_hist {
	uint64_t count, min, max;
	double mean, m2;
	uint64_t b[TCP_RR_HIST_BUCKETS];
};

void tcp_rr_hist_init(struct tcp_rr_hist *);
void tcp_rr_hist_add(struct tcp_rr_hist *, uint64_t ns);
void tcp_rr_hist_merge(struct tcp_rr_hist *dst, const struct tcp_rr_hist *);
/* Nearest-rank percentile p (0 < p <= 100), clamped to [min, max]; 0 when
 * empty. */
uint64_t tcp_rr_hist_percentile(const struct tcp_rr_hist *, double p);
double tcp_rr_hist_stddev(const struct tcp_rr_hist *);

/* What a client run measured. */
struct tcp_rr_result {
	uint64_t transactions;
	double elapsed; /* seconds */
	struct tcp_rr_hist lat;
};

/* Writes the results part of the neper-style output. */
void tcp_rr_print_result(
    FILE *, const struct tcp_rr_opts *, const struct tcp_rr_result *);

/*
 * Runs the client or the server, writing key=value output to out.
 * 0, or -1 with e (nothing measured is printed as a result then).
 */
int tcp_rr_client(const struct tcp_rr_opts *, FILE *out, struct err *e);
int tcp_rr_server(const struct tcp_rr_opts *, FILE *out, struct err *e);

#endif
