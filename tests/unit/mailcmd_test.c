/*
 * daemon/mailcmd: the pure parts, command lines and report ids.  What a
 * command does is t0806's (a daemon, an inbox and the SMTP server).
 */
#include <string.h>

#include "daemon/mailcmd.h"
#include "tests/unit/test.h"

TEST(test_mailcmd__lines)
{
	static const char body[] = "Thanks for the report.\n"
	                           "> #perfwatch invalid\n"
	                           "#perfwatch   retest runs=3  \r\n"
	                           "#perfwatchretest\n"
	                           " #perfwatch bisect\n"
	                           "#perfwatch\n"
	                           "#perfwatch fixed-by\x01 abc\n";
	struct mailcmd_line l[8];
	size_t n = mailcmd_parse(l, 8, body);

	/* Quoted, indented and glued lines are no commands. */
	ASSERT_INTEQ(n, 3);
	ASSERT_INTEQ(l[0].line, 3);
	ASSERT_STREQ(l[0].text, "retest runs=3");
	ASSERT_INTEQ(l[1].line, 6);
	ASSERT_STREQ(l[1].text, "");
	ASSERT_STREQ(l[2].text, "fixed-by  abc");
	ASSERT_INTEQ(mailcmd_parse(l, 1, body), 1);
	ASSERT_INTEQ(mailcmd_parse(l, 8, ""), 0);
}

TEST(test_mailcmd__report_ids)
{
	char sha[13], job[64];
	int64_t host = -1;

	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "perfwatch.49656677078f.slowprog.h1.2@example.org") == 0);
	ASSERT_STREQ(sha, "49656677078f");
	ASSERT_STREQ(job, "slowprog");
	ASSERT_INTEQ(host, 1);
	/* A job name with dots and a host 0. */
	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "perfwatch.0123456789ab.fio.read.4k.h0.1@x") == 0);
	ASSERT_STREQ(job, "fio.read.4k");
	ASSERT_INTEQ(host, 0);
	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "20191219-3-jose@example.org") == -1);
	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "perfwatch.0123456789ab.j.hx.1@x") == -1);
	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "perfwatch.0123456789ab.h1.1@x") == -1);
	ASSERT(mailcmd_report_id(sha, job, 4, &host,
	           "perfwatch.0123456789ab.long.h1.1@x") == -1);
	ASSERT(mailcmd_report_id(sha, job, sizeof(job), &host,
	           "perfwatch.command.0123456789abcdef@x") == -1);
}
