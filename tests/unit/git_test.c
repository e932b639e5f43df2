/*
 * Tests of the git module (git/) against real repositories made
 * here with the git command line (fork+exec, no shell), served over
 * file:// and over HTTP (git http-backend behind Python's CGI server).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/err.h"
#include "daemon/trigger.h"
#include "git/am.h"
#include "git/git.h"
#include "tests/unit/test.h"

#define IO_TIMEOUT_MS 1500

static char outbuf[8192];

/*
 * Runs git with the arguments (NULL-terminated) in dir; its stdout, first
 * line, lands in outbuf.  Returns the exit status.
 */
static int
gitc(const char *dir, ...)
{
	char *argv[32];
	int n = 0, p[2], status;
	ssize_t k;
	size_t len = 0;
	va_list ap;
	pid_t pid;

	argv[n++] = "git";
	if (dir != NULL) {
		argv[n++] = "-C";
		argv[n++] = (char *)dir;
	}
	va_start(ap, dir);
	while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (pipe(p) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		dup2(devnull, 2);
		close(p[0]);
		execvp("git", argv);
		_exit(127);
	}
	close(p[1]);
	while ((k = read(p[0], outbuf + len, sizeof(outbuf) - 1 - len)) > 0)
		len += (size_t)k;
	close(p[0]);
	outbuf[len] = '\0';
	outbuf[strcspn(outbuf, "\n")] = '\0';
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	setenv("HOME", test_tmpdir(), 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Ann Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Cal Committer", 1);
	setenv("GIT_COMMITTER_EMAIL", "cal@example.org", 1);
	signal(SIGPIPE, SIG_IGN);
	if (gitm_global_init(IO_TIMEOUT_MS) != 0)
		abort();
}

static const char *
tpath(const char *name)
{
	/* Enough slots that a test's paths stay valid to its end. */
	static char p[64][512];
	static int slot;
	char *s = p[slot++ % 64];

	snprintf(s, sizeof(p[0]), "%s/%s", test_tmpdir(), name);
	return s;
}

static void
write_file(const char *work, const char *rel, const char *text)
{
	char path[1024], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	for (slash = strchr(path + strlen(work) + 1, '/'); slash != NULL;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (f == NULL)
		abort();
	fputs(text, f);
	fclose(f);
}

static long long fake_time = 1700000000;

/* Commits one file change in work; the new commit id lands in sha. */
static int
commit(char sha[GITM_SHA_SIZE], const char *work, const char *rel,
    const char *text, const char *msg)
{
	char date[64];

	snprintf(date, sizeof(date), "@%lld +0100", fake_time);
	fake_time += 60;
	setenv("GIT_AUTHOR_DATE", date, 1);
	setenv("GIT_COMMITTER_DATE", date, 1);
	write_file(work, rel, text);
	if (gitc(work, "add", "-A", NULL) != 0 ||
	    gitc(work, "commit", "-q", "-m", msg, NULL) != 0 ||
	    gitc(work, "rev-parse", "HEAD", NULL) != 0)
		return -1;
	snprintf(sha, GITM_SHA_SIZE, "%.40s", outbuf);
	return 0;
}

/*
 * An upstream: a bare repository NAME.git and a work clone NAME.work
 * that pushes to it.  Returns the file:// URL of the bare one.
 */
static const char *
upstream(const char *name)
{
	static char url[1024];
	char bare[512], work[512];

	snprintf(bare, sizeof(bare), "%s/%s.git", test_tmpdir(), name);
	snprintf(work, sizeof(work), "%s/%s.work", test_tmpdir(), name);
	if (gitc(NULL, "init", "-q", "--bare", "-b", "master", bare, NULL) ||
	    gitc(NULL, "init", "-q", "-b", "master", work, NULL) ||
	    gitc(work, "remote", "add", "origin", bare, NULL))
		abort();
	snprintf(url, sizeof(url), "file://%s", bare);
	return url;
}

static int
push(const char *work, const char *spec)
{
	return gitc(work, "push", "-q", "-f", "origin", spec, NULL);
}

static const char *watched[] = { "mm/memcontrol.c", "include/linux",
	"net/*.c" };

TEST(test_git__new_commits_and_paths)
{
	char c1[GITM_SHA_SIZE], c2[GITM_SHA_SIZE], c3[GITM_SHA_SIZE],
	    c4[GITM_SHA_SIZE], c5[GITM_SHA_SIZE], tip[GITM_SHA_SIZE];
	struct gitm_fetch_stats st;
	struct gitm_walk w;
	struct gitm_tip *tips;
	struct gitm_repo *m;
	const char *url, *work;
	size_t n;

	setup();
	url = upstream("a");
	work = tpath("a.work");
	ASSERT(commit(c1, work, "README", "hello\n", "root commit") == 0);
	ASSERT(commit(c2, work, "mm/memcontrol.c", "x\n",
	           "mm: memcg: change\n\nbody line") == 0);
	ASSERT(commit(c3, work, "docs/x.txt", "doc\n", "docs: unrelated") == 0);
	ASSERT(push(work, "master") == 0);

	m = gitm_repo_new(tpath("mirrors"), "a", url, NULL);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.cloned, 1);
	ASSERT_INTEQ(st.by_cli, 1);
	ASSERT(gitm_tips(&tips, &n, m) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(tips[0].branch, "master");
	ASSERT_STREQ(tips[0].sha, c3);
	gitm_tips_free(tips, n);

	/* A new branch: everything, oldest first. */
	ASSERT(gitm_new_commits(&w, m, NULL, c3, watched, 3, 0) == 0);
	ASSERT_INTEQ(w.n, 3);
	ASSERT_INTEQ(w.rewrite, 0);
	ASSERT_STREQ(w.commits[0].sha, c1);
	ASSERT_STREQ(w.commits[1].sha, c2);
	ASSERT_STREQ(w.commits[2].sha, c3);
	ASSERT_INTEQ(w.commits[0].nparents, 0);
	ASSERT_INTEQ(w.commits[0].touches_any, 0);
	ASSERT_INTEQ(w.commits[1].touches[0], 1);
	ASSERT_INTEQ(w.commits[1].touches_any, 1);
	ASSERT_STREQ(w.commits[1].subject, "mm: memcg: change");
	ASSERT_INTEQ(w.commits[2].touches_any, 0);
	gitm_walk_release(&w);

	/* Two more upstream: one touching a watched directory, one a glob. */
	ASSERT(commit(c4, work, "include/linux/memcontrol.h", "h\n",
	           "memcontrol.h") == 0);
	ASSERT(commit(c5, work, "net/sock.c", "s\n", "net: sock") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.cloned, 0);
	ASSERT_INTEQ(st.changed, 1);
	ASSERT_INTEQ(st.by_cli, 1);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, c5);
	ASSERT(gitm_new_commits(&w, m, c3, tip, watched, 3, 0) == 0);
	ASSERT_INTEQ(w.n, 2);
	ASSERT_INTEQ(w.rewrite, 0);
	ASSERT_STREQ(w.commits[0].sha, c4);
	ASSERT_INTEQ(w.commits[0].nparents, 1);
	ASSERT_STREQ(w.commits[0].parents[0], c3);
	ASSERT_INTEQ(w.commits[0].touches[0], 0);
	ASSERT_INTEQ(w.commits[0].touches[1], 1);
	ASSERT_INTEQ(w.commits[0].touches[2], 0);
	ASSERT_STREQ(w.commits[1].sha, c5);
	ASSERT_INTEQ(w.commits[1].touches[2], 1);
	ASSERT_STREQ(w.commits[1].author_name, "Ann Author");
	ASSERT_STREQ(w.commits[1].author_email, "ann@example.org");
	ASSERT_STREQ(w.commits[1].committer_name, "Cal Committer");
	ASSERT_INTEQ(w.commits[1].author_time, fake_time - 60);
	ASSERT_INTEQ(w.commits[1].author_tz, 60);
	gitm_walk_release(&w);

	/* Nothing new: an idle fetch (no git run), an empty walk. */
	ASSERT(gitm_fetch(&st, m) == 0);
	ASSERT_INTEQ(st.changed, 0);
	ASSERT_INTEQ(st.by_cli, 0);
	ASSERT(gitm_new_commits(&w, m, c5, c5, watched, 3, 0) == 0);
	ASSERT_INTEQ(w.n, 0);
	gitm_walk_release(&w);
	gitm_repo_free(m);
}

TEST(test_git__libgit2_first_copy_and_cap)
{
	char c[5][GITM_SHA_SIZE];
	struct gitm_opts o = { .transfer = GITM_XFER_LIBGIT2 };
	struct gitm_fetch_stats st;
	struct gitm_walk w;
	struct gitm_repo *m;
	const char *url, *work;
	char text[32];
	int i;

	setup();
	url = upstream("b");
	work = tpath("b.work");
	for (i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "%d\n", i);
		ASSERT(commit(c[i], work, "f", text, "change") == 0);
	}
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "b", url, &o);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.cloned, 1);
	ASSERT_INTEQ(st.by_cli, 0);
	ASSERT(st.received_objects > 0);
	/* The newest two of a new branch, oldest first. */
	ASSERT(gitm_new_commits(&w, m, "", c[4], NULL, 0, 2) == 0);
	ASSERT_INTEQ(w.n, 2);
	ASSERT_INTEQ(w.truncated, 1);
	ASSERT_STREQ(w.commits[0].sha, c[3]);
	ASSERT_STREQ(w.commits[1].sha, c[4]);
	gitm_walk_release(&w);
	/* A capped fast-forward keeps the newest too. */
	ASSERT(gitm_new_commits(&w, m, c[0], c[4], NULL, 0, 3) == 0);
	ASSERT_INTEQ(w.n, 3);
	ASSERT_INTEQ(w.truncated, 1);
	ASSERT_STREQ(w.commits[0].sha, c[2]);
	ASSERT_STREQ(w.commits[2].sha, c[4]);
	gitm_walk_release(&w);
	/* An incremental fetch by libgit2. */
	ASSERT(commit(c[0], work, "g", "g\n", "G") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.by_cli, 0);
	ASSERT(st.received_objects > 0);
	ASSERT(gitm_new_commits(&w, m, c[4], c[0], NULL, 0, 0) == 0);
	ASSERT_INTEQ(w.n, 1);
	gitm_walk_release(&w);
	/* Bad input. */
	ASSERT_INTEQ(
	    gitm_new_commits(&w, m, NULL, "nothex", NULL, 0, 0), ERR_INVALID);
	ASSERT_INTEQ(
	    gitm_new_commits(&w, m, NULL,
	        "0123456789012345678901234567890123456789", NULL, 0, 0),
	    ERR_NOTFOUND);
	ASSERT(strstr(gitm_errmsg(m), "tree b:") != NULL);
	gitm_repo_free(m);
}

