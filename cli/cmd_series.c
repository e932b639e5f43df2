/*
 * perfwatch series: upload an mbox of patches (POST /api/v1/series) and
 * list recorded series (GET /api/v1/series).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/files.h"
#include "common/xalloc.h"

static int
series_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch series upload [--server URL] "
	    "[--token-file FILE]\n"
	    "           [--tree NAME] [--branch NAME] [--json] MBOX\n"
	    "       perfwatch series list [--server URL] [--limit N] "
	    "[--json]\n"
	    "       perfwatch series parse [--json] [--config DAEMON.yaml "
	    "--inbox NAME] MBOX\n"
	    "       perfwatch series latency [--server URL] [--days N] "
	    "[--json]\n");
	return 2;
}

/* Names sent in the query: the characters of tree and branch names. */
static int
plain_name(const char *s)
{
	return s[0] != '\0' && strlen(s) <= CAP_NAME &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789._-/") == strlen(s);
}

int
cli_read_file(struct buf *b, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc, saved;

	if (fd == -1) {
		perror(path);
		return -1;
	}
	rc = files_read_fd(b, fd, b->max);
	saved = errno;
	close(fd);
	if (rc == -1 && saved == EFBIG) {
		fprintf(stderr, "perfwatch series: %s: over %zu bytes\n", path,
		    b->max);
		return -1;
	}
	if (rc == -1) {
		/* A directory, an I/O error: not an empty mbox. */
		fprintf(stderr, "perfwatch series: %s: %s\n", path,
		    strerror(saved));
		return -1;
	}
	return 0;
}

static int
upload(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *tree = NULL;
	const char *branch = NULL, *file = NULL;
	struct buf mbox = BUF_INIT(CAP_HTTP_BODY), path = BUF_INIT(CAP_LINE);
	struct cli_api api;
	json_t *reply = NULL, *v;
	int npos, json = 0, rc = 2;
	size_t k;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL("tree", &tree), OPT_VAL("branch", &branch), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("series", argc - 1, argv + 1, spec, &file, 1, &npos) !=
	    0) {
		rc = series_usage();
		goto out;
	}
	if (file == NULL) {
		rc = series_usage();
		goto out;
	}
	if ((tree && !plain_name(tree)) || (branch && !plain_name(branch))) {
		fprintf(stderr,
		    "perfwatch series: --tree and --branch take "
		    "names (letters, digits, . _ - /)\n");
		goto out;
	}
	rc = 1;
	if (cli_read_file(&mbox, file) != 0)
		goto out;
	buf_puts(&path, "/api/v1/series");
	if (tree)
		buf_printf(&path, "?tree=%s", tree);
	if (branch)
		buf_printf(&path, "%sbranch=%s", tree ? "&" : "?", branch);
	if ((rc = cli_api_open(&api, "series", server, token_file, 1)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "POST", path.data, mbox.data)) !=
	    0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
	printf("%lld message(s), %lld patch mail(s): %zu series, %lld "
	       "known; the daemon applies the rest (series list shows "
	       "their state)\n",
	    (long long)json_integer_value(json_object_get(reply, "messages")),
	    (long long)json_integer_value(json_object_get(reply, "patches")),
	    json_array_size(json_object_get(reply, "series")),
	    (long long)json_integer_value(json_object_get(reply, "known")));
	json_array_foreach(json_object_get(reply, "series"), k, v)
	{
		const char *st = json_string_value(
		    json_array_get(json_object_get(reply, "states"), k));

		printf("series %lld %s\n", (long long)json_integer_value(v),
		    st ? st : "unknown");
	}
out:
	json_decref(reply);
	cli_api_close(&api);
	buf_release(&mbox);
	buf_release(&path);
	return rc;
}

/*
 * A read command: its options (--server, --token-file, --json and
 * NUMOPT, an integer in lo..hi, default dflt), GET PATH<n>, and the
 * body as it is (--json) or PRINT's table of it.  The exit status.
 */
static int
read_cmd(int argc, char **argv, const char *numopt, int64_t dflt, int64_t lo,
    int64_t hi, const char *path, void (*print)(json_t *reply, int64_t n))
{
	const char *server = NULL, *token_file = NULL, *num = NULL;
	struct cli_api api;
	json_t *reply = NULL;
	struct buf url = BUF_INIT(128);
	int64_t n = dflt;
	int npos, json = 0, rc = 2;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL(numopt + 2, &num), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("series", argc - 1, argv + 1, spec, NULL, 0, &npos) !=
	    0) {
		rc = series_usage();
		goto out;
	}
	if (num != NULL && cli_int_arg(&n, "series", numopt, num, lo, hi) != 0)
		goto out;
	buf_printf(&url, "%s%lld", path, (long long)n);
	if ((rc = cli_api_open(&api, "series", server, token_file, 0)) != 0 ||
	    (rc = cli_api_call(&reply, &api, "GET", url.data, NULL)) != 0)
		goto out;
	if (json)
		cli_print_body(&api);
	else
		print(reply, n);
