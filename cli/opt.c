#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/opt.h"

int
opt_parse(const char *cmd, int argc, char **argv, const struct opt_spec *spec,
    const char **pos, int maxpos, int *npos)
{
	struct option lo[OPT_MAX + 1];
	const struct opt_spec *o;
	int n, c, idx;

	for (n = 0; spec[n].name != NULL; n++) {
		if (n == OPT_MAX)
			abort(); /* a command's table outgrew OPT_MAX */
		lo[n].name = spec[n].name;
		lo[n].has_arg = spec[n].flag ? no_argument : required_argument;
		lo[n].flag = NULL;
		lo[n].val = 0;
	}
	memset(&lo[n], 0, sizeof(lo[n]));
	*npos = 0;
	opterr = 0;
	optind = 0; /* glibc: start afresh */
	/* '-': operands in their order, as option 1; ':': a missing value
	 * answers ':' rather than '?'. */
	while ((c = getopt_long(argc, argv, "-:", lo, &idx)) != -1) {
		if (c == 1) {
			if (*npos == maxpos)
				goto unknown;
			pos[(*npos)++] = optarg;
			continue;
		}
		if (c == ':') {
			fprintf(stderr, "perfwatch %s: %s needs a value\n", cmd,
			    argv[optind - 1]);
			return -1;
		}
		if (c != 0)
			goto unknown;
		o = &spec[idx];
		if (o->flag != NULL)
			*o->flag = 1;
		else if (o->each != NULL) {
			if (o->each(o->arg, optarg) != 0)
				return -1;
		} else
			*o->val = optarg;
	}
	for (; optind < argc; optind++) { /* after "--" */
		if (*npos == maxpos) {
			optind++;
			goto unknown;
		}
		pos[(*npos)++] = argv[optind];
	}
	return 0;
unknown:
	/* getopt_long leaves optind past the argument it refused; a
	 * refused short option names only its letter. */
	if (c == '?' && optopt != 0)
		fprintf(stderr, "perfwatch %s: unknown argument '-%c'\n", cmd,
		    optopt);
	else
		fprintf(stderr, "perfwatch %s: unknown argument '%s'\n", cmd,
		    argv[optind - 1]);
	return -1;
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
