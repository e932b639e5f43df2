/*
 * daemon/hygiene: which host-state differences make a pair suspect.
 */
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "daemon/hygiene.h"
#include "tests/unit/test.h"

#define STATE(gov, thp, cmd, kernel)                                         \
	"{\"governor\":\"" gov "\",\"turbo\":\"off\",\"thp\":\"" thp "\","   \
	"\"thp_defrag\":\"madvise\",\"smt\":\"off\",\"pinning\":\"0-3\","    \
	"\"cmdline\":\"" cmd "\",\"microcode\":\"0x1\",\"kernel\":\"" kernel \
	"\",\"drop_caches\":\"off\"}"

static json_t *
rows(const char *b0, const char *b1, const char *c0, const char *c1)
{
	json_t *a = json_array();
	const char *v[4] = { b0, b1, c0, c1 };
	int i;

	for (i = 0; i < 4; i++)
		if (v[i] != NULL)
			json_array_append_new(a,
			    json_pack("{s:s, s:i, s:s}", "role",
			        i < 2 ? "base" : "candidate", "run", i % 2,
			        "host_state", v[i]));
	return a;
}

TEST(test_hygiene__same_state_other_kernel_is_not_suspect)
{
	struct buf why = BUF_INIT(4096);
	json_t *r = rows(STATE("performance", "never",
	                     "BOOT_IMAGE=/boot/a ro quiet", "6.1.0-base"),
	    STATE("performance", "never", "BOOT_IMAGE=/boot/a ro quiet",
	        "6.1.0-base"),
	    STATE("performance", "never", "BOOT_IMAGE=/boot/b ro quiet",
	        "6.1.0-cand"),
	    NULL);

	ASSERT_INTEQ(hygiene_compare(&why, r), 0);
	ASSERT_STREQ(why.data, "");
	json_decref(r);
	buf_release(&why);
}

TEST(test_hygiene__governor_and_cmdline_differences_are_named)
{
	struct buf why = BUF_INIT(4096);
	json_t *r = rows(STATE("powersave", "never", "ro", "k"),
	    STATE("powersave", "never", "ro", "k"),
	    STATE("performance", "never", "ro mitigations=off", "k"),
	    STATE("performance", "never", "ro mitigations=off", "k"));

	ASSERT_INTEQ(hygiene_compare(&why, r), 2);
	ASSERT(strstr(why.data,
	           "governor: powersave (base) vs performance (candidate)") !=
	    NULL);
	ASSERT(strstr(why.data,
	           "cmdline: ro (base) vs ro mitigations=off "
	           "(candidate)") != NULL);
	json_decref(r);
	buf_release(&why);
}

TEST(test_hygiene__a_state_that_changed_within_one_side_is_suspect)
{
	struct buf why = BUF_INIT(4096);
	json_t *r = rows(STATE("performance", "never", "ro", "k"),
	    STATE("performance", "always", "ro", "k"),
	    STATE("performance", "never", "ro", "k"),
	    STATE("performance", "always", "ro", "k"));

	ASSERT_INTEQ(hygiene_compare(&why, r), 1);
	ASSERT(strstr(why.data, "thp: never | always (base)") != NULL);
	json_decref(r);
	buf_release(&why);
	/* "1" is no repeat of "0-1" (values compare whole). */
	r = json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}]",
	    "role", "base", "run", 0, "host_state", "{\"pinning\":\"0-1\"}",
	    "role", "base", "run", 1, "host_state", "{\"pinning\":\"1\"}",
	    "role", "candidate", "run", 0, "host_state",
	    "{\"pinning\":\"0-1\"}");
	ASSERT_INTEQ(hygiene_compare(&why, r), 1);
	ASSERT(strstr(why.data, "pinning: 0-1 | 1 (base) vs 0-1 (candidate)") !=
	    NULL);
	json_decref(r);
	buf_release(&why);
}

TEST(test_hygiene__states_on_one_side_only_or_none)
{
	struct buf why = BUF_INIT(4096);
	json_t *r =
	    rows(STATE("performance", "never", "ro", "k"), NULL, NULL, NULL);
	json_t *none = json_array();

	ASSERT_INTEQ(hygiene_compare(&why, r), 1);
	ASSERT_STREQ(why.data, "host state recorded by the base runs only");
	buf_release(&why);
	ASSERT_INTEQ(hygiene_compare(&why, none), 0);
	/* An unparsable state is ignored, not guessed at. */
	json_array_append_new(none,
	    json_pack("{s:s, s:i, s:s}", "role", "base", "run", 0, "host_state",
	        "{not json"));
	ASSERT_INTEQ(hygiene_compare(&why, none), 0);
	json_decref(r);
	json_decref(none);
	buf_release(&why);
}
