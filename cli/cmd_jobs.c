/*
 * perfwatch jobs [--state S] [--limit N] [--cursor C] [--json]
 * perfwatch jobs show ID [--json]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
jobs_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch jobs [--server URL] [--token-file FILE] "
	    "[--state S] [--limit N]\n"
	    "           [--cursor C] [--json]\n"
	    "       perfwatch jobs show ID [--server URL] [--json]\n"
	    "states: queued, running, success, failed, cancelled\n");
	return 2;
}

static char *
runs_cell(json_t *j)
{
	/* A single job names the wanted count "runs_wanted" ("runs" is the
	 * list of runs there). */
	const char *key =
	    json_is_array(json_object_get(j, "runs")) ? "runs_wanted" : "runs";
	char *d = cli_field(j, "runs_done"), *n = cli_field(j, key);
	char *s = xasprintf("%s/%s", d, n);

	free(d);
	free(n);
	return s;
}

/* The commit a job measures, abbreviated as git does ("-": none). */
static char *
commit_cell(json_t *j)
{
	char *c = cli_field(j, "commit");

	if (strlen(c) > 12)
		c[12] = '\0';
	return c;
}

static void
print_list(json_t *reply)
{
	json_t *jobs = json_object_get(reply, "jobs"), *j;
	const char *next;
	struct cli_table t;
	size_t i;

	cli_table_init(&t, 11);
	cli_table_add(&t,
	    (char *[]){ xstrdup("ID"), xstrdup("PAIR"), xstrdup("ROLE"),
	        xstrdup("COMMIT"), xstrdup("TREE"), xstrdup("NAME"),
	        xstrdup("POINT"), xstrdup("STATE"), xstrdup("HOST"),
	        xstrdup("RUNS"), xstrdup("PROGRESS") });
	json_array_foreach(jobs, i, j)
	{
		cli_table_add(&t,
		    (char *[]){ cli_field(j, "id"), cli_field(j, "pair_id"),
		        cli_field(j, "role"), commit_cell(j),
		        cli_field(j, "tree"), cli_field(j, "name"),
		        cli_field(j, "point"), cli_field(j, "state"),
		        cli_field(j, "host"), runs_cell(j),
		        cli_field(j, "progress") });
	}
	cli_table_print(&t);
	cli_table_free(&t);
	next = json_string_value(json_object_get(reply, "next_cursor"));
	if (next != NULL && *next) {
		struct buf b = BUF_INIT(CAP_LINE);

		cli_put_clean(&b, next, 200);
		fprintf(stderr, "(more: perfwatch jobs --cursor %s)\n", b.data);
		buf_release(&b);
	}
}

/* Appends "?k=v" / "&k=v" with v percent-encoded. */
static void
query_arg(struct buf *b, const char *k, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	buf_printf(b, "%c%s=", strchr(b->data, '?') ? '&' : '?', k);
	for (p = (const unsigned char *)v; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			buf_putc(b, (char)*p);
		else {
			buf_putc(b, '%');
			buf_putc(b, hex[*p >> 4]);
			buf_putc(b, hex[*p & 15]);
		}
	}
}

static void
kv(const char *k, char *v)
{
	printf("%-10s %s\n", k, v);
	free(v);
}

/* "6.1.158-pw17 build -pw17 config 93d1b1fde44c (boot qemu, cached
 * yes)": the kernel the job's runs ran on (docs/KERNEL.md). */
static char *
kernel_cell(json_t *j)
{
	json_t *k = json_object_get(j, "kernel");
	char *f[5], *s;
	static const char *const keys[] = { "release", "build_id",
		"config_sha256", "boot", "cached" };
	size_t i;

	if (!json_is_object(k))
		return xstrdup("-");
	for (i = 0; i < 5; i++)
		f[i] = cli_field(k, keys[i]);
	s = xasprintf("%s build %s config %.12s (boot %s, cached %s)", f[0],
	    f[1], f[2], f[3], f[4]);
	for (i = 0; i < 5; i++)
		free(f[i]);
	return s;
}

