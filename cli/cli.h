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

/* ---- cli/api.c: what the API subcommands share ---- */

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/json.h"

/* Parses an integer option in [min, max]; -1 with a message printed. */
int cli_int_arg(int64_t *out, const char *cmd, const char *name, const char *s,
    int64_t min, int64_t max);

struct http;

struct cli_api {
	const char *cmd;
	char *server;
	struct http *http;
	struct buf body; /* the last reply's bytes, for --json */
};
/*
 * Connects nothing yet: resolves the server and reads the token file.
 * 0, or 2 (message printed) when a needed token is missing or unreadable.
 * cli_api_close() in every case.
 */
int cli_api_open(struct cli_api *, const char *cmd, const char *server,
    const char *token_file, int need_token);
void cli_api_close(struct cli_api *);
/*
 * One request (body: JSON text or NULL).  0 on a 2xx with *out the parsed
 * reply (NULL for 204; caller decrefs); else 1 after printing
 * "perfwatch CMD: METHOD PATH: HTTP 404: <the server's error text>" or the
 * transport error.
 */
int cli_api_call(json_t **out, struct cli_api *, const char *method,
    const char *path, const char *body);
/* Prints the last reply exactly as the API sent it (--json). */
void cli_print_body(const struct cli_api *);

/* Appends at most max bytes of untrusted s, control characters as '?'. */
void cli_put_clean(struct buf *, const char *s, size_t max);
/* A field for display, malloc'd: "-" for absent or null. */
char *cli_field(json_t *, const char *key);
/* A Unix-seconds field as "YYYY-MM-DD HH:MM:SSZ", malloc'd. */
char *cli_time(json_t *, const char *key);

/* Left-aligned text columns; cells are malloc'd strings the table owns. */
struct cli_table {
	size_t ncol, nrows;
	char **cells;
};
void cli_table_init(struct cli_table *, size_t ncol);
void cli_table_add(struct cli_table *, char **cells); /* ncol cells */
void cli_table_print(struct cli_table *);
void cli_table_free(struct cli_table *);

/* Reads a file into b (its cap applies): 0, or -1 with a message. */
int cli_read_file(struct buf *, const char *path);

int cmd_config(int, char **);
int cmd_parse(int, char **);
int cmd_submit(int, char **);
int cmd_jobs(int, char **);
int cmd_hosts(int, char **);
int cmd_alerts(int, char **);
int cmd_bisect(int, char **);
int cmd_trees(int, char **);
int cmd_series(int, char **);
int cmd_series_parse(int, char **); /* series parse (cmd_series_parse.c) */
int cmd_compare(int, char **);
int cmd_changepoints(int, char **);
int cmd_memcg_tax(int, char **);
int cmd_commit(int, char **);
int cmd_store(int, char **);

#endif