TEST(test_git__force_push_is_a_rewrite)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], c[GITM_SHA_SIZE],
	    d[GITM_SHA_SIZE], e[GITM_SHA_SIZE], tip[GITM_SHA_SIZE];
	struct gitm_walk w;
	struct gitm_repo *m;
	const char *url, *work;

	setup();
	url = upstream("c");
	work = tpath("c.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(commit(b, work, "f", "b\n", "B") == 0);
	ASSERT(commit(c, work, "f", "c\n", "C") == 0);
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "c", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	/* Rebase: master goes back to A and grows D, E. */
	ASSERT(gitc(work, "reset", "-q", "--hard", a, NULL) == 0);
	ASSERT(commit(d, work, "g", "d\n", "D") == 0);
	ASSERT(commit(e, work, "g", "e\n", "E") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, e);
	ASSERT_INTEQ(gitm_is_ancestor(m, c, e), 0);
	ASSERT_INTEQ(gitm_is_ancestor(m, a, e), 1);
	ASSERT(gitm_new_commits(&w, m, c, e, NULL, 0, 0) == 0);
	ASSERT_INTEQ(w.rewrite, 1);
	ASSERT_STREQ(w.base, a);
	ASSERT_INTEQ(w.dropped, 2);
	ASSERT_INTEQ(w.n, 2);
	ASSERT_STREQ(w.commits[0].sha, d);
	ASSERT_STREQ(w.commits[1].sha, e);
	gitm_walk_release(&w);
	gitm_repo_free(m);
}

TEST(test_git__branch_deleted_upstream)
{
	char a[GITM_SHA_SIZE], f[GITM_SHA_SIZE], tip[GITM_SHA_SIZE];
	struct gitm_tip *tips;
	struct gitm_repo *m;
	const char *url, *work;
	size_t n;

	setup();
	url = upstream("d");
	work = tpath("d.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(gitc(work, "checkout", "-q", "-b", "feature", NULL) == 0);
	ASSERT(commit(f, work, "f", "f\n", "F") == 0);
	ASSERT(gitc(work, "tag", "v1", a, NULL) == 0);
	ASSERT(push(work, "master") == 0 && push(work, "feature") == 0 &&
	    push(work, "v1") == 0);
	m = gitm_repo_new(tpath("mirrors"), "d", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	ASSERT(gitm_tips(&tips, &n, m) == 0);
	ASSERT_INTEQ(n, 2);
	ASSERT_STREQ(tips[0].branch, "feature");
	ASSERT_STREQ(tips[0].sha, f);
	ASSERT_STREQ(tips[1].branch, "master");
	gitm_tips_free(tips, n);
	ASSERT(gitm_resolve(tip, m, "v1") == 0);
	ASSERT_STREQ(tip, a);

	ASSERT(gitc(work, "push", "-q", "origin", ":feature", NULL) == 0);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	ASSERT(gitm_tips(&tips, &n, m) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(tips[0].branch, "master");
	gitm_tips_free(tips, n);
	ASSERT_INTEQ(gitm_tip(tip, m, "feature"), ERR_NOTFOUND);
	gitm_clearerr(m);
	ASSERT_INTEQ(gitm_tip(tip, m, "../../etc"), ERR_NOTFOUND);
	gitm_repo_free(m);
}

TEST(test_git__remote_goes_away_and_comes_back)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], tip[GITM_SHA_SIZE];
	struct gitm_fetch_stats st;
	struct gitm_repo *m;
	const char *url, *work;
	char gone[1024];

	setup();
	url = upstream("e");
	work = tpath("e.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "e", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	snprintf(gone, sizeof(gone), "%s.gone", tpath("e.git"));
	ASSERT(rename(tpath("e.git"), gone) == 0);
	ASSERT(gitm_fetch(&st, m) == -1);
	ASSERT_MSG(strstr(gitm_errmsg(m), "tree e: fetch:") != NULL, "%s",
	    gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 0);
	/* The mirror is intact meanwhile. */
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, a);
	ASSERT(rename(gone, tpath("e.git")) == 0);
	ASSERT(commit(b, work, "f", "b\n", "B") == 0);
	ASSERT(push(work, "master") == 0);
	gitm_clearerr(m);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 0);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, b);
	gitm_repo_free(m);
}

