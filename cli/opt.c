#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/opt.h"

int
opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t len = strlen(name);

	if (strncmp(argv[*i], name, len) != 0)
		return 0;
	if (argv[*i][len] == '=') {
		*val = argv[*i] + len + 1;
		return 1;
	}
	if (argv[*i][len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
}

int
opt_better(int *out, const char *s)
{
	if (strcmp(s, "higher") == 0)
		*out = ANALYSIS_HIGHER;
	else if (strcmp(s, "lower") == 0)
		*out = ANALYSIS_LOWER;
	else
		return -1;
	return 0;
}

int
opt_number(double *out, const char *s, double lo, double hi, int pct)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0)
		return -1;
	if (pct && *end == '%')
		end++;
	if (*end != '\0' || !(v > lo && v < hi))
		return -1;
	*out = v;
	return 0;
}

int
opt_usage_err(const char *cmd, const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfwatch %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	return 2;
}
