#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "runners/bench/bench_int.h"

/* The registry: one line per tool, as the job config's `parser:` key. */
static const struct {
	const char *name;
	int (*parse)(struct bench_result *, const char *, size_t);
} parsers[] = {
	{ "neper", bench_neper_parse },
	{ "fio", bench_fio_parse },
	{ "will-it-scale", bench_wis_parse },
	{ "netperf", bench_netperf_parse },
	{ "keyvalue", bench_keyvalue_parse },
	{ "json", bench_json_parse },
};

static const char *const tool_names[] = { "neper", "fio", "will-it-scale",
	"netperf", "keyvalue", "json", NULL };

#define NPARSERS (sizeof(parsers) / sizeof(parsers[0]))

void
bench_result_init(struct bench_result *r)
{
	memset(r, 0, sizeof(*r));
	err_clear(&r->err);
}

void
bench_result_release(struct bench_result *r)
{
	if (r == NULL)
		return;
	free(r->metrics);
	bench_result_init(r);
}

const char *const *
bench_tools(void)
{
	return tool_names;
}

int
bench_tool_known(const char *tool)
{
	size_t i;

	for (i = 0; tool != NULL && i < NPARSERS; i++)
		if (strcmp(parsers[i].name, tool) == 0)
			return 1;
	return 0;
}

int
bench_parse(
    struct bench_result *out, const char *tool, const char *raw, size_t len)
{
	struct err inner;
	size_t i;
	int rc;

	bench_result_release(out);
	for (i = 0; i < NPARSERS; i++)
		if (tool != NULL && strcmp(parsers[i].name, tool) == 0)
			break;
	if (i == NPARSERS)
		return err_setc(&out->err, ERR_INVALID,
		    "unknown parser '%s' (one of neper, fio, will-it-scale, "
		    "netperf, keyvalue, json)",
		    tool ? tool : "(null)");
	if (len > CAP_BENCH_INPUT)
		return err_setc(&out->err, ERR_TOOBIG,
		    "%s: output of %zu bytes is over the %d-byte cap", tool,
		    len, CAP_BENCH_INPUT);
	if (len == 0 || raw == NULL)
		return err_setc(
		    &out->err, ERR_INVALID, "%s: line 1: empty output", tool);
	rc = parsers[i].parse(out, raw, len);
	if (rc == 0 && out->n == 0)
		rc = err_set(&out->err, "no metric found");
	if (rc != 0) {
		/* Never half a result: a failed parse yields no metrics. */
		inner = out->err;
		free(out->metrics);
		bench_result_init(out);
		err_set(&out->err, "%s: %s", tool,
		    inner.set ? inner.msg : "cannot parse");
		return rc < 0 ? rc : -1;
	}
	return 0;
}

const struct bench_metric *
bench_find(const struct bench_result *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

const char *
bench_better_str(int better)
{
	if (better == BENCH_HIGHER)
		return "higher";
	if (better == BENCH_LOWER)
		return "lower";
	return "info";
}

int
bench_better_parse(int *out, const char *s)
{
	if (strcmp(s, "higher") == 0)
		*out = BENCH_HIGHER;
	else if (strcmp(s, "lower") == 0)
		*out = BENCH_LOWER;
	else if (strcmp(s, "info") == 0)
		*out = BENCH_INFO;
	else
		return -1;
	return 0;
}

int
bench_add(struct bench_result *r, const char *name, double value,
    const char *unit, int better)
{
	struct bench_metric *m;
	size_t nlen = strlen(name), ulen = unit ? strlen(unit) : 0;

	if (nlen == 0 || nlen >= sizeof(m->name))
		return err_set(&r->err, "metric name of %zu bytes (1..%zu)",
		    nlen, sizeof(m->name) - 1);
	if (ulen >= sizeof(m->unit))
		return err_set(&r->err, "metric '%s': unit longer than %zu",
		    name, sizeof(m->unit) - 1);
	if (!isfinite(value))
		return err_set(
		    &r->err, "metric '%s': not a finite number", name);
	if (bench_find(r, name) != NULL)
		return err_set(&r->err, "metric '%s' appears twice", name);
	if (r->n >= CAP_METRICS_PER_RUN)
		return err_set(
		    &r->err, "more than %d metrics", CAP_METRICS_PER_RUN);
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 32;
		r->metrics =
		    xreallocarray(r->metrics, r->alloc, sizeof(*r->metrics));
	}
	m = &r->metrics[r->n++];
	memset(m, 0, sizeof(*m));
	memcpy(m->name, name, nlen + 1);
	if (ulen)
		memcpy(m->unit, unit, ulen + 1);
	m->value = value;
	m->better = better;
	return 0;
}

int
bench_addf(struct bench_result *r, double value, const char *unit, int better,
    const char *fmt, ...)
{
	char name[CAP_NAME + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(name))
		return err_set(&r->err, "metric name too long");
	return bench_add(r, name, value, unit, better);
}

void
bench_err_line(struct bench_result *r, int lineno)
{
	char msg[CAP_ERRMSG];

	if (!r->err.set || strncmp(r->err.msg, "line ", 5) == 0)
		return;
	memcpy(msg, r->err.msg, sizeof(msg));
	err_clear(&r->err);
	err_set(&r->err, "line %d: %s", lineno, msg);
}

void
bench_lines_init(struct bench_lines *l, const char *raw, size_t len)
{
	l->p = raw;
	l->end = raw + len;
	l->lineno = 0;
	l->line = xmalloc(CAP_LINE + 1);
	l->line[0] = '\0';
	l->len = 0;
}

void
bench_lines_release(struct bench_lines *l)
{
	free(l->line);
	l->line = NULL;
}

int
bench_lines_next(struct bench_lines *l, struct err *e)
{
	const char *nl;
	size_t n;

	if (l->p >= l->end)
		return 0;
	l->lineno++;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
	if (n > CAP_LINE)
		return err_set(
		    e, "line %d: longer than %d bytes", l->lineno, CAP_LINE);
	if (memchr(l->p, '\0', n) != NULL)
		return err_set(
		    e, "line %d: NUL byte in text output", l->lineno);
	memcpy(l->line, l->p, n);
	if (n > 0 && l->line[n - 1] == '\r')
		n--;
	l->line[n] = '\0';
	l->len = n;
	l->p = nl ? nl + 1 : l->end;
	return 1;
}

int
bench_strtod(const char *s, double *out)
{
	char *end;
	double v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return -1;
	/* strtod takes "nan", "inf" and hex floats; benchmark output has none.
	 */
	if (strpbrk(s, "xXnNiI") != NULL)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(v))
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return -1;
	*out = v;
	return 0;
}

char *
bench_trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

int
bench_split(char *s, char sep, char **f, int max)
{
	int n = 0;

	if (sep != '\0') {
		for (;;) {
			char *c = strchr(s, sep);

			if (n == max)
				return -1;
			f[n++] = bench_trim(s);
			if (c == NULL)
				return n;
			*c = '\0';
			s = c + 1;
		}
	}
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			return n;
		if (n == max)
			return -1;
		f[n++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
		if (*s != '\0')
			*s++ = '\0';
	}
}