out:
	buf_release(&url);
	json_decref(reply);
	cli_api_close(&api);
	return rc;
}

/* Seconds as "42 s", "3 min 5 s", "2 h 10 min", "6 days 4 h". */
static void
put_span(struct buf *b, json_t *v)
{
	long long s = (long long)json_integer_value(v);

	if (!json_is_integer(v))
		buf_puts(b, "-");
	else if (s < 120)
		buf_printf(b, "%lld s", s);
	else if (s < 7200)
		buf_printf(b, "%lld min %lld s", s / 60, s % 60);
	else if (s < 172800)
		buf_printf(b, "%lld h %lld min", s / 3600, s % 3600 / 60);
	else
		buf_printf(b, "%lld days %lld h", s / 86400, s % 86400 / 3600);
}

/* perfwatch series latency: GET /api/v1/latency as a table. */
static void
latency_print(json_t *reply, int64_t n)
{
	struct cli_table t;
	json_t *s;
	size_t k;

	printf("time to report, %lld series of the last %lld days:\n",
	    (long long)json_integer_value(json_object_get(reply, "series")),
	    (long long)n);
	cli_table_init(&t, 5);
	cli_table_add(&t,
	    (char *[]){ xstrdup("STAGE"), xstrdup("FROM..TO"), xstrdup("N"),
	        xstrdup("MEDIAN"), xstrdup("P90") });
	json_array_foreach(json_object_get(reply, "stages"), k, s)
	{
		struct buf span = BUF_INIT(64), med = BUF_INIT(64),
		           p90 = BUF_INIT(64);

		cli_put_clean(
		    &span, json_string_value(json_object_get(s, "from")), 16);
		buf_puts(&span, "..");
		cli_put_clean(
		    &span, json_string_value(json_object_get(s, "to")), 16);
		put_span(&med, json_object_get(s, "median_s"));
		put_span(&p90, json_object_get(s, "p90_s"));
		cli_table_add(&t,
		    (char *[]){ cli_field(s, "stage"), buf_take(&span),
		        cli_field(s, "n"), buf_take(&med), buf_take(&p90) });
	}
	cli_table_print(&t);
	cli_table_free(&t);
}

/* perfwatch series list: GET /api/v1/series as a table. */
static void
list_print(json_t *reply, int64_t n)
{
	struct cli_table t;
	json_t *s;
	size_t k;

	(void)n;
	cli_table_init(&t, 6);
	cli_table_add(&t,
	    (char *[]){ xstrdup("ID"), xstrdup("STATE"), xstrdup("VERSION"),
	        xstrdup("PATCHES"), xstrdup("TIP"), xstrdup("TITLE") });
	json_array_foreach(json_object_get(reply, "series"), k, s)
	{
		struct buf title = BUF_INIT(CAP_SUBJECT + 8);
		struct buf tip = BUF_INIT(64);
		const char *tt = json_string_value(json_object_get(s, "title"));
		const char *ts =
		    json_string_value(json_object_get(s, "commit_sha"));

		cli_put_clean(&title, tt ? tt : "-", 72);
		cli_put_clean(&tip, ts ? ts : "-", 12);
		cli_table_add(&t,
		    (char *[]){ cli_field(s, "id"), cli_field(s, "state"),
		        cli_field(s, "version"), cli_field(s, "total"),
		        buf_take(&tip), buf_take(&title) });
	}
	cli_table_print(&t);
	cli_table_free(&t);
}

int
cmd_series(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "upload") == 0)
		return upload(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return read_cmd(argc, argv, "--limit", 20, 1, 1000,
		    "/api/v1/series?limit=", list_print);
	if (argc >= 2 && strcmp(argv[1], "latency") == 0)
		return read_cmd(argc, argv, "--days", 30, 1, 3650,
		    "/api/v1/latency?days=", latency_print);
	if (argc >= 2 && strcmp(argv[1], "parse") == 0)
		return cmd_series_parse(argc, argv);
	return series_usage();
}
