#ifndef CLI_OPT_H
#define CLI_OPT_H

/* Small option-parsing helpers shared by the perfwatch subcommands. */

/*
 * "--name=value" or "--name value" at argv[*i]: 1 and *val (advancing *i
 * past a separate value), -1 when the value is missing, 0 when argv[*i]
 * is something else.
 */
int opt_value(
    int argc, char **argv, int *i, const char *name, const char **val);
/* "higher" or "lower" to ANALYSIS_HIGHER / _LOWER: 0, else -1. */
int opt_better(int *out, const char *s);
/* A number strictly inside (lo, hi), a trailing '%' allowed if pct. */
int opt_number(double *out, const char *s, double lo, double hi, int pct);

/*
 * Prints "perfwatch CMD: <message>" and the command's usage to stderr;
 * returns 2, the usage-error exit status.
 */
int opt_usage_err(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
