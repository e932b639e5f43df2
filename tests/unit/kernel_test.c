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
	char id[48], other[48];

	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, "0a1b2c3d4e5f"), 0);
	ASSERT_STREQ(id, "-pw17-0a1b2c3d4e5f");
	/* Job 17 of another database is another build id. */
	ASSERT_INTEQ(
	    kernel_build_id(other, sizeof(other), 17, "77aa00bb11cc"), 0);
	ASSERT(strcmp(id, other) != 0);
	ASSERT_INTEQ(kernel_build_id(
	                 id, sizeof(id), 1234567890123LL, "ffffffffffffffff"),
	    0);
	ASSERT_STREQ(id, "-pw1234567890123-ffffffffffffffff");
	/* An older daemon sends no instance. */
	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, NULL), 0);
	ASSERT_STREQ(id, "-pw17");
	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, ""), 0);
	ASSERT_STREQ(id, "-pw17");
	/* It goes into make's argv and the boot state file: hex only. */
	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, "0A1B"), -1);
	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, "ab cd"), -1);
	ASSERT_INTEQ(kernel_build_id(id, sizeof(id), 17, "ab\ncd"), -1);
	ASSERT_INTEQ(
	    kernel_build_id(id, sizeof(id), 17, "0123456789abcdef0"), -1);
	ASSERT_STREQ(id, "-pw17");
	/* The booted kernel is checked against the whole id. */
	{
		struct buf why = BUF_INIT(1024);

		kernel_build_id(id, sizeof(id), 17, "0a1b2c3d4e5f");
		ASSERT_INTEQ(
		    kernel_version_check("Linux version "
		                         "6.1.192-pw17-0a1b2c3d4e5f (x)",
		        id, &why),
		    0);
		ASSERT_INTEQ(kernel_version_check(
		                 "Linux version 6.1.192-pw17-77aa00bb11cc (x)",
		                 id, &why),
		    -1);
		ASSERT_INTEQ(kernel_version_check(
		                 "Linux version 6.1.192-pw17 (x)", id, &why),
		    -1);
		buf_release(&why);
	}
}

/* A shared build's id names a directory under kernel_tree/shared/. */
TEST(test_kernel__shared_build_id)
{
	ASSERT(kernel_shared_build_id_ok("-pwb4-0a1b2c3d4e5f"));
	ASSERT(kernel_shared_build_id_ok("-pwb1234567890-ffffffffffffffff"));
	ASSERT(!kernel_shared_build_id_ok("-pw4-0a1b2c3d4e5f"));
	ASSERT(!kernel_shared_build_id_ok("-pwb4"));
	ASSERT(!kernel_shared_build_id_ok("-pwb4-"));
	ASSERT(!kernel_shared_build_id_ok("-pwb04-0a1b"));
	ASSERT(!kernel_shared_build_id_ok("-pwb4-0A1B"));
	ASSERT(!kernel_shared_build_id_ok("-pwb4-0a1b/.."));
	ASSERT(!kernel_shared_build_id_ok("-pwb4-0123456789abcdef0"));
	ASSERT(!kernel_shared_build_id_ok("-pwb-0a1b"));
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

	kernel_config_key(a, "tinyconfig", NULL, &frag, NULL);
	kernel_config_key(b, "tinyconfig", NULL, &frag, "gcc");
	kernel_config_key(c, "tinyconfig", NULL, &f2, NULL);
	kernel_config_key(d, "configs/x.config", "CONFIG_A=y\n", &frag, NULL);
	ASSERT_INTEQ(strlen(a), 16);
	/* gcc named is gcc by default: the build trees keep their key. */
	ASSERT_STREQ(a, b);
	ASSERT(strcmp(a, c) != 0);
	ASSERT(strcmp(a, d) != 0);
	/* Another compiler builds in a tree of its own. */
	kernel_config_key(b, "tinyconfig", NULL, &frag, "clang-17");
	ASSERT(strcmp(a, b) != 0);
	kernel_config_key(c, "tinyconfig", NULL, &frag, "gcc-12");
	ASSERT(strcmp(a, c) != 0 && strcmp(b, c) != 0);
}

