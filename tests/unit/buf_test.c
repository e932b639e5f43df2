#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TEST(test_xalloc__asprintf)
{
	char *s = xasprintf("%s-%03d", "run", 7);

	ASSERT_STREQ(s, "run-007");
	free(s);
}

/* A random JSON value for the dump comparison below. */
static uint64_t dump_seed = 0x9e3779b97f4a7c15ULL;

static uint64_t
dump_rand(void)
{
	dump_seed ^= dump_seed << 13;
	dump_seed ^= dump_seed >> 7;
	dump_seed ^= dump_seed << 17;
	return dump_seed;
}

static json_t *
dump_random(int depth)
{
	static const char *const pieces[] = { "a", "\"", "\\", "\n", "\t",
		"\x01", "\x1f", "\x7f", "/", "\xc3\xa9", "\xe2\x80\xa8",
		"\xf0\x9f\x98\x80", "<script>", " ", "key", "b", "" };
	char s[64];
	size_t i, n;
	json_t *v;

	switch (dump_rand() % (depth > 3 ? 5 : 7)) {
	case 0: /* a real of any magnitude, integral ones too */
		switch (dump_rand() % 4) {
		case 0:
			return json_real((double)(int64_t)dump_rand() /
			    (double)(1ULL << (dump_rand() % 63)));
		case 1:
			return json_real(
			    (double)(int64_t)(dump_rand() % 20001) - 10000);
		case 2:
			return json_real(ldexp((double)(dump_rand() >> 11),
			    (int)(dump_rand() % 2000) - 1000));
		default:
			return json_real(dump_rand() % 2 ? -0.0 : 1e-7);
		}
	case 1:
		return json_integer(
		    (json_int_t)dump_rand() >> (dump_rand() % 64));
	case 2:
		s[0] = '\0';
		n = dump_rand() % 6;
		for (i = 0; i < n; i++) {
			size_t at = strlen(s);

			snprintf(s + at, sizeof(s) - at, "%s",
			    pieces[dump_rand() %
			        (sizeof(pieces) / sizeof(pieces[0]))]);
		}
		return json_string(s);
	case 3:
		return dump_rand() % 3 == 0 ? json_null()
		                            : json_boolean(dump_rand() % 2);
	case 4:
		return json_string(dump_rand() % 2 ? "x" : "");
	case 5:
		v = json_array();
		n = dump_rand() % 5;
		for (i = 0; i < n; i++)
			json_array_append_new(v, dump_random(depth + 1));
		return v;
	default:
		v = json_object();
		n = dump_rand() % 20;
		for (i = 0; i < n; i++) {
			snprintf(s, sizeof(s), "%s%u",
			    pieces[dump_rand() %
			        (sizeof(pieces) / sizeof(pieces[0]))],
			    (unsigned)(dump_rand() % 30));
			json_object_set_new(v, s, dump_random(depth + 1));
		}
		return v;
	}
}

/* pwjson_dump_buf writes what jansson's dump with the same flags does,
 * over random documents and a string jansson refuses. */
TEST(test_json__dump_buf_as_jansson)
{
	struct buf b = BUF_INIT(1 << 24);
	json_t *v;
	char *want;
	int i;

	for (i = 0; i < 3000; i++) {
		v = dump_random(i % 4 == 0 ? 4 : 0);
		want = pwjson_dump(v);
		buf_reset(&b);
		buf_puts(&b, "x");
		ASSERT(pwjson_dump_buf(&b, v) == 0);
		ASSERT_STREQ(b.data + 1, want);
		free(want);
		json_decref(v);
	}
	v = json_pack("{s:o}", "k", json_stringn_nocheck("a\xff", 2));
	buf_reset(&b);
	ASSERT(pwjson_dump_buf(&b, v) == 0);
	ASSERT_STREQ(b.data, "null");
	json_decref(v);
	buf_release(&b);
}
