#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "runners/qemu.h"
#include "tests/unit/test.h"

/* "hi\n" and "oops" in hex, as the guest prints them. */
static const char console[] =
    "[    0.000000] Linux version 6.1.158-pw3\r\n"
    "PWG1 version 4c696e75782076657273696f6e20362e312e3135382d707733\r\n"
    "PWG1 metric 0 memcg.anon_delta 4096 B\r\n"
    "PWG1 out 0 6869\r\n"
    "[    1.1] random: crng init done PWG1 out 0 0a\r\n"
    "PWG1 err 0 6f6f7073\r\n"
    "PWG1 end 0 1 0 0 0 2.500000 3 4\r\n"
    "PWG1 end 1 0 0 9 1 120.000000 0 0\r\n"
    "PWG1 done\r\n";

TEST(test_qemu__parse_console)
{
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);

	ASSERT_INTEQ(
	    qemu_parse_console(&q, console, strlen(console), 4096, &why), 0);
	ASSERT(q.done);
	ASSERT_STREQ(q.version, "Linux version 6.1.158-pw3");
	ASSERT_INTEQ(q.nruns, 2);
	ASSERT_INTEQ(q.runs[0].index, 0);
	ASSERT(q.runs[0].ended);
	/* A kernel message before a frame on the same line is skipped. */
	ASSERT_STREQ(q.runs[0].r.out.data, "hi\n");
	ASSERT_STREQ(q.runs[0].r.err.data, "oops");
	ASSERT(q.runs[0].r.exited);
	ASSERT_INTEQ(q.runs[0].r.code, 0);
	ASSERT_NEAR(q.runs[0].r.duration_s, 2.5, 1e-9);
	ASSERT_INTEQ(q.runs[0].nm, 1);
	ASSERT_STREQ(q.runs[0].m[0].name, "memcg.anon_delta");
	ASSERT_NEAR(q.runs[0].m[0].value, 4096, 0);
	ASSERT(!q.runs[1].r.exited);
	ASSERT_INTEQ(q.runs[1].r.signo, 9);
	ASSERT(q.runs[1].r.timed_out);
	ASSERT(strstr(q.console.data, "Linux version") != NULL);
	qemu_result_release(&q);
	buf_release(&why);
}

TEST(test_qemu__lost_chunk_is_an_error)
{
	static const char c[] = "PWG1 out 0 6869\nPWG1 end 0 1 0 0 0 1.0 5 0\n"
	                        "PWG1 done\n";
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);

	ASSERT_INTEQ(qemu_parse_console(&q, c, strlen(c), 4096, &why), -1);
	ASSERT_STREQ(why.data,
	    "console line 2: run 0: 5 stdout bytes announced, 2 arrived "
	    "(console output lost)");
	qemu_result_release(&q);
	buf_release(&why);
}

TEST(test_qemu__bad_lines)
{
	static const char *bad[] = { "PWG1 out 0 6g\n", "PWG1 out x 00\n",
		"PWG1 end 0 1\n", "PWG1 bogus 1\n", "PWG1 out 0 abc\n" };
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		buf_reset(&why);
		ASSERT_MSG(qemu_parse_console(
		               &q, bad[i], strlen(bad[i]), 4096, &why) == -1,
		    "accepted %s", bad[i]);
		ASSERT(strncmp(why.data, "console line 1: bad guest line",
		           30) == 0);
		qemu_result_release(&q);
	}
	buf_release(&why);
}

TEST(test_qemu__output_cap)
{
	static const char c[] = "PWG1 out 0 6162636465\n"
	                        "PWG1 end 0 1 0 0 0 1.0 5 0\nPWG1 done\n";
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);

	/* 3 bytes kept of 5: truncated, not a framing error. */
	ASSERT_INTEQ(qemu_parse_console(&q, c, strlen(c), 3, &why), 0);
	ASSERT(q.runs[0].r.out_truncated);
	ASSERT(q.runs[0].r.out.len <= 3);
	qemu_result_release(&q);
	buf_release(&why);
}

