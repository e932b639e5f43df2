#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "runners/bootstate.h"
#include "tests/unit/test.h"

static void
sample(struct bootstate *st)
{
	memset(st, 0, sizeof(*st));
	st->job = 17;
	st->attempt = 2;
	st->lease_expires = 1733000060;
	snprintf(st->step, sizeof(st->step), "boot");
	snprintf(st->method, sizeof(st->method), "kexec");
	st->round = 2;
	st->boot = 3;
	st->done[0] = st->done[1] = st->done[5] = 1;
	snprintf(st->build_id, sizeof(st->build_id), "-pw17");
	snprintf(st->release, sizeof(st->release), "6.1.158-pw17");
	snprintf(st->image, sizeof(st->image), "/k/images/a-b/bzImage");
	st->deadline = 1733000660;
	snprintf(st->config_sha256, sizeof(st->config_sha256), "%064d", 7);
	st->cached = 1;
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

TEST(test_bootstate__round_trip)
{
	struct bootstate a, b;
	struct buf why = BUF_INIT(1024);
	char path[512];

	snprintf(path, sizeof(path), "%s/boot.state", test_tmpdir());
	sample(&a);
	ASSERT_INTEQ(bootstate_write(path, &a, &why), 0);
	ASSERT_INTEQ(bootstate_read(&b, path, &why), 0);
	ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	/* No runs done yet is an empty list, not a corrupt file. */
	memset(a.done, 0, sizeof(a.done));
	ASSERT_INTEQ(bootstate_write(path, &a, &why), 0);
	ASSERT_INTEQ(bootstate_read(&b, path, &why), 0);
	ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	/* A downloaded image keeps its shared build over the boot. */
	snprintf(a.build_id, sizeof(a.build_id), "-pwb4-0a1b2c3d4e5f");
	a.shared_build = 4;
	ASSERT_INTEQ(bootstate_write(path, &a, &why), 0);
	ASSERT_INTEQ(bootstate_read(&b, path, &why), 0);
	ASSERT_INTEQ(b.shared_build, 4);
	ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	buf_release(&why);
}

/* A state an older runner wrote (no config_sha256, no cached) resumes;
 * what it does not say is unknown, never made up. */
TEST(test_bootstate__older_state_kernel_facts_unknown)
{
	struct bootstate b;
	struct buf why = BUF_INIT(1024);
	char path[512];

	snprintf(path, sizeof(path), "%s/old.state", test_tmpdir());
	put(path,
	    "perfwatch-boot-state 1\njob 17\nattempt 1\n"
	    "lease_expires 5\nstep boot\nmethod kexec\nround 1\nboot 1\n"
	    "runs_done \nbuild_id -pw17\nrelease 6.1.158-pw17\n"
	    "image /k/bzImage\ndeadline 9\n");
	ASSERT_INTEQ(bootstate_read(&b, path, &why), 0);
	ASSERT_STREQ(b.config_sha256, "");
	ASSERT_INTEQ(b.cached, -1);
	ASSERT_STREQ(b.build_id, "-pw17");
	/* Written back, unknown stays unknown (no "cached" line). */
	ASSERT_INTEQ(bootstate_write(path, &b, &why), 0);
	memset(&b, 0, sizeof(b));
	ASSERT_INTEQ(bootstate_read(&b, path, &why), 0);
	ASSERT_INTEQ(b.cached, -1);
	ASSERT_STREQ(b.config_sha256, "");
	/* A bad value of an optional line is still corrupt. */
	put(path,
	    "perfwatch-boot-state 1\njob 17\nattempt 1\n"
	    "lease_expires 5\nstep boot\nmethod kexec\nround 1\nboot 1\n"
	    "runs_done \nbuild_id -pw17\nrelease 6.1.158-pw17\n"
	    "image /k/bzImage\ndeadline 9\ncached maybe\n");
	ASSERT_INTEQ(bootstate_read(&b, path, &why), -1);
	ASSERT_MSG(
	    strstr(why.data, "old.state:14: corrupt") != NULL, "%s", why.data);
	buf_release(&why);
}

TEST(test_bootstate__missing_and_corrupt)
{
	struct bootstate b;
	struct buf why = BUF_INIT(1024);
	char path[512];

	snprintf(path, sizeof(path), "%s/none.state", test_tmpdir());
	ASSERT_INTEQ(bootstate_read(&b, path, &why), ERR_NOTFOUND);
	snprintf(path, sizeof(path), "%s/bad.state", test_tmpdir());
	put(path, "perfwatch-boot-state 1\njob 17\nattempt x\n");
	ASSERT_INTEQ(bootstate_read(&b, path, &why), -1);
	ASSERT_MSG(
	    strstr(why.data, "bad.state:3: corrupt") != NULL, "%s", why.data);
	buf_reset(&why);
	put(path, "perfwatch-boot-state 1\njob 17\n");
	ASSERT_INTEQ(bootstate_read(&b, path, &why), -1);
	ASSERT(strstr(why.data, "incomplete") != NULL);
	buf_reset(&why);
	put(path, "something else\n");
	ASSERT_INTEQ(bootstate_read(&b, path, &why), -1);
	ASSERT(strstr(why.data, "bad.state:1: corrupt") != NULL);
	buf_release(&why);
}

TEST(test_bootstate__line_breaks_refused)
{
	struct bootstate a;
	struct buf why = BUF_INIT(1024);
	char path[512];

	snprintf(path, sizeof(path), "%s/nl.state", test_tmpdir());
	sample(&a);
	snprintf(a.image, sizeof(a.image), "/x\njob 1");
	ASSERT_INTEQ(bootstate_write(path, &a, &why), -1);
	ASSERT(strstr(why.data, "line break") != NULL);
	buf_release(&why);
}

TEST(test_bootstate__decisions)
{
	struct bootstate st;
	struct buf why = BUF_INIT(1024);
	const char right[] = "Linux version 6.1.158-pw17 (perfwatch@x) #1\n",
	           wrong[] = "Linux version 6.1.0-13-amd64 (debian@x) #1\n";

	sample(&st);
	ASSERT_INTEQ(bootstate_decide(&st, 17, right, st.deadline - 5, &why),
	    BOOT_RESUME);
	ASSERT_INTEQ(bootstate_decide(&st, 17, wrong, st.deadline - 5, &why),
	    BOOT_WRONG_KERNEL);
	ASSERT_MSG(strstr(why.data, "booted 6.1.0-13-amd64") != NULL &&
	        strstr(why.data, "-pw17") != NULL,
	    "%s", why.data);
	buf_reset(&why);
	ASSERT_INTEQ(bootstate_decide(&st, 18, right, st.deadline - 5, &why),
	    BOOT_OTHER_JOB);
	ASSERT(strstr(why.data, "job 17") != NULL);
	buf_reset(&why);
	ASSERT_INTEQ(bootstate_decide(&st, 17, right, st.deadline + 30, &why),
	    BOOT_TOO_LATE);
	ASSERT(strstr(why.data, "30 s after") != NULL);
	buf_release(&why);
}
