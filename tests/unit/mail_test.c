/*
 * daemon/mail: hand-written messages, then the real cgroups list archive
 * (tests/fixtures/inbox, 3,000 messages) read with the git command line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "daemon/mail.h"
#include "tests/unit/test.h"

static const char patch1[] =
    "From: =?UTF-8?q?Jos=C3=A9_M=C3=BCller?= <jose@example.org>\n"
    "Subject: [PATCH v3 2/7] mm: memcontrol: batch\n"
    " the socket stats\n"
    "Date: Thu, 19 Dec 2019 15:07:16 -0500\n"
    "Message-Id: <20191219-3-jose@example.org>\n"
    "In-Reply-To: <20191219-1-jose@example.org>\n"
    "References: <old@x> <20191219-1-jose@example.org>\n"
    "\n"
    "Batch the updates.\n"
    "\n"
    "Signed-off-by: Jose <jose@example.org>\n"
    "---\n"
    " mm/memcontrol.c | 2 +-\n"
    "\n"
    "diff --git a/mm/memcontrol.c b/mm/memcontrol.c\n"
    "--- a/mm/memcontrol.c\n"
    "+++ b/mm/memcontrol.c\n"
    "@@ -1 +1 @@\n"
    "-a\n"
    "+b\n"
    "\n"
    "base-commit: 0123456789abcdef0123456789abcdef01234567\n"
    "-- \n"
    "2.24.1\n";

TEST(test_mail__parse_patch)
{
	struct mail_msg m;
	struct err e = { 0 };

	ASSERT_MSG(mail_parse(&m, patch1, sizeof(patch1) - 1, 1, &e) == 0, "%s",
	    err_msg(&e));
	ASSERT_STREQ(
	    m.subject, "[PATCH v3 2/7] mm: memcontrol: batch the socket stats");
	ASSERT_STREQ(m.from, "Jos\xc3\xa9 M\xc3\xbcller <jose@example.org>");
	ASSERT_STREQ(m.from_name, "Jos\xc3\xa9 M\xc3\xbcller");
	ASSERT_STREQ(m.from_email, "jose@example.org");
	ASSERT_STREQ(m.message_id, "20191219-3-jose@example.org");
	ASSERT_STREQ(m.in_reply_to, "20191219-1-jose@example.org");
	ASSERT_INTEQ(m.nrefs, 2);
	ASSERT_STREQ(m.refs[0], "old@x");
	ASSERT_INTEQ(m.date, 1576786036);
	ASSERT_INTEQ(m.tz, -300);
	ASSERT(m.tag.patch && !m.tag.reply && !m.tag.rfc);
	ASSERT_INTEQ(m.tag.version, 3);
	ASSERT_INTEQ(m.tag.seq, 2);
	ASSERT_INTEQ(m.tag.total, 7);
	ASSERT_STREQ(m.tag.title, "mm: memcontrol: batch the socket stats");
	ASSERT_STREQ(m.message,
	    "Batch the updates.\n\nSigned-off-by: Jose <jose@example.org>");
	ASSERT(m.patch_off > 0);
	ASSERT(strncmp(m.body + m.patch_off, "diff --git a/mm", 15) == 0);
	ASSERT_STREQ(m.base_commit, "0123456789abcdef0123456789abcdef01234567");
	ASSERT(mail_is_patch(&m));
	mail_msg_release(&m);
	/* Stored with its mbox "From " line (format-patch files). */
	{
		char *f =
		    xasprintf("From 1234 Mon Sep 17 00:00:00 2001\n%s", patch1);

		ASSERT(mail_parse(&m, f, strlen(f), 0, &e) == 0);
		ASSERT_STREQ(m.message_id, "20191219-3-jose@example.org");
		ASSERT(mail_is_patch(&m));
		mail_msg_release(&m);
		free(f);
	}
}

