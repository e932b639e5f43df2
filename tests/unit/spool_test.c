#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "runners/spool.h"
#include "tests/unit/test.h"

static char *
fresh_dir(const char *name)
{
	return xasprintf("%s/%s/spool", test_tmpdir(), name);
}

TEST(test_spool__put_list_get_remove)
{
	char *dir = fresh_dir("a");
	struct spool *s;
	struct spool_entry *v;
	struct buf b = BUF_INIT(CAP_HTTP_BODY);
	struct err e = { 0 };
	size_t n;

	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	ASSERT_INTEQ(spool_put(s, 12, 1, "{\"index\":1}", 11, &e), 0);
	ASSERT_INTEQ(spool_put(s, 7, 3, "{\"index\":3}", 11, &e), 0);
	ASSERT_INTEQ(spool_put(s, 12, 0, "{\"index\":0}", 11, &e), 0);
	ASSERT_INTEQ(spool_put(s, 7, 10, "{\"index\":10}", 12, &e), 0);
	ASSERT_INTEQ(spool_list(&v, &n, s, 0, &e), 0);
	ASSERT_INTEQ(n, 4);
	/* Sorted numerically, not by file name. */
	ASSERT_INTEQ(v[0].job_id, 7);
	ASSERT_INTEQ(v[0].index, 3);
	ASSERT_INTEQ(v[1].index, 10);
	ASSERT_INTEQ(v[2].job_id, 12);
	ASSERT_INTEQ(v[2].index, 0);
	free(v);
	ASSERT_INTEQ(spool_list(&v, &n, s, 12, &e), 0);
	ASSERT_INTEQ(n, 2);
	free(v);
	ASSERT_INTEQ(spool_get(&b, s, 7, 10, &e), 0);
	ASSERT_STREQ(b.data, "{\"index\":10}");
	ASSERT_INTEQ(spool_remove(s, 7, 10, &e), 0);
	ASSERT_INTEQ(spool_get(&b, s, 7, 10, &e), ERR_NOTFOUND);
	ASSERT_INTEQ(spool_remove(s, 7, 10, &e), 0); /* already gone: ok */
	err_clear(&e);
	ASSERT_INTEQ(spool_list(&v, &n, s, 0, &e), 0);
	ASSERT_INTEQ(n, 3);
	free(v);
	buf_release(&b);
	spool_free(s);
	free(dir);
}

TEST(test_spool__survives_reopen_and_drops_temp_files)
{
	char *dir = fresh_dir("b"), *tmp;
	struct spool *s;
	struct spool_entry *v;
	struct err e = { 0 };
	FILE *f;
	size_t n;

	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	ASSERT_INTEQ(spool_put(s, 3, 0, "{}", 2, &e), 0);
	spool_free(s);
	/* A crash between write and rename: the .tmp must not be sent. */
	tmp = xasprintf("%s/run-3-1.json.tmp", dir);
	ASSERT((f = fopen(tmp, "w")) != NULL);
	fputs("{\"trunc", f);
	fclose(f);
	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	ASSERT(access(tmp, F_OK) != 0);
	ASSERT_INTEQ(spool_list(&v, &n, s, 0, &e), 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(v[0].job_id, 3);
	ASSERT_INTEQ(v[0].index, 0);
	free(v);
	spool_free(s);
	free(tmp);
	free(dir);
}

TEST(test_spool__replace_is_atomic_and_whole)
{
	char *dir = fresh_dir("c");
	struct spool *s;
	struct buf b = BUF_INIT(CAP_HTTP_BODY);
	struct err e = { 0 };
	char *big = xmalloc(300000);

	memset(big, 'x', 300000);
	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	ASSERT_INTEQ(spool_put(s, 1, 0, "old", 3, &e), 0);
	ASSERT_INTEQ(spool_put(s, 1, 0, big, 300000, &e), 0);
	ASSERT_INTEQ(spool_get(&b, s, 1, 0, &e), 0);
	ASSERT_INTEQ(b.len, 300000);
	ASSERT(memcmp(b.data, big, 300000) == 0);
	buf_release(&b);
	spool_free(s);
	free(big);
	free(dir);
}

TEST(test_spool__reject_moves_aside)
{
	char *dir = fresh_dir("d"), *rej;
	struct spool *s;
	struct spool_entry *v;
	struct err e = { 0 };
	size_t n;

	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	ASSERT_INTEQ(spool_put(s, 9, 2, "{}", 2, &e), 0);
	ASSERT_INTEQ(spool_reject(s, 9, 2, &e), 0);
	ASSERT_INTEQ(spool_list(&v, &n, s, 0, &e), 0);
	ASSERT_INTEQ(n, 0);
	free(v);
	rej = xasprintf("%s/rejected/run-9-2.json", dir);
	ASSERT(access(rej, F_OK) == 0);
	spool_free(s);
	free(rej);
	free(dir);
}

TEST(test_spool__ignores_foreign_files_and_fails_on_bad_dir)
{
	char *dir = fresh_dir("e"), *other;
	struct spool *s;
	struct spool_entry *v;
	struct err e = { 0 };
	FILE *f;
	size_t n;

	ASSERT_INTEQ(spool_open(&s, dir, &e), 0);
	other = xasprintf("%s/run-x-1.json", dir);
	ASSERT((f = fopen(other, "w")) != NULL);
	fclose(f);
	ASSERT_INTEQ(spool_list(&v, &n, s, 0, &e), 0);
	ASSERT_INTEQ(n, 0);
	free(v);
	spool_free(s);
	free(other);
	free(dir);

	ASSERT_INTEQ(spool_open(&s, "/proc/perfwatch/spool", &e), -1);
	ASSERT(strstr(err_msg(&e), "/proc/perfwatch") != NULL);
}
