/*
 * neper (tcp_rr, tcp_crr, tcp_stream) output.
 *
 * The normal output is one key=value per line: the options echoed back,
 * then the results.  neper prints latencies in seconds; we report them in
 * microseconds.  Keys we do not know (options, future additions) are
 * ignored; a line without '=' is garbage and an error.  "nan" values
 * (neper prints them for a stddev of one sample) mean unknown: no metric.
 *
 * With -A neper also writes a CSV of per-interval samples, one row per
 * flow and interval, with cumulative transactions (or bytes_read).  From
 * it we derive:
 *   throughput          sum over flows of (last - first count) / (last -
 *                       first time); trans/s, or Mbit/s for stream tests;
 *   latency_min/max     min / max over all rows;
 *   latency_mean        mean of the rows' means weighted by the number
 *                       of transactions in each row's interval;
 *   latency_pNN_median  the median over rows of each interval's pNN: the
 *                       true run-wide percentile cannot be rebuilt from
 *                       per-interval percentiles, so it gets another name.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xalloc.h"
#include "runners/bench/bench_int.h"

#define NEPER_MAX_COLS 64
#define NEPER_MAX_ROWS 1000000

static int
is_nan_text(const char *v)
{
	if (*v == '-' || *v == '+')
		v++;
	return strcasecmp(v, "nan") == 0 || strcasecmp(v, "inf") == 0;
}

static int
is_latency_key(const char *k)
{
	return strcmp(k, "latency_min") == 0 || strcmp(k, "latency_max") == 0 ||
	    strcmp(k, "latency_mean") == 0 ||
	    strcmp(k, "latency_stddev") == 0 ||
	    (strncmp(k, "latency_p", 9) == 0 && k[9] >= '0' && k[9] <= '9');
}

/* Keys reported as a start/end pair, whose difference we report. */
static const struct {
	const char *name, *unit;
} deltas[] = {
	{ "time", "s" },
	{ "utime", "s" },
	{ "stime", "s" },
	{ "minflt", "" },
	{ "majflt", "" },
	{ "nvcsw", "" },
	{ "nivcsw", "" },
};
#define NDELTAS (sizeof(deltas) / sizeof(deltas[0]))

static int
parse_kv(struct bench_result *out, const char *raw, size_t len)
{
	struct bench_lines l;
	double start[NDELTAS], end[NDELTAS], v;
	int have_start[NDELTAS] = { 0 }, have_end[NDELTAS] = { 0 };
	char unit[BENCH_UNIT_MAX] = "trans/s";
	const char *tp_keys[] = { "throughput", "local_throughput",
		"remote_throughput" };
	double tp[3];
	int have_tp[3] = { 0 };
	int rc, lines = 0;
	size_t i;

	bench_lines_init(&l, raw, len);
	while ((rc = bench_lines_next(&l, &out->err)) == 1) {
		char *line = bench_trim(l.line), *eq, *k, *val;

		if (*line == '\0')
			continue;
		lines++;
		if ((eq = strchr(line, '=')) == NULL || eq == line) {
			rc = err_set(&out->err,
			    "line %d: expected key=value, got '%.40s'",
			    l.lineno, line);
			break;
		}
		*eq = '\0';
		k = bench_trim(line);
		val = bench_trim(eq + 1);
		if (strcmp(k, "throughput_units") == 0) {
			if (strlen(val) == 0 || strlen(val) >= sizeof(unit)) {
				rc = err_set(&out->err,
				    "line %d: throughput_units: bad unit",
				    l.lineno);
				break;
			}
			memcpy(unit, val, strlen(val) + 1);
			continue;
		}
		for (i = 0; i < 3; i++)
			if (strcmp(k, tp_keys[i]) == 0)
				break;
		if (i == 3 && !is_latency_key(k) &&
		    strcmp(k, "num_transactions") != 0 &&
		    strcmp(k, "num_samples") != 0 &&
		    strcmp(k, "correlation_coefficient") != 0 &&
		    strcmp(k, "maxrss_end") != 0) {
			size_t j, kl = strlen(k);

			for (j = 0; j < NDELTAS; j++) {
				size_t nl = strlen(deltas[j].name);

				if (kl > nl &&
				    strncmp(k, deltas[j].name, nl) == 0 &&
				    (strcmp(k + nl, "_start") == 0 ||
				        strcmp(k + nl, "_end") == 0))
					break;
			}
			if (j == NDELTAS)
				continue; /* an option echoed back, or new */
			if (is_nan_text(val))
				continue;
			if (bench_strtod(val, &v) == -1) {
				rc = err_set(&out->err,
				    "line %d: %s: not a number: '%.40s'",
				    l.lineno, k, val);
				break;
			}
			if (k[strlen(deltas[j].name) + 1] == 's') {
				start[j] = v;
				have_start[j] = 1;
			} else {
				end[j] = v;
				have_end[j] = 1;
			}
			continue;
		}
		if (is_nan_text(val))
			continue;
		if (bench_strtod(val, &v) == -1) {
			rc = err_set(&out->err,
			    "line %d: %s: not a number: '%.40s'", l.lineno, k,
			    val);
			break;
		}
		if (i < 3) {
			if (have_tp[i]) {
				rc = err_set(&out->err,
				    "line %d: %s appears twice", l.lineno, k);
				break;
			}
			tp[i] = v;
			have_tp[i] = 1;
			continue;
		}
		if (bench_find(out, k) != NULL) {
			rc = err_set(&out->err, "line %d: %s appears twice",
			    l.lineno, k);
			break;
		}
		if (is_latency_key(k))
			rc = bench_add(out, k, v * 1e6, "us", BENCH_LOWER);
		else if (strcmp(k, "maxrss_end") == 0)
			rc = bench_add(out, "maxrss", v, "KiB", BENCH_INFO);
		else
			rc = bench_add(out, k, v, "", BENCH_INFO);
		if (rc != 0)
			break;
	}
	if (rc == 0 && lines == 0)
		rc = err_set(&out->err, "line %d: no key=value line",
		    l.lineno > 0 ? l.lineno : 1);
	if (rc == 0 && !have_tp[0])
		rc = err_set(&out->err,
		    "line %d: output ends without a throughput= line "
		    "(truncated, or not neper output)",
		    l.lineno);
	for (i = 0; rc == 0 && i < 3; i++)
		if (have_tp[i])
			rc = bench_add(
			    out, tp_keys[i], tp[i], unit, BENCH_HIGHER);
	for (i = 0; rc == 0 && i < NDELTAS; i++)
		if (have_start[i] && have_end[i])
			rc =
			    bench_add(out, i == 0 ? "duration" : deltas[i].name,
			        end[i] - start[i], deltas[i].unit, BENCH_INFO);
	bench_lines_release(&l);
	return rc == 0 ? 0 : -1;
}