TEST(test_mail__subject_tags)
{
	struct mail_subject s;

	mail_subject_parse(&s, "[RFC PATCH net-next v2 0/3] net: foo");
	ASSERT(s.rfc && s.patch && !s.reply && !s.resend);
	ASSERT_INTEQ(s.version, 2);
	ASSERT_INTEQ(s.seq, 0);
	ASSERT_INTEQ(s.total, 3);
	ASSERT_STREQ(s.prefix, "net-next");
	ASSERT_STREQ(s.title, "net: foo");
	mail_subject_release(&s);

	mail_subject_parse(&s, "[PATCH] mm: one");
	ASSERT(s.patch);
	ASSERT_INTEQ(s.version, 1);
	ASSERT_INTEQ(s.seq, 1);
	ASSERT_INTEQ(s.total, 1);
	ASSERT_STREQ(s.title, "mm: one");
	mail_subject_release(&s);

	mail_subject_parse(&s, "[PATCH RESEND] mm: two");
	ASSERT(s.patch && s.resend);
	ASSERT_STREQ(s.title, "mm: two");
	mail_subject_release(&s);

	mail_subject_parse(&s, "[PATCH v2 0/2 RESEND] cgroup: x");
	ASSERT(s.patch && s.resend);
	ASSERT_INTEQ(s.seq, 0);
	ASSERT_INTEQ(s.total, 2);
	mail_subject_release(&s);

	mail_subject_parse(&s, "Re: RE: [PATCH v4 3/5] mm: three");
	ASSERT(s.patch && s.reply);
	ASSERT_INTEQ(s.version, 4);
	ASSERT_STREQ(s.title, "mm: three");
	mail_subject_release(&s);

	mail_subject_parse(&s, "[LSF/MM TOPIC] memcg");
	ASSERT(!s.patch);
	ASSERT_STREQ(s.prefix, "LSF/MM TOPIC");
	mail_subject_release(&s);

	/* Branch tags, slashes included; not AUTOSEL or a version. */
	mail_subject_parse(
	    &s, "[PATCH cgroup/for-7.0-fixes] selftests/cgroup: x");
	ASSERT(s.patch && s.seq == 1 && s.total == 1);
	ASSERT_STREQ(s.branch, "cgroup/for-7.0-fixes");
	ASSERT_STREQ(s.title, "selftests/cgroup: x");
	mail_subject_release(&s);
	mail_subject_parse(&s, "[PATCH mm-unstable v3 2/5] mm: memcg: y");
	ASSERT(s.version == 3 && s.seq == 2 && s.total == 5);
	ASSERT_STREQ(s.branch, "mm-unstable");
	mail_subject_release(&s);
	mail_subject_parse(&s, "[RFC PATCH net-next] net: z");
	ASSERT(s.rfc && s.patch);
	ASSERT_STREQ(s.branch, "net-next");
	mail_subject_release(&s);
	mail_subject_parse(&s, "[PATCH AUTOSEL 4.19 29/34] cpuset: w");
	ASSERT_STREQ(s.branch, "");
	ASSERT_STREQ(s.prefix, "AUTOSEL 4.19");
	mail_subject_release(&s);
	mail_subject_parse(&s, "[PATCH v2 1/3] plain");
	ASSERT_STREQ(s.branch, "");
	mail_subject_release(&s);
	/* A PATCHSET is a cover letter whose count the patches give. */
	mail_subject_parse(&s, "[PATCHSET v2 block/for-next] blk: stats");
	ASSERT(s.patch && s.set && s.version == 2);
	ASSERT_INTEQ(s.seq, 0);
	ASSERT_INTEQ(s.total, 0);
	ASSERT_STREQ(s.branch, "block/for-next");
	mail_subject_release(&s);

	mail_subject_parse(&s, "[PATCH 9/3] nonsense counters");
	ASSERT_INTEQ(s.seq, 1);
	ASSERT_INTEQ(s.total, 1);
	mail_subject_release(&s);
}

TEST(test_mail__encoded_words)
{
	static const char msg[] =
	    "Subject: =?ISO-8859-1?B?SGVsbG8g?=\n"
	    " =?iso-8859-1?q?W=F6rld?= and =?utf-8?b?4pyT?= done\n"
	    "From: \"=?windows-1252?Q?Fran=E7ois?=\" <f@x.org>\n"
	    "Subject: second subject is ignored\n"
	    "Content-Transfer-Encoding: quoted-printable\n"
	    "\n"
	    "a=3Db soft=\n"
	    "break\n";
	struct mail_msg m;
	struct err e = { 0 };

	ASSERT(mail_parse(&m, msg, sizeof(msg) - 1, 1, &e) == 0);
	/* Adjacent encoded-words join; text around keeps its space. */
	ASSERT_STREQ(m.subject, "Hello W\xc3\xb6rld and \xe2\x9c\x93 done");
	ASSERT_STREQ(m.from_name, "Fran\xc3\xa7ois");
	ASSERT_STREQ(m.body, "a=b softbreak\n");
	ASSERT(!m.tag.patch);
	ASSERT_INTEQ(m.date, -1);
	ASSERT(m.patch_off < 0);
	ASSERT(!mail_is_patch(&m));
	mail_msg_release(&m);
}

TEST(test_mail__dates)
{
	long long t;
	int tz;

	ASSERT(mail_date(&t, &tz, "Thu, 1 Jan 1970 00:00:00 +0000") == 0);
	ASSERT_INTEQ(t, 0);
	ASSERT(mail_date(&t, &tz, "29 Feb 2020 12:30:00 +0530") == 0);
	ASSERT_INTEQ(t, 1582959600LL);
	ASSERT_INTEQ(tz, 330);
	ASSERT(mail_date(&t, &tz, "Mon, 2 Dec 19 1:02 GMT") == 0);
	ASSERT_INTEQ(t, 1575248520);
	ASSERT(mail_date(&t, &tz, "yesterday") == -1);
	ASSERT(mail_date(&t, &tz, "Thu, 45 Jan 2020 00:00 +0000") == -1);
}

