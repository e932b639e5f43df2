/*
 * `git am --3way` in a scratch worktree (git/am.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "git/am.h"

extern char **environ;

#define GITAM_MAX_PATHS 256 /* files of one patch checked out */

/*
 * The environment git runs in: ours without GIT_* (a GIT_DIR,
 * GIT_INDEX_FILE or GIT_COMMITTER_NAME of the daemon's own environment
 * must not reach it), plus the committer perfwatch commits as.
 */
static char **
git_env(const char *extra)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = xcalloc(n + 5, sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "GIT_", 4) != 0)
			env[k++] = environ[i];
	env[k++] = "GIT_COMMITTER_NAME=perfwatch";
	env[k++] = "GIT_COMMITTER_EMAIL=perfwatch@localhost";
	env[k++] = "GIT_CONFIG_NOSYSTEM=1";
	if (extra != NULL)
		env[k++] = (char *)extra;
	env[k] = NULL;
	return env;
}

/*
 * Runs argv (argv[0] looked up on PATH) with stdin from /dev/null and
 * stdout and stderr appended to LOG, EXTRA ("NAME=value", may be NULL)
 * added to git's environment: its exit status, or -1.
 */
static int
run_env(char *const argv[], const char *log, const char *extra)
{
	posix_spawn_file_actions_t fa;
	char **env = git_env(extra);
	pid_t pid;
	int status, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(
	    &fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc != 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int
run(char *const argv[], const char *log)
{
	return run_env(argv, log, NULL);
}

/* Appends s (the title) with control characters and '<' '>' as ' '. */
static void
put_header_text(struct buf *b, const char *s)
{
	for (; s != NULL && *s; s++)
		buf_putc(b,
		    (unsigned char)*s < 0x20 || *s == 0x7f || *s == '<' ||
		            *s == '>'
		        ? ' '
		        : *s);
}

/*
 * The patch as one mboxrd message for git am: From/Date/Subject from
 * the mail, the commit message, "---", the diff.  Lines of the message
 * that look like "From " get a '>' (--patch-format=mboxrd).
 */
static void
mail_text(struct buf *b, const struct gitm_patch *p)
{
	const char *msg = p->message ? p->message : "";
	const char *nl = strchr(msg, '\n');
	size_t tlen = nl ? (size_t)(nl - msg) : strlen(msg);
	time_t t = (time_t)(p->author_time < 0 ? 0 : p->author_time);
	struct tm tm;
	char date[64], *title = xstrndup(msg, tlen);
	char name[CAP_NAME + 1], email[CAP_NAME + 1];
	const char *body = nl ? nl + 1 : "";

	/* Date in the author's own zone, as the mail had it. */
	t += (time_t)p->author_tz * 60;
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S", &tm);
	gitm_patch_author(name, email, p);
	buf_printf(b,
	    "From 0000000000000000000000000000000000000000 "
	    "Mon Sep 17 00:00:00 2001\nFrom: %s <%s>\n",
	    name, email);
	buf_printf(b, "Date: %s %c%02d%02d\nSubject: [PATCH] ", date,
	    p->author_tz < 0 ? '-' : '+', abs(p->author_tz) / 60,
	    abs(p->author_tz) % 60);
	put_header_text(b, title);
	buf_puts(b, "\n\n");
	while (*body == '\n')
		body++;
	while (*body) {
		size_t n = strcspn(body, "\n"), k = 0;

		while (body[k] == '>')
			k++;
		if (strncmp(body + k, "From ", 5) == 0)
			buf_putc(b, '>');
		buf_add(b, body, n);
		buf_putc(b, '\n');
		body += n + (body[n] == '\n');
	}
	buf_puts(b, "---\n");
	buf_add(b, p->diff, p->len);
	if (p->len > 0 && p->diff[p->len - 1] != '\n')
		buf_putc(b, '\n');
	free(title);
}

/*
 * The paths a patch names ("diff --git a/X b/Y": both) into argv from
 * index k (malloc'd); the new count.
 */
static size_t
patch_paths(char **argv, size_t k, size_t max, const struct gitm_patch *p)
{
	const char *s = p->diff, *end = p->diff + p->len;

	while (s < end && k < max) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);

		if (n > 11 && strncmp(s, "diff --git ", 11) == 0) {
			const char *a = s + 11, *sp;

			/* "a/X b/Y": split at " b/" (names with spaces are
			 * rare in kernel trees; such a path just does not
			 * match and is left out of the checkout). */
			sp = a;
			while ((sp = memchr(sp, ' ', (size_t)(s + n - sp))) &&
			    strncmp(sp, " b/", 3) != 0)
				sp++;
			if (sp != NULL && strncmp(a, "a/", 2) == 0) {
				argv[k++] =
				    xasprintf("%.*s", (int)(sp - a - 2), a + 2);
				if (k < max)
					argv[k++] = xasprintf("%.*s",
					    (int)(s + n - sp - 3), sp + 3);
			}
		}
		s += n + 1;
	}
	return k;
}

