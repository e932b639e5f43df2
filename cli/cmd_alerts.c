/*
 * perfwatch alerts [--state S] [--commit SHA] [--json]: deliveries of
 * reports (GET /api/v1/alerts, docs/ALERTS.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
alerts_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch alerts [--server URL] [--token-file FILE]\n"
	    "           [--state pending|sent|failed] [--commit SHA] "
	    "[--json]\n");
	return 2;
}

int
cmd_alerts(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *state = NULL,
	           *commit = NULL;
	struct cli_api api;
	struct cli_table t;
	struct buf path = BUF_INIT(CAP_LINE);
	json_t *reply = NULL, *a;
	int npos, json = 0, rc = 2;
	size_t k;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL("state", &state), OPT_VAL("commit", &commit), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("alerts", argc, argv, spec, NULL, 0, &npos) != 0) {
		rc = alerts_usage();
		goto out;
	}
	if ((state &&
	        strspn(state, "abcdefghijklmnopqrstuvwxyz") != strlen(state)) ||
	    (commit && strspn(commit, "0123456789abcdef") != strlen(commit))) {
		fprintf(stderr,
		    "perfwatch alerts: --state is a word, "
		    "--commit lowercase hex\n");
		goto out;
	}
	buf_puts(&path, "/api/v1/alerts?limit=200");
	if (state)
		buf_printf(&path, "&state=%s", state);
	if (commit)
		buf_printf(&path, "&commit=%s", commit);
	if ((rc = cli_api_open(&api, "alerts", server, token_file, 0)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "GET", path.data, NULL)) != 0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	cli_table_init(&t, 8);
	cli_table_add(&t,
	    (char *[]){ xstrdup("ID"), xstrdup("KIND"), xstrdup("STATE"),
	        xstrdup("ATTEMPTS"), xstrdup("COMMIT"), xstrdup("HOST"),
	        xstrdup("TARGET"), xstrdup("LAST_ERROR") });
	json_array_foreach(json_object_get(reply, "alerts"), k, a)
	{
		cli_table_add(&t,
		    (char *[]){ cli_field(a, "id"), cli_field(a, "kind"),
		        cli_field(a, "state"), cli_field(a, "attempts"),
		        cli_field(a, "commit"), cli_field(a, "host"),
		        cli_field(a, "target"), cli_field(a, "last_error") });
	}
	cli_table_print(&t);
	cli_table_free(&t);
out:
	buf_release(&path);
	cli_api_close(&api);
	json_decref(reply);
	return rc;
}