static const char mbox[] =
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: A <a@x>\n"
    "Subject: [PATCH v2 0/2] memcg: cover\n"
    "Message-Id: <c@x>\n"
    "\n"
    "Cover text.\n"
    ">From the start\n"
    ">>From kept one\n"
    "\n"
    "base-commit: 1111111111111111111111111111111111111111\n"
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: A <a@x>\n"
    "Subject: [PATCH v2 2/2] memcg: two\n"
    "Message-Id: <p2@x>\n"
    "In-Reply-To: <c@x>\n"
    "\n"
    "two\n"
    "---\n"
    "diff --git a/f b/f\n"
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: A <a@x>\n"
    "Subject: [PATCH v2 1/2] memcg: one\n"
    "Message-Id: <p1@x>\n"
    "References: <c@x>\n"
    "\n"
    "one\n"
    "---\n"
    "diff --git a/f b/f\n"
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: B <b@x>\n"
    "Subject: Re: [PATCH v2 1/2] memcg: one\n"
    "Message-Id: <r@x>\n"
    "In-Reply-To: <p1@x>\n"
    "\n"
    "> diff --git a/f b/f\n"
    "diff --git a/f b/f\n"
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: A <a@x>\n"
    "Subject: [PATCH v1 2/2] memcg: old two\n"
    "Message-Id: <o2@x>\n"
    "In-Reply-To: <c@x>\n"
    "\n"
    "---\n"
    "diff --git a/f b/f\n"
    "From jose Mon Sep 17 00:00:00 2001\n"
    "From: C <c@x>\n"
    "Subject: [PATCH] lone\n"
    "Message-Id: <l@x>\n"
    "\n"
    "---\n"
    "diff --git a/g b/g\n";

TEST(test_mail__mbox_and_group)
{
	struct mail_msg *m;
	struct mail_series *s;
	size_t n, ns, orphans;
	struct err e = { 0 };

	ASSERT_MSG(mail_mbox_parse(&m, &n, mbox, sizeof(mbox) - 1, &e) == 0,
	    "%s", err_msg(&e));
	ASSERT_INTEQ(n, 6);
	ASSERT_INTEQ(m[0].line, 2);
	ASSERT_INTEQ(m[1].line, 12);
	ASSERT(strstr(m[0].body, "\nFrom the start\n>From kept one\n"));
	ASSERT(mail_is_patch(&m[1]) && mail_is_patch(&m[2]));
	ASSERT(!mail_is_patch(&m[3])); /* a reply */
	mail_group(&s, &ns, &orphans, m, n);
	ASSERT_INTEQ(ns, 2);
	ASSERT_INTEQ(orphans, 1); /* v1 2/2 names a v2 cover */
	ASSERT_INTEQ(s[0].root, 0);
	ASSERT_INTEQ(s[0].cover, 0);
	ASSERT_INTEQ(s[0].version, 2);
	ASSERT_INTEQ(s[0].total, 2);
	ASSERT(s[0].complete);
	ASSERT_INTEQ(s[0].patches[0], 2);
	ASSERT_INTEQ(s[0].patches[1], 1);
	ASSERT_STREQ(s[0].title, "memcg: cover");
	ASSERT_STREQ(
	    s[0].base_commit, "1111111111111111111111111111111111111111");
	ASSERT_INTEQ(s[1].root, 5);
	ASSERT_INTEQ(s[1].cover, -1);
	ASSERT_INTEQ(s[1].total, 1);
	ASSERT(s[1].complete);
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
}

TEST(test_mail__bad_mbox)
{
	static const char bad[] =
	    "From x Mon Sep 17 00:00:00 2001\nFrom: a\n\nok\n"
	    "From y Mon Sep 17 00:00:00 2001\nnot a header\n\nbody\n";
	struct mail_msg *m;
	size_t n;
	struct err e = { 0 };

	ASSERT_INTEQ(mail_mbox_parse(&m, &n, "\n\n", 2, &e), ERR_INVALID);
	err_clear(&e);
	ASSERT_INTEQ(
	    mail_mbox_parse(&m, &n, bad, sizeof(bad) - 1, &e), ERR_INVALID);
	ASSERT_MSG(
	    strstr(err_msg(&e), "mbox line 6:") != NULL, "%s", err_msg(&e));
	/* A bare message holding a NUL (found by make fuzz-mail). */
	{
		static const char nul[] = "Subject: a\0b\n\nbo\0dy\n";

		ASSERT(mail_mbox_parse(&m, &n, nul, sizeof(nul) - 1, &e) == 0);
		ASSERT_INTEQ(n, 1);
		/* Control characters, NUL included, become spaces. */
		ASSERT_STREQ(m[0].subject, "a b");
		mail_msgs_free(m, n);
	}
}