/* "@SECONDS +HHMM" of the patch's author date. */
static void
git_date(char *out, size_t len, const struct gitm_patch *p)
{
	snprintf(out, len, "@%lld %c%02d%02d",
	    p->author_time < 0 ? 0LL : p->author_time,
	    p->author_tz < 0 ? '-' : '+', abs(p->author_tz) / 60,
	    abs(p->author_tz) % 60);
}

/*
 * Sets the commit's author (name, address, date) to the patch's.  A mail
 * with no title and no text ("Subject: [PATCH]") makes a commit with an
 * empty message, which git am and libgit2 accept; so must the amend.
 */
static int
amend_author(const char *wt, const struct gitm_patch *p, const char *log)
{
	char name[CAP_NAME + 1], email[CAP_NAME + 1];
	char date[48], *author, *dateopt, *cdate;
	int r;

	gitm_patch_author(name, email, p);
	git_date(date, sizeof(date), p);
	author = xasprintf("--author=%s <%s>", name, email);
	dateopt = xasprintf("--date=%s", date);
	cdate = xasprintf("GIT_COMMITTER_DATE=%s", date);
	{
		char *amend[] = { "git", "-C", (char *)wt, "-c",
			"core.hooksPath=/dev/null", "-c",
			"commit.gpgsign=false", "commit", "--amend",
			"--no-edit", "--no-verify", "--allow-empty",
			"--allow-empty-message", "--quiet", author, dateopt,
			NULL };

		r = run_env(amend, log, cdate);
	}
	free(author);
	free(dateopt);
	free(cdate);
	return r;
}

/* The last line of the log that says why, sanitised, into e. */
static int
fail_from_log(struct err *e, int code, const char *log, const char *what)
{
	char line[512], last[512] = "";
	FILE *f = fopen(log, "r");
	size_t i;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "error:", 6) == 0 ||
		    strncmp(line, "fatal:", 6) == 0 ||
		    strncmp(line, "CONFLICT", 8) == 0 || last[0] == '\0')
			snprintf(last, sizeof(last), "%s", line);
	}
	if (f != NULL)
		fclose(f);
	for (i = 0; last[i]; i++)
		if ((unsigned char)last[i] < 0x20)
			last[i] = last[i] == '\n' ? '\0' : ' ';
	return err_setc(e, code, "%s: %s", what, last[0] ? last : "failed");
}