static int
truncate_packs(const char *repo)
{
	char dir[1024], path[2048];
	int found = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/objects/pack", repo);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 5, ".pack") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (truncate(path, 40) == 0)
			found++;
	}
	closedir(d);
	return found ? 0 : -1;
}

TEST(test_git__corrupt_mirror_is_recreated)
{
	char a[GITM_SHA_SIZE], tip[GITM_SHA_SIZE], ref[1024];
	struct gitm_fetch_stats st;
	struct gitm_repo *m;
	const char *url, *work;
	FILE *f;

	setup();
	url = upstream("f");
	work = tpath("f.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "f", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	gitm_repo_free(m);

	/* Its packs cut short: found at open, copied again. */
	ASSERT(truncate_packs(tpath("mirrors/f.git")) == 0);
	m = gitm_repo_new(tpath("mirrors"), "f", url, NULL);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 1);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, a);
	gitm_repo_free(m);

	/* A branch naming a missing commit. */
	snprintf(
	    ref, sizeof(ref), "%s/refs/heads/master", tpath("mirrors/f.git"));
	ASSERT(gitc(tpath("mirrors/f.git"), "pack-refs", "--all", NULL) == 0);
	ASSERT((f = fopen(ref, "w")) != NULL);
	fputs("0123456789012345678901234567890123456789\n", f);
	fclose(f);
	m = gitm_repo_new(tpath("mirrors"), "f", url, NULL);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 1);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, a);
	gitm_repo_free(m);

	/* Not a repository at all (HEAD gone). */
	ASSERT(unlink(tpath("mirrors/f.git/HEAD")) == 0);
	m = gitm_repo_new(tpath("mirrors"), "f", url, NULL);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 1);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, a);
	gitm_repo_free(m);
}

static pid_t httpd_pid;

/* A failed ASSERT returns early: never leave the server running. */
static void
kill_httpd(void)
{
	if (httpd_pid > 0) {
		kill(httpd_pid, SIGTERM);
		waitpid(httpd_pid, NULL, 0);
	}
	httpd_pid = 0;
}

static pid_t
start_httpd(int *port)
{
	char portarg[16];
	char *argv[] = { "python3",
		(char *)test_srcpath("tests/unit/git_httpd.py"),
		(char *)test_tmpdir(), portarg, NULL };
	char line[32];
	ssize_t k;
	size_t len = 0;
	int p[2];
	pid_t pid;

	snprintf(portarg, sizeof(portarg), "%d", *port);
	if (pipe(p) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		/* The system python: a pyenv shim would look for HOME. */
		execv("/usr/bin/python3", argv);
		execvp("python3", argv);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0) {
		static int registered;

		httpd_pid = pid;
		if (!registered++)
			atexit(kill_httpd);
	}
	while (len < sizeof(line) - 1 && (k = read(p[0], line + len, 1)) == 1 &&
	    line[len] != '\n')
		len++;
	close(p[0]);
	line[len] = '\0';
	*port = (int)strtol(line, NULL, 10);
	if (*port <= 0) {
		kill_httpd();
		return -1;
	}
	return pid;
}

static void
stop_httpd(pid_t pid)
{
	(void)pid;
	kill_httpd();
}