TEST(test_kernel__compiler_ok)
{
	ASSERT(kernel_compiler_ok("gcc"));
	ASSERT(kernel_compiler_ok("clang-17"));
	ASSERT(kernel_compiler_ok("x86_64-linux-gnu-gcc-12"));
	ASSERT(kernel_compiler_ok("g++"));
	ASSERT(!kernel_compiler_ok(NULL));
	ASSERT(!kernel_compiler_ok(""));
	ASSERT(!kernel_compiler_ok("-gcc"));
	ASSERT(!kernel_compiler_ok("ccache gcc"));
	ASSERT(!kernel_compiler_ok("gcc;rm"));
	ASSERT(!kernel_compiler_ok("/usr/bin/gcc"));
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

TEST(test_kernel__config_input_path)
{
	static const char *const in[] = { "Kconfig", "init/Kconfig",
		"mm/Kconfig.debug", "arch/x86/Kconfig.cpu", "Makefile",
		"scripts/Kconfig.include", "scripts/cc-version.sh",
		"scripts/kconfig/merge_config.sh",
		"scripts/kconfig/lxdialog/x.c", "kernel/configs/tiny.config",
		"arch/x86/configs/tiny.config", "arch/x86/Makefile", NULL };
	static const char *const out[] = { "mm/memcontrol.c", "mm/Makefile",
		"scripts/mod/modpost.c", "arch/x86/kernel/Makefile",
		"arch/x86/boot/Makefile.x", "arch/Makefile.x", "kernel/fork.c",
		"Documentation/admin-guide/cgroup-v2.rst", NULL };
	size_t i;

	for (i = 0; in[i] != NULL; i++)
		ASSERT_MSG(kernel_config_input_path(in[i]), "%s", in[i]);
	for (i = 0; out[i] != NULL; i++)
		ASSERT_MSG(!kernel_config_input_path(out[i]), "%s", out[i]);
}

/* The inputs' hash of a small tree under test_tmpdir(). */
static void
inputs_of(char out[65], const char *root, const char *tools, const char *text,
    const struct strlist *f)
{
	struct buf why = BUF_INIT(1024);

	if (kernel_config_inputs(
	        out, root, tools, "tinyconfig", text, f, &why) != 0) {
		test_fail(__FILE__, __LINE__, "%s", why.data);
		out[0] = '\0';
	}
	buf_release(&why);
}

TEST(test_kernel__config_inputs)
{
	char root[512], h0[65], h[65];
	static char *v2[] = { "CONFIG_MEMCG=y" };
	static const struct strlist f2 = { v2, 1 };
	const char *tools = "gcc gcc (Debian 12.2.0-14) 12.2.0 (exit 0)\n";
	struct buf why = BUF_INIT(1024);

	snprintf(root, sizeof(root), "%s/ktree", test_tmpdir());
	test_write_file(root, "/Makefile", "VERSION = 6\n");
	test_write_file(root, "/init/Kconfig", "config MEMCG\n\tbool\n");
	test_write_file(root, "/mm/memcontrol.c", "int charge;\n");
	test_write_file(
	    root, "/scripts/kconfig/merge_config.sh", "#!/bin/sh\n");
	test_write_file(root, "/pw-obj/.config", "CONFIG_MEMCG=y\n");
	test_write_file(root, "/pw-obj/Kconfig", "an object, not a source\n");
	test_write_file(root, "/.pw-commit", "x\n");
	inputs_of(h0, root, tools, NULL, &frag);
	ASSERT_INTEQ(strlen(h0), 64);
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT_STREQ(h, h0);
	/* What the config steps do not read changes nothing: a source
	 * file, the object tree, the commit mark. */
	test_write_file(root, "/mm/memcontrol.c", "int charge; /* slower */\n");
	test_write_file(root, "/pw-obj/.config", "CONFIG_MEMCG=n\n");
	test_write_file(root, "/pw-obj/Kconfig", "another object\n");
	test_write_file(root, "/.pw-commit", "y\n");
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT_STREQ(h, h0);
	/* A Kconfig file changed, then changed back. */
	test_write_file(root, "/init/Kconfig", "config MEMCG\n\ttristate\n");
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT(strcmp(h, h0) != 0);
	test_write_file(root, "/init/Kconfig", "config MEMCG\n\tbool\n");
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT_STREQ(h, h0);
	/* Each other input. */
	test_write_file(
	    root, "/scripts/kconfig/merge_config.sh", "#!/bin/bash\n");
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT(strcmp(h, h0) != 0);
	test_write_file(
	    root, "/scripts/kconfig/merge_config.sh", "#!/bin/sh\n");
	inputs_of(h, root, "gcc gcc (Debian 13.1.0-1) 13.1.0 (exit 0)\n", NULL,
	    &frag);
	ASSERT(strcmp(h, h0) != 0);
	inputs_of(h, root, tools, NULL, &f2);
	ASSERT(strcmp(h, h0) != 0);
	inputs_of(h, root, tools, "CONFIG_A=y\n", &frag);
	ASSERT(strcmp(h, h0) != 0);
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT_STREQ(h, h0);
	/* A new Kconfig file (a new directory sourced). */
	test_write_file(root, "/mm/new/Kconfig", "config NEW\n");
	inputs_of(h, root, tools, NULL, &frag);
	ASSERT(strcmp(h, h0) != 0);
	/* A tree that is not there is an error naming it. */
	ASSERT_INTEQ(kernel_config_inputs(h, "/nonexistent/pw", tools,
	                 "tinyconfig", NULL, &frag, &why),
	    -1);
	ASSERT(strstr(why.data, "/nonexistent/pw") != NULL);
	buf_release(&why);
}

TEST(test_kernel__config_reuse)
{
	static const char in[] = "1111111111111111111111111111111111111111"
	                         "111111111111111111111111",
	                  cs[] = "2222222222222222222222222222222222222222"
	                         "222222222222222222222222",
	                  other[] = "3333333333333333333333333333333333333333"
	                            "333333333333333333333333";
	char rec[256];

	snprintf(rec, sizeof(rec), "inputs %s\nconfig_sha256 %s\n", in, cs);
	ASSERT_INTEQ(kernel_config_reuse(rec, in, cs), 1);
	/* No record (a tree of an older runner, or a failed step). */
	ASSERT_INTEQ(kernel_config_reuse(NULL, in, cs), 0);
	/* No .config, or one that changed since the steps wrote it. */
	ASSERT_INTEQ(kernel_config_reuse(rec, in, NULL), 0);
	ASSERT_INTEQ(kernel_config_reuse(rec, in, other), 0);
	/* Other inputs. */
	ASSERT_INTEQ(kernel_config_reuse(rec, other, cs), 0);
	/* A record cut short or garbled is no record. */
	snprintf(rec, sizeof(rec), "inputs %s\n", in);
	ASSERT_INTEQ(kernel_config_reuse(rec, in, cs), 0);
	snprintf(rec, sizeof(rec), "inputs %.20s\nconfig_sha256 %s\n", in, cs);
	ASSERT_INTEQ(kernel_config_reuse(rec, in, cs), 0);
	ASSERT_INTEQ(kernel_config_reuse("", in, cs), 0);
}

TEST(test_kernel__tool_versions)
{
	struct buf b = BUF_INIT(8192);
	static const char *const want[] = { "gcc ", "ld ", "pahole ", "rustc ",
		"bindgen ", NULL };
	const char *p;
	size_t i;

	kernel_tool_versions(&b, NULL);
	/* One line per tool, in order: a version line or "none". */
	for (i = 0, p = b.data; want[i] != NULL; i++) {
		ASSERT_MSG(strncmp(p, want[i], strlen(want[i])) == 0, "%s", p);
		ASSERT((p = strchr(p, '\n')) != NULL);
		p++;
	}
	ASSERT_STREQ(p, "");
	/* The compiler of this build is there and says its version. */
	ASSERT(strncmp(b.data, "gcc none", 8) != 0);
	buf_release(&b);
}
