#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "tests/unit/test.h"

TEST(test_buf__starts_empty_and_terminated)
{
	struct buf b = BUF_INIT(16);

	ASSERT(b.data != NULL);
	ASSERT_STREQ(b.data, "");
	ASSERT_INTEQ(b.len, 0);
	buf_release(&b);
}

TEST(test_buf__grows_and_formats)
{
	struct buf b = BUF_INIT(1024);
	int i;

	for (i = 0; i < 100; i++)
		ASSERT_INTEQ(buf_printf(&b, "%d,", i % 10), 0);
	ASSERT_INTEQ(b.len, 200);
	ASSERT(strncmp(b.data, "0,1,2,", 6) == 0);
	ASSERT_INTEQ(b.data[b.len], '\0');
	ASSERT(!buf_failed(&b));
	buf_release(&b);
}

TEST(test_buf__overflow_is_sticky)
{
	struct buf b = BUF_INIT(8);

	ASSERT_INTEQ(buf_puts(&b, "12345678"), 0);
	ASSERT_INTEQ(buf_puts(&b, "9"), -1);
	ASSERT(buf_failed(&b));
	/* Later small appends fail too, and the content is not torn. */
	ASSERT_INTEQ(buf_puts(&b, ""), -1);
	ASSERT_STREQ(b.data, "12345678");
	buf_reset(&b);
	ASSERT(!buf_failed(&b));
	ASSERT_INTEQ(buf_printf(&b, "%s", "abcdefghij"), -1);
	ASSERT_INTEQ(b.len, 0);
	buf_release(&b);
}

/* Appends into room already there (buf_add's path without a grow) up to
 * the last byte of the cap, then one more: refused, nothing torn. */
TEST(test_buf__small_appends_fill_to_the_byte)
{
	struct buf b = BUF_INIT(100);
	char want[101];
	int i;

	for (i = 0; i < 100; i++) {
		want[i] = (char)('a' + i % 26);
		ASSERT_INTEQ(buf_add(&b, &want[i], 1), 0);
		ASSERT_INTEQ(b.data[b.len], '\0');
	}
	want[100] = '\0';
	ASSERT_INTEQ(b.len, 100);
	ASSERT_STREQ(b.data, want);
	ASSERT_INTEQ(buf_add(&b, "x", 1), -1);
	ASSERT_INTEQ(buf_add(&b, "", 0), -1);
	ASSERT_INTEQ(b.len, 100);
	ASSERT_STREQ(b.data, want);
	buf_release(&b);
}

TEST(test_buf__take_hands_over_storage)
{
	struct buf b = BUF_INIT(64);
	char *s;

	buf_puts(&b, "hello");
	s = buf_take(&b);
	ASSERT_STREQ(s, "hello");
	ASSERT_STREQ(b.data, "");
	free(s);
	s = buf_take(&b);
	ASSERT_STREQ(s, "");
	free(s);
}

TEST(test_err__first_message_wins)
{
	struct err e;

	err_clear(&e);
	ASSERT_STREQ(err_msg(&e), "");
	ASSERT_INTEQ(err_set(&e, "deep: %d", 1), -1);
	err_set(&e, "shallow");
	ASSERT_STREQ(err_msg(&e), "deep: 1");
	ASSERT_INTEQ(err_setc(&e, ERR_NOTFOUND, "x"), ERR_NOTFOUND);
	err_clear(&e);
	err_set(&e, "again");
	ASSERT_STREQ(err_msg(&e), "again");
}

TEST(test_json__errors_name_line_and_field)
{
	struct err e;
	json_t *v;
	const char *s = NULL;
	int64_t n = 0;

	err_clear(&e);
	v = pwjson_parse("{\"a\": 1,\n \"a\": 2}", 17, &e);
	ASSERT(v == NULL);
	ASSERT_MSG(strstr(err_msg(&e), "line 2") != NULL, "%s", err_msg(&e));

	err_clear(&e);
	v = pwjson_parse("{\"name\": 5, \"n\": 7}", 19, &e);
	ASSERT(v != NULL);
	ASSERT_INTEQ(pwjson_str(&s, v, "name", &e), -1);
	ASSERT_STREQ(err_msg(&e), "field 'name': expected a string");
	err_clear(&e);
	ASSERT_INTEQ(pwjson_int(&n, v, "n", &e), 0);
	ASSERT_INTEQ(n, 7);
	ASSERT_INTEQ(pwjson_str_opt(&s, v, "absent", &e), 0);
	ASSERT(s == NULL);
	ASSERT_INTEQ(pwjson_str(&s, v, "absent", &e), -1);
	ASSERT_STREQ(err_msg(&e), "field 'absent': missing");
	err_clear(&e);
	{
		const char *keys[] = { "name", NULL };

		ASSERT_INTEQ(pwjson_only_keys(v, keys, "body", &e), -1);
		ASSERT_STREQ(err_msg(&e), "body: unknown field 'n'");
	}
	json_decref(v);
}

/* A file of JSON, and what is not one: a directory is a read error
 * named with its path, not a document cut short. */
TEST(test_json__load_file)
{
	struct err e;
	json_t *v;
	char *dir = xasprintf("%s/jdir", test_tmpdir());
	char *f = xasprintf("%s/j.json", test_tmpdir());
	FILE *fp;

	ASSERT(mkdir(dir, 0755) == 0 || errno == EEXIST);
	ASSERT((fp = fopen(f, "w")) != NULL);
	fputs("{\"a\": [1, 2]}\n", fp);
	fclose(fp);
	err_clear(&e);
	v = pwjson_load_file(f, 4096, &e);
	ASSERT(v != NULL);
	ASSERT_INTEQ(json_array_size(json_object_get(v, "a")), 2);
	json_decref(v);
	err_clear(&e);
	ASSERT(pwjson_load_file(f, 4, &e) == NULL);
	ASSERT_MSG(strstr(err_msg(&e), "larger than 4 bytes") != NULL, "%s",
	    err_msg(&e));
	err_clear(&e);
	ASSERT(pwjson_load_file(dir, 4096, &e) == NULL);
	ASSERT_MSG(strstr(err_msg(&e), "jdir: Is a directory") != NULL, "%s",
	    err_msg(&e));
	free(dir);
	free(f);
}

/* A stored document's keys are sorted (one text per value); a reply's
 * are in the order the handler added them, and both are compact. */
TEST(test_json__reply_keeps_order_stored_sorts)
{
	struct buf stored = BUF_INIT(1024), reply = BUF_INIT(1024);
	json_t *o = json_pack(
	    "{s:i, s:[s, f], s:n}", "zeta", 1, "alpha", "x\"<", 0.5, "mid");

	ASSERT(o != NULL);
	json_object_set_new(o, "beta", json_integer(2));
	json_object_set_new(o, "zeta", json_integer(3)); /* in place */
	ASSERT_INTEQ(pwjson_dump_buf(&stored, o), 0);
	ASSERT_INTEQ(pwjson_reply_buf(&reply, o), 0);
	ASSERT_STREQ(stored.data,
	    "{\"alpha\":[\"x\\\"<\",0.5],\"beta\":2,\"mid\":null,\"zeta\":3}");
	ASSERT_STREQ(reply.data,
	    "{\"zeta\":3,\"alpha\":[\"x\\\"<\",0.5],\"mid\":null,\"beta\":2}");
	json_decref(o);
	buf_release(&stored);
	buf_release(&reply);
}

TEST(test_xalloc__asprintf)
{
	char *s = xasprintf("%s-%03d", "run", 7);

	ASSERT_STREQ(s, "run-007");
	free(s);
}