TEST(test_git__over_http_with_an_outage)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], tip[GITM_SHA_SIZE], url[256];
	struct gitm_opts o = { .transfer = GITM_XFER_LIBGIT2 };
	struct gitm_fetch_stats st;
	struct gitm_walk w;
	struct gitm_repo *m, *m2;
	const char *work;
	int port = 0;
	pid_t pid;

	setup();
	upstream("h");
	work = tpath("h.work");
	ASSERT(commit(a, work, "mm/memcontrol.c", "a\n", "A") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT((pid = start_httpd(&port)) > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/h.git", port);
	m = gitm_repo_new(tpath("mirrors"), "h", url, &o);
	m2 = gitm_repo_new(tpath("mirrors"), "h-cli", url, NULL);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT_INTEQ(st.by_cli, 0);
	ASSERT_MSG(gitm_fetch(&st, m2) == 0, "%s", gitm_errmsg(m2));
	ASSERT_INTEQ(st.by_cli, 1);
	ASSERT(gitm_tip(tip, m2, "master") == 0);
	ASSERT_STREQ(tip, a);

	/* The server goes away: an error naming the tree, nothing lost. */
	stop_httpd(pid);
	ASSERT(commit(b, work, "mm/memcontrol.c", "b\n", "B") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT(gitm_fetch(&st, m) == -1);
	ASSERT_MSG(strstr(gitm_errmsg(m), "tree h: fetch:") != NULL, "%s",
	    gitm_errmsg(m));
	ASSERT_INTEQ(st.recreated, 0);
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, a);

	/* Back on the same port: the fetch brings B. */
	ASSERT((pid = start_httpd(&port)) > 0);
	gitm_clearerr(m);
	ASSERT_MSG(gitm_fetch(&st, m) == 0, "%s", gitm_errmsg(m));
	ASSERT(gitm_tip(tip, m, "master") == 0);
	ASSERT_STREQ(tip, b);
	ASSERT(gitm_new_commits(&w, m, a, b, watched, 3, 0) == 0);
	ASSERT_INTEQ(w.n, 1);
	ASSERT_INTEQ(w.commits[0].touches[0], 1);
	gitm_walk_release(&w);
	ASSERT_MSG(gitm_fetch(&st, m2) == 0, "%s", gitm_errmsg(m2));
	ASSERT(gitm_tip(tip, m2, "master") == 0);
	ASSERT_STREQ(tip, b);
	stop_httpd(pid);
	gitm_repo_free(m);
	gitm_repo_free(m2);
}

/* A server that accepts the connection (the kernel does) and says nothing. */
TEST(test_git__silent_server_times_out)
{
	struct gitm_opts o = { .transfer = GITM_XFER_LIBGIT2 };
	struct gitm_opts ocli = { .timeout_ms = 1000 };
	struct sockaddr_in sa = { 0 };
	socklen_t len = sizeof(sa);
	struct gitm_repo *m;
	long long t0;
	char url[128];
	int fd;

	setup();
	fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	ASSERT(listen(fd, 8) == 0);
	ASSERT(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	snprintf(
	    url, sizeof(url), "http://127.0.0.1:%d/x.git", ntohs(sa.sin_port));

	t0 = time(NULL);
	m = gitm_repo_new(tpath("mirrors"), "silent", url, &o);
	ASSERT(gitm_fetch(NULL, m) == -1);
	ASSERT_MSG(strstr(gitm_errmsg(m), "I/O timeout") != NULL, "%s",
	    gitm_errmsg(m));
	ASSERT(time(NULL) - t0 < 10);
	gitm_repo_free(m);

	t0 = time(NULL);
	m = gitm_repo_new(tpath("mirrors"), "silent-cli", url, &ocli);
	ASSERT(gitm_fetch(NULL, m) == -1);
	ASSERT_MSG(
	    strstr(gitm_errmsg(m), "timed out") != NULL, "%s", gitm_errmsg(m));
	ASSERT(time(NULL) - t0 < 10);
	ASSERT(access(tpath("mirrors/silent-cli.git"), F_OK) == -1);
	ASSERT(access(tpath("mirrors/silent-cli.git.tmp"), F_OK) == -1);
	gitm_repo_free(m);
	close(fd);
}

static int
file_is(const char *path, const char *text)
{
	char got[256];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	return strcmp(got, text) == 0;
}

TEST(test_git__checkout_for_the_runner)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], x[GITM_SHA_SIZE];
	struct gitm_repo *c;
	const char *url, *work, *dir;

	setup();
	url = upstream("k");
	work = tpath("k.work");
	ASSERT(commit(a, work, "src/main.c", "int main;\n", "A") == 0);
	ASSERT(commit(b, work, "src/other.c", "other\n", "B") == 0);
	ASSERT(push(work, "master") == 0);
	c = gitm_repo_for_url(tpath("runner"), url, NULL);
	ASSERT(strstr(gitm_path(c), "/runner/u-") != NULL);
	dir = tpath("build");
	ASSERT_MSG(gitm_checkout(c, b, dir) == 0, "%s", gitm_errmsg(c));
	ASSERT(file_is(tpath("build/src/other.c"), "other\n"));
	ASSERT(access(tpath("build/.git"), F_OK) == -1);
	/* A leftover from the last build disappears: a clean directory. */
	write_file(dir, "junk.o", "x");
	ASSERT_MSG(gitm_checkout(c, a, dir) == 0, "%s", gitm_errmsg(c));
	ASSERT(file_is(tpath("build/src/main.c"), "int main;\n"));
	ASSERT(access(tpath("build/src/other.c"), F_OK) == -1);
	ASSERT(access(tpath("build/junk.o"), F_OK) == -1);

	/* A commit pushed later is fetched on demand. */
	ASSERT(commit(x, work, "src/new.c", "new\n", "X") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT_MSG(gitm_checkout(c, x, dir) == 0, "%s", gitm_errmsg(c));
	ASSERT(file_is(tpath("build/src/new.c"), "new\n"));

	/* Unknown commit: not found, named. */
	ASSERT_INTEQ(
	    gitm_checkout(c, "0123456789012345678901234567890123456789", dir),
	    ERR_NOTFOUND);
	ASSERT(strstr(gitm_errmsg(c),
	           "0123456789012345678901234567890123456789") != NULL);
	gitm_repo_free(c);
}

/* The largest file of a commit's tree, nested ones too. */
TEST(test_git__largest_blob)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE];
	struct gitm_repo *c;
	const char *url, *work;
	int64_t n = -1;

	setup();
	url = upstream("lb");
	work = tpath("lb.work");
	ASSERT(commit(a, work, "top.txt", "12345\n", "A") == 0);
	ASSERT(commit(b, work, "deep/er/big.txt",
	           "0123456789012345678901234567890123456789\n", "B") == 0);
	ASSERT(push(work, "master") == 0);
	c = gitm_repo_for_url(tpath("lb-mirror"), url, NULL);
	ASSERT_MSG(gitm_fetch_commit(c, b) == 0, "%s", gitm_errmsg(c));
	ASSERT_MSG(gitm_largest_blob(&n, c, a) == 0, "%s", gitm_errmsg(c));
	ASSERT_INTEQ(n, 6);
	ASSERT_MSG(gitm_largest_blob(&n, c, b) == 0, "%s", gitm_errmsg(c));
	ASSERT_INTEQ(n, 41);
	ASSERT_INTEQ(gitm_largest_blob(
	                 &n, c, "0123456789012345678901234567890123456789"),
	    ERR_NOTFOUND);
	gitm_repo_free(c);
}

