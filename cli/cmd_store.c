/*
 * perfwatch store copy FROM TO: a whole store into a new one, SQLite
 * into PostgreSQL or back (store/copy.h); each table with its rows and
 * checksum, read back from the target before its commit.  FROM and TO
 * as a daemon's `database:` names them: a file's path, a postgresql://
 * URI or a libpq conninfo.  The daemon on FROM should be stopped: rows
 * it writes during the copy are not in TO.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/err.h"
#include "common/redact.h"
#include "store/copy.h"

static int
store_usage(void)
{
	fprintf(stderr, "usage: perfwatch store copy FROM TO\n");
	return 2;
}

static int
store_copy_cmd(const char *from, const char *to)
{
	struct store_copy_report r;
	struct err e = { 0 };
	char shown[512], shown_to[512];
	int64_t rows = 0;
	size_t i;

	if (store_copy(from, to, &r, &e) != 0) {
		fprintf(stderr, "perfwatch store copy: %s\n", err_msg(&e));
		store_copy_report_release(&r);
		return 1;
	}
	for (i = 0; i < r.n; i++) {
		printf("%-24s %10" PRId64 " rows  checksum %016" PRIx64 "\n",
		    r.t[i].name, r.t[i].rows, r.t[i].sum);
		rows += r.t[i].rows;
	}
	redact_conninfo_into(shown, sizeof(shown), from);
	redact_conninfo_into(shown_to, sizeof(shown_to), to);
	printf("copied %" PRId64 " rows of %zu tables from %s to %s\n", rows,
	    r.n, shown, shown_to);
	store_copy_report_release(&r);
	return 0;
}

int
cmd_store(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "copy") == 0)
		return store_copy_cmd(argv[2], argv[3]);
	return store_usage();
}
