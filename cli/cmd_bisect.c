/*
 * perfwatch bisect start --regression ID | start --change-point ID |
 * show ID | list | cancel ID: bisections of regressions and history
 * change points (POST /api/v1/bisect, GET /api/v1/bisect/ID,
 * POST /api/v1/bisect/ID/cancel; docs/BISECT.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
bisect_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch bisect [--server URL] [--token-file FILE]\n"
	    "           start --regression ID [--json] |\n"
	    "           start --change-point ID [--json] | show ID [--json] |\n"
	    "           list [--json] | cancel ID [--json]\n");
	return 2;
}

/* One line "key: value" of the bisection, value cleaned. */
static void
line(struct buf *b, json_t *o, const char *label, const char *key)
{
	char *v = cli_field(o, key);

	buf_printf(b, "%-14s ", label);
	cli_put_clean(b, v, 400);
	buf_puts(b, "\n");
	free(v);
}

static void
show(json_t *reply)
{
	json_t *o = json_object_get(reply, "bisection"), *x;
	struct buf b = BUF_INIT(CAP_LINE * 64);
	size_t i;

	line(&b, o, "bisection:", "id");
	line(&b, o, "origin:", "origin");
	if (json_is_object(json_object_get(o, "change_point"))) {
		json_t *c = json_object_get(o, "change_point");

		line(&b, c, "change point:", "id");
		line(&b, c, "  at commit:", "sha");
		line(&b, c, "  on branch:", "branch");
		line(&b, c, "  change %:", "change_pct");
	} else
		line(&b, o, "regression:", "regression");
	line(&b, o, "state:", "state");
	line(&b, o, "job:", "job");
	line(&b, o, "host:", "host");
	line(&b, o, "point:", "point");
	line(&b, o, "metric:", "metric");
	line(&b, o, "good end:", "good");
	line(&b, o, "bad end:", "bad");
	line(&b, o, "range:", "lo");
	line(&b, o, "", "hi");
	line(&b, o, "culprit:", "culprit");
	line(&b, o, "subject:", "culprit_subject");
	line(&b, o, "verify parent:", "verify_parent");
	line(&b, o, "verify revert:", "verify_revert");
	line(&b, o, "reason:", "reason");
	buf_puts(&b, "steps:\n");
	json_array_foreach(json_object_get(o, "steps"), i, x)
	{
		char *k = cli_field(x, "kind"), *sha = cli_field(x, "sha"),
		     *c = cli_field(x, "class"), *n = cli_field(x, "note"),
		     *s = cli_field(x, "subject");

		buf_printf(&b, "  %-13s %.12s %-12s ", k, sha,
		    strcmp(c, "-") ? c : "measuring");
		cli_put_clean(&b, s, 60);
		buf_puts(&b, "\n      ");
		cli_put_clean(&b, n, 300);
		buf_puts(&b, "\n");
		free(k);
		free(sha);
		free(c);
		free(n);
		free(s);
	}
	fwrite(b.data, 1, b.len, stdout);
	buf_release(&b);
}

int
cmd_bisect(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *reg = NULL, *cp = NULL;
	const char *verb = NULL, *arg = NULL;
	struct cli_api api;
	struct buf path = BUF_INIT(CAP_LINE), body = BUF_INIT(CAP_LINE);
	json_t *reply = NULL, *x;
	int64_t id = 0;
	const char *pos[2] = { NULL, NULL };
	int npos, json = 0, rc = 2;
	size_t k;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL("regression", &reg), OPT_VAL("change-point", &cp),
		OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("bisect", argc, argv, spec, pos, 2, &npos) != 0) {
		rc = bisect_usage();
		goto out;
	}
	verb = pos[0];
	arg = pos[1];
	if (verb == NULL) {
		rc = bisect_usage();
		goto out;
	}
	if (strcmp(verb, "start") == 0) {
		if ((reg == NULL) == (cp == NULL) || arg != NULL ||
		    cli_int_arg(&id, "bisect",
		        reg ? "--regression" : "--change-point", reg ? reg : cp,
		        1, INT64_MAX) != 0) {
			rc = bisect_usage();
			goto out;
		}
		buf_puts(&path, "/api/v1/bisect");
		buf_printf(&body, "{\"%s\": %lld}",
		    reg ? "regression" : "change_point", (long long)id);
	} else if (strcmp(verb, "show") == 0 || strcmp(verb, "cancel") == 0) {
		if (arg == NULL || reg != NULL || cp != NULL ||
		    cli_int_arg(&id, "bisect", "ID", arg, 1, INT64_MAX) != 0) {
			rc = bisect_usage();
			goto out;
		}
		buf_printf(&path, "/api/v1/bisect/%lld%s", (long long)id,
		    verb[0] == 'c' ? "/cancel" : "");
	} else if (strcmp(verb, "list") == 0 && arg == NULL && reg == NULL &&
	    cp == NULL) {
		buf_puts(&path, "/api/v1/bisect?limit=200");
	} else {
		rc = bisect_usage();
		goto out;
	}
	if ((rc = cli_api_open(&api, "bisect", server, token_file,
	         strcmp(verb, "start") == 0 || strcmp(verb, "cancel") == 0)) !=
	    0)
		goto out;
	if ((rc = cli_api_call(&reply, &api,
	         body.len || verb[0] == 'c' ? "POST" : "GET", path.data,
	         body.len ? body.data : (verb[0] == 'c' ? "{}" : NULL))) != 0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	if (strcmp(verb, "list") != 0) {
		show(reply);
		goto out;
	}
	{
		struct cli_table t;

		cli_table_init(&t, 6);
		cli_table_add(&t,
		    (char *[]){ xstrdup("ID"), xstrdup("REGRESSION"),
		        xstrdup("STATE"), xstrdup("JOB"), xstrdup("CULPRIT"),
		        xstrdup("REASON") });
		json_array_foreach(json_object_get(reply, "bisections"), k, x)
		{
			cli_table_add(&t,
			    (char *[]){ cli_field(x, "id"),
			        cli_field(x, "regression"),
			        cli_field(x, "state"), cli_field(x, "job"),
			        cli_field(x, "culprit"),
			        cli_field(x, "reason") });
		}
		cli_table_print(&t);
		cli_table_free(&t);
	}
out:
	buf_release(&path);
	buf_release(&body);
	cli_api_close(&api);
	json_decref(reply);
	return rc;
}