static void
print_job(json_t *j)
{
	json_t *runs = json_object_get(j, "runs"), *run, *ms, *m;
	const char *log = json_string_value(json_object_get(j, "log"));
	struct cli_table t;
	size_t i, k, ncol, r;
	json_t *names = json_array();
	char **cells;

	kv("job", cli_field(j, "id"));
	kv("name", cli_field(j, "name"));
	kv("pair", cli_field(j, "pair_id"));
	kv("role", cli_field(j, "role"));
	kv("commit", cli_field(j, "commit"));
	kv("tree", cli_field(j, "tree"));
	kv("subject", cli_field(j, "subject"));
	kv("point", cli_field(j, "point"));
	kv("state", cli_field(j, "state"));
	kv("host", cli_field(j, "host"));
	kv("kernel", kernel_cell(j));
	kv("attempts", cli_field(j, "attempts"));
	kv("runs", runs_cell(j));
	kv("progress", cli_field(j, "progress"));
	kv("error", cli_field(j, "error"));
	kv("created", cli_time(j, "created"));
	kv("updated", cli_time(j, "updated"));

	if (json_array_size(runs) > 0) {
		printf("\n");
		cli_table_init(&t, 5);
		cli_table_add(&t,
		    (char *[]){ xstrdup("RUN"), xstrdup("STATUS"),
		        xstrdup("HOST"), xstrdup("DURATION_S"),
		        xstrdup("ERROR") });
		json_array_foreach(runs, i, run)
		{
			cli_table_add(&t,
			    (char *[]){ cli_field(run, "index"),
			        cli_field(run, "status"),
			        cli_field(run, "host"),
			        cli_field(run, "duration_s"),
			        cli_field(run, "error") });
		}
		cli_table_print(&t);
		cli_table_free(&t);
	}

	/* Metrics: one row per name (first-seen order), a column per run. */
	json_array_foreach(runs, i, run)
	{
		json_array_foreach(json_object_get(run, "metrics"), k, m)
		{
			json_t *name = json_object_get(m, "name");
			size_t x;
			int seen = 0;

			if (!json_is_string(name))
				continue;
			for (x = 0; x < json_array_size(names); x++)
				if (json_equal(json_array_get(names, x), name))
					seen = 1;
			if (!seen)
				json_array_append(names, name);
		}
	}
	if (json_array_size(names) > 0) {
		ncol = 3 + json_array_size(runs);
		printf("\n");
		cli_table_init(&t, ncol);
		cells = xcalloc(ncol, sizeof(char *));
		cells[0] = xstrdup("METRIC");
		cells[1] = xstrdup("UNIT");
		cells[2] = xstrdup("BETTER");
		json_array_foreach(runs, r, run)
		{
			char *ix = cli_field(run, "index");

			cells[3 + r] = xasprintf("run%s", ix);
			free(ix);
		}
		cli_table_add(&t, cells);
		for (k = 0; k < json_array_size(names); k++) {
			json_t *name = json_array_get(names, k);

			cells[0] = NULL;
			cells[1] = NULL;
			cells[2] = NULL;
			json_array_foreach(runs, r, run)
			{
				cells[3 + r] = NULL;
				ms = json_object_get(run, "metrics");
				json_array_foreach(ms, i, m)
				{
					if (!json_equal(
					        json_object_get(m, "name"),
					        name))
						continue;
					if (cells[0] == NULL) {
						cells[0] = cli_field(m, "name");
						cells[1] = cli_field(m, "unit");
						cells[2] =
						    cli_field(m, "better");
					}
					cells[3 + r] = cli_field(m, "value");
					break;
				}
				if (cells[3 + r] == NULL)
					cells[3 + r] = xstrdup("-");
			}
			cli_table_add(&t, cells);
		}
		cli_table_print(&t);
		cli_table_free(&t);
		free(cells);
	}
	json_decref(names);
	if (log != NULL && *log) {
		struct buf b = BUF_INIT(CAP_JOB_LOG);
		size_t n;

		/* Newlines are kept; other control characters are not. */
		printf("\nlog:\n");
		for (n = 0; log[n]; n++) {
			unsigned char c = (unsigned char)log[n];

			buf_putc(&b,
			    (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
			        ? '?'
			        : (char)c);
		}
		fputs(b.data, stdout);
		if (b.len > 0 && b.data[b.len - 1] != '\n')
			fputc('\n', stdout);
		buf_release(&b);
	}
}

int
cmd_jobs(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *state = NULL;
	const char *limit_s = NULL, *cursor = NULL, *id_s = NULL;
	struct buf path = BUF_INIT(CAP_LINE);
	struct cli_api api;
	json_t *reply = NULL;
	int64_t limit = 0, id = 0;
	const char *pos[2] = { NULL, NULL };
	int npos, json = 0, show = 0, rc = 2;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL("state", &state), OPT_VAL("limit", &limit_s),
		OPT_VAL("cursor", &cursor), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("jobs", argc, argv, spec, pos, 2, &npos) != 0) {
		rc = jobs_usage();
		goto out;
	}
	if (npos > 0 && strcmp(pos[0], "show") != 0) {
		fprintf(
		    stderr, "perfwatch jobs: unknown argument '%s'\n", pos[0]);
		rc = jobs_usage();
		goto out;
	}
	show = npos > 0;
	id_s = pos[1];
	if (show) {
		if (id_s == NULL || state || limit_s || cursor) {
			rc = jobs_usage();
			goto out;
		}
		if (cli_int_arg(&id, "jobs", "ID", id_s, 1, INT64_MAX) != 0)
			goto out;
		buf_printf(&path, "/api/v1/jobs/%" PRId64, id);
	} else {
		buf_puts(&path, "/api/v1/jobs");
		if (state != NULL)
			query_arg(&path, "state", state);
		if (limit_s != NULL) {
			if (cli_int_arg(&limit, "jobs", "--limit", limit_s, 1,
			        500) != 0)
				goto out;
			query_arg(&path, "limit", limit_s);
		}
		if (cursor != NULL)
			query_arg(&path, "cursor", cursor);
	}
	if ((rc = cli_api_open(&api, "jobs", server, token_file, 0)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "GET", path.data, NULL)) != 0)
		goto out;
	if (json)
		cli_print_body(&api);
	else if (show)
		print_job(reply);
	else
		print_list(reply);
out:
	cli_api_close(&api);
	json_decref(reply);
	buf_release(&path);
	return rc;
}