TEST(test_mail__caps)
{
	size_t big = 200 * 1024, i;
	char *s = xmalloc(big + 64);
	struct mail_msg m;
	struct err e = { 0 };

	/* A 200 KB subject is cut at the subject cap, on UTF-8; a header
	 * block over its cap is refused. */
	memcpy(s, "Subject: ", 9);
	for (i = 9; i + 2 < big; i += 2)
		memcpy(s + i, "\xc3\xa9", 2);
	memcpy(s + i, "\n\nx\n", 4);
	ASSERT(mail_parse(&m, s, i + 4, 1, &e) == 0);
	ASSERT(strlen(m.subject) <= CAP_SUBJECT);
	ASSERT(strlen(m.subject) % 2 == 0);
	mail_msg_release(&m);
	free(s);
	s = xcalloc(1, CAP_MAIL_HEADERS + 64);
	memset(s, 'a', CAP_MAIL_HEADERS + 16);
	memcpy(s, "X-Big: ", 7);
	memcpy(s + CAP_MAIL_HEADERS + 16, "\n\nbody\n", 8);
	ASSERT_INTEQ(
	    mail_parse(&m, s, CAP_MAIL_HEADERS + 24, 3, &e), ERR_TOOBIG);
	ASSERT(strstr(err_msg(&e), "mbox line 3") != NULL);
	free(s);
}

/* ---- the real archive ---- */