TEST(test_git__commit_on_no_branch_fetched_by_id)
{
	char a[GITM_SHA_SIZE], x[GITM_SHA_SIZE];
	struct gitm_opts o = { .transfer = GITM_XFER_LIBGIT2 };
	struct gitm_repo *c;
	const char *url, *work;

	setup();
	url = upstream("n");
	work = tpath("n.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT(gitc(work, "checkout", "-q", "-b", "tmp", NULL) == 0);
	ASSERT(commit(x, work, "f", "x\n", "X") == 0);
	ASSERT(push(work, "tmp") == 0);
	ASSERT(gitc(work, "push", "-q", "origin", ":tmp", NULL) == 0);
	/* libgit2 alone: its file:// transport sends advertised refs only. */
	c = gitm_repo_for_url(tpath("runner"), url, &o);
	ASSERT_INTEQ(gitm_checkout(c, x, tpath("build-n")), ERR_NOTFOUND);
	ASSERT_MSG(strstr(gitm_errmsg(c), "is on no branch or tag") != NULL,
	    "%s", gitm_errmsg(c));
	gitm_repo_free(c);
	/* With git at hand, the commit is fetched by its id. */
	ASSERT(gitc(tpath("n.git"), "config", "uploadpack.allowAnySHA1InWant",
	           "true", NULL) == 0);
	c = gitm_repo_for_url(tpath("runner"), url, NULL);
	ASSERT_MSG(
	    gitm_checkout(c, x, tpath("build-n")) == 0, "%s", gitm_errmsg(c));
	ASSERT(file_is(tpath("build-n/f"), "x\n"));
	gitm_repo_free(c);
}

/*
 * The job's baseline policies (daemon/trigger.c reads them; git answers
 * first parent, resolve and merge base) on a real mirror: this file has
 * the upstream fixture.
 */
TEST(test_git__baselines)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], f1[GITM_SHA_SIZE],
	    f2[GITM_SHA_SIZE], out[GITM_SHA_SIZE];
	struct err e = { 0 };
	struct gitm_repo *m;
	const char *url, *work;

	setup();
	url = upstream("g");
	work = tpath("g.work");
	ASSERT(commit(a, work, "f", "a\n", "A") == 0);
	ASSERT(commit(b, work, "f", "b\n", "B") == 0);
	ASSERT(gitc(work, "tag", "-a", "-m", "release", "v1.0", a, NULL) == 0);
	ASSERT(gitc(work, "checkout", "-q", "-b", "topic", NULL) == 0);
	ASSERT(commit(f1, work, "g", "1\n", "F1") == 0);
	ASSERT(commit(f2, work, "g", "2\n", "F2") == 0);
	ASSERT(gitc(work, "checkout", "-q", "master", NULL) == 0);
	ASSERT(commit(out, work, "h", "m\n", "M") == 0);
	ASSERT(push(work, "master") == 0 && push(work, "topic") == 0 &&
	    push(work, "v1.0") == 0);
	m = gitm_repo_new(tpath("mirrors"), "g", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));

	ASSERT(trigger_baseline(out, m, "parent", f2, &e) == 0);
	ASSERT_STREQ(out, f1);
	ASSERT(trigger_baseline(out, m, "branch-base:master", f2, &e) == 0);
	ASSERT_STREQ(out, b);
	ASSERT(trigger_baseline(
	           out, m, "branch-base:refs/heads/master", f2, &e) == 0);
	ASSERT_STREQ(out, b);
	ASSERT(trigger_baseline(out, m, "ref:v1.0", f2, &e) == 0);
	ASSERT_STREQ(out, a);
	ASSERT(trigger_baseline(out, m, "ref:topic", a, &e) == 0);
	ASSERT_STREQ(out, f2);
	ASSERT_INTEQ(trigger_baseline(out, m, "parent", a, &e), ERR_NOTFOUND);
	ASSERT_INTEQ(trigger_baseline(out, m, "ref:nope", a, &e), ERR_NOTFOUND);
	ASSERT_INTEQ(
	    trigger_baseline(out, m, "ref:master~1", a, &e), ERR_NOTFOUND);
	ASSERT_INTEQ(
	    trigger_baseline(out, m, "grandparent", a, &e), ERR_INVALID);
	ASSERT_MSG(
	    strstr(err_msg(&e), "baseline \"grandparent\": expected") != NULL,
	    "%s", err_msg(&e));
	gitm_clearerr(m);
	ASSERT(gitm_resolve(out, m, b) == 0);
	ASSERT_STREQ(out, b);
	ASSERT(gitm_merge_base(out, m, f2, a) == 0);
	ASSERT_STREQ(out, a);
	ASSERT_INTEQ(gitm_is_ancestor(m, b, f2), 1);
	ASSERT_INTEQ(gitm_is_ancestor(m, f2, f2), 1);
	ASSERT_INTEQ(gitm_is_ancestor(m, f2, b), 0);
	gitm_repo_free(m);
}

TEST(test_git__untrusted_text_is_capped)
{
	char a[GITM_SHA_SIZE];
	static char msg[3 * CAP_SUBJECT + 16];
	struct gitm_walk w;
	struct gitm_repo *m;
	const char *url, *work;
	size_t i, len;

	setup();
	url = upstream("u");
	work = tpath("u.work");
	/* A subject of 3-byte characters longer than the cap. */
	for (i = 0, len = 0; i < CAP_SUBJECT; i++) {
		memcpy(msg + len, "\xe2\x82\xac", 3);
		len += 3;
	}
	msg[len] = '\0';
	ASSERT(commit(a, work, "f", "a\n", msg) == 0);
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "u", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));
	ASSERT(gitm_new_commits(&w, m, NULL, a, NULL, 0, 0) == 0);
	ASSERT_INTEQ(w.n, 1);
	len = strlen(w.commits[0].subject);
	ASSERT(len < CAP_SUBJECT && len > CAP_SUBJECT - 4);
	ASSERT_INTEQ(len % 3, 0);
	gitm_walk_release(&w);
	gitm_repo_free(m);

	/* A tree name that could escape the mirrors directory. */
	m = gitm_repo_new(tpath("mirrors"), "../evil", url, NULL);
	ASSERT(gitm_fetch(NULL, m) == -1);
	ASSERT(strstr(gitm_errmsg(m), "tree name") != NULL);
	ASSERT(access(tpath("evil.git"), F_OK) == -1);
	gitm_repo_free(m);
}

