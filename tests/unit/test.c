#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/test.h"

#define MAX_TESTS 1024

static struct {
	const char *name;
	void (*fn)(void);
} tests[MAX_TESTS];
static int ntests;
static int cur_failed;
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
		tests[i].fn();
		if (cur_failed) {
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
