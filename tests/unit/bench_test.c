/*
 * Parser tests on the real captured outputs in tests/fixtures/bench/ (a copy of
 * the shared fixtures). Expected numbers come from the *.lkp-stats.yaml files
 * next to them (LKP's independent parse), copied by hand with the file named;
 * where our definition differs from LKP's (units, omitted zeros), the test says
 * how.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "runners/bench/bench.h"
#include "tests/unit/test.h"

static char *
slurp(const char *rel, size_t *len)
{
	FILE *f = fopen(test_fixture(rel), "rb");
	struct buf b = BUF_INIT(CAP_BENCH_INPUT);
	char chunk[8192];
	size_t n;

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	*len = b.len;
	return buf_take(&b);
}

/* Parses a fixture; 0 on success. */
static int
parse_fixture(struct bench_result *r, const char *tool, const char *rel)
{
	size_t len = 0;
	char *raw = slurp(rel, &len);
	int rc;

	bench_result_init(r);
	if (raw == NULL) {
		err_set(&r->err, "cannot read fixture %s", rel);
		return -2;
	}
	rc = bench_parse(r, tool, raw, len);
	free(raw);
	return rc;
}

static int
parse_str(struct bench_result *r, const char *tool, const char *s)
{
	bench_result_init(r);
	return bench_parse(r, tool, s, strlen(s));
}

#define VAL(r, name) \
	(bench_find(&(r), name) ? bench_find(&(r), name)->value : NAN)

#define ASSERT_METRIC(r, name, want, tol, unit_, better_)               \
	do {                                                            \
		const struct bench_metric *m_ = bench_find(&(r), name); \
		ASSERT_MSG(m_ != NULL, "metric %s missing", name);      \
		ASSERT_NEAR(m_->value, (want), (tol));                  \
		ASSERT_STREQ(m_->unit, unit_);                          \
		ASSERT_INTEQ(m_->better, better_);                      \
	} while (0)

#define ASSERT_PARSE_FAILS(r, tool, input, needle)                       \
	do {                                                             \
		ASSERT(parse_str(&(r), tool, input) != 0);               \
		ASSERT_INTEQ((r).n, 0);                                  \
		ASSERT_MSG(strstr(err_msg(&(r).err), needle) != NULL,    \
		    "error '%s' lacks '%s'", err_msg(&(r).err), needle); \
		bench_result_release(&(r));                              \
	} while (0)

/* ---- neper ---- */

TEST(test_bench__neper_server_fixture)
{
	struct bench_result r;

	ASSERT_INTEQ(
	    parse_fixture(&r, "neper", "bench/neper.tcp_rr.server.txt"), 0);
	/* neper.tcp_rr.server.txt: throughput=33009.84 */
	ASSERT_METRIC(r, "throughput", 33009.84, 1e-9, "trans/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "num_transactions", 329605, 0, "", BENCH_INFO);
	/* time_end - time_start, utime_end - utime_start, ... */
	ASSERT_METRIC(r, "duration", 1306183.666374314 - 1306173.666348235,
	    1e-6, "s", BENCH_INFO);
	ASSERT_METRIC(r, "utime", 0.348902 - 0.062141, 1e-9, "s", BENCH_INFO);
	ASSERT_METRIC(r, "nvcsw", 329455 - 26, 0, "", BENCH_INFO);
	/* The server side has no latency and the options are not metrics. */
	ASSERT(bench_find(&r, "latency_mean") == NULL);
	ASSERT(bench_find(&r, "port") == NULL);
	bench_result_release(&r);
}

TEST(test_bench__neper_client_latencies_in_us)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_str(&r, "neper",
	                 "num_flows=1\nthroughput=31000.5\n"
	                 "local_throughput=31000.5\nremote_throughput=30999\n"
	                 "latency_min=0.000019\nlatency_max=0.008010\n"
	                 "latency_mean=0.000030\nlatency_stddev=-nan\n"
	                 "latency_p50=0.000026\nlatency_p99.9=0.000068\n"),
	    0);
	ASSERT_METRIC(r, "latency_min", 19, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "latency_max", 8010, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "latency_p50", 26, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "latency_p99.9", 68, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(
	    r, "remote_throughput", 30999, 0, "trans/s", BENCH_HIGHER);
	/* nan means unknown: no metric, not a zero. */
	ASSERT(bench_find(&r, "latency_stddev") == NULL);
	bench_result_release(&r);
}

