#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "store/db.h"
#include "store/jobs.h"
#include "store/store.h"
#include "tests/unit/test.h"

#define MAX_TESTS 1024

static struct {
	const char *name;
	void (*fn)(void);
} tests[MAX_TESTS];
static int ntests;
static int cur_failed;
static const char *cur_skip; /* test_skip's why */
static char tmpdir[256];
static char pathbuf[8][1024];
static int pathslot;

void
test_register(const char *name, void (*fn)(void))
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "too many tests\n");
		abort();
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

void
test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	cur_failed = 1;
	fprintf(stdout, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static void
rm_tmpdir(void)
{
	char *argv[] = { "rm", "-rf", tmpdir, NULL };
	pid_t pid;

	if (tmpdir[0] == '\0' || getenv("TEST_KEEP_TMP"))
		return;
	if ((pid = fork()) == 0) {
		execvp("rm", argv);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1)
			;
}

void
test_skip(const char *why)
{
	cur_skip = why;
}

int
test_store_pg(void)
{
	const char *pg = getenv("PW_TEST_PG");

	return pg != NULL && pg[0] != '\0';
}

int64_t
test_db_number(struct db *d, const char *sql)
{
	struct db_stmt *st = db_prepare(d, sql);
	int64_t n = -1;

	if (st != NULL && db_step(st) == DB_ROW)
		n = db_col_int64(st, 0);
	db_finalize(st);
	return n;
}

void
test_ids_add(char *out, size_t n, size_t *len, int64_t id)
{
	if (*len < n)
		*len += (size_t)snprintf(out + *len, n - *len, "%s%lld",
		    *len ? "," : "", (long long)id);
}

int
test_pagings(
    int (*pages)(void *arg, int64_t limit, int64_t scan, char *got, size_t n),
    void *arg, const char *want, char *got, size_t n, int64_t *limit,
    int64_t *scan)
{
	int k;

	for (k = 0; k < 4; k++) {
		*limit = k % 2 ? 3 : 50;
		*scan = k / 2 ? 4 : 0;
		got[0] = '\0';
		if (pages(arg, *limit, *scan, got, n) != 0 ||
		    strcmp(got, want) != 0)
			return -1;
	}
	return 0;
}

char *
test_store_where(const char *name)
{
	const char *pg = getenv("PW_TEST_PG");
	char db[64], q[128];
	struct db *d;
	struct err e = { 0 };
	size_t i, n;

	if (!test_store_pg())
		return xasprintf("%s/%s", test_tmpdir(), name);
	/* The database: this process's, named after name. */
	n = (size_t)snprintf(db, sizeof(db), "t%ld_", (long)getpid());
	for (i = 0; name[i] != '\0' && n + 1 < sizeof(db); i++)
		db[n++] = (name[i] >= 'a' && name[i] <= 'z') ||
		        (name[i] >= '0' && name[i] <= '9')
		    ? name[i]
		    : '_';
	db[n] = '\0';
	if (db_open(&d, pg, &e) != 0) {
		fprintf(stderr, "PW_TEST_PG: %s\n", err_msg(&e));
		abort();
	}
	snprintf(
	    q, sizeof(q), "SELECT 1 FROM pg_database WHERE datname = '%s'", db);
	{
		struct db_stmt *st = db_prepare(d, q);
		int have = st != NULL && db_step(st) == DB_ROW;

		db_finalize(st);
		snprintf(q, sizeof(q), "CREATE DATABASE %s", db);
		if (!have && db_exec(d, q) != 0) {
			fprintf(
			    stderr, "PW_TEST_PG: %s: %s\n", q, db_errmsg(d));
			abort();
		}
	}
	db_close(d);
	return xasprintf("%s dbname=%s", pg, db);
}

char *
test_store_at(const char *fmt, ...)
{
	char name[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return test_store_where(name);
}

struct store *
test_store_open(const char *fmt, ...)
{
	struct store *s = NULL;
	struct err e = { 0 };
	char name[128], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	p = test_store_where(name);
	if (store_open(&s, p, &e) == -1)
		printf("# store_open: %s\n", err_msg(&e));
	free(p);
	return s;
}

int64_t
test_pair_new(struct store *s, const char *name, const char *point,
    const char *base_spec, const char *cand_spec, int64_t at, int64_t *jobs)
{
	struct store_job_new j[2];
	int64_t pair = 0;
	int k;

	for (k = 0; k < 2; k++) {
		memset(&j[k], 0, sizeof(j[k]));
		j[k].role = k ? "candidate" : "base";
		j[k].spec_json = k ? cand_spec : base_spec;
		j[k].labels_json = "[]";
		j[k].runs = j[k].max_runs = 1;
		j[k].max_attempts = 3;
	}
	if (store_pair_create(s, &pair, jobs ? &jobs[0] : NULL,
	        jobs ? &jobs[1] : NULL, name, point, &j[0], &j[1], at) != 0)
		return -1;
	return pair;
}

const char *
test_tmpdir(void)
{
	if (tmpdir[0] == '\0') {
		const char *base = getenv("TMPDIR");

		snprintf(tmpdir, sizeof(tmpdir), "%s/pwtest.XXXXXX",
		    base ? base : "/tmp");
		if (mkdtemp(tmpdir) == NULL) {
			perror("mkdtemp");
			abort();
		}
		atexit(rm_tmpdir);
	}
	return tmpdir;
}

const char *
test_fixture(const char *rel)
{
	const char *base = getenv("PERFWATCH_FIXTURES");
	char *p = pathbuf[pathslot++ % 8];

	snprintf(p, sizeof(pathbuf[0]), "%s/%s", base ? base : "tests/fixtures",
	    rel);
	return p;
}

const char *
test_srcpath(const char *rel)
{
	char *p = pathbuf[pathslot++ % 8];

	snprintf(p, sizeof(pathbuf[0]), "%s", rel);
	return p;
}

int
main(int argc, char **argv)
{
	int i, j, passed = 0, failed = 0, ran;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ntests; i++) {
		if (argc > 1) {
			for (ran = 0, j = 1; j < argc; j++)
				if (strcmp(argv[j], tests[i].name) == 0)
					ran = 1;
			if (!ran)
				continue;
		}
		cur_failed = 0;
		cur_skip = NULL;
		tests[i].fn();
		if (cur_skip != NULL && !cur_failed) {
			printf("SKIP %s: %s\n", tests[i].name, cur_skip);
		} else if (cur_failed) {
			printf("FAIL %s\n", tests[i].name);
			failed++;
		} else {
			printf("PASS %s\n", tests[i].name);
			passed++;
		}
	}
	return failed ? 1 : 0;
}

void
test_write_file(const char *root, const char *rel, const char *text)
{
	size_t len = strlen(root) + strlen(rel) + 1;
	char *p = malloc(len), *s;
	FILE *f;

	if (p == NULL)
		abort();
	snprintf(p, len, "%s%s", root, rel);
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if ((f = fopen(p, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

int
test_listen(int *port)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	listen(fd, 16);
	getsockname(fd, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	return fd;
}
