#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runners/bench/bench.h"
#include "runners/tcp_rr.h"
#include "tests/unit/test.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : (x > y);
}

/* A deterministic generator, so a failure can be replayed. */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

TEST(test_tcp_rr__hist_percentiles_within_1_128)
{
	static const double ps[] = { 1, 25, 50, 90, 99, 99.9, 100 };
	struct tcp_rr_hist *h = malloc(sizeof(*h));
	uint64_t *v = malloc(20000 * sizeof(*v)), seed = 88172645463325252ULL;
	double sum = 0, var = 0, mean;
	size_t i, k;

	ASSERT(h != NULL && v != NULL);
	tcp_rr_hist_init(h);
	for (i = 0; i < 20000; i++) {
		/* Latencies from 50 ns to ~10 ms, skewed like real ones. */
		v[i] = 50 +
		    next_rand(&seed) % 1000 * (1 + next_rand(&seed) % 10000);
		tcp_rr_hist_add(h, v[i]);
		sum += (double)v[i];
	}
	qsort(v, 20000, sizeof(*v), cmp_u64);
	mean = sum / 20000;
	for (i = 0; i < 20000; i++)
		var += ((double)v[i] - mean) * ((double)v[i] - mean);
	ASSERT_INTEQ(h->count, 20000);
	ASSERT_INTEQ(h->min, v[0]);
	ASSERT_INTEQ(h->max, v[19999]);
	ASSERT_NEAR(h->mean, mean, mean * 1e-9);
	ASSERT_NEAR(
	    tcp_rr_hist_stddev(h), sqrt(var / 20000), sqrt(var / 20000) * 1e-6);
	for (k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		size_t rank = (size_t)ceil(ps[k] / 100 * 20000);
		double exact = (double)v[rank - 1];
		double got = (double)tcp_rr_hist_percentile(h, ps[k]);

		ASSERT_MSG(fabs(got - exact) <= exact / 128 + 1,
		    "p%g: %g vs exact %g", ps[k], got, exact);
	}
	free(v);
	free(h);
}

TEST(test_tcp_rr__hist_merge_equals_one_hist)
{
	struct tcp_rr_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)),
	                   *all = malloc(sizeof(*all));
	uint64_t seed = 42;
	int i;

	ASSERT(a && b && all);
	tcp_rr_hist_init(a);
	tcp_rr_hist_init(b);
	tcp_rr_hist_init(all);
	for (i = 0; i < 5000; i++) {
		uint64_t x = 1000 + next_rand(&seed) % 100000;

		tcp_rr_hist_add(i % 3 ? a : b, x);
		tcp_rr_hist_add(all, x);
	}
	tcp_rr_hist_merge(a, b);
	ASSERT_INTEQ(a->count, all->count);
	ASSERT_INTEQ(a->min, all->min);
	ASSERT_INTEQ(a->max, all->max);
	ASSERT_NEAR(a->mean, all->mean, 1e-6);
	ASSERT_NEAR(tcp_rr_hist_stddev(a), tcp_rr_hist_stddev(all), 1e-6);
	ASSERT(memcmp(a->b, all->b, sizeof(a->b)) == 0);
	ASSERT_INTEQ(
	    tcp_rr_hist_percentile(a, 99), tcp_rr_hist_percentile(all, 99));
	free(a);
	free(b);
	free(all);
}

