/*
 * perfwatch parse --tool TOOL FILE [--json]: runs the runner's parser on
 * a file, so users can check a parser on their own outputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/buf.h"
#include "common/files.h"
#include "common/json.h"
#include "runners/bench/bench.h"

static int
parse_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch parse --tool "
	    "neper|fio|will-it-scale|netperf|keyvalue|json FILE "
	    "[--json]\n");
	return 2;
}

/* path ("-": standard input) into b (at most its cap): 0, or -1 with a
 * message on stderr. */
static int
read_file(struct buf *b, const char *path)
{
	int fd = STDIN_FILENO, rc, saved;

	if (strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(
		    stderr, "perfwatch parse: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = files_read_fd(b, fd, b->max);
	saved = errno;
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc == -1 && saved == EFBIG)
		fprintf(stderr, "perfwatch parse: %s: larger than %d bytes\n",
		    path, CAP_BENCH_INPUT);
	else if (rc == -1)
		fprintf(stderr, "perfwatch parse: %s: read error\n", path);
	return rc;
}

static void
print_json(const struct bench_result *r)
{
	json_t *root = json_object(), *list = json_array();
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct bench_metric *m = &r->metrics[i];

		json_array_append_new(list,
		    json_pack("{s:s, s:f, s:s, s:s}", "name", m->name, "value",
		        m->value, "unit", m->unit, "better",
		        bench_better_str(m->better)));
	}
	json_object_set_new(root, "metrics", list);
	pwjson_print(root, stdout);
	json_decref(root);
}

static void
print_table(const struct bench_result *r)
{
	size_t i, w = 6;

	for (i = 0; i < r->n; i++)
		if (strlen(r->metrics[i].name) > w)
			w = strlen(r->metrics[i].name);
	printf("%-*s %16s  %-10s %s\n", (int)w, "metric", "value", "unit",
	    "better");
	for (i = 0; i < r->n; i++) {
		const struct bench_metric *m = &r->metrics[i];

		printf("%-*s %16.10g  %-10s %s\n", (int)w, m->name, m->value,
		    m->unit[0] ? m->unit : "-", bench_better_str(m->better));
	}
}

int
cmd_parse(int argc, char **argv)
{
	struct bench_result r;
	struct buf b = BUF_INIT(CAP_BENCH_INPUT);
	const char *tool = NULL, *file = NULL;
	int i, json = 0, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--tool") == 0 && i + 1 < argc)
			tool = argv[++i];
		else if (strncmp(argv[i], "--tool=", 7) == 0)
			tool = argv[i] + 7;
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			parse_usage();
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return parse_usage();
		else if (file == NULL)
			file = argv[i];
		else
			return parse_usage();
	}
	if (tool == NULL || file == NULL)
		return parse_usage();
	if (!bench_tool_known(tool)) {
		fprintf(stderr, "perfwatch parse: unknown tool '%s'\n", tool);
		return parse_usage();
	}
	if (read_file(&b, file) == -1) {
		buf_release(&b);
		return 1;
	}
	bench_result_init(&r);
	rc = bench_parse(&r, tool, b.data, b.len);
	buf_release(&b);
	if (rc != 0) {
		fprintf(
		    stderr, "perfwatch parse: %s: %s\n", file, err_msg(&r.err));
		bench_result_release(&r);
		return 1;
	}
	if (json)
		print_json(&r);
	else
		print_table(&r);
	bench_result_release(&r);
	return 0;
}