TEST(test_qemu__no_done)
{
	static const char c[] = "Kernel panic - not syncing: No init found\n";
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);

	ASSERT_INTEQ(qemu_parse_console(&q, c, strlen(c), 4096, &why), 0);
	ASSERT(!q.done);
	ASSERT(strstr(q.console.data, "No init found") != NULL);
	qemu_result_release(&q);
	buf_release(&why);
}

TEST(test_qemu__is_static)
{
	/* busybox-static is installed for boot: qemu (scripts/deps.extra). */
	ASSERT_INTEQ(qemu_is_static("/bin/busybox"), 1);
	ASSERT_INTEQ(qemu_is_static("/bin/ls"), 0);
	ASSERT_INTEQ(qemu_is_static("/etc/passwd"), -1);
	ASSERT_INTEQ(qemu_is_static("/nonexistent"), -1);
}

static int probes;
static int
probe_yes(void)
{
	probes++;
	return 1;
}
static int
probe_no(void)
{
	probes++;
	return 0;
}

TEST(test_qemu__accel_kvm_that_fails_is_tried_once)
{
	/* /dev/kvm creates a VM here, and qemu then fails to run it. */
	struct qemu_accel ac;
	char d[320];
	int boot;

	memset(&ac, 0, sizeof(ac));
	probes = 0;
	ASSERT_INTEQ(qemu_accel_pick(&ac, probe_yes), 1);
	ASSERT_INTEQ(ac.state, QEMU_ACCEL_KVM_UNTRIED);
	/* What qemu said here, on two lines: one line in the logs. */
	ASSERT_INTEQ(qemu_accel_after_kvm(&ac, 1,
	                 "qemu-system-x86_64: error: failed to set MSR 0x10a "
	                 "to 0x69\nqemu-system-x86_64: kvm.c:3183: "
	                 "kvm_buf_set_msrs: Assertion failed.\n"),
	    1);
	qemu_accel_describe(d, sizeof(d), &ac);
	ASSERT_STREQ(d,
	    "TCG: qemu with KVM failed: qemu-system-x86_64: error: failed to "
	    "set MSR 0x10a to 0x69 qemu-system-x86_64: kvm.c:3183: "
	    "kvm_buf_set_msrs: Assertion failed.");
	/* Every later boot of the process: TCG, no probe, no KVM try. */
	for (boot = 2; boot <= 5; boot++)
		ASSERT_INTEQ(qemu_accel_pick(&ac, probe_yes), 0);
	ASSERT_INTEQ(probes, 1);
}

TEST(test_qemu__accel_probe_once)
{
	struct qemu_accel ac;
	char d[320];
	int boot;

	/* No usable /dev/kvm: TCG from the first boot, probed once. */
	memset(&ac, 0, sizeof(ac));
	probes = 0;
	for (boot = 1; boot <= 4; boot++)
		ASSERT_INTEQ(qemu_accel_pick(&ac, probe_no), 0);
	ASSERT_INTEQ(probes, 1);
	qemu_accel_describe(d, sizeof(d), &ac);
	ASSERT_STREQ(d, "TCG: /dev/kvm cannot create a VM here");
	/* KVM that runs: kept, probed once. */
	memset(&ac, 0, sizeof(ac));
	probes = 0;
	qemu_accel_describe(d, sizeof(d), &ac);
	ASSERT_STREQ(d, "not decided yet");
	ASSERT_INTEQ(qemu_accel_pick(&ac, probe_yes), 1);
	ASSERT_INTEQ(qemu_accel_after_kvm(&ac, 0, ""), 0);
	for (boot = 2; boot <= 4; boot++)
		ASSERT_INTEQ(qemu_accel_pick(&ac, probe_yes), 1);
	ASSERT_INTEQ(probes, 1);
	qemu_accel_describe(d, sizeof(d), &ac);
	ASSERT_STREQ(d, "KVM");
}
