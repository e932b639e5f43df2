/*
 * perfwatch commit [--server URL] [--json] [--exit-code] SHA: a commit's
 * verdicts, as its page shows them (GET /api/v1/commits/SHA): the commit,
 * its series, and a line a compared metric with each side's median, the
 * change, its 95% interval, p and the verdict.  --exit-code: 1 when a
 * metric regressed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static const char usage[] =
    "usage: perfwatch commit [--server URL] [--token-file FILE] [--json] "
    "[--exit-code] SHA\n";

/* A number field as "%.4g" (pct: "%+.2f%%"), "-" when null. */
static char *
num(json_t *o, const char *key, int pct)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return xstrdup("-");
	return xasprintf(pct ? "%+.2f%%" : "%.4g", json_number_value(v));
}

static char *
interval(json_t *o)
{
	json_t *lo = json_object_get(o, "ci_low"),
	       *hi = json_object_get(o, "ci_high");

	if (!json_is_number(lo) || !json_is_number(hi))
		return xstrdup("-");
	return xasprintf(
	    "[%+.2f%%, %+.2f%%]", json_number_value(lo), json_number_value(hi));
}

/* A valid sha or prefix: 4 to 64 hex digits. */
static int
is_sha(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return s[n] == '\0' && n >= 4 && n <= 64;
}

int
cmd_commit(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *sha = NULL;
	struct cli_api api;
	struct cli_table t;
	struct buf line = BUF_INIT(CAP_LINE);
	json_t *reply = NULL, *c, *se, *r;
	char *path = NULL, *f;
	int npos, json = 0, exit_code = 0, rc = 2, regressed = 0;
	size_t n;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_FLAG("exit-code", &exit_code), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("commit", argc, argv, spec, &sha, 1, &npos) != 0) {
		fputs(usage, stderr);
		goto out;
	}
	if (sha == NULL || !is_sha(sha)) {
		fprintf(stderr, "perfwatch commit: %s%s\n%s",
		    sha ? "not a commit sha: " : "a commit sha is needed",
		    sha ? sha : "", usage);
		goto out;
	}
	if ((rc = cli_api_open(&api, "commit", server, token_file, 0)) != 0)
		goto out;
	path = xasprintf("/api/v1/commits/%s", sha);
	if ((rc = cli_api_call(&reply, &api, "GET", path, NULL)) != 0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	c = json_object_get(reply, "commit");
	se = json_object_get(reply, "series");
	f = cli_field(c, "sha");
	buf_puts(&line, "commit ");
	buf_puts(&line, f);
	free(f);
	buf_puts(&line, "\n  ");
	f = cli_field(c, "subject");
	buf_puts(&line, f);
	free(f);
	f = cli_field(c, "tree");
	buf_puts(&line, "\n  tree: ");
	buf_puts(&line, f);
	free(f);
	f = cli_field(c, "branches");
	buf_puts(&line, "  branches: ");
	buf_puts(&line, f);
	free(f);
	if (json_is_object(se)) {
		f = cli_field(se, "id");
		buf_puts(&line, "\n  series ");
		buf_puts(&line, f);
		buf_puts(&line, ": ");
		free(f);
		f = cli_field(se, "title");
		buf_puts(&line, f);
		free(f);
	}
	printf("%s\n\n", line.data);
	cli_table_init(&t, 11);
	cli_table_add(&t,
	    (char *[]){ xstrdup("PAIR"), xstrdup("HOST"), xstrdup("BENCH"),
	        xstrdup("POINT"), xstrdup("METRIC"), xstrdup("BASE"),
	        xstrdup("CAND"), xstrdup("CHANGE"), xstrdup("95% CI"),
	        xstrdup("P"), xstrdup("VERDICT") });
	json_array_foreach(json_object_get(reply, "comparisons"), n, r)
	{
		const char *v =
		    json_string_value(json_object_get(r, "verdict"));

		regressed |= v && strcmp(v, "regression") == 0;
		cli_table_add(&t,
		    (char *[]){ cli_field(r, "pair_id"), cli_field(r, "host"),
		        cli_field(r, "bench"), cli_field(r, "point"),
		        cli_field(r, "metric"), num(r, "base_median", 0),
		        num(r, "cand_median", 0), num(r, "change_pct", 1),
		        interval(r), num(r, "p", 0), cli_field(r, "verdict") });
	}
	if (t.nrows > 1)
		cli_table_print(&t);
	else
		printf("no comparisons yet\n");
	cli_table_free(&t);
	rc = exit_code && regressed ? 1 : 0;
out:
	buf_release(&line);
	free(path);
	cli_api_close(&api);
	json_decref(reply);
	return rc;
}
