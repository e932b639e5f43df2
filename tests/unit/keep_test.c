#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/xalloc.h"
#include "runners/keep.h"
#include "tests/unit/test.h"

/* A new jobs directory, NULL when it cannot be made. */
static char *
jobs_dir(const char *name)
{
	char *d = xasprintf("%s/%s/jobs", test_tmpdir(), name);

	if (files_mkdir_p(d) == 0)
		return d;
	free(d);
	return NULL;
}

/* DIR/ID as a round leaves it: a tree with a built file. */
static void
round_dir(const char *dir, int64_t id, const char *built)
{
	char *d = xasprintf("%s/%lld/sub", dir, (long long)id);
	char *f = xasprintf("%s/%lld/sub/prog", dir, (long long)id);

	ASSERT_INTEQ(files_mkdir_p(d), 0);
	ASSERT_INTEQ(files_write(f, built, strlen(built)), 0);
	free(d);
	free(f);
}

static int
exists(const char *dir, int64_t id, const char *suffix)
{
	char *p = xasprintf("%s/%lld%s", dir, (long long)id, suffix);
	struct stat st;
	int r = stat(p, &st) == 0;

	free(p);
	return r;
}

TEST(test_keep__next_round_takes_what_was_kept)
{
	char *dir = jobs_dir("take");
	const char *what = "tree file:///x\ncommit abc\nbuild 4 make\n";

	ASSERT(dir != NULL);
	round_dir(dir, 7, "v1");
	keep_put(dir, 7, what, 4);
	ASSERT(exists(dir, 7, ".kept"));
	ASSERT_INTEQ(keep_take(dir, 7, what), 1);
	/* Taken: the directory stays, its mark is gone, so a round that
	 * dies now leaves nothing a later one would take. */
	ASSERT(exists(dir, 7, "/sub/prog"));
	ASSERT(!exists(dir, 7, ".kept"));
	ASSERT_INTEQ(keep_take(dir, 7, what), 0);
	ASSERT(!exists(dir, 7, ""));
	free(dir);
}

TEST(test_keep__another_build_or_commit_starts_from_nothing)
{
	char *dir = jobs_dir("other");
	const char *what = "tree file:///x\ncommit abc\nbuild 4 make\n";

	ASSERT(dir != NULL);
	round_dir(dir, 3, "v1");
	keep_put(dir, 3, what, 4);
	ASSERT_INTEQ(
	    keep_take(dir, 3, "tree file:///x\ncommit abd\nbuild 4 make\n"), 0);
	ASSERT(!exists(dir, 3, ""));
	ASSERT(!exists(dir, 3, ".kept"));
	/* A prefix of the mark is not the mark. */
	round_dir(dir, 3, "v1");
	keep_put(dir, 3, what, 4);
	ASSERT_INTEQ(keep_take(dir, 3, "tree file:///x\ncommit abc\n"), 0);
	ASSERT(!exists(dir, 3, ""));
	/* A directory without a mark (a round that died) is not taken. */
	round_dir(dir, 5, "v1");
	ASSERT_INTEQ(keep_take(dir, 5, what), 0);
	ASSERT(!exists(dir, 5, ""));
	/* Nothing to keep (a failed round, keep_builds 0): removed. */
	round_dir(dir, 6, "v1");
	keep_put(dir, 6, NULL, 4);
	ASSERT(!exists(dir, 6, ""));
	round_dir(dir, 6, "v1");
	keep_put(dir, 6, what, 0);
	ASSERT(!exists(dir, 6, ""));
	ASSERT(!exists(dir, 6, ".kept"));
	free(dir);
}

TEST(test_keep__at_most_max_kept_oldest_removed_first)
{
	char *dir = jobs_dir("prune");
	int64_t id;

	ASSERT(dir != NULL);
	for (id = 1; id <= 5; id++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		round_dir(dir, id, "v");
		keep_put(dir, id, "w", 3);
		nanosleep(&ts, NULL); /* marks of distinct times */
	}
	ASSERT(!exists(dir, 1, ""));
	ASSERT(!exists(dir, 2, ""));
	for (id = 3; id <= 5; id++) {
		ASSERT(exists(dir, id, "/sub/prog"));
		ASSERT(exists(dir, id, ".kept"));
	}
	/* A job kept again is the newest: 3 outlives 4 now. */
	ASSERT_INTEQ(keep_take(dir, 3, "w"), 1);
	keep_put(dir, 3, "w", 3);
	round_dir(dir, 6, "v");
	keep_put(dir, 6, "w", 3);
	ASSERT(!exists(dir, 4, ""));
	ASSERT(exists(dir, 3, ".kept"));
	ASSERT(exists(dir, 5, ".kept"));
	ASSERT(exists(dir, 6, ".kept"));
	/* A smaller keep_builds at the runner's start. */
	keep_prune(dir, 1);
	ASSERT(!exists(dir, 3, ""));
	ASSERT(!exists(dir, 5, ""));
	ASSERT(exists(dir, 6, ".kept"));
	keep_prune(dir, 0);
	ASSERT(!exists(dir, 6, ""));
	ASSERT(!exists(dir, 6, ".kept"));
	free(dir);
}
