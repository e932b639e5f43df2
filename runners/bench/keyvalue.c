/*
 * Generic "name=value [unit]" lines, for tools without a parser of their
 * own.  Blank lines and lines starting with '#' are skipped; a line
 * without '=' is an error (so that an error message printed instead of
 * results is not taken for a result).  A value that is not a number
 * (a string option) is skipped.  Names are [A-Za-z0-9_.:/%-]; better is
 * "info" (the job config's metrics: section says which way is good).
 */
#include <ctype.h>
#include <string.h>

#include "runners/bench/bench_int.h"

static int
valid_name(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("_.:/%-", *s) == NULL)
			return 0;
	return 1;
}

int
bench_keyvalue_parse(struct bench_result *out, const char *raw, size_t len)
{
	struct bench_lines l;
	int rc;

	bench_lines_init(&l, raw, len);
	while ((rc = bench_lines_next(&l, &out->err)) == 1) {
		char *line = bench_trim(l.line), *eq, *k, *val, *f[3];
		double v;
		int n;

		if (*line == '\0' || *line == '#')
			continue;
		if ((eq = strchr(line, '=')) == NULL) {
			rc = err_set(&out->err,
			    "line %d: expected name=value, got '%.40s'",
			    l.lineno, line);
			break;
		}
		*eq = '\0';
		k = bench_trim(line);
		val = bench_trim(eq + 1);
		if (!valid_name(k)) {
			rc = err_set(&out->err,
			    "line %d: bad metric name '%.40s'", l.lineno, k);
			break;
		}
		n = bench_split(val, 0, f, 2);
		if (n < 1 || bench_strtod(f[0], &v) == -1)
			continue; /* not numeric: a string setting */
		if (bench_find(out, k) != NULL) {
			rc = err_set(&out->err, "line %d: '%s' appears twice",
			    l.lineno, k);
			break;
		}
		if (bench_add(out, k, v, n == 2 ? f[1] : "", BENCH_INFO) != 0) {
			bench_err_line(out, l.lineno);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && out->n == 0)
		rc = err_set(&out->err,
		    "line %d: no name=value line with a numeric value",
		    l.lineno > 0 ? l.lineno : 1);
	bench_lines_release(&l);
	return rc == 0 ? 0 : -1;
}