static long long
mtime_ns(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

TEST(test_git__checkout_update_writes_only_changes)
{
	char a[GITM_SHA_SIZE], b[GITM_SHA_SIZE], c2[GITM_SHA_SIZE];
	struct gitm_repo *c;
	const char *url, *work, *dir;
	long long kept_ns, changed_ns;
	size_t n = 0;

	setup();
	url = upstream("cu");
	work = tpath("cu.work");
	ASSERT(commit(a, work, "mm/memcontrol.c", "v1\n", "A") == 0);
	ASSERT(commit(a, work, "mm/page_counter.c", "pc\n", "A2") == 0);
	ASSERT(commit(a, work, "net/core/sock.c", "sock\n", "A3") == 0);
	ASSERT(commit(b, work, "mm/memcontrol.c", "v2\n", "B") == 0);
	ASSERT(gitc(work, "rm", "-q", "net/core/sock.c", NULL) == 0);
	ASSERT(commit(c2, work, "new/file.c", "new\n", "C") == 0);
	ASSERT(push(work, "master") == 0);
	c = gitm_repo_for_url(tpath("runner"), url, NULL);
	dir = tpath("ubuild");
	ASSERT_MSG(gitm_checkout(c, a, dir) == 0, "%s", gitm_errmsg(c));
	/* Build products next to the sources survive an update. */
	write_file(dir, "obj/memcontrol.o", "o");
	kept_ns = mtime_ns(tpath("ubuild/mm/page_counter.c"));
	changed_ns = mtime_ns(tpath("ubuild/mm/memcontrol.c"));
	usleep(20000);
	ASSERT_MSG(
	    gitm_checkout_update(&n, c, a, c2, dir) == 0, "%s", gitm_errmsg(c));
	ASSERT_INTEQ(n, 3); /* memcontrol.c modified, sock.c gone, file.c new */
	ASSERT(file_is(tpath("ubuild/mm/memcontrol.c"), "v2\n"));
	ASSERT(file_is(tpath("ubuild/new/file.c"), "new\n"));
	ASSERT(access(tpath("ubuild/net/core/sock.c"), F_OK) == -1);
	ASSERT(file_is(tpath("ubuild/obj/memcontrol.o"), "o"));
	/* make decides by times: only the changed file is newer. */
	ASSERT_INTEQ(mtime_ns(tpath("ubuild/mm/page_counter.c")), kept_ns);
	ASSERT(mtime_ns(tpath("ubuild/mm/memcontrol.c")) > changed_ns);
	/* And back. */
	ASSERT_MSG(
	    gitm_checkout_update(&n, c, c2, a, dir) == 0, "%s", gitm_errmsg(c));
	ASSERT(file_is(tpath("ubuild/mm/memcontrol.c"), "v1\n"));
	ASSERT(file_is(tpath("ubuild/net/core/sock.c"), "sock\n"));
	ASSERT(access(tpath("ubuild/new/file.c"), F_OK) == -1);
	ASSERT_INTEQ(gitm_checkout_update(&n, c, a,
	                 "0123456789012345678901234567890123456789", dir),
	    ERR_NOTFOUND);
	gitm_repo_free(c);
}

/*
 * A build tree exported from a commit only another clone has (a
 * bisection's revert, made in the daemon's mirror) moves to a commit of
 * this clone by borrowing the other's objects: only the files that differ
 * are written, and neither repository gets anything.
 */
TEST(test_git__checkout_update_borrows_objects)
{
	char a[GITM_SHA_SIZE], r[GITM_SHA_SIZE], url1[1024], bare2[512];
	struct gitm_repo *c1, *c2;
	const char *work, *dir;
	long long kept_ns;
	size_t n = 0;

	setup();
	snprintf(url1, sizeof(url1), "%s", upstream("bo1"));
	work = tpath("bo1.work");
	ASSERT(commit(a, work, "mm/page_counter.c", "pc\n", "A1") == 0);
	ASSERT(commit(a, work, "mm/memcontrol.c", "spin\n", "A") == 0);
	ASSERT(push(work, "master") == 0);
	/* The second repository has one more commit (the revert). */
	upstream("bo2");
	snprintf(bare2, sizeof(bare2), "%s/bo2.git", test_tmpdir());
	ASSERT(commit(r, work, "mm/memcontrol.c", "v1\n", "Revert A") == 0);
	ASSERT(gitc(work, "push", "-q", "-f", bare2, "master", NULL) == 0);
	c1 = gitm_repo_for_url(tpath("brunner"), url1, NULL);
	c2 = gitm_repo_for_url(tpath("brunner"), tpath("bo2.git"), NULL);
	dir = tpath("bbuild");
	ASSERT_MSG(gitm_checkout(c2, r, dir) == 0, "%s", gitm_errmsg(c2));
	write_file(dir, "pw-obj/page_counter.o", "o");
	kept_ns = mtime_ns(tpath("bbuild/mm/page_counter.c"));
	usleep(20000);
	ASSERT_MSG(gitm_fetch_commit(c1, a) == 0, "%s", gitm_errmsg(c1));
	/* This clone never had the revert: no update without borrowing. */
	ASSERT_INTEQ(gitm_checkout_update(&n, c1, r, a, dir), ERR_NOTFOUND);
	gitm_clearerr(c1);
	ASSERT_MSG(
	    gitm_borrow_objects(c1, gitm_path(c2)) == 0, "%s", gitm_errmsg(c1));
	ASSERT_MSG(gitm_checkout_update(&n, c1, r, a, dir) == 0, "%s",
	    gitm_errmsg(c1));
	ASSERT_INTEQ(n, 1);
	ASSERT(file_is(tpath("bbuild/mm/memcontrol.c"), "spin\n"));
	ASSERT(file_is(tpath("bbuild/pw-obj/page_counter.o"), "o"));
	ASSERT_INTEQ(mtime_ns(tpath("bbuild/mm/page_counter.c")), kept_ns);
	gitm_repo_free(c1);
	/* Borrowed for the handle's life only: nothing was copied. */
	c1 = gitm_repo_for_url(tpath("brunner"), url1, NULL);
	ASSERT_INTEQ(gitm_has_commit(c1, r), 0);
	ASSERT_INTEQ(
	    gitm_borrow_objects(c1, tpath("no-such.git")), ERR_NOTFOUND);
	ASSERT(strstr(gitm_errmsg(c1), "no objects directory") != NULL);
	gitm_repo_free(c1);
	gitm_repo_free(c2);
}

/* Entries of DIR whose names start with prefix (-1: no DIR). */
static int
count_entries(const char *dir, const char *prefix)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

/*
 * The daemon's mirror has a base and a series of two commits on it; a
 * runner's clone of the public tree has only the base.  The pack carries
 * the two commits byte for byte (same ids, same trees) and nothing the
 * base already holds.
 */
TEST(test_git__pack_round_trip)
{
	char base[GITM_SHA_SIZE], p1[GITM_SHA_SIZE], p2[GITM_SHA_SIZE];
	char t_d[GITM_SHA_SIZE], t_r[GITM_SHA_SIZE], big[65536];
	struct buf pack = BUF_INIT(CAP_HTTP_REPLY), tiny = BUF_INIT(100);
	struct gitm_repo *d, *rc, *rc2, *rc3;
	const char *url, *work;
	size_t n = 0, i;
	char *daemon_url;
	unsigned x = 12345;

	setup();
	url = upstream("pk");
	work = tpath("pk.work");
	/* Incompressible bytes: the pack would show them if it held them. */
	for (i = 0; i < sizeof(big) - 1; i++) {
		x = x * 1103515245u + 12345u;
		big[i] = (char)('!' + (x >> 16) % 90);
	}
	big[sizeof(big) - 1] = '\0';
	write_file(work, "big.bin", big);
	ASSERT(commit(base, work, "mm/memcontrol.c", "base\n", "base") == 0);
	ASSERT(push(work, "master") == 0);
	ASSERT(commit(p1, work, "mm/memcontrol.c", "patch 1\n", "p1") == 0);
	ASSERT(commit(p2, work, "mm/new.c", "patch 2\n", "p2") == 0);
	/* The daemon's mirror sees the series (here: the work clone). */
	daemon_url = malloc(1100);
	snprintf(daemon_url, 1100, "file://%s", work);
	d = gitm_repo_new(tpath("pkd"), "t", daemon_url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, d) == 0, "%s", gitm_errmsg(d));
	rc = gitm_repo_for_url(tpath("pkr"), url, NULL);
	ASSERT_MSG(gitm_fetch_commit(rc, base) == 0, "%s", gitm_errmsg(rc));
	ASSERT_INTEQ(gitm_has_commit(rc, p2), 0);
	ASSERT_INTEQ(gitm_has_commit(rc, "nothex"), ERR_INVALID);

	ASSERT_MSG(
	    gitm_pack_build(&pack, &n, d, p2, base) == 0, "%s", gitm_errmsg(d));
	ASSERT_INTEQ(n, 2);
	ASSERT(pack.len > 12 && memcmp(pack.data, "PACK", 4) == 0);
	ASSERT_MSG(pack.len < 8192, "pack of %zu bytes holds the base's blob",
	    pack.len);
	ASSERT_MSG(gitm_pack_add(rc, p2, pack.data, pack.len) == 0, "%s",
	    gitm_errmsg(rc));
	ASSERT_INTEQ(gitm_has_commit(rc, p2), 1);
	ASSERT_INTEQ(gitm_has_commit(rc, p1), 1);
	ASSERT(gitm_tree_id(t_d, d, p2) == 0 && gitm_tree_id(t_r, rc, p2) == 0);
	ASSERT_STREQ(t_r, t_d);
	ASSERT_MSG(gitm_checkout(rc, p2, tpath("pk-build")) == 0, "%s",
	    gitm_errmsg(rc));
	ASSERT(file_is(tpath("pk-build/mm/memcontrol.c"), "patch 1\n"));
	ASSERT(file_is(tpath("pk-build/mm/new.c"), "patch 2\n"));
	/* No scratch directory is left in the clone. */
	ASSERT_INTEQ(count_entries(gitm_path(rc), "pack-in-"), 0);

	/* The cap; HAVE not an ancestor; an unknown HAVE. */
	ASSERT_INTEQ(gitm_pack_build(&tiny, NULL, d, p2, base), ERR_TOOBIG);
	ASSERT_MSG(strstr(gitm_errmsg(d), "larger than 100 bytes") != NULL,
	    "%s", gitm_errmsg(d));
	ASSERT_INTEQ(tiny.len, 0);
	gitm_clearerr(d);
	ASSERT_INTEQ(gitm_pack_build(&tiny, NULL, d, base, p2), ERR_INVALID);
	ASSERT(strstr(gitm_errmsg(d), "is not an ancestor of") != NULL);
	gitm_clearerr(d);
	ASSERT_INTEQ(gitm_pack_build(&tiny, NULL, d, p2,
	                 "0123456789012345678901234567890123456789"),
	    ERR_NOTFOUND);
	gitm_clearerr(d);

	/* A damaged pack: refused, the clone untouched. */
	rc2 = gitm_repo_for_url(tpath("pkr2"), url, NULL);
	ASSERT(gitm_fetch_commit(rc2, base) == 0);
	{
		char packs[1024];
		int before;

		snprintf(
		    packs, sizeof(packs), "%s/objects/pack", gitm_path(rc2));
		before = count_entries(packs, "pack-");
		pack.data[pack.len / 2] ^= 0x5a;
		ASSERT_INTEQ(
		    gitm_pack_add(rc2, p2, pack.data, pack.len), ERR_INVALID);
		ASSERT_MSG(
		    strstr(gitm_errmsg(rc2), "indexing the pack") != NULL, "%s",
		    gitm_errmsg(rc2));
		pack.data[pack.len / 2] ^= 0x5a;
		ASSERT_INTEQ(count_entries(packs, "pack-"), before);
		ASSERT_INTEQ(count_entries(gitm_path(rc2), "pack-in-"), 0);
		ASSERT_INTEQ(gitm_has_commit(rc2, p2), 0);
		gitm_clearerr(rc2);

		/* A sound pack of another commit: both ids named. */
		ASSERT(gitm_pack_build(&pack, &n, d, p1, base) == 0);
		ASSERT_INTEQ(n, 1);
		ASSERT_INTEQ(
		    gitm_pack_add(rc2, p2, pack.data, pack.len), ERR_NOTFOUND);
		ASSERT_MSG(strstr(gitm_errmsg(rc2), p2) != NULL &&
		        strstr(gitm_errmsg(rc2), p1) != NULL,
		    "%s", gitm_errmsg(rc2));
		ASSERT_INTEQ(count_entries(packs, "pack-"), before);
		gitm_clearerr(rc2);

		/* A pack that needs a commit the clone lacks (p1). */
		ASSERT(gitm_pack_build(&pack, &n, d, p2, p1) == 0);
		ASSERT_INTEQ(
		    gitm_pack_add(rc2, p2, pack.data, pack.len), ERR_INVALID);
		ASSERT_MSG(strstr(gitm_errmsg(rc2), "incomplete") != NULL &&
		        strstr(gitm_errmsg(rc2), p1) != NULL,
		    "%s", gitm_errmsg(rc2));
		ASSERT_INTEQ(count_entries(packs, "pack-"), before);
		ASSERT_INTEQ(gitm_has_commit(rc2, p2), 0);
	}
	/* Not a pack at all. */
	rc3 = gitm_repo_for_url(tpath("pkr3"), url, NULL);
	ASSERT(gitm_fetch_commit(rc3, base) == 0);
	ASSERT_INTEQ(
	    gitm_pack_add(rc3, p2, "{\"error\":\"x\"}", 13), ERR_INVALID);
	gitm_repo_free(rc3);
	gitm_repo_free(rc2);
	gitm_repo_free(rc);
	gitm_repo_free(d);
	free(daemon_url);
	buf_release(&pack);
	buf_release(&tiny);
}

