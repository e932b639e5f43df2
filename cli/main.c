#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/http.h"
#include "common/version.h"

static const struct cli_cmd cmds[] = {
	{ "config", cmd_config,
	    "config check [--kind job|daemon|runner] FILE... | "
	    "config expand JOB.yaml" },
	{ "parse", cmd_parse,
	    "parse --tool neper|fio|will-it-scale|netperf|keyvalue|json "
	    "FILE [--json]" },
	{ "submit", cmd_submit,
	    "submit [--server URL] [--token-file FILE] "
	    "(--job NAME | --job-file JOB.yaml) [--runs N] "
	    "[--base-param K=V]... [--cand-param K=V]... [--json]" },
	{ "jobs", cmd_jobs,
	    "jobs [--state S] [--limit N] [--cursor C] [--json] | "
	    "jobs show ID [--json]" },
	{ "hosts", cmd_hosts, "hosts [--json]" },
	{ "alerts", cmd_alerts,
	    "alerts [--state pending|sent|failed] [--commit SHA] [--json]" },
	{ "bisect", cmd_bisect,
	    "bisect start --regression ID | --change-point ID | bisect show "
	    "ID | bisect list | "
	    "bisect cancel ID [--json]" },
	{ "trees", cmd_trees, "trees [--json]" },
	{ "series", cmd_series,
	    "series upload [--tree NAME] [--branch NAME] [--json] MBOX | "
	    "series list [--limit N] [--json] | "
	    "series latency [--days N] [--json] | "
	    "series parse [--json] [--config DAEMON.yaml --inbox NAME] MBOX" },
	{ "compare", cmd_compare,
	    "compare [--json] [--better higher|lower] [--min-effect PCT] "
	    "[--alpha A] [--history FILE] [--exit-code] BASE CAND" },
	{ "changepoints", cmd_changepoints,
	    "changepoints [--json] [--better higher|lower] FILE" },
	{ "commit", cmd_commit,
	    "commit [--server URL] [--json] [--exit-code] SHA (its "
	    "verdicts)" },
	{ "memcg-tax", cmd_memcg_tax,
	    "memcg-tax [--server URL] [--json] JOB_ID... (jobs of one "
	    "kernel)" },
	{ "store", cmd_store,
	    "store copy FROM TO (a whole store into a new one: SQLite file "
	    "or PostgreSQL conninfo); store check DATABASE (its "
	    "consistency rules)" },
};

const char *
cli_server(const char *flag)
{
	const char *env;

	if (flag != NULL)
		return flag;
	if ((env = getenv("PERFWATCH_SERVER")) != NULL && *env)
		return env;
	return "http://127.0.0.1:8080";
}

const char *
cli_token_file(const char *flag)
{
	const char *env;

	if (flag != NULL)
		return flag;
	if ((env = getenv("PERFWATCH_TOKEN_FILE")) != NULL && *env)
		return env;
	return NULL;
}

static int
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: perfwatch COMMAND [ARGS]\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  perfwatch %s\n", cmds[i].usage);
	fprintf(f,
	    "  perfwatch --version\n"
	    "Every command answers --help.\n");
	return f == stderr ? 2 : 0;
}

/*
 * "--help" or "-h" among a command's arguments (before a "--"): its
 * usage on stdout, whatever else the line holds, so that no command
 * takes it for a file or a value.
 */
static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	size_t i;
	int rc;

	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return usage(stdout);
	if (strcmp(argv[1], "--version") == 0) {
		printf("perfwatch %s\n", pw_version());
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		if (wants_help(argc - 1, argv + 1)) {
			printf("usage: perfwatch %s\n", cmds[i].usage);
			return 0;
		}
		if (http_global_init() != 0)
			return 1;
		rc = cmds[i].run(argc - 1, argv + 1);
		http_global_cleanup();
		return rc;
	}
	fprintf(stderr, "perfwatch: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
