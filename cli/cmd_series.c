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
	    "--inbox NAME] MBOX\n");
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
	int i, r, json = 0, rc = 2;
	size_t k;

	memset(&api, 0, sizeof(api));
	for (i = 2; i < argc; i++) {
		if ((r = cli_opt(argc, argv, &i, "--server", &server)) ||
		    (r = cli_opt(
		         argc, argv, &i, "--token-file", &token_file)) ||
		    (r = cli_opt(argc, argv, &i, "--tree", &tree)) ||
		    (r = cli_opt(argc, argv, &i, "--branch", &branch))) {
			if (r < 0)
				goto out;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = 1;
		} else if (argv[i][0] != '-' && file == NULL) {
			file = argv[i];
		} else {
			fprintf(stderr,
			    "perfwatch series: unknown argument '%s'\n",
			    argv[i]);
			rc = series_usage();
			goto out;
		}
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

static int
list(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *limit = NULL;
	struct cli_api api;
	struct cli_table t;
	json_t *reply = NULL, *s;
	char path[96];
	int64_t n = 20;
	int i, r, json = 0, rc = 2;
	size_t k;

	memset(&api, 0, sizeof(api));
	for (i = 2; i < argc; i++) {
		if ((r = cli_opt(argc, argv, &i, "--server", &server)) ||
		    (r = cli_opt(
		         argc, argv, &i, "--token-file", &token_file)) ||
		    (r = cli_opt(argc, argv, &i, "--limit", &limit))) {
			if (r < 0)
				goto out;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = 1;
		} else {
			rc = series_usage();
			goto out;
		}
	}
	if (limit != NULL &&
	    cli_int_arg(&n, "series", "--limit", limit, 1, 1000) != 0)
		goto out;
	snprintf(path, sizeof(path), "/api/v1/series?limit=%lld", (long long)n);
	if ((rc = cli_api_open(&api, "series", server, token_file, 0)) != 0)
		goto out;
	if ((rc = cli_api_call(&reply, &api, "GET", path, NULL)) != 0)
		goto out;
	if (json) {
		cli_print_body(&api);
		goto out;
	}
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
out:
	json_decref(reply);
	cli_api_close(&api);
	return rc;
}

int
cmd_series(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "upload") == 0)
		return upload(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return list(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "parse") == 0)
		return cmd_series_parse(argc, argv);
	return series_usage();
}
