/*
 * daemon/hygiene: which host-state differences make a pair suspect.
 */
#include <string.h>

#include "common/buf.h"
#include "daemon/hygiene.h"
#include "store/runs.h"
#include "tests/unit/test.h"

#define STATE(gov, thp, cmd, kernel)                                         \
	"{\"governor\":\"" gov "\",\"turbo\":\"off\",\"thp\":\"" thp "\","   \
	"\"thp_defrag\":\"madvise\",\"smt\":\"off\",\"pinning\":\"0-3\","    \
	"\"cmdline\":\"" cmd "\",\"microcode\":\"0x1\",\"kernel\":\"" kernel \
	"\",\"drop_caches\":\"off\"}"

/* The measured runs of a pair with these host states (NULL: no run), as
 * store_pair_run_meta_list() gives them; the texts stay the caller's. */
static struct store_run_metas
rows(struct store_run_meta v[4], const char *b0, const char *b1, const char *c0,
    const char *c1)
{
	struct store_run_metas l = { v, 0 };
	const char *st[4] = { b0, b1, c0, c1 };
	int i;

	for (i = 0; i < 4; i++)
		if (st[i] != NULL) {
			memset(&v[l.n], 0, sizeof(v[l.n]));
			v[l.n].role = (char *)(i < 2 ? "base" : "candidate");
			v[l.n].run = i % 2;
			v[l.n].measured = 1;
			v[l.n++].host_state_json = (char *)st[i];
		}
	return l;
}

TEST(test_hygiene__same_state_other_kernel_is_not_suspect)
{
	struct buf why = BUF_INIT(4096);
	struct store_run_meta v[4];
	struct store_run_metas r = rows(v,
	    STATE("performance", "never", "BOOT_IMAGE=/boot/a ro quiet",
	        "6.1.0-base"),
	    STATE("performance", "never", "BOOT_IMAGE=/boot/a ro quiet",
	        "6.1.0-base"),
	    STATE("performance", "never", "BOOT_IMAGE=/boot/b ro quiet",
	        "6.1.0-cand"),
	    NULL);

	ASSERT_INTEQ(hygiene_compare(&why, &r), 0);
	ASSERT_STREQ(why.data, "");
	buf_release(&why);
}

TEST(test_hygiene__governor_and_cmdline_differences_are_named)
{
	struct buf why = BUF_INIT(4096);
	struct store_run_meta v[4];
	struct store_run_metas r =
	    rows(v, STATE("powersave", "never", "ro", "k"),
	        STATE("powersave", "never", "ro", "k"),
	        STATE("performance", "never", "ro mitigations=off", "k"),
	        STATE("performance", "never", "ro mitigations=off", "k"));

	ASSERT_INTEQ(hygiene_compare(&why, &r), 2);
	ASSERT(strstr(why.data,
	           "governor: powersave (base) vs performance (candidate)") !=
	    NULL);
	ASSERT(strstr(why.data,
	           "cmdline: ro (base) vs ro mitigations=off "
	           "(candidate)") != NULL);
	buf_release(&why);
}

TEST(test_hygiene__a_state_that_changed_within_one_side_is_suspect)
{
	struct buf why = BUF_INIT(4096);
	struct store_run_meta v[4];
	struct store_run_metas r =
	    rows(v, STATE("performance", "never", "ro", "k"),
	        STATE("performance", "always", "ro", "k"),
	        STATE("performance", "never", "ro", "k"),
	        STATE("performance", "always", "ro", "k"));

	ASSERT_INTEQ(hygiene_compare(&why, &r), 1);
	ASSERT(strstr(why.data, "thp: never | always (base)") != NULL);
	buf_release(&why);
	/* "1" is no repeat of "0-1" (values compare whole). */
	r = rows(v, "{\"pinning\":\"0-1\"}", "{\"pinning\":\"1\"}",
	    "{\"pinning\":\"0-1\"}", NULL);
	ASSERT_INTEQ(hygiene_compare(&why, &r), 1);
	ASSERT(strstr(why.data, "pinning: 0-1 | 1 (base) vs 0-1 (candidate)") !=
	    NULL);
	buf_release(&why);
}

TEST(test_hygiene__states_on_one_side_only_or_none)
{
	struct buf why = BUF_INIT(4096);
	struct store_run_meta v[4], w[4];
	struct store_run_metas r =
	    rows(v, STATE("performance", "never", "ro", "k"), NULL, NULL, NULL);
	struct store_run_metas none = { NULL, 0 };

	ASSERT_INTEQ(hygiene_compare(&why, &r), 1);
	ASSERT_STREQ(why.data, "host state recorded by the base runs only");
	buf_release(&why);
	ASSERT_INTEQ(hygiene_compare(&why, &none), 0);
	ASSERT_INTEQ(hygiene_compare(&why, NULL), 0);
	/* An unparsable state is ignored, not guessed at. */
	none = rows(w, "{not json", NULL, NULL, NULL);
	ASSERT_INTEQ(hygiene_compare(&why, &none), 0);
	/* The profile slot past max_runs is no measured run. */
	r = rows(v, STATE("performance", "never", "ro", "k"), NULL,
	    STATE("performance", "never", "ro", "k"),
	    STATE("powersave", "never", "ro", "k"));
	r.v[2].measured = 0;
	ASSERT_INTEQ(hygiene_compare(&why, &r), 0);
	ASSERT_STREQ(why.data, "");
	buf_release(&why);
}
