/*
 * perfwatch hosts [--json]: the registered bench hosts and what they are.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
hosts_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch hosts [--server URL] "
	    "[--token-file FILE] [--json]\n");
	return 2;
}

/* Inventory values: "?" for unknown (null), as the runner reported. */
static char *
inv(json_t *host, const char *key)
{
	json_t *o = json_object_get(host, "inventory");
	json_t *v = json_object_get(o, key);

	if (v == NULL || json_is_null(v))
		return xstrdup("?");
	return cli_field(o, key);
}

static char *
memory(json_t *host)
{
	json_t *v =
	    json_object_get(json_object_get(host, "inventory"), "memory_bytes");

	if (!json_is_integer(v))
		return xstrdup("?");
	return xasprintf(
	    "%.1fG", (double)json_integer_value(v) / (1024.0 * 1024 * 1024));
}

static char *
labels(json_t *host)
{
	json_t *l = json_object_get(host, "labels"), *v;
	struct buf b = BUF_INIT(CAP_LINE);
	size_t i;

	json_array_foreach(l, i, v)
	{
		if (!json_is_string(v))
			continue;
		if (b.len)
			buf_putc(&b, ',');
		cli_put_clean(&b, json_string_value(v), 100);
	}
	if (b.len == 0)
		buf_putc(&b, '-');
	return buf_take(&b);
}

static char *
age(json_t *host)
{
	json_t *v = json_object_get(host, "last_seen");
	long long d;

	if (!json_is_integer(v))
		return xstrdup("never");
	d = (long long)time(NULL) - (long long)json_integer_value(v);
	if (d < 0)
		d = 0;
	if (d < 120)
		return xasprintf("%llds ago", d);
	if (d < 7200)
		return xasprintf("%lldm ago", d / 60);
	return xasprintf("%lldh ago", d / 3600);
}

int
cmd_hosts(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL;
	struct cli_api api;
	struct cli_table t;
	json_t *reply = NULL, *h;
	int npos, json = 0, rc = 2;
	size_t k;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("hosts", argc, argv, spec, NULL, 0, &npos) != 0) {
		rc = hosts_usage();
		goto out;
	}
	if ((rc = cli_api_open(&api, "hosts", server, token_file, 0)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "GET", "/api/v1/hosts", NULL)) !=
	    0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	cli_table_init(&t, 12);
	cli_table_add(&t,
	    (char *[]){ xstrdup("ID"), xstrdup("NAME"), xstrdup("STATE"),
	        xstrdup("LABELS"), xstrdup("CPU"), xstrdup("SOCKETS"),
	        xstrdup("THREADS"), xstrdup("MEMORY"), xstrdup("KERNEL"),
	        xstrdup("CGROUP"), xstrdup("JOB"), xstrdup("LAST_SEEN") });
	json_array_foreach(json_object_get(reply, "hosts"), k, h)
	{
		cli_table_add(&t,
		    (char *[]){ cli_field(h, "id"), cli_field(h, "name"),
		        cli_field(h, "state"), labels(h), inv(h, "cpu_model"),
		        inv(h, "sockets"), inv(h, "threads"), memory(h),
		        inv(h, "kernel"), inv(h, "cgroup"),
		        cli_field(h, "current_job"), age(h) });
	}
	cli_table_print(&t);
	cli_table_free(&t);
out:
	cli_api_close(&api);
	json_decref(reply);
	return rc;
}