struct row_ref {
	double tid, flow, time, count;
	size_t idx;
};

static int
cmp_row(const void *a, const void *b)
{
	const struct row_ref *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : (x > y);
}

static int
col_index(char **names, int n, const char *want)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return i;
	return -1;
}

static int
parse_samples(struct bench_result *out, const char *raw, size_t len)
{
	struct bench_lines l;
	char *hdr[NEPER_MAX_COLS + 1], *f[NEPER_MAX_COLS + 1];
	char *hdrcopy = NULL;
	double *vals = NULL, *tmp = NULL;
	struct row_ref *refs = NULL;
	size_t nrows = 0, alloc = 0, i, j;
	int ncols = 0, rc, c_time, c_tid, c_flow, c_count, c_min, c_mean, c_max,
	    stream = 0, nflows = 0;
	double tp = 0, wsum = 0, wlat = 0, lmin = 0, lmax = 0, plain = 0;
	int have_tp = 0;

	bench_lines_init(&l, raw, len);
	while ((rc = bench_lines_next(&l, &out->err)) == 1) {
		char *line = bench_trim(l.line);
		int n, k;

		if (*line == '\0')
			continue;
		if (hdrcopy == NULL) {
			hdrcopy = xstrdup(line);
			ncols = bench_split(hdrcopy, ',', hdr, NEPER_MAX_COLS);
			if (ncols < 0) {
				rc = err_set(&out->err,
				    "line %d: more than %d columns", l.lineno,
				    NEPER_MAX_COLS);
				break;
			}
			continue;
		}
		n = bench_split(line, ',', f, NEPER_MAX_COLS);
		if (n != ncols) {
			rc = err_set(&out->err,
			    "line %d: %d fields where the header has %d "
			    "(truncated?)",
			    l.lineno, n < 0 ? NEPER_MAX_COLS + 1 : n, ncols);
			break;
		}
		if (nrows == NEPER_MAX_ROWS) {
			rc = err_set(&out->err, "line %d: more than %d rows",
			    l.lineno, NEPER_MAX_ROWS);
			break;
		}
		if (nrows == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			vals = xreallocarray(
			    vals, alloc, sizeof(double) * (size_t)ncols);
		}
		for (k = 0; k < n; k++)
			if (bench_strtod(f[k], &vals[nrows * ncols + k]) ==
			    -1) {
				rc = err_set(&out->err,
				    "line %d: column '%s': not a number: "
				    "'%.40s'",
				    l.lineno, hdr[k], f[k]);
				goto done;
			}
		nrows++;
	}
	if (rc != 0)
		goto done;
	c_time = col_index(hdr, ncols, "time");
	c_tid = col_index(hdr, ncols, "tid");
	c_flow = col_index(hdr, ncols, "flow_id");
	c_count = col_index(hdr, ncols, "transactions");
	if (c_count < 0) {
		c_count = col_index(hdr, ncols, "bytes_read");
		stream = 1;
	}
	c_min = col_index(hdr, ncols, "latency_min");
	c_mean = col_index(hdr, ncols, "latency_mean");
	c_max = col_index(hdr, ncols, "latency_max");
	if (c_time < 0 || c_tid < 0 || c_flow < 0 || c_count < 0) {
		rc = err_set(&out->err,
		    "line 1: samples header lacks time, tid, flow_id or "
		    "transactions/bytes_read");
		goto done;
	}
	if (nrows == 0) {
		rc = err_set(&out->err,
		    "line %d: samples CSV has a header but no rows", l.lineno);
		goto done;
	}
	refs = xcalloc(nrows, sizeof(*refs));
	for (i = 0; i < nrows; i++) {
		refs[i].tid = vals[i * ncols + c_tid];
		refs[i].flow = vals[i * ncols + c_flow];
		refs[i].time = vals[i * ncols + c_time];
		refs[i].count = vals[i * ncols + c_count];
		refs[i].idx = i;
	}
	qsort(refs, nrows, sizeof(*refs), cmp_row);
	for (i = 0; i < nrows; i = j) {
		double prev;

		for (j = i + 1; j < nrows && refs[j].tid == refs[i].tid &&
		     refs[j].flow == refs[i].flow;
		     j++)
			;
		nflows++;
		if (j - i >= 2 && refs[j - 1].time > refs[i].time) {
			double d = refs[j - 1].count - refs[i].count;

			tp += d / (refs[j - 1].time - refs[i].time);
			have_tp = 1;
		}
		/* Latency weights: transactions done in each interval. */
		prev = 0;
		for (size_t k = i; c_mean >= 0 && !stream && k < j; k++) {
			double w = refs[k].count - prev;
			double m = vals[refs[k].idx * ncols + c_mean];

			prev = refs[k].count;
			if (w > 0) {
				wsum += w;
				wlat += w * m;
			}
			plain += m;
		}
	}
	rc = bench_add(out, "samples", (double)nrows, "", BENCH_INFO);
	if (rc == 0)
		rc = bench_add(out, "flows", nflows, "", BENCH_INFO);
	if (rc == 0 && have_tp)
		rc = bench_add(out, "throughput", stream ? tp * 8 / 1e6 : tp,
		    stream ? "Mbit/s" : "trans/s", BENCH_HIGHER);
	if (c_min >= 0 && c_max >= 0) {
		lmin = vals[c_min];
		lmax = vals[c_max];
		for (i = 1; i < nrows; i++) {
			if (vals[i * ncols + c_min] < lmin)
				lmin = vals[i * ncols + c_min];
			if (vals[i * ncols + c_max] > lmax)
				lmax = vals[i * ncols + c_max];
		}
		if (rc == 0)
			rc = bench_add(
			    out, "latency_min", lmin * 1e6, "us", BENCH_LOWER);
		if (rc == 0)
			rc = bench_add(
			    out, "latency_max", lmax * 1e6, "us", BENCH_LOWER);
	}
	if (rc == 0 && c_mean >= 0 && !stream)
		rc = bench_add(out, "latency_mean",
		    (wsum > 0 ? wlat / wsum : plain / (double)nrows) * 1e6,
		    "us", BENCH_LOWER);
	tmp = xcalloc(nrows, sizeof(double));
	for (int c = 0; rc == 0 && c < ncols; c++) {
		if (strncmp(hdr[c], "latency_p", 9) != 0)
			continue;
		for (i = 0; i < nrows; i++)
			tmp[i] = vals[i * ncols + c];
		qsort(tmp, nrows, sizeof(double), cmp_double);
		rc = bench_addf(out,
		    (nrows % 2 ? tmp[nrows / 2]
		               : (tmp[nrows / 2 - 1] + tmp[nrows / 2]) / 2) *
		        1e6,
		    "us", BENCH_LOWER, "%s_median", hdr[c]);
	}
done:
	free(tmp);
	free(refs);
	free(vals);
	free(hdrcopy);
	bench_lines_release(&l);
	return rc == 0 ? 0 : -1;
}

int
bench_neper_parse(struct bench_result *out, const char *raw, size_t len)
{
	size_t i = 0;

	while (i < len &&
	    (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' ||
	        raw[i] == '\r'))
		i++;
	if (len - i >= 5 && memcmp(raw + i, "time,", 5) == 0)
		return parse_samples(out, raw, len);
	return parse_kv(out, raw, len);
}
