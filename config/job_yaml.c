/*
 * A job as job-file YAML (config/job_yaml.h).
 */
#include <stdio.h>

#include "config/config.h"
#include "config/job_yaml.h"

/* s as a YAML double-quoted scalar. */
static void
quoted(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	buf_putc(b, '"');
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			buf_printf(b, "\\x%02x", *p);
		else
			buf_putc(b, (char)*p);
	}
	buf_putc(b, '"');
}

static void
list(
    struct buf *b, const char *indent, const char *key, const struct strlist *l)
{
	size_t i;

	if (l->n == 0)
		return;
	buf_printf(b, "%s%s:\n", indent, key);
	for (i = 0; i < l->n; i++) {
		buf_printf(b, "%s  - ", indent);
		quoted(b, l->v[i]);
		buf_putc(b, '\n');
	}
}

void
config_job_yaml(struct buf *b, const char *indent, const struct job_config *j)
{
	const char *parser = config_parser_name(j->parser);
	size_t i;

	buf_printf(b, "%sname: ", indent);
	quoted(b, j->name);
	buf_printf(b, "\n%sparser: ", indent);
	quoted(b, parser ? parser : "?");
	buf_putc(b, '\n');
	list(b, indent, "build", &j->build);
	list(b, indent, "command", &j->command);
	if (j->runs > 0)
		buf_printf(b, "%sruns: %lld\n", indent, (long long)j->runs);
	if (j->max_runs > 0)
		buf_printf(
		    b, "%smax_runs: %lld\n", indent, (long long)j->max_runs);
	if (j->timeout_s > 0)
		buf_printf(
		    b, "%stimeout: %llds\n", indent, (long long)j->timeout_s);
	if (j->nmetrics == 0)
		return;
	buf_printf(b, "%smetrics:\n", indent);
	for (i = 0; i < j->nmetrics; i++) {
		buf_printf(b, "%s  ", indent);
		quoted(b, j->metrics[i].name);
		buf_printf(b, ":\n%s    better: %s\n%s    min_effect: %g%%\n",
		    indent,
		    j->metrics[i].better == CFG_BETTER_LOWER ? "lower"
		                                             : "higher",
		    indent, j->metrics[i].min_effect_pct);
	}
}
