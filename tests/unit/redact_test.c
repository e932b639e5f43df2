#include <stdlib.h>
#include <string.h>

#include "common/redact.h"
#include "tests/unit/test.h"

/* Every URL's user information goes, wherever it is in the text; text
 * without one is unchanged. */
TEST(test_redact__userinfo)
{
	static const char *const cases[][2] = {
		{ "https://user:tok3n@git.example/linux.git",
		    "https://***@git.example/linux.git" },
		{ "fetch https://a@h/x failed; ssh://me:pw@h2:22/r",
		    "fetch https://***@h/x failed; ssh://***@h2:22/r" },
		{ "https://git.example/p@th", "https://git.example/p@th" },
		{ "user@example.com", "user@example.com" },
		{ "https://u:p@h", "https://***@h" },
		{ "x ://@", "x ://***@" },
		{ "", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = redact_userinfo(cases[i][0]);

		ASSERT_STREQ(got, cases[i][1]);
		free(got);
	}
	ASSERT(redact_userinfo(NULL) == NULL);
}

/* A short buffer cuts the copy, never overruns, always terminates. */
TEST(test_redact__into_short_buffer)
{
	char out[12];

	memset(out, 'Z', sizeof(out));
	ASSERT(redact_userinfo_into(
	           out, sizeof(out), "https://u:secret@host/path") == 11);
	ASSERT_STREQ(out, "https://***");
	ASSERT(redact_userinfo_into(out, 1, "abc") == 0);
	ASSERT_STREQ(out, "");
}

/* A webhook URL shows its scheme and host only. */
TEST(test_redact__url_host)
{
	char *a = redact_url_host(
	    "https://hooks.slack.com/services/T000/B000/XXXXSECRET");
	char *b = redact_url_host("http://u:p@127.0.0.1:8080");
	char *c = redact_url_host("ops@example.com");

	ASSERT_STREQ(a, "https://hooks.slack.com/...");
	ASSERT_STREQ(b, "http://127.0.0.1:8080");
	ASSERT_STREQ(c, "ops@example.com");
	free(a);
	free(b);
	free(c);
	ASSERT(redact_url_host(NULL) == NULL);
}

/* A PostgreSQL URI's user information and every password of a conninfo
 * or a URI's query go; the rest stays. */
TEST(test_redact__conninfo)
{
	static const char *const cases[][2] = {
		{ "postgresql://pw:s3cret@db/perfwatch",
		    "postgresql://***@db/perfwatch" },
		{ "host=db password=s3cret dbname=pw",
		    "host=db password=*** dbname=pw" },
		{ "host=db password = 'a b\\'c' dbname=pw",
		    "host=db password = *** dbname=pw" },
		{ "postgres://db/pw?password=x&sslmode=require",
		    "postgres://db/pw?password=***&sslmode=require" },
		{ "host=/run/postgresql dbname=pw",
		    "host=/run/postgresql dbname=pw" },
		{ "passwordless=1", "passwordless=1" },
	};
	char out[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		redact_conninfo_into(out, sizeof(out), cases[i][0]);
		ASSERT_STREQ(out, cases[i][1]);
	}
}
