/*
 * `git am --3way` in a scratch worktree (git/am.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/files.h"
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

/* When the git children of the patch being applied must be done
 * (clock_mono_s), and whether one was killed for it. */
static _Thread_local double am_deadline;
static _Thread_local int am_timed_out;
static _Thread_local int am_too_big; /* one died of RLIMIT_FSIZE */

/* argv0 as execve wants it: PATH looked up before fork (malloc'd). */
static char *
resolve(const char *argv0)
{
	const char *path = getenv("PATH"), *p, *c;

	if (strchr(argv0, '/') != NULL)
		return xstrdup(argv0);
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *c ? c + 1 : c) {
		char *f;

		c = strchr(p, ':');
		if (c == NULL)
			c = p + strlen(p);
		f = xasprintf("%.*s/%s", (int)(c - p), p, argv0);
		if (access(f, X_OK) == 0)
			return f;
		free(f);
	}
	return NULL;
}

/*
 * Runs argv (argv[0] looked up on PATH) in a process group of its own
 * with stdin from /dev/null and stdout and stderr appended to LOG, EXTRA
 * ("NAME=value", may be NULL) added to git's environment, under the
 * limits of an untrusted patch: files of at most CAP_PATCH_FILE_BYTES
 * (RLIMIT_FSIZE), CAP_GITAM_MEMORY of heap (RLIMIT_DATA), and killed
 * with its group at am_deadline.  Its exit status, or -1.
 */
static int
run_env(char *const argv[], const char *log, const char *extra)
{
	char **env = git_env(extra);
	char *file = resolve(argv[0]);
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	int logfd = -1, nullfd = -1, status = 0, rc = -1;
	pid_t pid = -1, w;

	if (file == NULL ||
	    (logfd = open(
	         log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0 ||
	    (nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		goto out;
	pid = fork();
	if (pid == 0) {
		struct rlimit fs = { (rlim_t)CAP_PATCH_FILE_BYTES,
			(rlim_t)CAP_PATCH_FILE_BYTES };
		struct rlimit dt = { (rlim_t)CAP_GITAM_MEMORY,
			(rlim_t)CAP_GITAM_MEMORY };

		struct sigaction dfl;
		sigset_t none;

		/* Signals as a fresh process has them: a write past the
		 * file-size limit kills git (SIGXFSZ), which tells it apart
		 * from a conflict; the daemon's threads block some. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGXFSZ, &dfl, NULL);
		sigaction(SIGPIPE, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (setpgid(0, 0) != 0 || dup2(nullfd, 0) < 0 ||
		    dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0 ||
		    setrlimit(RLIMIT_FSIZE, &fs) != 0 ||
		    setrlimit(RLIMIT_DATA, &dt) != 0)
			_exit(127);
		execve(file, argv, env);
		_exit(127);
	}
	if (pid < 0)
		goto out;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			goto out;
		if (am_deadline > 0 && clock_mono_s() > am_deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			am_timed_out = 1;
			goto out;
		}
		nanosleep(&tick, NULL);
	}
	/* What it left in its group (a merge helper) goes with it. */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
		am_too_big = 1;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
out:
	if (logfd >= 0)
		close(logfd);
	if (nullfd >= 0)
		close(nullfd);
	free(file);
	free(env);
	return rc;
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

/*
 * The files the patch wrote, as the new commit has them (ls-tree -l of
 * the patch's paths): ERR_INVALID naming the first over
 * CAP_PATCH_FILE_BYTES or where all go over CAP_PATCH_BYTES, -1 when
 * git could not say, else 0.
 */
static int
result_refusal(struct err *e, const char *wt, char *const *paths, size_t n,
    const char *dir, const char *log)
{
	char **av = xcalloc(n + 10, sizeof(*av)), *out;
	struct buf b = BUF_INIT(16 * 1024 * 1024);
	long long total = 0;
	size_t k = 0, i;
	int r = 0;

	av[k++] = "git";
	av[k++] = "-C";
	av[k++] = (char *)wt;
	av[k++] = "ls-tree";
	av[k++] = "-r";
	av[k++] = "-l";
	av[k++] = "-z";
	av[k++] = "HEAD";
	av[k++] = "--";
	for (i = 0; i < n; i++)
		av[k++] = paths[i];
	av[k] = NULL;
	out = xasprintf("%s/sizes", dir);
	if (run(av, out) != 0 || files_read(&b, out, b.max) != 0) {
		r = fail_from_log(e, -1, log, "git ls-tree");
		goto done;
	}
	/* "MODE TYPE SHA SIZE\tPATH\0" (SIZE "-" for a submodule) */
	for (i = 0; i < b.len && r == 0;) {
		const char *rec = b.data + i,
		           *tab = memchr(rec, '\t', b.len - i);
		const char *sz;
		long long v;

		if (tab == NULL)
			break;
		for (sz = tab; sz > rec && sz[-1] != ' '; sz--)
			;
		v = strtoll(sz, NULL, 10);
		total += v;
		if (v > CAP_PATCH_FILE_BYTES || total > CAP_PATCH_BYTES)
			r = err_setc(e, ERR_INVALID,
			    "git am: %.200s would be %lld bytes%s, more than "
			    "the %lld %s",
			    tab + 1, v,
			    v > CAP_PATCH_FILE_BYTES ? "" : " (all)",
			    v > CAP_PATCH_FILE_BYTES ? CAP_PATCH_FILE_BYTES
			                             : CAP_PATCH_BYTES,
			    v > CAP_PATCH_FILE_BYTES
			        ? "a patched file may have"
			        : "the files of one patch may have");
		i = (size_t)(tab - b.data) + strlen(tab) + 1;
	}
done:
	unlink(out);
	free(out);
	free(av);
	buf_release(&b);
	return r;
}

/* Why git am failed, when it was a limit of an untrusted patch. */
static int
limit_refusal(struct err *e, const char *log)
{
	struct buf b = BUF_INIT(1024 * 1024);
	int r = 0;

	if (am_timed_out)
		r = err_setc(e, ERR_INVALID,
		    "git am: the patch took more than %d s to apply (killed)",
		    CAP_GITAM_SECONDS);
	else if (am_too_big ||
	    (files_read(&b, log, b.max) == 0 &&
	        strstr(b.data, "File too large") != NULL) ||
	    (b.len > 0 && strstr(b.data, "Out of memory") != NULL))
		r = err_setc(e, ERR_INVALID,
		    "git am: the patch needs more than one patch may have "
		    "(files of %lld bytes, %lld bytes of memory)",
		    CAP_PATCH_FILE_BYTES, CAP_GITAM_MEMORY);
	buf_release(&b);
	return r;
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
	am_deadline = clock_mono_s() + CAP_GITAM_SECONDS;
	am_timed_out = 0;
	am_too_big = 0;
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
			if ((r = limit_refusal(e, log)) == 0)
				r = fail_from_log(e, ERR_CONFLICT, log,
				    "git am --3way failed too");
			am_deadline = 0;
			run(abort_am, log);
			goto remove;
		}
		if ((r = result_refusal(e, wt, ci + 7, np - 7, dir, log)) !=
		    0) {
			if (r == -1 && am_timed_out)
				r = limit_refusal(e, log);
			goto remove;
		}
		r = -1;
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
	/* Cleaning up is ours, not the patch's: no deadline. */
	char *rm[] = { "git", gd, "worktree", "remove", "--force", wt, NULL };
	char *prune[] = { "git", gd, "worktree", "prune", NULL };

	am_deadline = 0;
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