TEST(test_bench__neper_samples_csv)
{
	struct bench_result r;

	ASSERT_INTEQ(
	    parse_fixture(&r, "neper", "bench/neper.tcp_rr.samples.csv"), 0);
	ASSERT_METRIC(r, "samples", 10, 0, "", BENCH_INFO);
	ASSERT_METRIC(r, "flows", 1, 0, "", BENCH_INFO);
	/* Last and first rows: (340838 - 31726) transactions over
	 * (2766305.649132278 - 2766296.649115114) s. */
	ASSERT_METRIC(r, "throughput",
	    (340838.0 - 31726) / (2766305.649132278 - 2766296.649115114), 1e-6,
	    "trans/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "latency_min", 15, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "latency_max", 12611, 1e-9, "us", BENCH_LOWER);
	/* p50 column sorted: 18 25 25 26 26 26 27 27 27 29 us. */
	ASSERT_METRIC(r, "latency_p50_median", 26, 1e-9, "us", BENCH_LOWER);
	/* p99 column: 68 80 48 41 57 60 59 48 44 35 -> (48 + 57) / 2. */
	ASSERT_METRIC(r, "latency_p99_median", 52.5, 1e-9, "us", BENCH_LOWER);
	/* Weighted by transactions per interval, it lies between the
	 * rows' extreme means (24 and 31 us). */
	ASSERT(VAL(r, "latency_mean") > 24 && VAL(r, "latency_mean") < 31);
	bench_result_release(&r);
}

TEST(test_bench__neper_broken)
{
	struct bench_result r;

	ASSERT_PARSE_FAILS(r, "neper", "", "neper: line 1: empty");
	ASSERT_PARSE_FAILS(
	    r, "neper", "hello world\n", "neper: line 1: expected key=value");
	/* The first 10 lines of a run: cut before the results. */
	ASSERT_PARSE_FAILS(r, "neper",
	    "port=12867\nhost=\nnum_flows=1\nnum_transactions=5\n",
	    "neper: line 4: output ends without a throughput=");
	ASSERT_PARSE_FAILS(r, "neper", "num_flows=1\nthroughput=12abc\n",
	    "neper: line 2: throughput: not a number");
	ASSERT_PARSE_FAILS(r, "neper", "throughput=1\nthroughput=2\n",
	    "line 2: throughput appears twice");
	ASSERT_PARSE_FAILS(r, "neper",
	    "time,tid,flow_id,bytes_read,transactions\n1,0,0,5,5\n2,0,0\n",
	    "neper: line 3: 3 fields where the header has 5");
	ASSERT(parse_str(&r, "neper", "throughput=1\0x=2\n") == 0);
	bench_result_release(&r);
	bench_result_init(&r);
	ASSERT(bench_parse(&r, "neper", "throughput=1\n\0x=2\n", 17) != 0);
	ASSERT(strstr(err_msg(&r.err), "neper: line 2: NUL byte") != NULL);
	bench_result_release(&r);
}

/* ---- fio ---- */

TEST(test_bench__fio_randread_matches_lkp)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_fixture(&r, "fio", "bench/fio.randread.json"), 0);
	/* fio.randread.lkp-stats.yaml: read_bw_MBps: 114570.568359375,
	 * read_iops: 29330065.629016, read_clat_mean_ns: 1321.865086,
	 * read_clat_90%_ns: 2064, 95%: 2256, 99%: 2544 (ns; we report us). */
	ASSERT_METRIC(
	    r, "read_bw", 114570.568359375, 1e-9, "MiB/s", BENCH_HIGHER);
	ASSERT_METRIC(
	    r, "read_iops", 29330065.629016, 1e-6, "IOPS", BENCH_HIGHER);
	ASSERT_METRIC(
	    r, "read_clat_mean", 1321.865086 / 1000, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p90", 2.064, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p95", 2.256, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p99", 2.544, 1e-12, "us", BENCH_LOWER);
	/* Not in the yaml; fio's own percentile list in the JSON. */
	ASSERT_METRIC(r, "read_clat_p50", 1.128, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p99.9", 15.04, 1e-12, "us", BENCH_LOWER);
	/* numjobs=24 with group_reporting: one job entry. */
	ASSERT_METRIC(r, "jobs", 1, 0, "", BENCH_INFO);
	/* LKP says write_bw_MBps: 0.0; a read job did no writes: unknown,
	 * not zero. */
	ASSERT(bench_find(&r, "write_bw") == NULL);
	ASSERT(bench_find(&r, "trim_iops") == NULL);
	bench_result_release(&r);
}

TEST(test_bench__fio_libaio_matches_lkp)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_fixture(&r, "fio", "bench/fio.read.libaio.json"), 0);
	/* fio.read.libaio.lkp-stats.yaml */
	ASSERT_METRIC(
	    r, "read_bw", 3293.1650390625, 1e-9, "MiB/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "read_iops", 26343.32139, 1e-9, "IOPS", BENCH_HIGHER);
	ASSERT_METRIC(r, "read_clat_mean", 4831323.057972 / 1000, 1e-9, "us",
	    BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p90", 5013.504, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p95", 5079.040, 1e-9, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p99", 5144.576, 1e-9, "us", BENCH_LOWER);
	bench_result_release(&r);
}

/*
 * Per-job output (no group_reporting): the fixture's job next to a copy
 * with half the bandwidth, IOPS and samples and twice the mean latency.
 */
TEST(test_bench__fio_per_job_aggregation)
{
	struct bench_result r;
	struct err e;
	size_t len = 0;
	char *raw = slurp("bench/fio.randread.json", &len), *dump;
	json_t *root, *jobs, *j2, *rd, *clat, *pct;

	err_clear(&e);
	ASSERT(raw != NULL);
	root = pwjson_parse(raw, len, &e);
	free(raw);
	ASSERT(root != NULL);
	jobs = json_object_get(root, "jobs");
	j2 = json_deep_copy(json_array_get(jobs, 0));
	rd = json_object_get(j2, "read");
	json_object_set_new(rd, "bw", json_integer(117320262 / 2));
	json_object_set_new(rd, "iops", json_real(29330065.629016 / 2));
	clat = json_object_get(rd, "clat_ns");
	json_object_set_new(clat, "N", json_integer(5866101116LL / 2));
	json_object_set_new(clat, "mean", json_real(1321.865086 * 2));
	pct = json_object_get(clat, "percentile");
	json_object_set_new(pct, "99.000000", json_integer(5000));
	json_array_append_new(jobs, j2);
	dump = pwjson_dump(root);
	json_decref(root);
	bench_result_init(&r);
	ASSERT_INTEQ(bench_parse(&r, "fio", dump, strlen(dump)), 0);
	free(dump);
	ASSERT_METRIC(r, "jobs", 2, 0, "", BENCH_INFO);
	ASSERT_METRIC(
	    r, "read_bw", 114570.568359375 * 1.5, 1e-3, "MiB/s", BENCH_HIGHER);
	ASSERT_METRIC(
	    r, "read_iops", 29330065.629016 * 1.5, 1e-3, "IOPS", BENCH_HIGHER);
	/* Weighted by N: (m * N + 2m * N/2) / (1.5 N) = 4/3 m. */
	ASSERT_METRIC(
	    r, "read_clat_mean", 1.321865086 * 4 / 3, 1e-9, "us", BENCH_LOWER);
	/* Without histograms: the worst job. */
	ASSERT_METRIC(r, "read_clat_p99", 5.0, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p90", 2.064, 1e-12, "us", BENCH_LOWER);
	bench_result_release(&r);
}

/* json+: bins are merged and the percentiles recomputed. */
TEST(test_bench__fio_json_plus_bins_merged)
{
	static const char in[] =
	    "fio: note: a line before the JSON\n"
	    "{\"jobs\":[\n"
	    "{\"jobname\":\"a\",\"error\":0,\"read\":{\"io_kbytes\":8,"
	    "\"total_ios\":100,\"bw\":100,\"iops\":50,\"clat_ns\":{\"mean\":"
	    "1500,\"N\":100,\"percentile\":{\"50.000000\":1000,"
	    "\"99.000000\":2000},\"bins\":{\"1000\":50,\"2000\":50}}}},\n"
	    "{\"jobname\":\"b\",\"error\":0,\"read\":{\"io_kbytes\":8,"
	    "\"total_ios\":100,\"bw\":300,\"iops\":150,\"clat_ns\":{\"mean\":"
	    "2500,\"N\":100,\"percentile\":{\"50.000000\":2000,"
	    "\"99.000000\":3000},\"bins\":{\"2000\":50,\"3000\":50}}}}]}\n";
	struct bench_result r;

	ASSERT_INTEQ(parse_str(&r, "fio", in), 0);
	ASSERT_METRIC(r, "read_bw", 400.0 / 1024, 1e-12, "MiB/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "read_iops", 200, 0, "IOPS", BENCH_HIGHER);
	ASSERT_METRIC(r, "read_clat_mean", 2.0, 1e-12, "us", BENCH_LOWER);
	/* Merged: 1000 x50, 2000 x100, 3000 x50; rank 100 of 200 -> 2000. */
	ASSERT_METRIC(r, "read_clat_p50", 2.0, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p90", 3.0, 1e-12, "us", BENCH_LOWER);
	ASSERT_METRIC(r, "read_clat_p99", 3.0, 1e-12, "us", BENCH_LOWER);
	bench_result_release(&r);
}

TEST(test_bench__fio_broken)
{
	struct bench_result r;
	size_t len = 0;
	char *raw = slurp("bench/fio.randread.json", &len);

	ASSERT(raw != NULL);
	/* Cut in the middle of line 100 of 221. */
	bench_result_init(&r);
	{
		size_t cut = 0;
		int line = 1;

		while (line < 100 && cut < len)
			if (raw[cut++] == '\n')
				line++;
		ASSERT(bench_parse(&r, "fio", raw, cut + 5) != 0);
	}
	free(raw);
	ASSERT_INTEQ(r.n, 0);
	ASSERT_MSG(strncmp(err_msg(&r.err), "fio: line 10", 12) == 0, "%s",
	    err_msg(&r.err));
	bench_result_release(&r);
	ASSERT_PARSE_FAILS(r, "fio", "", "fio: line 1: empty output");
	ASSERT_PARSE_FAILS(r, "fio", "garbage\nmore garbage\n",
	    "fio: line 1: no JSON document");
	ASSERT_PARSE_FAILS(r, "fio", "{\"jobs\": []}", "field 'jobs'");
	ASSERT_PARSE_FAILS(r, "fio",
	    "{\"jobs\":[{\"jobname\":\"x\",\"error\":5}]}",
	    "job 'x' failed with error 5");
	ASSERT_PARSE_FAILS(r, "fio",
	    "{\"jobs\":[{\"read\":{\"total_ios\":3,\"bw\":\"fast\"}}]}",
	    "field 'jobs[0].read.bw': expected a number");
	ASSERT_PARSE_FAILS(r, "fio",
	    "{\"jobs\":[{\"read\":{\"total_ios\":0,\"io_kbytes\":0,\"bw\":0,"
	    "\"iops\":0}}]}",
	    "no job did any I/O");
	ASSERT_PARSE_FAILS(
	    r, "fio", "{\n\"jobs\": [\n{\"read\": \n", "fio: line 4");
}

/* ---- will-it-scale ---- */

TEST(test_bench__wis_mmap2_matches_lkp)
{
	struct bench_result r;

	ASSERT_INTEQ(
	    parse_fixture(&r, "will-it-scale", "bench/will-it-scale.mmap2.txt"),
	    0);
	/* will-it-scale.mmap2.lkp-stats.yaml: 104.processes: 1200363,
	 * 104.processes_idle: 0.04, per_process_ops: 11541 (LKP truncates
	 * 1200363 / 104 = 11541.95). */
	ASSERT_METRIC(r, "104.processes", 1200363, 0, "ops/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "104.processes_idle", 0.04, 1e-12, "%", BENCH_INFO);
	ASSERT_METRIC(
	    r, "per_process_ops", 1200363.0 / 104, 1e-9, "ops/s", BENCH_HIGHER);
	ASSERT_INTEQ((long)VAL(r, "per_process_ops"), 11541);
	/* LKP prints per_thread_ops: 0, 104.threads: 0, 104.linear: 0: the
	 * thread mode and the 1-task point were not run; we report them as
	 * unknown, and so scalability too. */
	ASSERT(bench_find(&r, "per_thread_ops") == NULL);
	ASSERT(bench_find(&r, "104.threads") == NULL);
	ASSERT(bench_find(&r, "scalability") == NULL);
	bench_result_release(&r);
}

TEST(test_bench__wis_scalability)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_str(&r, "will-it-scale",
	                 "tasks,processes,processes_idle,threads,threads_idle,"
	                 "linear\n"
	                 "0,0,100,0,100,0\n"
	                 "1,1000,50.0,900,50.0,1000\n"
	                 "2,1800,0.5,1700,0.2,2000\n"),
	    0);
	ASSERT_METRIC(r, "per_process_ops", 900, 1e-12, "ops/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "per_thread_ops", 850, 1e-12, "ops/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "scalability", 0.9, 1e-12, "", BENCH_HIGHER);
	ASSERT_METRIC(r, "thread_scalability", 0.85, 1e-12, "", BENCH_HIGHER);
	ASSERT_METRIC(r, "1.threads", 900, 0, "ops/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "2.linear", 2000, 0, "ops/s", BENCH_INFO);
	bench_result_release(&r);
}

TEST(test_bench__wis_average_and_failures)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_str(&r, "will-it-scale",
	                 "testcase:Separate file mmap/munmap\nwarmup\n"
	                 "min:100 max:120 total:440\nmeasurement\n"
	                 "min:101 max:121 total:450\naverage:447\n"),
	    0);
	ASSERT_METRIC(r, "average", 447, 0, "ops/s", BENCH_HIGHER);
	bench_result_release(&r);
	ASSERT_PARSE_FAILS(r, "will-it-scale",
	    "testcase:x\nwarmup\nmin:1 max:2 total:3\nmeasurement\n",
	    "will-it-scale: line 4: output ends without an average:");
	ASSERT_INTEQ(parse_fixture(&r, "will-it-scale",
	                 "bench/will-it-scale.context_switch1.assert-fail.txt"),
	    -1);
	ASSERT_INTEQ(r.n, 0);
	ASSERT_MSG(
	    strstr(err_msg(&r.err),
	        "will-it-scale: line 1: test failed: "
	        "context_switch1_threads: tests/context_switch1.c:33") != NULL,
	    "%s", err_msg(&r.err));
	bench_result_release(&r);
	ASSERT_PARSE_FAILS(r, "will-it-scale",
	    "tasks,processes,processes_idle,threads,threads_idle,linear\n"
	    "1,1000,50.0,900,50.0,1000\n2,1800,0.5\n",
	    "will-it-scale: line 3: expected 6");
	ASSERT_PARSE_FAILS(r, "will-it-scale",
	    "tasks,processes,processes_idle,threads,threads_idle,linear\n"
	    "0,0,100,0,100,0\n",
	    "will-it-scale: line 2: the table has no result row");
	ASSERT_PARSE_FAILS(
	    r, "will-it-scale", "garbage\n", "will-it-scale: line 1: neither");
	ASSERT_PARSE_FAILS(r, "will-it-scale", "", "will-it-scale: line 1");
}

/* ---- netperf ---- */

TEST(test_bench__netperf_rr)
{
	struct bench_result r;

	ASSERT_INTEQ(
	    parse_fixture(&r, "netperf", "bench/netperf.tcp_rr.txt"), 0);
	ASSERT_METRIC(r, "throughput", 29150.15, 1e-9, "trans/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "clients", 1, 0, "", BENCH_INFO);
	ASSERT(bench_find(&r, "local_cpu_util") == NULL);
	bench_result_release(&r);
	ASSERT_INTEQ(
	    parse_fixture(&r, "netperf", "bench/netperf.udp_rr.cpu_util.txt"),
	    0);
	ASSERT_METRIC(r, "throughput", 15262.48, 1e-9, "trans/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "local_cpu_util", 13.90, 1e-9, "%", BENCH_INFO);
	ASSERT_METRIC(r, "remote_cpu_util", 16.11, 1e-9, "%", BENCH_INFO);
	ASSERT_METRIC(
	    r, "local_service_demand", 18.221, 1e-9, "us/Tr", BENCH_LOWER);
	ASSERT_METRIC(
	    r, "remote_service_demand", 21.116, 1e-9, "us/Tr", BENCH_LOWER);
	bench_result_release(&r);
}

TEST(test_bench__netperf_streams_match_lkp)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_fixture(&r, "netperf",
	                 "bench/netperf.sctp_stream_many.lkp.txt"),
	    0);
	/* netperf.sctp_stream_many.lkp-stats.yaml: Throughput_Mbps:
	 * 7954.400156249997, Throughput_total_Mbps: 509081.6099999998 */
	ASSERT_METRIC(
	    r, "throughput", 509081.6099999998, 1e-6, "Mbit/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "throughput_per_client", 7954.400156249997, 1e-8,
	    "Mbit/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "clients", 64, 0, "", BENCH_INFO);
	ASSERT(bench_find(&r, "throughput_recv") == NULL);
	bench_result_release(&r);
	ASSERT_INTEQ(
	    parse_fixture(&r, "netperf", "bench/netperf.udp_stream.lkp.txt"),
	    0);
	/* netperf.udp_stream.lkp-stats.yaml */
	ASSERT_METRIC(
	    r, "throughput", 1009020.2999999999, 1e-6, "Mbit/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "throughput_per_client", 63063.768749999996, 1e-8,
	    "Mbit/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "throughput_recv", 979777.3999999999, 1e-6, "Mbit/s",
	    BENCH_HIGHER);
	ASSERT_METRIC(r, "throughput_recv_per_client", 61236.087499999994, 1e-8,
	    "Mbit/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "clients", 16, 0, "", BENCH_INFO);
	bench_result_release(&r);
}

TEST(test_bench__netperf_broken)
{
	struct bench_result r;

	ASSERT_PARSE_FAILS(r, "netperf",
	    "TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET "
	    "to 127.0.0.1 () port 0 AF_INET\nLocal /Remote\n"
	    "Socket Size   Request  Resp.   Elapsed  Trans.\n",
	    "netperf: line 3: output ends before the result of the test at "
	    "line 1");
	ASSERT_PARSE_FAILS(r, "netperf",
	    "establish control: are you sure there is a netserver "
	    "listening on 127.0.0.1 at port 12865?\n",
	    "netperf: line 1: establish control");
	ASSERT_PARSE_FAILS(
	    r, "netperf", "hello\n", "netperf: line 1: no netperf");
	ASSERT_PARSE_FAILS(r, "netperf",
	    "TCP REQUEST/RESPONSE TEST from x to y\n\n16384 87380 1 1\n",
	    "netperf: line 3: 4 fields");
}

/* ---- keyvalue and json ---- */

TEST(test_bench__keyvalue)
{
	struct bench_result r;

	ASSERT_INTEQ(
	    parse_str(&r, "keyvalue",
	        "# comment\nops=123.5 ops/s\nname=box\n\nlat_p99 = 7\n"),
	    0);
	ASSERT_METRIC(r, "ops", 123.5, 0, "ops/s", BENCH_INFO);
	ASSERT_METRIC(r, "lat_p99", 7, 0, "", BENCH_INFO);
	ASSERT(bench_find(&r, "name") == NULL);
	bench_result_release(&r);
	ASSERT_PARSE_FAILS(r, "keyvalue", "ops=1\nSegmentation fault\n",
	    "keyvalue: line 2: expected name=value");
	ASSERT_PARSE_FAILS(
	    r, "keyvalue", "a=1\na=2\n", "keyvalue: line 2: 'a' appears twice");
	ASSERT_PARSE_FAILS(r, "keyvalue", "name=box\n", "keyvalue: line 1: no");
}

TEST(test_bench__json)
{
	struct bench_result r;

	ASSERT_INTEQ(parse_str(&r, "json",
	                 "{\"ops\": 12, \"host\": \"x\", \"lat\": 1.5, "
	                 "\"nested\": {\"a\": 1}}"),
	    0);
	ASSERT_INTEQ(r.n, 2);
	ASSERT_METRIC(r, "ops", 12, 0, "", BENCH_INFO);
	bench_result_release(&r);
	ASSERT_INTEQ(
	    parse_str(&r, "json",
	        "{\"metrics\":[{\"name\":\"throughput\",\"value\":5,"
	        "\"unit\":\"trans/s\",\"better\":\"higher\"},"
	        "{\"name\":\"p99\",\"value\":0.5,\"better\":\"lower\"}]}"),
	    0);
	ASSERT_METRIC(r, "throughput", 5, 0, "trans/s", BENCH_HIGHER);
	ASSERT_METRIC(r, "p99", 0.5, 0, "", BENCH_LOWER);
	bench_result_release(&r);
	ASSERT_PARSE_FAILS(r, "json", "{\"ops\": 1", "json: line 1");
	ASSERT_PARSE_FAILS(r, "json", "[1, 2]", "expected a JSON object");
	ASSERT_PARSE_FAILS(r, "json",
	    "{\"metrics\":[{\"name\":\"x\",\"value\":1,\"better\":\"up\"}]}",
	    "field 'metrics[0].better'");
	ASSERT_PARSE_FAILS(r, "json", "{\"metrics\":[{\"value\":1}]}",
	    "metrics[0]: field 'name': missing");
	ASSERT_PARSE_FAILS(r, "json", "{\"a\": \"x\"}", "no number field");
}

TEST(test_bench__unknown_tool_and_garbage_everywhere)
{
	static const char *const garbage[] = { "\x01\x02\xff\xfe", "   \n\n",
		"}{", "=\n" };
	const char *const *t;
	struct bench_result r;
	size_t i;

	bench_result_init(&r);
	ASSERT(bench_parse(&r, "sysbench", "x=1", 3) != 0);
	ASSERT(strstr(err_msg(&r.err), "unknown parser 'sysbench'") != NULL);
	bench_result_release(&r);
	ASSERT(!bench_tool_known("sysbench"));
	for (t = bench_tools(); *t != NULL; t++) {
		ASSERT(bench_tool_known(*t));
		for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
			size_t n = strlen(*t);

			ASSERT_MSG(parse_str(&r, *t, garbage[i]) != 0,
			    "%s accepted garbage %zu", *t, i);
			ASSERT_INTEQ(r.n, 0);
			ASSERT_MSG(strncmp(err_msg(&r.err), *t, n) == 0 &&
			        err_msg(&r.err)[n] == ':',
			    "error '%s' does not name %s", err_msg(&r.err), *t);
			bench_result_release(&r);
		}
	}
}
