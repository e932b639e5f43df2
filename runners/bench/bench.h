#ifndef RUNNERS_BENCH_BENCH_H
#define RUNNERS_BENCH_BENCH_H

#include <stddef.h>

#include "common/caps.h"
#include "common/err.h"

/*
 * Benchmark output parsers: pure functions from a tool's raw output to a
 * list of metrics {name, value, unit, better}.  No I/O, no globals; the
 * runner and `perfwatch parse` call the same code.
 *
 * Tools (the job config's `parser:` key):
 *
 *   neper          neper tcp_rr/tcp_crr/tcp_stream key=value output, or
 *                  the -A samples CSV.  Latencies are converted from
 *                  seconds to microseconds (unit "us").
 *   fio            fio 3.x --output-format=json or json+.  Per direction
 *                  (read, write, trim) that did I/O: <dir>_bw in MiB/s
 *                  (fio's KiB/s / 1024, the unit LKP calls MBps),
 *                  <dir>_iops, <dir>_clat_mean and <dir>_clat_p50, p90,
 *                  p95, p99, p99.9 in us (fio's ns / 1000).  See fio.c for
 *                  how several jobs are aggregated.
 *   will-it-scale  runtest.py's CSV table, or one test binary's output
 *                  ending in "average:N".  An assertion failure is an
 *                  error.  See wis.c for per_*_ops and scalability.
 *   netperf        the classic TCP_RR/UDP_RR/TCP_CRR and *_STREAM output
 *                  blocks, one or many (concurrent clients, as LKP
 *                  captures them); throughput is summed over clients.
 *   keyvalue       generic "name=value [unit]" lines; non-numeric values
 *                  are skipped; better is "info".
 *   json           a flat object of numbers, or our own output format
 *                  {"metrics":[{"name","value","unit","better"}]}.
 *
 * Truncated, empty or garbage output is an error naming the tool and,
 * where there is one, the line ("fio: line 12: ..."): never zeros.  A
 * direction or mode that the run did not exercise (fio's write side of a
 * read job, will-it-scale's threads of a process-only run) yields no
 * metric rather than a 0.
 */

#define BENCH_HIGHER 1
#define BENCH_LOWER (-1)
#define BENCH_INFO 0

#define BENCH_UNIT_MAX 24

struct bench_metric {
	char name[CAP_NAME];
	char unit[BENCH_UNIT_MAX]; /* "" when dimensionless */
	double value;              /* always finite */
	int better;                /* BENCH_HIGHER, BENCH_LOWER, BENCH_INFO */
};

/* Embedded: bench_result_init() / bench_result_release(). */
struct bench_result {
	struct bench_metric *metrics;
	size_t n, alloc;
	struct err err; /* "tool: line N: why" after a failed parse */
};

void bench_result_init(struct bench_result *);
void bench_result_release(struct bench_result *); /* NULL ok */

/*
 * Parses len bytes of raw output of tool into out (which is reset first).
 * Returns 0 with at least one metric, or -1 / ERR_INVALID with no metrics
 * and out->err set ("netperf: line 9: ...").  raw need not be
 * NUL-terminated.  Inputs over CAP_BENCH_INPUT are refused.
 */
int bench_parse(
    struct bench_result *out, const char *tool, const char *raw, size_t len);

/* 1 when tool is one of the names above. */
int bench_tool_known(const char *tool);
/* The tool names, NULL-terminated, for usage messages. */
const char *const *bench_tools(void);

/* The metric called name, or NULL. */
const struct bench_metric *bench_find(
    const struct bench_result *, const char *name);

/* "higher", "lower", "info". */
const char *bench_better_str(int better);
/* 0 and *out for "higher"/"lower"/"info", else -1. */
int bench_better_parse(int *out, const char *s);

#endif
