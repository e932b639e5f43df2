/*
 * daemon/mailcmd: the pure parts, command lines, report ids and each
 * command read and put in canonical form.  What a command does is
 * t0806's (a daemon, an inbox and the SMTP server).
 */
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "config/config.h"
#include "daemon/mailcmd.h"
#include "daemon/mailcmd_int.h"
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

/* parse LINE as sent by FROM: 0 and its canonical form in out, or -1
 * and why. */
static int
read_cmd(char *out, size_t n, const char *line)
{
	static struct daemon_config dc; /* no trees, no maintainers */
	struct mailcmd_cmd c;
	struct buf why = BUF_INIT(512);
	char words[96];
	int r;

	snprintf(words, sizeof(words), "%s", line);
	r = mailcmd_cmd_parse(&c, words, &dc, "ann@example.org", &why);
	if (r == 0)
		mailcmd_cmd_normal(out, n, &c);
	else
		snprintf(out, n, "%s", why.data);
	buf_release(&why);
	return r;
}

TEST(test_mailcmd__commands)
{
	static const struct {
		const char *line, *normal;
	} ok[] = {
		{ "invalid", "invalid" },
		{ "ignore", "invalid" },
		{ "expected", "expected" },
		{ "fixed-by 0123abc", "fixed-by 0123abc" },
		{ "fixed-by\t0123456789abcdef0123456789abcdef01234567",
		    "fixed-by 0123456789abcdef0123456789abcdef01234567" },
		{ "triage acknowledged", "triage acknowledged" },
		{ "retest", "retest" },
		{ "retest runs=8", "retest runs=8" },
		{ "retest runs=08", "retest runs=8" },
		{ "retest hosts=a,b runs=8", "retest runs=8 hosts=a,b" },
		{ "retest   runs=8 \t hosts=a,b", "retest runs=8 hosts=a,b" },
		{ "retest hosts=big", "retest hosts=big" },
		{ "bisect", "bisect" },
		{ "test", "test" },
		{ "test https://git.example.org/linux.git fix-1",
		    "test https://git.example.org/linux.git fix-1" },
	};
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "", "no command after #perfwatch" },
		{ "frobnicate", "unknown command; known:" },
		{ "invalid now", "unknown command; known:" },
		{ "bisect 3", "unknown command; known:" },
		{ "fixed-by", "fixed-by takes one commit id" },
		{ "fixed-by 012345", "fixed-by takes one commit id" },
		{ "fixed-by 0123ABC", "fixed-by takes one commit id" },
		{ "fixed-by abcdef0 abcdef1", "fixed-by takes one commit id" },
		{ "triage gone", "triage takes one state" },
		{ "retest runs=0", "retest takes runs=N" },
		{ "retest runs=1001", "retest takes runs=N" },
		{ "retest runs=3 runs=4", "retest takes runs=N" },
		{ "retest hosts=a, runs=2", "retest takes runs=N" },
		{ "retest hosts=a hosts=b", "retest takes runs=N" },
		{ "retest hosts=<b>", "retest takes runs=N" },
		{ "retest runs=2 hosts=a x", "retest takes runs=N" },
		{ "test https://git.example.org/x.git",
		    "test takes a git URL" },
		{ "test file:///etc master", "test fetches only from" },
		{ "test http://127.0.0.1/x.git master", "test fetches only" },
		{ "test https://localhost/x.git master", "test fetches only" },
		{ "test https://u@git.example.org/x master", "test fetches" },
		{ "test https://git.example.org/x -b", "test: not a branch" },
		{ "test https://git.example.org/x a..b", "test: not a branch" },
	};
	char out[MAILCMD_NORMAL];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ASSERT_MSG(read_cmd(out, sizeof(out), ok[i].line) == 0,
		    "%s: %s", ok[i].line, out);
		ASSERT_STREQ(out, ok[i].normal);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_MSG(read_cmd(out, sizeof(out), bad[i].line) == -1,
		    "%s read as %s", bad[i].line, out);
		ASSERT_MSG(strncmp(out, bad[i].why, strlen(bad[i].why)) == 0,
		    "%s: %s", bad[i].line, out);
	}
}

TEST(test_mailcmd__triage_notes)
{
	static struct daemon_config dc;
	struct mailcmd_cmd c;
	struct buf why = BUF_INIT(512);
	char words[96] = "fixed-by abcdef0";

	ASSERT(mailcmd_cmd_parse(&c, words, &dc, "boss@x", &why) == 0);
	ASSERT_INTEQ(c.op, MAILCMD_TRIAGE);
	ASSERT_STREQ(c.state, "fixed");
	ASSERT_STREQ(c.note, "fixed by abcdef0 (by mail from boss@x)");
	snprintf(words, sizeof(words), "%s", "expected");
	ASSERT(mailcmd_cmd_parse(&c, words, &dc, "boss@x", &why) == 0);
	ASSERT_STREQ(c.state, "acknowledged");
	ASSERT_STREQ(c.note, "expected (by mail from boss@x)");
	snprintf(words, sizeof(words), "%s", "retest hosts=a,b runs=2");
	ASSERT(mailcmd_cmd_parse(&c, words, &dc, "boss@x", &why) == 0);
	ASSERT_INTEQ(c.op, MAILCMD_RETEST);
	ASSERT_INTEQ(c.runs, 2);
	ASSERT_STREQ(c.labels, "[\"a\",\"b\"]");
	buf_release(&why);
}