/* The author both appliers give a mailed patch (gitm_patch_author). */
TEST(test_git__patch_author_from_untrusted_mail)
{
	struct gitm_patch p = { 0 };
	char name[CAP_NAME + 1], email[CAP_NAME + 1];

	p.author_name = "Ann <Author>";
	p.author_email = "ann at example.org\n";
	gitm_patch_author(name, email, &p);
	ASSERT_STREQ(name, "Ann  Author ");
	ASSERT_STREQ(email, "ann_at_example.org_");
	/* Empty, or only what git strips: git would refuse the name. */
	p.author_name = "";
	p.author_email = NULL;
	gitm_patch_author(name, email, &p);
	ASSERT_STREQ(name, "unknown");
	ASSERT_STREQ(email, "unknown");
	p.author_name = " .;\t'";
	p.author_email = " ";
	gitm_patch_author(name, email, &p);
	ASSERT_STREQ(name, "unknown");
	ASSERT_STREQ(email, "_");
}

/* A bisection's range: first parents or the whole DAG, paths, the
 * ancestry check; a revert that applies and one that conflicts. */
TEST(test_git__bisect_range_and_revert)
{
	char g[GITM_SHA_SIZE], c1[GITM_SHA_SIZE], c2[GITM_SHA_SIZE],
	    t1[GITM_SHA_SIZE], mg[GITM_SHA_SIZE], c3[GITM_SHA_SIZE],
	    rev[GITM_SHA_SIZE];
	const char *paths[] = { "mm" };
	struct gitm_walk w;
	struct gitm_repo *m;
	const char *url, *work;

	setup();
	url = upstream("bis");
	work = tpath("bis.work");
	ASSERT(commit(g, work, "f", "g\n", "G") == 0);
	ASSERT(commit(c1, work, "mm/a.c", "1\n", "C1 mm") == 0);
	ASSERT(gitc(work, "checkout", "-q", "-b", "side", NULL) == 0);
	ASSERT(commit(t1, work, "side.txt", "t\n", "T1 side") == 0);
	ASSERT(gitc(work, "checkout", "-q", "master", NULL) == 0);
	ASSERT(commit(c2, work, "other.txt", "2\n", "C2 other") == 0);
	ASSERT(gitc(work, "merge", "-q", "--no-ff", "-m", "Merge side", "side",
	           NULL) == 0);
	ASSERT(gitc(work, "rev-parse", "HEAD", NULL) == 0);
	snprintf(mg, sizeof(mg), "%.40s", outbuf);
	ASSERT(commit(c3, work, "f", "g\nh\n", "C3 f") == 0);
	ASSERT(push(work, "master") == 0);
	m = gitm_repo_new(tpath("mirrors"), "bis", url, NULL);
	ASSERT_MSG(gitm_fetch(NULL, m) == 0, "%s", gitm_errmsg(m));

	/* First parents: C1 C2 Merge C3, oldest first, the bad end
	 * last. */
	ASSERT_MSG(gitm_range(&w, m, g, c3, 1, paths, 1, 0) == 0, "%s",
	    gitm_errmsg(m));
	ASSERT_INTEQ(w.n, 4);
	ASSERT_STREQ(w.commits[0].sha, c1);
	ASSERT_STREQ(w.commits[1].sha, c2);
	ASSERT_STREQ(w.commits[2].sha, mg);
	ASSERT_STREQ(w.commits[3].sha, c3);
	ASSERT(w.commits[0].touches_any && !w.commits[1].touches_any &&
	    !w.commits[3].touches_any);
	gitm_walk_release(&w);
	/* The whole DAG has the side branch's commit too. */
	ASSERT(gitm_range(&w, m, g, c3, 0, NULL, 0, 0) == 0);
	ASSERT_INTEQ(w.n, 5);
	ASSERT_STREQ(w.commits[w.n - 1].sha, c3);
	gitm_walk_release(&w);
	/* Not an ancestor: refused, naming both. */
	ASSERT_INTEQ(gitm_range(&w, m, c3, g, 1, NULL, 0, 0), ERR_INVALID);
	ASSERT(strstr(gitm_errmsg(m), "is not an ancestor") != NULL);
	gitm_clearerr(m);
	ASSERT_INTEQ(
	    gitm_range(&w, m, g, "0123456789012345678901234567890123456789", 1,
	        NULL, 0, 0),
	    ERR_NOTFOUND);
	gitm_clearerr(m);

	/* C1's revert applies on C3: mm/a.c is gone again. */
	ASSERT_MSG(gitm_revert(rev, m, c1, c3, "refs/perfwatch/bisect/1") == 0,
	    "%s", gitm_errmsg(m));
	ASSERT(gitc(tpath("mirrors/bis.git"), "log", "-1", "--format=%s",
	           "refs/perfwatch/bisect/1", NULL) == 0);
	ASSERT(strncmp(outbuf, "Revert \"C1 mm\"", 14) == 0);
	ASSERT(gitc(tpath("mirrors/bis.git"), "rev-parse",
	           "refs/perfwatch/bisect/1^", NULL) == 0);
	ASSERT(strncmp(outbuf, c3, 40) == 0);
	ASSERT(gitc(tpath("mirrors/bis.git"), "cat-file", "-e",
	           "refs/perfwatch/bisect/1:mm/a.c", NULL) != 0);
	/* The same inputs make the same commit. */
	{
		char again[GITM_SHA_SIZE];

		ASSERT(gitm_revert(again, m, c1, c3, NULL) == 0);
		ASSERT_STREQ(again, rev);
	}
	/* G's revert on C3 conflicts in f (C3 changed the same line).
	 */
	ASSERT_INTEQ(gitm_revert(rev, m, g, c3, NULL), ERR_CONFLICT);
	ASSERT(strstr(gitm_errmsg(m), "conflict in f") != NULL);
	gitm_repo_free(m);
}