/* Runs argv with stdin from in (NULL: /dev/null), stdout to out. */
static int
run(char *const argv[], const char *in, const char *out)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int i = open(in ? in : "/dev/null", O_RDONLY);
		int o = open(out ? out : "/dev/null",
		    O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(i, 0);
		dup2(o, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *d;

	if (f == NULL || fstat(fileno(f), &st) != 0)
		return NULL;
	d = xmalloc((size_t)st.st_size + 1);
	*len = fread(d, 1, (size_t)st.st_size, f);
	d[*len] = '\0';
	fclose(f);
	return d;
}

static const char *
patch_title(const struct mail_msg *m, const struct mail_series *s, int k)
{
	return s->patches[k] >= 0 ? m[s->patches[k]].tag.title : "(missing)";
}

TEST(test_mail__real_archive)
{
	char repo[512], list[512], out[512];
	char *clone[] = { "git", "clone", "-q", "--bare",
		(char *)test_fixture("inbox/cgroups-2019.bundle"), repo, NULL };
	char *log[] = { "git", "-C", repo, "log", "--reverse", "--format=%H:m",
		NULL };
	char *cat[] = { "git", "-C", repo, "cat-file", "--batch", NULL };
	struct mail_msg *m = xcalloc(4000, sizeof(*m));
	struct mail_series *s;
	size_t len, n = 0, ns, orphans, i, np = 0, nr = 0, full = 0;
	size_t inseries = 0;
	char *d, *p;
	struct timespec t0, t1;
	double ms;
	const struct mail_series *v1 = NULL, *v2 = NULL, *ps = NULL;

	snprintf(repo, sizeof(repo), "%s/inbox.git", test_tmpdir());
	snprintf(list, sizeof(list), "%s/list", test_tmpdir());
	snprintf(out, sizeof(out), "%s/blobs", test_tmpdir());
	ASSERT(run(clone, NULL, NULL) == 0);
	ASSERT(run(log, NULL, list) == 0);
	ASSERT(run(cat, list, out) == 0);
	ASSERT((d = slurp(out, &len)) != NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* "<sha> blob <size>\n<data>\n" per message. */
	for (p = d; p < d + len && n < 4000;) {
		char *nl = memchr(p, '\n', (size_t)(d + len - p));
		char *sp;
		size_t sz;
		struct err e = { 0 };

		ASSERT(nl != NULL);
		for (sp = nl; sp > p && *sp != ' '; sp--)
			;
		ASSERT(sp != NULL && sp < nl);
		sz = strtoul(sp + 1, NULL, 10);
		ASSERT(nl + 1 + sz <= d + len);
		ASSERT_MSG(mail_parse(&m[n], nl + 1, sz, n + 1, &e) == 0,
		    "message %zu: %s", n + 1, err_msg(&e));
		n++;
		p = nl + 1 + sz + 1;
	}
	mail_group(&s, &ns, &orphans, m, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ASSERT_INTEQ(n, 3000);
	for (i = 0; i < n; i++) {
		np += mail_is_patch(&m[i]);
		nr += m[i].tag.reply;
		ASSERT(m[i].message_id[0] != '\0');
	}
	for (i = 0; i < ns; i++) {
		full += s[i].complete;
		inseries += (size_t)s[i].found;
		if (strcmp(s[i].title,
		        "mm: memcontrol: recursive memory protection") == 0)
			*(s[i].version == 2 ? &v2 : &v1) = &s[i];
		if (strcmp(s[i].title,
		        "kernfs,cgroup: support 64bit inos "
		        "and unify cgroup IDs") == 0)
			ps = &s[i];
	}
	printf("archive: %zu messages, %zu patches, %zu replies, %zu series "
	       "(%zu complete, %zu patches in series), %zu orphan patches; "
	       "parse+group %.1f ms\n",
	    n, np, nr, ns, full, inseries, orphans, ms);
	/* Johannes Weiner's series, v1 and v2, each a cover and 3 patches. */
	ASSERT(v1 != NULL && v2 != NULL);
	ASSERT_STREQ(m[v2->root].message_id,
	    "20191219200718.15696-1-hannes@cmpxchg.org");
	ASSERT_INTEQ(v2->cover, (long)v2->root);
	ASSERT_INTEQ(v2->total, 3);
	ASSERT(v2->complete);
	ASSERT_STREQ(patch_title(m, v2, 0),
	    "mm: memcontrol: fix memory.low proportional distribution");
	ASSERT_STREQ(patch_title(m, v2, 1),
	    "mm: memcontrol: clean up and document effective low/min "
	    "calculations");
	ASSERT_STREQ(patch_title(m, v2, 2),
	    "mm: memcontrol: recursive memory.low protection");
	ASSERT_STREQ(m[v2->patches[0]].message_id,
	    "20191219200718.15696-2-hannes@cmpxchg.org");
	ASSERT_STREQ(m[v2->root].from_name, "Johannes Weiner");
	ASSERT_INTEQ(m[v2->patches[2]].date, 1576786038);
	ASSERT(v1->version == 1 && v1->total == 3 && v1 < v2);
	/* "[PATCHSET cgroup/for-5.5] kernfs,cgroup: ..." answered by ten
	 * "[PATCH NN/10]" mails: one series with the cover's slash tag
	 * (these ten were orphans before PATCHSET counted as a cover). */
	ASSERT(ps != NULL);
	ASSERT_INTEQ(ps->cover, (long)ps->root);
	ASSERT_INTEQ(ps->total, 10);
	ASSERT(ps->complete);
	ASSERT_STREQ(ps->branch_tag, "cgroup/for-5.5");
	ASSERT_STREQ(
	    m[ps->root].message_id, "20191104235944.3470866-1-tj@kernel.org");
	/* Patches reach the commit message and the diff. */
	ASSERT(strstr(m[v2->patches[0]].message, "Signed-off-by: Johannes") !=
	    NULL);
	ASSERT(strncmp(m[v2->patches[0]].body + m[v2->patches[0]].patch_off,
	           "diff --git a/mm/memcontrol.c", 28) == 0);
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
	free(d);
}

/* Tejun Heo's style: "[PATCHSET v2 TAG] title" answered by "[PATCH n/N]"
 * patches that carry neither the version nor the tag. */
TEST(test_mail__patchset_cover)
{
	static const char mb[] =
	    "From 1 Mon Sep 17 00:00:00 2001\nFrom: T <tj@x>\n"
	    "Message-ID: <c@x>\n"
	    "Subject: [PATCHSET v2 cgroup/for-7.0-fixes] cgroup: fixes\n\n"
	    "base-commit: 0123456789abcdef0123456789abcdef01234567\n"
	    "From 2 Mon Sep 17 00:00:00 2001\nFrom: T <tj@x>\n"
	    "Message-ID: <p1@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 1/2] one\n\n---\ndiff --git a/f b/f\n"
	    "From 3 Mon Sep 17 00:00:00 2001\nFrom: T <tj@x>\n"
	    "Message-ID: <p2@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 2/2] two\n\n---\ndiff --git a/f b/f\n"
	    "From 4 Mon Sep 17 00:00:00 2001\nFrom: T <tj@x>\n"
	    "Message-ID: <lone@x>\n"
	    "Subject: [PATCHSET cgroup/for-next] nobody answers\n\ntext\n";
	struct mail_msg *m;
	struct mail_series *s;
	size_t n, ns, orphans;
	struct err e = { 0 };

	ASSERT(mail_mbox_parse(&m, &n, mb, sizeof(mb) - 1, &e) == 0);
	mail_group(&s, &ns, &orphans, m, n);
	ASSERT_INTEQ(ns, 1);
	ASSERT_INTEQ(orphans, 0);
	ASSERT_INTEQ(s[0].cover, 0);
	ASSERT_INTEQ(s[0].total, 2);
	ASSERT_INTEQ(s[0].version, 2);
	ASSERT(s[0].complete);
	ASSERT_INTEQ(s[0].patches[0], 1);
	ASSERT_INTEQ(s[0].patches[1], 2);
	ASSERT_STREQ(s[0].branch_tag, "cgroup/for-7.0-fixes");
	ASSERT_STREQ(
	    s[0].base_commit, "0123456789abcdef0123456789abcdef01234567");
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
}

/* `git format-patch --cover-letter` without --thread: no Message-ID, no
 * In-Reply-To; the series is still found, and gets a stable id. */
TEST(test_mail__unthreaded_format_patch)
{
	static const char mb[] =
	    "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Date: Mon, 2 Dec 2024 10:00:00 +0000\n"
	    "Subject: [PATCH v2 0/2] *** SUBJECT HERE ***\n\nblurb\n"
	    "From 2 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Subject: [PATCH v2 1/2] one\n\n---\ndiff --git a/f b/f\n"
	    "From 3 Mon Sep 17 00:00:00 2001\nFrom: B <b@x>\n"
	    "Subject: [PATCH v3 2/2] another version\n\n---\ndiff --git a/f "
	    "b/f\n"
	    "From 4 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Subject: [PATCH v2 2/2] two\n\n---\ndiff --git a/f b/f\n";
	struct mail_msg *m;
	struct mail_series *s;
	size_t n, ns, orphans;
	struct err e = { 0 };
	char id[64];

	ASSERT(mail_mbox_parse(&m, &n, mb, sizeof(mb) - 1, &e) == 0);
	mail_group(&s, &ns, &orphans, m, n);
	ASSERT_INTEQ(ns, 1);
	ASSERT_INTEQ(orphans, 1);
	ASSERT_INTEQ(s[0].cover, 0);
	ASSERT(s[0].complete);
	ASSERT_INTEQ(s[0].patches[0], 1);
	ASSERT_INTEQ(s[0].patches[1], 3);
	ASSERT(strncmp(s[0].message_id, "no-message-id-", 14) == 0);
	snprintf(id, sizeof(id), "%s", s[0].message_id);
	mail_series_free(s, ns);
	mail_group(&s, &ns, &orphans, m, n);
	ASSERT_STREQ(s[0].message_id, id);
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
}

/* A quilt patch: no "---" line, no "diff --git": "Index:" ends the
 * message, each file's "--- linux.orig/P" "+++ linux/P" gets a git
 * header with git apply's -p1 paths, /dev/null makes a new file. */
TEST(test_mail__quilt_patch)
{
	static const char q[] =
	    "From: Q <q@x>\n"
	    "Subject: [PATCH] mm: quilt\n"
	    "Message-Id: <q@x>\n"
	    "\n"
	    "Made with quilt.\n"
	    "\n"
	    "Signed-off-by: Q <q@x>\n"
	    "\n"
	    "Index: linux/mm/a.c\n"
	    "=================================================================="
	    "=\n"
	    "--- linux.orig/mm/a.c\t2019-05-01 10:00:00.000000000 +0200\n"
	    "+++ linux/mm/a.c\t2019-05-01 10:01:00.000000000 +0200\n"
	    "@@ -1 +1 @@\n"
	    "-a\n"
	    "+b\n"
	    "Index: linux/mm/new.c\n"
	    "=================================================================="
	    "=\n"
	    "--- /dev/null\n"
	    "+++ linux/mm/new.c\n"
	    "@@ -0,0 +1 @@\n"
	    "+new\n";
	struct mail_msg m;
	struct err e = { 0 };

	ASSERT_MSG(
	    mail_parse(&m, q, sizeof(q) - 1, 1, &e) == 0 && mail_is_patch(&m),
	    "%s", err_msg(&e));
	ASSERT_STREQ(m.message, "Made with quilt.\n\nSigned-off-by: Q <q@x>");
	ASSERT(strncmp(m.body + m.patch_off, "--- linux.orig/", 15) == 0);
	ASSERT_STREQ(m.patch,
	    "diff --git a/mm/a.c b/mm/a.c\n"
	    "--- a/mm/a.c\n"
	    "+++ b/mm/a.c\n"
	    "@@ -1 +1 @@\n"
	    "-a\n"
	    "+b\n"
	    "Index: linux/mm/new.c\n"
	    "=================================================================="
	    "=\n"
	    "diff --git a/mm/new.c b/mm/new.c\n"
	    "new file mode 100644\n"
	    "--- /dev/null\n"
	    "+++ b/mm/new.c\n"
	    "@@ -0,0 +1 @@\n"
	    "+new\n");
	ASSERT_INTEQ(m.patch_len, strlen(m.patch));
	mail_msg_release(&m);
}

/* A git diff passes as it is; a mail without a diff has no patch. */
TEST(test_mail__git_patch_kept)
{
	struct mail_msg m;
	struct err e = { 0 };

	ASSERT(mail_parse(&m, patch1, sizeof(patch1) - 1, 1, &e) == 0);
	ASSERT_STREQ(m.patch, m.body + m.patch_off);
	mail_msg_release(&m);
}

/* CRLF mbox, a body line "From the ..." that is no separator, and an
 * mboxrd ">From " line: one message each way, CRs gone. */
TEST(test_mail__crlf_and_from_lines)
{
	static const char mb[] = "From 1 Mon Sep 17 00:00:00 2001\r\n"
	                         "From: A <a@x>\r\n"
	                         "Subject: [PATCH] one\r\n"
	                         "\r\n"
	                         "From the start it was wrong.\r\n"
	                         ">From here on it is right.\r\n"
	                         "---\r\n"
	                         "diff --git a/f b/f\r\n"
	                         "--- a/f\r\n"
	                         "+++ b/f\r\n"
	                         "@@ -1 +1 @@\r\n"
	                         "-a\r\n"
	                         "+b\r\n"
	                         "From 2 Mon Sep 17 00:00:00 2001\r\n"
	                         "From: B <b@x>\r\n"
	                         "Subject: two\r\n"
	                         "\r\n"
	                         "text\r\n";
	struct mail_msg *m;
	size_t n;
	struct err e = { 0 };

	ASSERT_MSG(mail_mbox_parse(&m, &n, mb, sizeof(mb) - 1, &e) == 0, "%s",
	    err_msg(&e));
	ASSERT_INTEQ(n, 2);
	ASSERT_STREQ(m[0].message,
	    "From the start it was wrong.\nFrom here on it is right.");
	ASSERT_STREQ(m[0].patch,
	    "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	ASSERT_INTEQ(m[1].line, 15);
	ASSERT_STREQ(m[1].subject, "two");
	mail_msgs_free(m, n);
	/* One public-inbox message in CRLF: the same. */
	{
		struct mail_msg one;

		ASSERT(mail_parse(&one, mb + 33, 175, 0, &e) == 0);
		ASSERT_STREQ(one.subject, "[PATCH] one");
		ASSERT(strchr(one.patch, '\r') == NULL);
		mail_msg_release(&one);
	}
}

/* Tags in any order, with the prefixes lists use. */
TEST(test_mail__tag_orders)
{
	static const struct {
		const char *subject;
		int rfc, resend, version, seq, total;
		const char *prefix;
	} c[] = {
		{ "[RFC PATCH net-next v3 2/5] x", 1, 0, 3, 2, 5, "net-next" },
		{ "[PATCH 2/5 net-next v3 RESEND] x", 0, 1, 3, 2, 5,
		    "net-next" },
		{ "[PATCH RESEND] x", 0, 1, 1, 1, 1, "" },
		{ "[PATCHv4 03/10] x", 0, 0, 4, 3, 10, "" },
		{ "[RFC][PATCH v2] x", 1, 0, 2, 1, 1, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct mail_subject t;

		mail_subject_parse(&t, c[i].subject);
		ASSERT_MSG(t.patch && t.rfc == c[i].rfc &&
		        t.resend == c[i].resend && t.version == c[i].version &&
		        t.seq == c[i].seq && t.total == c[i].total &&
		        strcmp(t.prefix, c[i].prefix) == 0 &&
		        strcmp(t.title, "x") == 0,
		    "%s", c[i].subject);
		mail_subject_release(&t);
	}
}

/* Parses an mbox that must parse, and groups it. */
static void
parse_and_group(struct mail_msg **m, size_t *n, struct mail_series **s,
    size_t *ns, size_t *orphans, const char *mb, size_t len)
{
	struct err e = { 0 };

	ASSERT_MSG(mail_mbox_parse(m, n, mb, len, &e) == 0, "%s", err_msg(&e));
	mail_group(s, ns, orphans, *m, *n);
}

/* "[PATCH v2 2/3]" in reply to v1's 2/3: a v2 series of v1's 1/3 and
 * 3/3 with the new 2/3, keeping v1's cover (its base); v1 is unchanged. */
TEST(test_mail__partial_reroll)
{
	static const char mb[] =
	    "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <c@x>\nSubject: [PATCH 0/3] the cover\n\n"
	    "base-commit: 0123456789abcdef0123456789abcdef01234567\n"
	    "From 2 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p1@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 1/3] one\n\n---\ndiff --git a/f b/f\n"
	    "From 3 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p2@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 2/3] two\n\n---\ndiff --git a/f b/f\n"
	    "From 4 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p3@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 3/3] three\n\n---\ndiff --git a/f b/f\n"
	    "From 5 Mon Sep 17 00:00:00 2001\nFrom: R <r@x>\n"
	    "Message-Id: <r@x>\nIn-Reply-To: <p2@x>\n"
	    "Subject: Re: [PATCH 2/3] two\n\nreview\n"
	    "From 6 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p2v2@x>\nIn-Reply-To: <p2@x>\n"
	    "References: <c@x> <p2@x>\n"
	    "Subject: [PATCH v2 2/3] two, better\n\n---\ndiff --git a/f b/f\n";
	struct mail_msg *m;
	struct mail_series *s;
	size_t n, ns, orphans;

	parse_and_group(&m, &n, &s, &ns, &orphans, mb, sizeof(mb) - 1);
	ASSERT_INTEQ(ns, 2);
	ASSERT_INTEQ(orphans, 0);
	ASSERT(s[0].complete && s[0].version == 1 && s[0].patches[1] == 2);
	ASSERT(s[1].complete);
	ASSERT_INTEQ(s[1].version, 2);
	ASSERT_INTEQ(s[1].total, 3);
	ASSERT_STREQ(s[1].message_id, "p2v2@x");
	ASSERT_STREQ(s[1].title, "the cover");
	ASSERT_INTEQ(s[1].cover, 0);
	ASSERT_INTEQ(s[1].patches[0], 1);
	ASSERT_INTEQ(s[1].patches[1], 5);
	ASSERT_INTEQ(s[1].patches[2], 3);
	ASSERT_STREQ(
	    s[1].base_commit, "0123456789abcdef0123456789abcdef01234567");
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
}

/* Each patch mail that joins no series says why; mail in a series and
 * mail that is no patch say nothing. */
TEST(test_mail__orphan_reasons)
{
	static const char mb[] =
	    "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <c@x>\nSubject: [PATCH 0/2] the cover\n\nhi\n"
	    "From 2 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p1@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 1/2] one\n\n---\ndiff --git a/f b/f\n"
	    "From 3 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <p1b@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 1/2] one\n\n---\ndiff --git a/f b/f\n"
	    "From 4 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <q2@x>\nIn-Reply-To: <gone@x>\n"
	    "Subject: [PATCH v3 2/4] lost\n\n---\ndiff --git a/f b/f\n"
	    "From 5 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <w3@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 3/3] wrong count\n\n---\ndiff --git a/f b/f\n"
	    "From 6 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <u2@x>\n"
	    "Subject: [PATCH 2/5] unthreaded\n\n---\ndiff --git a/f b/f\n"
	    "From 7 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <big@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 2/9999] huge\n\n---\ndiff --git a/f b/f\n"
	    /* A diff this parser does not read: no file headers. */
	    "From 8 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <nd@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: [PATCH 2/2] no diff\n\n---\n@@ -1 +1 @@\n-a\n+b\n"
	    /* A reply without a diff says nothing. */
	    "From 9 Mon Sep 17 00:00:00 2001\nFrom: A <a@x>\n"
	    "Message-Id: <re@x>\nIn-Reply-To: <c@x>\n"
	    "Subject: Re: [PATCH 2/2] no diff\n\nthanks\n";
	struct mail_msg *m;
	struct mail_series *s;
	size_t n, ns, orphans, i;
	char why[9][512];

	parse_and_group(&m, &n, &s, &ns, &orphans, mb, sizeof(mb) - 1);
	ASSERT_INTEQ(n, 9);
	ASSERT_INTEQ(ns, 1);
	for (i = 0; i < n; i++)
		mail_orphan_why(why[i], sizeof(why[i]), m, n, s, ns, i);
	ASSERT_STREQ(why[0], ""); /* the cover letter */
	ASSERT_STREQ(why[1], ""); /* in the series */
	ASSERT_STREQ(why[2],
	    "a second copy of patch 1/2 of the series <c@x> (the first one "
	    "is used)");
	ASSERT_STREQ(why[3],
	    "it answers <gone@x>, which is not among the mail read (no "
	    "cover letter or patch 1/4 of v3 yet)");
	ASSERT_STREQ(
	    why[4], "it answers <c@x>, which starts no series of 3 patches v1");
	ASSERT_STREQ(why[5],
	    "it names no mail it answers, and no cover letter or patch 1/5 "
	    "of v1 comes before it");
	ASSERT(strstr(why[6], "a series of 9999 patches: more than") == why[6]);
	ASSERT_STREQ(why[7],
	    "patch 2/2 has no diff perfwatch reads (no \"diff --git\" line, "
	    "nor a \"--- \" \"+++ \" \"@@ \" file diff)");
	ASSERT_STREQ(why[8], "");
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
}
