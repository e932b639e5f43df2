#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "config/config.h"
#include "runners/kernel.h"
#include "tests/unit/test.h"

static char *frag_v[] = { "CONFIG_MEMCG=y", "CONFIG_PSI=y",
	"# CONFIG_SWAP is not set", "CONFIG_LOG_BUF_SHIFT=17",
	"CONFIG_CMDLINE=\"quiet\"", "CONFIG_DEBUG_INFO=n" };
static const struct strlist frag = { frag_v, 6 };

/* What olddefconfig leaves when everything was kept. */
static const char kept[] = "#\n# Automatically generated file\n#\n"
                           "CONFIG_64BIT=y\nCONFIG_MEMCG=y\nCONFIG_PSI=y\n"
                           "# CONFIG_SWAP is not set\nCONFIG_LOG_BUF_SHIFT=17\n"
                           "CONFIG_CMDLINE=\"quiet\"\n"
                           "# CONFIG_DEBUG_INFO is not set\n";

TEST(test_kernel__fragment_all_kept)
{
	struct buf b = BUF_INIT(4096);

	ASSERT_INTEQ(kernel_fragment_dropped(&b, kept, &frag), 0);
	ASSERT_STREQ(b.data, "");
	buf_release(&b);
}

TEST(test_kernel__fragment_dropped_named)
{
	/* PSI gone (a missing dependency), SWAP switched on by a select,
	 * LOG_BUF_SHIFT clamped, DEBUG_INFO forced on. */
	static const char cfg[] =
	    "CONFIG_MEMCG=y\n# CONFIG_PSI is not set\n"
	    "CONFIG_SWAP=y\nCONFIG_LOG_BUF_SHIFT=12\n"
	    "CONFIG_CMDLINE=\"quiet\"\nCONFIG_DEBUG_INFO=y\n";
	struct buf b = BUF_INIT(4096);

	ASSERT_INTEQ(kernel_fragment_dropped(&b, cfg, &frag), 4);
	ASSERT_STREQ(b.data,
	    "CONFIG_PSI=y (now: not set), # CONFIG_SWAP is not set (now: "
	    "CONFIG_SWAP=y), CONFIG_LOG_BUF_SHIFT=17 (now: "
	    "CONFIG_LOG_BUF_SHIFT=12), CONFIG_DEBUG_INFO=n (now: "
	    "CONFIG_DEBUG_INFO=y)");
	buf_release(&b);
}

TEST(test_kernel__fragment_prefix_is_not_a_match)
{
	/* CONFIG_MEMCG_KMEM=y must not satisfy CONFIG_MEMCG=y. */
	static char *v[] = { "CONFIG_MEMCG=y" };
	static const struct strlist f = { v, 1 };
	struct buf b = BUF_INIT(4096);

	ASSERT_INTEQ(
	    kernel_fragment_dropped(&b, "CONFIG_MEMCG_KMEM=y\n", &f), 1);
	ASSERT_STREQ(b.data, "CONFIG_MEMCG=y (now: not set)");
	buf_release(&b);
}

TEST(test_kernel__build_id)
{
	char id[32];

	kernel_build_id(id, sizeof(id), 17);
	ASSERT_STREQ(id, "-pw17");
	kernel_build_id(id, sizeof(id), 1234567890123LL);
	ASSERT_STREQ(id, "-pw1234567890123");
}

TEST(test_kernel__version_check)
{
	struct buf why = BUF_INIT(1024);
	const char ok[] = "Linux version 6.1.158-pw17 (perfwatch@perfwatch) "
	                  "(gcc (Debian 12.2.0-14) 12.2.0) #1 SMP\n";

	ASSERT_INTEQ(kernel_version_check(ok, "-pw17", &why), 0);
	/* -pw1 is a suffix of the string but not of the release. */
	ASSERT_INTEQ(kernel_version_check(ok, "-pw7", &why), -1);
	ASSERT_STREQ(why.data,
	    "wrong kernel: booted 6.1.158-pw17, expected a kernel ending in "
	    "-pw7");
	buf_reset(&why);
	ASSERT_INTEQ(kernel_version_check(
	                 "Linux version 6.1.0-13-amd64 (x)", "-pw17", &why),
	    -1);
	ASSERT(strstr(why.data, "booted 6.1.0-13-amd64") != NULL);
	ASSERT(strstr(why.data, "-pw17") != NULL);
	buf_reset(&why);
	ASSERT_INTEQ(kernel_version_check("", "-pw17", &why), -1);
	ASSERT(strstr(why.data, "unknown") != NULL);
	buf_release(&why);
}

