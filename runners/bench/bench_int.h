#ifndef RUNNERS_BENCH_BENCH_INT_H
#define RUNNERS_BENCH_BENCH_INT_H

/*
 * Shared by the parser files in runners/bench/ only.  Parsers set errors
 * without the tool name ("line 12: expected ..."); bench_parse() adds the
 * "tool: " prefix.
 */
#include <stddef.h>

#include "runners/bench/bench.h"

/* One parser per tool: 0 with metrics added to out, or -1 with out->err. */
int bench_neper_parse(struct bench_result *out, const char *raw, size_t len);
int bench_fio_parse(struct bench_result *out, const char *raw, size_t len);
int bench_wis_parse(struct bench_result *out, const char *raw, size_t len);
int bench_netperf_parse(struct bench_result *out, const char *raw, size_t len);
int bench_keyvalue_parse(struct bench_result *out, const char *raw, size_t len);
int bench_json_parse(struct bench_result *out, const char *raw, size_t len);

/*
 * Appends a metric.  -1 with out->err set when the name or unit is too
 * long, the value is not finite, the name is already there, or the run
 * has more than CAP_METRICS_PER_RUN metrics.
 */
int bench_add(struct bench_result *out, const char *name, double value,
    const char *unit, int better);
int bench_addf(struct bench_result *out, double value, const char *unit,
    int better, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Prefixes out->err with "line N: " unless it names a line already. */
void bench_err_line(struct bench_result *out, int lineno);

/*
 * A cursor over the lines of raw output.  line is a NUL-terminated copy
 * of the current line without its "\n" or "\r\n"; lineno counts from 1.
 */
struct bench_lines {
	const char *p, *end;
	int lineno;
	char *line;
	size_t len;
};

void bench_lines_init(struct bench_lines *, const char *raw, size_t len);
void bench_lines_release(struct bench_lines *);
/* 1 with the next line, 0 at the end, -1 (err set) on a NUL byte or a
 * line longer than CAP_LINE. */
int bench_lines_next(struct bench_lines *, struct err *);

/* A whole string as a finite number (surrounding blanks allowed). */
int bench_strtod(const char *s, double *out);
/* Splits s in place on blanks (or on sep when sep != 0); the count, at
 * most max, or -1 when there are more than max fields. */
int bench_split(char *s, char sep, char **fields, int max);
/* s without leading and trailing blanks, in place. */
char *bench_trim(char *s);

#endif