int
gitam_apply(char out[GITM_SHA_SIZE], const char *gitdir, const char *parent,
    const struct gitm_patch *p, struct err *e)
{
	const char *tmp = getenv("TMPDIR");
	char *dir, *wt, *mail, *log, *head, *gd;
	char *ci[GITAM_MAX_PATHS + 8];
	struct buf b = BUF_INIT(CAP_MAIL_MESSAGE + 4096);
	size_t k, np = 0;
	FILE *f;
	int r = -1;

	out[0] = '\0';
	dir = xasprintf("%s/perfwatch-am.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		err_set(e, "git am: scratch directory %s: %s", dir,
		    strerror(errno));
		free(dir);
		return -1;
	}
	wt = xasprintf("%s/wt", dir);
	mail = xasprintf("%s/mail", dir);
	log = xasprintf("%s/log", dir);
	head = xasprintf("%s/head", dir);
	gd = xasprintf("--git-dir=%s", gitdir);
	mail_text(&b, p);
	if (buf_failed(&b) || (f = fopen(mail, "w")) == NULL) {
		err_set(e, "git am: cannot write the patch to %s", mail);
		goto out;
	}
	fwrite(b.data, 1, b.len, f);
	if (fclose(f) != 0) {
		err_set(e, "git am: cannot write the patch to %s", mail);
		goto out;
	}
	{
		char *add[] = { "git", gd, "worktree", "add", "--no-checkout",
			"--detach", "-f", wt, (char *)parent, NULL };

		if (run(add, log) != 0) {
			r = fail_from_log(e, -1, log, "git worktree add");
			goto out;
		}
	}
	/* The parent's tree in the index, and only the patch's files in
	 * the worktree: git am looks at no other file, and a kernel tree is
	 * not checked out whole for one patch.  checkout-index fails for
	 * the files the patch creates; the others are out. */
	k = 0;
	ci[k++] = "git";
	ci[k++] = "-C";
	ci[k++] = wt;
	ci[k++] = "checkout-index";
	ci[k++] = "-q";
	ci[k++] = "-f";
	ci[k++] = "--";
	np = patch_paths(ci, k, GITAM_MAX_PATHS, p);
	ci[np] = NULL;
	{
		char *rt[] = { "git", "-C", wt, "read-tree", "HEAD", NULL };
		char *am[] = { "git", "-C", wt, "-c", "user.name=perfwatch",
			"-c", "user.email=perfwatch@localhost", "-c",
			"commit.gpgsign=false", "-c",
			"core.hooksPath=/dev/null", "am", "--3way", "--quiet",
			"--committer-date-is-author-date",
			"--patch-format=mboxrd", mail, NULL };
		char *abort_am[] = { "git", "-C", wt, "am", "--abort", NULL };
		char *rp[] = { "git", "-C", wt, "rev-parse", "HEAD", NULL };

		if (run(rt, log) != 0) {
			r = fail_from_log(e, -1, log, "git read-tree");
			goto remove;
		}
		run(ci, log);
		if (run(am, log) != 0) {
			r = fail_from_log(
			    e, ERR_CONFLICT, log, "git am --3way failed too");
			run(abort_am, log);
			goto remove;
		}
		/* The author exactly as the mail said (git mailinfo takes the
		 * first word with an '@' anywhere in From: as the address),
		 * and the committer at the author's date. */
		if (amend_author(wt, p, log) != 0) {
			r = fail_from_log(e, -1, log, "git commit --amend");
			goto remove;
		}
		if (run(rp, head) != 0 || (f = fopen(head, "r")) == NULL) {
			r = fail_from_log(e, -1, log, "git rev-parse");
			goto remove;
		}
		if (fgets(out, GITM_SHA_SIZE, f) == NULL ||
		    strspn(out, "0123456789abcdef") != GITM_SHA_SIZE - 1) {
			out[0] = '\0';
			err_set(e, "git am: no commit made");
		} else
			r = 0;
		fclose(f);
	}
remove : {
	char *rm[] = { "git", gd, "worktree", "remove", "--force", wt, NULL };
	char *prune[] = { "git", gd, "worktree", "prune", NULL };

	if (run(rm, log) != 0)
		run(prune, log);
}
out:
	for (k = 7; k < np; k++)
		free(ci[k]);
	unlink(mail);
	unlink(log);
	unlink(head);
	rmdir(wt);
	rmdir(dir);
	buf_release(&b);
	free(wt);
	free(mail);
	free(log);
	free(head);
	free(gd);
	free(dir);
	return r;
}
