#ifndef CLI_CLI_H
#define CLI_CLI_H

/*
 * The perfwatch command line.  Each subcommand lives in cli/cmd_<name>.c
 * and is one line in the table in cli/main.c, as tmux's cmd_table.
 * A command gets argv with argv[0] = its own name and returns the exit
 * status: 0 success, 1 a finding (e.g. compare --exit-code found a
 * regression) or failure, 2 usage errors.
 */
struct cli_cmd {
	const char *name;
	int (*run)(int, char **);
	const char *usage;
};

/* Server URL and token: --server / PERFWATCH_SERVER, --token-file. */
const char *cli_server(const char *flag);
const char *cli_token_file(const char *flag);

int cmd_config(int, char **);
int cmd_parse(int, char **);

#endif