/*
 * The git am --3way applier on its own refuses what the series check
 * (git/series.c) refuses before it: a ../ path, a .git/ path, a write
 * through a symlink of the parent tree; and writes nothing outside its
 * scratch directory, which it removes.  (Series reach it only after
 * that check, t0436; this is the second line.)
 */
TEST(test_git__am_refuses_hostile_paths)
{
	static const char *const diffs[] = {
		"diff --git a/../../pwevil-am b/../../pwevil-am\n"
		"new file mode 100644\n"
		"index 0000000..e69de29\n"
		"--- /dev/null\n"
		"+++ b/../../pwevil-am\n"
		"@@ -0,0 +1 @@\n"
		"+owned\n",
		"diff --git a/.git/config b/.git/config\n"
		"new file mode 100644\n"
		"index 0000000..e69de29\n"
		"--- /dev/null\n"
		"+++ b/.git/config\n"
		"@@ -0,0 +1 @@\n"
		"+[core]\n",
		"diff --git a/up/pwevil-am b/up/pwevil-am\n"
		"new file mode 100644\n"
		"index 0000000..e69de29\n"
		"--- /dev/null\n"
		"+++ b/up/pwevil-am\n"
		"@@ -0,0 +1 @@\n"
		"+owned\n",
	};
	const char *work = tpath("am-src"), *bare = tpath("am.git");
	const char *tmp = tpath("am-tmp");
	char parent[GITM_SHA_SIZE], out[GITM_SHA_SIZE], lnk[1024], *old;
	struct gitm_patch p = { 0 };
	struct stat sb;
	size_t i;
	DIR *d;
	struct dirent *de;
	int left = 0;

	setup();
	mkdir(tmp, 0700);
	ASSERT(gitc(NULL, "init", "-q", "-b", "master", work, NULL) == 0);
	snprintf(lnk, sizeof(lnk), "%s/up", work);
	ASSERT(symlink("..", lnk) == 0); /* the tree's own link, upward */
	ASSERT(commit(parent, work, "README", "readme\n", "initial") == 0);
	ASSERT(gitc(NULL, "clone", "-q", "--bare", work, bare, NULL) == 0);
	old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", tmp, 1);
	p.author_name = "Eve";
	p.author_email = "eve@example.org";
	p.author_time = 1733133600;
	p.message = "hostile\n";
	for (i = 0; i < sizeof(diffs) / sizeof(diffs[0]); i++) {
		struct err e = { 0 };

		p.diff = diffs[i];
		p.len = strlen(diffs[i]);
		ASSERT_MSG(gitam_apply(out, bare, parent, &p, &e) != 0,
		    "patch %zu applied: %s", i, out);
	}
	if (old != NULL)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	/* ../../ of the scratch worktree is TMPDIR; up/ is the tree's
	 * parent directory. */
	ASSERT(stat(tpath("am-tmp/pwevil-am"), &sb) == -1);
	ASSERT(stat(tpath("pwevil-am"), &sb) == -1);
	ASSERT((d = opendir(tmp)) != NULL);
	while ((de = readdir(d)) != NULL)
		left += de->d_name[0] != '.';
	closedir(d);
	ASSERT_MSG(left == 0, "%d entries left in the scratch TMPDIR", left);
}
