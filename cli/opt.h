#ifndef CLI_OPT_H
#define CLI_OPT_H

/* Small option-parsing helpers shared by the perfwatch subcommands. */

/*
 * One option of a command, named without its dashes ("state").  A valued
 * option keeps its last value in *val, or hands each value to each()
 * when it may be given more than once (each() prints why it refuses one
 * and returns -1); a flag sets *flag to 1.
 */
struct opt_spec {
	const char *name;
	const char **val;
	int *flag;
	int (*each)(void *arg, const char *v);
	void *arg;
};
#define OPT_VAL(n, p) ((struct opt_spec){ (n), (p), NULL, NULL, NULL })
#define OPT_FLAG(n, p) ((struct opt_spec){ (n), NULL, (p), NULL, NULL })
#define OPT_EACH(n, fn, a) ((struct opt_spec){ (n), NULL, NULL, (fn), (a) })
#define OPT_END ((struct opt_spec){ NULL, NULL, NULL, NULL, NULL })

/* The options every command that talks to perfwatchd takes. */
#define OPT_API(server, token_file, json)                             \
	OPT_VAL("server", server), OPT_VAL("token-file", token_file), \
	    OPT_FLAG("json", json)

/*
 * Parses argv[1..argc) with getopt_long: spec's options (up to OPT_MAX,
 * ending in OPT_END) as "--name value" or "--name=value", in any order
 * among the operands, which go to pos[0..maxpos) in the order given
 * (*npos of them); "--" ends the options.  0, or -1 after printing
 * "perfwatch CMD: ..." to stderr: an unknown option, a missing or an
 * unwanted value, one operand too many.
 */
#define OPT_MAX 16
int opt_parse(const char *cmd, int argc, char **argv,
    const struct opt_spec *spec, const char **pos, int maxpos, int *npos);
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