TEST(test_tcp_rr__options)
{
	struct tcp_rr_opts o;
	struct err e;
	char *ok[] = { "tcp-rr", "-c", "-H", "127.0.0.1", "-P", "4000", "-F",
		"8", "-T", "16", "-l", "2.5", "--request-size", "100", "-R",
		"2000", "-p", "99,50,99.9", NULL };
	char *noh[] = { "tcp-rr", "-c", NULL };
	char *badf[] = { "tcp-rr", "-F", "0", NULL };
	char *badp[] = { "tcp-rr", "-p", "50,101", NULL };
	char *extra[] = { "tcp-rr", "stray", NULL };

	err_clear(&e);
	tcp_rr_opts_init(&o);
	ASSERT_INTEQ(o.port, 12867);
	ASSERT_INTEQ(o.flows, 1);
	ASSERT_INTEQ(o.req_size, 1);
	ASSERT_INTEQ(o.npcts, 4);
	ASSERT_INTEQ(tcp_rr_opts_parse(&o, 18, ok, &e), 0);
	ASSERT(o.client);
	ASSERT_STREQ(o.host, "127.0.0.1");
	ASSERT_INTEQ(o.port, 4000);
	ASSERT_INTEQ(o.flows, 8);
	ASSERT_INTEQ(o.threads, 8); /* no more threads than flows */
	ASSERT_NEAR(o.test_length, 2.5, 0);
	ASSERT_INTEQ(o.req_size, 100);
	ASSERT_INTEQ(o.resp_size, 2000);
	ASSERT_INTEQ(o.npcts, 3);
	ASSERT_NEAR(o.pcts[0], 50, 0);
	ASSERT_NEAR(o.pcts[2], 99.9, 0);

	tcp_rr_opts_init(&o);
	ASSERT(tcp_rr_opts_parse(&o, 2, noh, &e) == -1);
	ASSERT(strstr(err_msg(&e), "needs -H") != NULL);
	err_clear(&e);
	tcp_rr_opts_init(&o);
	ASSERT(tcp_rr_opts_parse(&o, 3, badf, &e) == -1);
	ASSERT(strstr(err_msg(&e), "num-flows") != NULL);
	err_clear(&e);
	tcp_rr_opts_init(&o);
	ASSERT(tcp_rr_opts_parse(&o, 3, badp, &e) == -1);
	ASSERT(strstr(err_msg(&e), "'101'") != NULL);
	err_clear(&e);
	tcp_rr_opts_init(&o);
	ASSERT(tcp_rr_opts_parse(&o, 2, extra, &e) == -1);
}

/* What the client prints is what the neper parser reads. */
TEST(test_tcp_rr__output_parses_as_neper)
{
	struct tcp_rr_opts o;
	struct tcp_rr_result *res = calloc(1, sizeof(*res));
	struct bench_result r;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	ASSERT(res != NULL);
	tcp_rr_opts_init(&o);
	o.client = 1;
	o.host = "127.0.0.1";
	tcp_rr_hist_init(&res->lat);
	for (i = 1; i <= 1000; i++)
		tcp_rr_hist_add(&res->lat, i * 1000); /* 1..1000 us */
	res->transactions = 1000;
	res->elapsed = 0.5;
	ASSERT((f = open_memstream(&text, &len)) != NULL);
	tcp_rr_print_result(f, &o, res);
	fclose(f);
	bench_result_init(&r);
	ASSERT_MSG(
	    bench_parse(&r, "neper", text, len) == 0, "%s", err_msg(&r.err));
	free(text);
	ASSERT_NEAR(bench_find(&r, "throughput")->value, 2000, 1e-9);
	ASSERT_NEAR(bench_find(&r, "local_throughput")->value, 2000, 1e-9);
	ASSERT_NEAR(bench_find(&r, "num_transactions")->value, 1000, 0);
	ASSERT_NEAR(bench_find(&r, "latency_min")->value, 1, 1e-9);
	ASSERT_NEAR(bench_find(&r, "latency_max")->value, 1000, 1e-9);
	ASSERT_NEAR(bench_find(&r, "latency_mean")->value, 500.5, 1e-6);
	/* Exact p50 is 500 us, p99.9 999 us; buckets are within 1/128. */
	ASSERT_NEAR(bench_find(&r, "latency_p50")->value, 500, 500.0 / 128);
	ASSERT(bench_find(&r, "latency_p99.9") != NULL);
	ASSERT_NEAR(bench_find(&r, "latency_p99.9")->value, 999, 999.0 / 128);
	ASSERT_STREQ(bench_find(&r, "latency_p90")->unit, "us");
	bench_result_release(&r);
	free(res);
}
