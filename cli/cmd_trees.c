/*
 * perfwatch trees [--json]: the watched git trees, their fetch status,
 * last error and the tip of each branch (GET /api/v1/trees).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
trees_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch trees [--server URL] "
	    "[--token-file FILE] [--json]\n");
	return 2;
}

/* A short sha, or "-". */
static char *
short_sha(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	struct buf b = BUF_INIT(64);

	if (s == NULL)
		return xstrdup("-");
	cli_put_clean(&b, s, 12);
	return buf_take(&b);
}

int
cmd_trees(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL;
	struct cli_api api;
	struct cli_table t;
	json_t *reply = NULL, *tr, *br;
	struct buf errs = BUF_INIT(CAP_LINE * 4);
	int npos, json = 0, rc = 2;
	size_t k, m;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("trees", argc, argv, spec, NULL, 0, &npos) != 0) {
		rc = trees_usage();
		goto out;
	}
	if ((rc = cli_api_open(&api, "trees", server, token_file, 0)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "GET", "/api/v1/trees", NULL)) !=
	    0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	cli_table_init(&t, 8);
	cli_table_add(&t,
	    (char *[]){ xstrdup("TREE"), xstrdup("STATUS"),
	        xstrdup("LAST_FETCH"), xstrdup("COMMITS"), xstrdup("BRANCH"),
	        xstrdup("TIP"), xstrdup("STATE"), xstrdup("REWRITES") });
	json_array_foreach(json_object_get(reply, "trees"), k, tr)
	{
		json_t *bl = json_object_get(tr, "branches");
		const char *e =
		    json_string_value(json_object_get(tr, "last_error"));

		if (json_array_size(bl) == 0)
			cli_table_add(&t,
			    (char *[]){ cli_field(tr, "name"),
			        cli_field(tr, "status"),
			        cli_time(tr, "last_fetch"),
			        cli_field(tr, "commits"), xstrdup("-"),
			        xstrdup("-"), xstrdup("-"), xstrdup("-") });
		json_array_foreach(bl, m, br)
		{
			cli_table_add(&t,
			    (char *[]){ cli_field(tr, "name"),
			        cli_field(tr, "status"),
			        cli_time(tr, "last_fetch"),
			        cli_field(tr, "commits"),
			        cli_field(br, "branch"), short_sha(br, "tip"),
			        cli_field(br, "state"),
			        cli_field(br, "rewrites") });
		}
		if (e != NULL) {
			buf_puts(&errs, "error: ");
			cli_put_clean(&errs,
			    json_string_value(json_object_get(tr, "name")),
			    CAP_NAME);
			buf_puts(&errs, ": ");
			cli_put_clean(&errs, e, CAP_ERRMSG * 2);
			buf_putc(&errs, '\n');
		}
	}
	cli_table_print(&t);
	cli_table_free(&t);
	fputs(errs.data, stdout);
out:
	buf_release(&errs);
	cli_api_close(&api);
	json_decref(reply);
	return rc;
}
