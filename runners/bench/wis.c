/*
 * will-it-scale.
 *
 * runtest.py prints a CSV table
 *	tasks,processes,processes_idle,threads,threads_idle,linear
 * with one row per task count (a tasks=0 row measures the idle system
 * and is skipped).  Lines before the header (LKP's command echo) are
 * ignored; after it every non-empty line must be a row.  Per row we
 * report N.processes, N.processes_idle, N.threads, N.threads_idle and
 * N.linear (LKP's names), leaving out a mode that was not run (its ops
 * are 0).  At the row with the most tasks:
 *   per_process_ops = processes / tasks, per_thread_ops = threads / tasks
 *	(LKP prints these truncated to integers; we keep the fraction);
 *   scalability = processes / linear, where linear is runtest.py's ideal
 *	(the 1-task result times the task count), so 1.0 is perfect
 *	scaling; from the threads column when processes were not run, and
 *	thread_scalability too when both were.  Unknown (no metric) when
 *	linear is 0, i.e. when the 1-task point was not run.
 *
 * A single test binary (./mmap2_processes -t 4) prints "testcase:...",
 * "min:.. max:.. total:.." lines and ends with "average:N" (ops/s over
 * all tasks): reported as "average".
 *
 * "Assertion ... failed" anywhere (a test case that broke) is an error.
 */
#include <string.h>

#include "runners/bench/bench_int.h"

static const char header[] =
    "tasks,processes,processes_idle,threads,threads_idle,linear";

static int
add_row(struct bench_result *out, const double *v)
{
	long tasks = (long)v[0];
	int rc = 0;

	if (v[1] > 0) {
		rc = bench_addf(
		    out, v[1], "ops/s", BENCH_HIGHER, "%ld.processes", tasks);
		if (rc == 0)
			rc = bench_addf(out, v[2], "%", BENCH_INFO,
			    "%ld.processes_idle", tasks);
	}
	if (rc == 0 && v[3] > 0) {
		rc = bench_addf(
		    out, v[3], "ops/s", BENCH_HIGHER, "%ld.threads", tasks);
		if (rc == 0)
			rc = bench_addf(out, v[4], "%", BENCH_INFO,
			    "%ld.threads_idle", tasks);
	}
	if (rc == 0 && v[5] > 0)
		rc = bench_addf(
		    out, v[5], "ops/s", BENCH_INFO, "%ld.linear", tasks);
	return rc;
}

int
bench_wis_parse(struct bench_result *out, const char *raw, size_t len)
{
	struct bench_lines l;
	double best[6] = { 0 }, average = 0;
	int rc, in_table = 0, rows = 0, have_avg = 0, single = 0;

	bench_lines_init(&l, raw, len);
	while ((rc = bench_lines_next(&l, &out->err)) == 1) {
		char *line = bench_trim(l.line), *f[7];
		double v[6];
		int n, i;

		if (strstr(line, "Assertion") != NULL &&
		    strstr(line, "failed") != NULL) {
			rc = err_set(&out->err, "line %d: test failed: %.200s",
			    l.lineno, line);
			break;
		}
		if (*line == '\0')
			continue;
		if (strcmp(line, header) == 0) {
			if (in_table) {
				rc = err_set(&out->err,
				    "line %d: a second table header", l.lineno);
				break;
			}
			in_table = 1;
			continue;
		}
		if (in_table) {
			n = bench_split(line, ',', f, 6);
			if (n != 6) {
				rc = err_set(&out->err,
				    "line %d: expected 6 comma-separated "
				    "fields (%s)",
				    l.lineno, header);
				break;
			}
			for (i = 0; i < 6; i++)
				if (bench_strtod(f[i], &v[i]) == -1 || v[i] < 0)
					break;
			if (i < 6) {
				rc = err_set(&out->err,
				    "line %d: field %d: not a number: '%.40s'",
				    l.lineno, i + 1, f[i]);
				break;
			}
			if (v[0] == 0)
				continue; /* the idle baseline row */
			/* The range first: casting 1e49 to long is undefined
			 * (UBSan in bench_fuzz). */
			if (v[0] > 1e6 || v[0] != (double)(long)v[0]) {
				rc = err_set(&out->err,
				    "line %d: tasks: not a count", l.lineno);
				break;
			}
			if ((rc = add_row(out, v)) != 0) {
				bench_err_line(out, l.lineno);
				break;
			}
			rows++;
			if (v[0] > best[0])
				memcpy(best, v, sizeof(best));
			continue;
		}
		if (strncmp(line, "average:", 8) == 0) {
			if (have_avg ||
			    bench_strtod(line + 8, &average) == -1) {
				rc = err_set(&out->err,
				    "line %d: bad or second average: line",
				    l.lineno);
				break;
			}
			have_avg = 1;
		} else if (strncmp(line, "testcase:", 9) == 0 ||
		    strncmp(line, "min:", 4) == 0 ||
		    strcmp(line, "warmup") == 0 ||
		    strcmp(line, "measurement") == 0)
			single = 1;
	}
	if (rc == 0 && in_table && rows == 0)
		rc = err_set(&out->err,
		    "line %d: the table has no result row (truncated?)",
		    l.lineno);
	if (rc == 0 && in_table) {
		if (best[1] > 0)
			rc = bench_add(out, "per_process_ops",
			    best[1] / best[0], "ops/s", BENCH_HIGHER);
		if (rc == 0 && best[3] > 0)
			rc = bench_add(out, "per_thread_ops", best[3] / best[0],
			    "ops/s", BENCH_HIGHER);
		if (rc == 0 && best[5] > 0)
			rc = bench_add(out, "scalability",
			    (best[1] > 0 ? best[1] : best[3]) / best[5], "",
			    BENCH_HIGHER);
		if (rc == 0 && best[5] > 0 && best[1] > 0 && best[3] > 0)
			rc = bench_add(out, "thread_scalability",
			    best[3] / best[5], "", BENCH_HIGHER);
		if (rc == 0 && best[1] == 0 && best[3] == 0)
			rc = err_set(&out->err,
			    "line %d: every row has 0 ops for processes and "
			    "threads",
			    l.lineno);
	} else if (rc == 0 && have_avg) {
		rc = bench_add(out, "average", average, "ops/s", BENCH_HIGHER);
	} else if (rc == 0 && single) {
		rc = err_set(&out->err,
		    "line %d: output ends without an average: line "
		    "(truncated?)",
		    l.lineno);
	} else if (rc == 0) {
		rc = err_set(&out->err,
		    "line %d: neither runtest.py's table (%s) nor a test's "
		    "average: line",
		    l.lineno > 0 ? l.lineno : 1, header);
	}
	bench_lines_release(&l);
	return rc == 0 ? 0 : -1;
}
