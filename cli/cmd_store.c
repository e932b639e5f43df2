/*
 * perfwatch store copy FROM TO: a whole store into a new one, SQLite
 * into PostgreSQL or back (store/copy.h); each table with its rows and
 * checksum, read back from the target before its commit.  FROM and TO
 * as a daemon's `database:` names them: a file's path, a postgresql://
 * URI or a libpq conninfo.  The daemon on FROM should be stopped: rows
 * it writes during the copy are not in TO.
 *
 * perfwatch store check DATABASE: the store's consistency rules
 * (store/check.h), one line each with the count of rows that break it;
 * exit 0 when every count is 0, 1 otherwise.  Safe beside running
 * daemons: it reads one snapshot.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/database.h"
#include "common/err.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "store/check.h"
#include "store/copy.h"
#include "store/store.h"

static int
store_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch store copy FROM TO\n"
	    "       perfwatch store check DATABASE\n");
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

static int
store_check_cmd(const char *where)
{
	struct store_check_result *res;
	struct store *s;
	struct err e = { 0 };
	char shown[512];
	size_t i, n, bad = 0;

	redact_conninfo_into(shown, sizeof(shown), where);
	/* A missing file would be made, empty and consistent. */
	if (!database_is_pg(where) && access(where, F_OK) != 0) {
		fprintf(stderr, "perfwatch store check: %s: %s\n", where,
		    strerror(errno));
		return 1;
	}
	if (store_open(&s, where, &e) != 0) {
		fprintf(stderr, "perfwatch store check: %s\n", err_msg(&e));
		return 1;
	}
	n = store_check_count(s);
	res = xcalloc(n, sizeof(*res));
	if (store_check(s, res) != 0) {
		fprintf(stderr, "perfwatch store check: %s: %s\n", shown,
		    store_errmsg(s));
		free(res);
		store_close(s);
		return 1;
	}
	for (i = 0; i < n; i++) {
		printf("%-26s %s: %s\n", res[i].name,
		    res[i].bad ? "BROKEN" : "ok", res[i].rule);
		if (res[i].bad)
			printf("%-26s %" PRId64 " row(s) break it\n", "",
			    res[i].bad);
		bad += res[i].bad != 0;
	}
	if (bad)
		printf("%s: %zu of %zu rules broken\n", shown, bad, n);
	else
		printf("%s: consistent (%zu rules)\n", shown, n);
	free(res);
	store_close(s);
	return bad ? 1 : 0;
}

int
cmd_store(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "copy") == 0)
		return store_copy_cmd(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "check") == 0)
		return store_check_cmd(argv[2]);
	return store_usage();
}