TEST(test_kernel__version_release)
{
	char rel[16];

	ASSERT_INTEQ(kernel_version_release(rel, sizeof(rel),
	                 "Linux version 6.1.158-pw17 (x) #1 SMP"),
	    0);
	ASSERT_STREQ(rel, "6.1.158-pw17");
	ASSERT_INTEQ(kernel_version_release(rel, sizeof(rel), "garbage"), -1);
	/* Too long for out: refused, not cut into another release. */
	ASSERT_INTEQ(kernel_version_release(rel, sizeof(rel),
	                 "Linux version 6.1.158-pw17-very-long (x)"),
	    -1);
}

TEST(test_kernel__config_key)
{
	char a[17], b[17], c[17], d[17];
	static char *v2[] = { "CONFIG_MEMCG=y" };
	static const struct strlist f2 = { v2, 1 };

	kernel_config_key(a, "tinyconfig", NULL, &frag);
	kernel_config_key(b, "tinyconfig", NULL, &frag);
	kernel_config_key(c, "tinyconfig", NULL, &f2);
	kernel_config_key(d, "configs/x.config", "CONFIG_A=y\n", &frag);
	ASSERT_INTEQ(strlen(a), 16);
	ASSERT_STREQ(a, b);
	ASSERT(strcmp(a, c) != 0);
	ASSERT(strcmp(a, d) != 0);
}

TEST(test_kernel__config_is_target)
{
	ASSERT(kernel_config_is_target("defconfig"));
	ASSERT(kernel_config_is_target("tinyconfig"));
	ASSERT(kernel_config_is_target("x86_64_defconfig"));
	ASSERT(!kernel_config_is_target("running"));
	ASSERT(!kernel_config_is_target("arch/x86/configs/my.config"));
	ASSERT(kernel_config_is_target("allnoconfig"));
	/* Interactive targets would wait for input. */
	ASSERT(!kernel_config_is_target("config"));
	ASSERT(!kernel_config_is_target("menuconfig"));
	ASSERT(!kernel_config_is_target("oldconfig"));
	ASSERT(!kernel_config_is_target("../defconfig"));
}

TEST(test_kernel__source_plan)
{
	static const char a[] = "0123456789abcdef0123456789abcdef01234567",
	                  b[] = "89abcdef0123456789abcdef0123456789abcdef";
	char prev[41], clone[256], mark[512];

	/* No mark, or one that is not a commit id: export afresh. */
	ASSERT_INTEQ(kernel_source_plan(NULL, a, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_EXPORT);
	ASSERT_STREQ(prev, "");
	ASSERT_INTEQ(kernel_source_plan("0123\n", a, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_EXPORT);
	ASSERT_INTEQ(kernel_source_plan(
	                 "", a, "/k/trees/u-1.git", prev, clone, sizeof(clone)),
	    KERNEL_SRC_EXPORT);
	/* The commit is there already, from whichever clone. */
	snprintf(mark, sizeof(mark), "%s\n/k/trees/u-2.git\n", a);
	ASSERT_INTEQ(kernel_source_plan(mark, a, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_SAME);
	/* The next midpoint from the same clone: an update. */
	snprintf(mark, sizeof(mark), "%s\n/k/trees/u-1.git\n", a);
	ASSERT_INTEQ(kernel_source_plan(mark, b, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_UPDATE);
	ASSERT_STREQ(prev, a);
	ASSERT_STREQ(clone, "/k/trees/u-1.git");
	/* After a verification's revert (a clone of the daemon's mirror),
	 * the next commit of the tree's own clone: an update that reads the
	 * revert from the mirror's clone, never a fresh export (a whole
	 * kernel rebuilt). */
	snprintf(mark, sizeof(mark), "%s\n/k/trees/u-2.git\n", a);
	ASSERT_INTEQ(kernel_source_plan(mark, b, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_BORROW);
	ASSERT_STREQ(prev, a);
	ASSERT_STREQ(clone, "/k/trees/u-2.git");
	/* An older runner's mark names no clone: the update is tried from
	 * this one, as before. */
	snprintf(mark, sizeof(mark), "%s\n", a);
	ASSERT_INTEQ(kernel_source_plan(mark, b, "/k/trees/u-1.git", prev,
	                 clone, sizeof(clone)),
	    KERNEL_SRC_UPDATE);
	ASSERT_STREQ(clone, "");
	ASSERT_INTEQ(kernel_source_plan(
	                 a, b, "/k/trees/u-1.git", prev, clone, sizeof(clone)),
	    KERNEL_SRC_UPDATE);
	/* A clone path too long for the buffer is not cut into another. */
	snprintf(mark, sizeof(mark), "%s\n/k/trees/u-2.git\n", a);
	ASSERT_INTEQ(
	    kernel_source_plan(mark, b, "/k/trees/u-1.git", prev, clone, 8),
	    KERNEL_SRC_UPDATE);
	ASSERT_STREQ(clone, "");
}
