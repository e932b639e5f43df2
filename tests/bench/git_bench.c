/*
 * Benchmark of the git module (git/) against the git command
 * line, side by side in one run (make bench-git).  Timings on shared
 * machines drift, so each comparison alternates the two sides and
 * reports medians.
 *
 *	git_bench DIR [--no-first-copy]
 *
 * DIR caches a synthetic 100,000-commit repository (tests/bench/
 * git_genrepo.py through git fast-import) so reruns skip the ~20 s of
 * generation.  Measures:
 *   1. first copy: libgit2 clone vs `git clone --bare`;
 *   2. 1,000 new commits: gitm_fetch + gitm_new_commits with 5 watched
 *      paths vs `git fetch` + `git rev-list OLD..NEW -- PATHS`;
 *   3. idle polls of the 100,000-commit mirror: time per poll and RSS
 *      across 1,000 polls.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "common/clock.h"
#include "git/git.h"

#define NCOMMITS 100000
#define NNEW 1000
#define REPS 3
#define POLLS 1000
#define FIRST_COPY_DEADLINE_S 90

static const char *paths[] = { "mm/memcontrol.c", "mm/memcontrol-v1.c",
	"include/linux/memcontrol.h", "mm/page_counter.c", "net/core/sock.c" };

/* Runs argv; stdout to outfd (or /dev/null when -1), stdin from infd. */
static int
run(char *const argv[], int infd, int outfd)
{
	int status, null;
	pid_t pid;

	if ((pid = fork()) == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(infd >= 0 ? infd : null, 0);
		dup2(outfd >= 0 ? outfd : null, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid == -1)
		return -1;
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs argv and returns its first output line in out. */
static int
run_out(char *const argv[], char *out, size_t len)
{
	char tmpl[] = "/tmp/gitbench.XXXXXX";
	int fd = mkstemp(tmpl), rc;
	ssize_t n;

	if (fd == -1)
		return -1;
	unlink(tmpl);
	rc = run(argv, -1, fd);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(fd);
	return rc;
}

/* Counts the lines argv prints. */
static long
run_count(char *const argv[])
{
	char tmpl[] = "/tmp/gitbench.XXXXXX", buf[65536];
	int fd = mkstemp(tmpl);
	long lines = 0;
	ssize_t n, i;

	if (fd == -1)
		return -1;
	unlink(tmpl);
	if (run(argv, -1, fd) != 0) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static void
die(const char *what)
{
	fprintf(stderr, "git_bench: %s\n", what);
	exit(1);
}

static char *
pathf(const char *dir, const char *name)
{
	static char p[8][1200];
	static int slot;
	char *s = p[slot++ % 8];

	snprintf(s, sizeof(p[0]), "%.1000s/%s", dir, name);
	return s;
}

static void
rm_rf(const char *path)
{
	char *argv[] = { "rm", "-rf", (char *)path, NULL };

	run(argv, -1, -1);
}

static void
copy_tree(const char *from, const char *to)
{
	char *argv[] = { "cp", "-a", (char *)from, (char *)to, NULL };

	rm_rf(to);
	if (run(argv, -1, -1) != 0)
		die("cp failed");
}

static void
set_ref(const char *repo, const char *ref, const char *sha)
{
	char *argv[] = { "git", "--git-dir", (char *)repo, "update-ref",
		(char *)ref, (char *)sha, NULL };

	if (run(argv, -1, -1) != 0)
		die("update-ref failed");
}

static void
rev_parse(const char *repo, const char *ref, char out[GITM_SHA_SIZE])
{
	char line[128];
	char *argv[] = { "git", "--git-dir", (char *)repo, "rev-parse",
		(char *)ref, NULL };

	if (run_out(argv, line, sizeof(line)) != 0 || strlen(line) != 40)
		die("rev-parse failed");
	memcpy(out, line, GITM_SHA_SIZE);
}

/*
 * up.git: NCOMMITS commits made by fast-import; refs/bench/new names
 * the last one and master stays NNEW commits behind, so a mirror made
 * now has NCOMMITS - NNEW commits and a later fetch brings NNEW.
 */
static void
make_upstream(const char *dir, const char *genpy)
{
	char up[1200], base[1200];
	char nstr[32], mark[64], sha[GITM_SHA_SIZE];
	char *init[] = { "git", "init", "-q", "--bare", up, NULL };
	char *gen[] = { "python3", (char *)genpy, nstr, mark, NULL };
	char *fi[] = { "git", "--git-dir", up, "fast-import", "--quiet", NULL };
	char *del[] = { "git", "--git-dir", up, "update-ref", "-d",
		"refs/heads/old", NULL };
	char url[1300];
	char *clone[] = { "git", "clone", "-q", "--bare", url, base, NULL };
	int p[2], st1, st2;
	pid_t a, b;
	double t0;

	if (access(pathf(dir, "ready"), F_OK) == 0)
		return;
	snprintf(up, sizeof(up), "%s", pathf(dir, "up.git"));
	snprintf(base, sizeof(base), "%s", pathf(dir, "base.git"));
	fprintf(stderr, "git_bench: generating a %d-commit repository in %s\n",
	    NCOMMITS, dir);
	t0 = clock_mono_s();
	rm_rf(up);
	rm_rf(base);
	mkdir(dir, 0755);
	snprintf(nstr, sizeof(nstr), "%d", NCOMMITS);
	snprintf(mark, sizeof(mark), "old=%d", NCOMMITS - NNEW);
	if (run(init, -1, -1) != 0 || pipe(p) == -1)
		die("git init failed");
	if ((a = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execvp(gen[0], gen);
		_exit(127);
	}
	if ((b = fork()) == 0) {
		dup2(p[0], 0);
		close(p[1]);
		execvp(fi[0], fi);
		_exit(127);
	}
	close(p[0]);
	close(p[1]);
	waitpid(a, &st1, 0);
	waitpid(b, &st2, 0);
	if (!WIFEXITED(st1) || WEXITSTATUS(st1) || !WIFEXITED(st2) ||
	    WEXITSTATUS(st2))
		die("fast-import failed");
	rev_parse(up, "refs/heads/master", sha);
	set_ref(up, "refs/bench/new", sha);
	rev_parse(up, "refs/heads/old", sha);
	set_ref(up, "refs/heads/master", sha);
	if (run(del, -1, -1) != 0)
		die("update-ref -d failed");
	snprintf(url, sizeof(url), "file://%s", up);
	if (run(clone, -1, -1) != 0)
		die("clone of base failed");
	close(open(pathf(dir, "ready"), O_CREAT | O_WRONLY, 0644));
	fprintf(
	    stderr, "git_bench: generated in %.1f s\n", clock_mono_s() - t0);
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long
rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static struct gitm_progress last_prog;

static int
keep_progress(const struct gitm_progress *p, void *arg)
{
	(void)arg;
	last_prog = *p;
	return 0;
}

/*
 * One first copy by each side, libgit2 first, each with a deadline of
 * FIRST_COPY_DEADLINE_S: libgit2's local transport builds its pack with
 * a full delta search, which takes many minutes here.
 */
static void
first_copy(const char *dir, const char *url, const char *how)
{
	struct gitm_opts lib = { .transfer = GITM_XFER_LIBGIT2,
		.timeout_ms = FIRST_COPY_DEADLINE_S * 1000L,
		.progress = keep_progress };
	struct gitm_opts cli = { .transfer = GITM_XFER_CLI,
		.timeout_ms = FIRST_COPY_DEADLINE_S * 1000L };
	struct gitm_fetch_stats st;
	struct gitm_repo *m;
	double t0, tl, tc;
	int okl, okc;

	rm_rf(pathf(dir, "first.git"));
	memset(&last_prog, 0, sizeof(last_prog));
	m = gitm_repo_new(dir, "first", url, &lib);
	t0 = clock_mono_s();
	okl = gitm_fetch(&st, m) == 0;
	tl = clock_mono_s() - t0;
	gitm_repo_free(m);
	rm_rf(pathf(dir, "first.git"));
	m = gitm_repo_new(dir, "first", url, &cli);
	t0 = clock_mono_s();
	okc = gitm_fetch(&st, m) == 0;
	tc = clock_mono_s() - t0;
	gitm_repo_free(m);
	rm_rf(pathf(dir, "first.git"));
	printf("first copy of %d commits over %s:\n", NCOMMITS - NNEW, how);
	if (okl)
		printf("  libgit2 %.1f s\n", tl);
	else
		printf("  libgit2 unfinished after %.0f s (%u of %u objects "
		       "received, %u deltas of %u indexed)\n",
		    tl, last_prog.received_objects, last_prog.total_objects,
		    last_prog.indexed_deltas, last_prog.total_deltas);
	if (okc)
		printf("  git clone --bare %.1f s\n", tc);
	else
		printf("  git clone --bare failed after %.0f s\n", tc);
	fflush(stdout);
}

static pid_t
start_httpd(const char *dir, int *port)
{
	char *argv[] = { "python3", "tests/unit/git_httpd.py", (char *)dir,
		NULL };
	char line[32];
	size_t len = 0;
	int p[2];
	pid_t pid;

	if (pipe(p) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv("/usr/bin/python3", argv);
		execvp("python3", argv);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof(line) - 1 && read(p[0], line + len, 1) == 1 &&
	    line[len] != '\n')
		len++;
	close(p[0]);
	line[len] = '\0';
	*port = (int)strtol(line, NULL, 10);
	return *port > 0 ? pid : -1;
}

/*
 * NNEW new commits with a path filter: a mirror copied from base.git
 * fetches and walks them, against git fetch + git rev-list on another
 * copy, alternating which side goes first.
 */
static void
new_commits(const char *dir, const char *base, const char *url, const char *how,
    const char *old, const char *new, enum gitm_transfer xfer)
{
	struct gitm_opts o = { .transfer = xfer };
	double tp[REPS], tpf[REPS], tg[REPS], tgf[REPS], t0;
	char range[100], tip[GITM_SHA_SIZE];
	struct gitm_fetch_stats st;
	long touching = 0, gitcount = 0;
	struct gitm_walk w;
	struct gitm_repo *m;
	size_t i;
	int r, k;

	snprintf(range, sizeof(range), "%s..%s", old, new);
	for (r = 0; r < REPS; r++) {
		for (k = 0; k < 2; k++) {
			int pwside = (r + k) % 2 == 0;

			if (pwside) {
				copy_tree(base, pathf(dir, "pw.git"));
				m = gitm_repo_new(dir, "pw", url, &o);
				t0 = clock_mono_s();
				if (gitm_fetch(&st, m) != 0)
					die(gitm_errmsg(m));
				tpf[r] = clock_mono_s() - t0;
				if (gitm_tip(tip, m, "master") != 0 ||
				    gitm_new_commits(
				        &w, m, old, tip, paths, 5, 0) != 0)
					die(gitm_errmsg(m));
				tp[r] = clock_mono_s() - t0;
				if (w.n != NNEW)
					die("wrong number of new commits");
				for (touching = 0, i = 0; i < w.n; i++)
					touching += w.commits[i].touches_any;
				gitm_walk_release(&w);
				gitm_repo_free(m);
			} else {
				char *g = pathf(dir, "g.git");
				char *fetch[] = { "git", "--git-dir", g,
					"fetch", "-q", "--prune", (char *)url,
					"+refs/heads/*:refs/heads/*",
					"+refs/tags/*:refs/tags/*", NULL };
				char *revl[] = { "git", "--git-dir", g,
					"rev-list", range, "--",
					(char *)paths[0], (char *)paths[1],
					(char *)paths[2], (char *)paths[3],
					(char *)paths[4], NULL };

				copy_tree(base, g);
				t0 = clock_mono_s();
				if (run(fetch, -1, -1) != 0)
					die("git fetch failed");
				tgf[r] = clock_mono_s() - t0;
				gitcount = run_count(revl);
				tg[r] = clock_mono_s() - t0;
			}
		}
	}
	printf("%d new commits, 5 paths, in a %d-commit mirror, over %s: "
	       "perfwatch "
	       "(fetch + walk + paths) %.3f s, git (fetch + rev-list) %.3f s, "
	       "ratio %.2f (median of %d, alternated)\n",
	    NNEW, NCOMMITS, how, analysis_median_inplace(tp, REPS),
	    analysis_median_inplace(tg, REPS),
	    analysis_median_inplace(tp, REPS) /
	        analysis_median_inplace(tg, REPS),
	    REPS);
	printf("  of which fetch: perfwatch (%s) %.3f s, git %.3f s\n",
	    xfer == GITM_XFER_LIBGIT2 ? "libgit2 fetch"
	                              : "libgit2 ref check + git fetch",
	    analysis_median_inplace(tpf, REPS),
	    analysis_median_inplace(tgf, REPS));
	printf("  commits touching the paths: perfwatch %ld, git rev-list "
	       "%ld\n",
	    touching, gitcount);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	char dir[1024], url[1300], old[GITM_SHA_SIZE], new[GITM_SHA_SIZE],
	    genpy[1100], hurl[128], up[1200], base[1200];
	struct gitm_fetch_stats st;
	struct gitm_repo *m;
	struct gitm_tip *tips;
	long rss10 = 0, rss_end;
	double *poll, t0;
	size_t ntips;
	int r, port = 0;
	pid_t httpd;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && strcmp(argv[2], "--no-first-copy") != 0))
		die("usage: git_bench DIR [--no-first-copy]");
	if (realpath(argv[1], dir) == NULL) {
		mkdir(argv[1], 0755);
		if (realpath(argv[1], dir) == NULL)
			die("bad DIR");
	}
	if (realpath("tests/bench/git_genrepo.py", genpy) == NULL)
		die("run from the top of the source tree");
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	if (gitm_global_init(0) != 0)
		die("gitm_global_init");
	make_upstream(dir, genpy);
	snprintf(up, sizeof(up), "%s", pathf(dir, "up.git"));
	snprintf(base, sizeof(base), "%s", pathf(dir, "base.git"));
	snprintf(url, sizeof(url), "file://%s", up);
	rev_parse(base, "refs/heads/master", old);
	rev_parse(up, "refs/bench/new", new);

	/* 1. First copy of the tree (master at NCOMMITS - NNEW). */
	set_ref(up, "refs/heads/master", old);
	if (argc == 2) {
		first_copy(dir, url, "file://");
		if ((httpd = start_httpd(dir, &port)) <= 0)
			die("cannot start tests/unit/git_httpd.py");
		snprintf(
		    hurl, sizeof(hurl), "http://127.0.0.1:%d/up.git", port);
		first_copy(dir, hurl, "smart HTTP (git http-backend)");
		kill(httpd, SIGTERM);
		waitpid(httpd, NULL, 0);
	}

	/* 2. NNEW new commits, path filter, over file:// and HTTP. */
	set_ref(up, "refs/heads/master", new);
	new_commits(dir, base, url, "file://", old, new, GITM_XFER_AUTO);
	if ((httpd = start_httpd(dir, &port)) <= 0)
		die("cannot start tests/unit/git_httpd.py");
	snprintf(hurl, sizeof(hurl), "http://127.0.0.1:%d/up.git", port);
	new_commits(dir, base, hurl, "smart HTTP", old, new, GITM_XFER_AUTO);
	new_commits(dir, base, hurl, "smart HTTP, libgit2 transfer only", old,
	    new, GITM_XFER_LIBGIT2);
	kill(httpd, SIGTERM);
	waitpid(httpd, NULL, 0);

	/* 3. Idle polls of the NCOMMITS mirror left by step 2. */
	poll = calloc(POLLS, sizeof(*poll));
	m = gitm_repo_new(dir, "pw", url, NULL);
	for (r = 0; r < POLLS; r++) {
		t0 = clock_mono_s();
		if (gitm_fetch(&st, m) != 0 || gitm_tips(&tips, &ntips, m) != 0)
			die(gitm_errmsg(m));
		poll[r] = clock_mono_s() - t0;
		if (st.received_objects != 0 || ntips != 1)
			die("idle poll fetched something");
		gitm_tips_free(tips, ntips);
		if (r == 9)
			rss10 = rss_kb();
	}
	rss_end = rss_kb();
	gitm_repo_free(m);
	{
		double p90, mx, med;

		qsort(poll, POLLS, sizeof(*poll), dcmp);
		med = poll[POLLS / 2];
		p90 = poll[POLLS * 9 / 10];
		mx = poll[POLLS - 1];
		printf("idle poll (fetch + tips) of the %d-commit mirror, %d "
		       "polls: median %.1f ms, p90 %.1f ms, max %.1f ms\n",
		    NCOMMITS, POLLS, med * 1e3, p90 * 1e3, mx * 1e3);
	}
	printf("  RSS after 10 polls %ld KiB, after %d polls %ld KiB\n", rss10,
	    POLLS, rss_end);
	{
		char *g = pathf(dir, "g.git");
		char *fetch[] = { "git", "--git-dir", g, "fetch", "-q",
			"--prune", url, "+refs/heads/*:refs/heads/*",
			"+refs/tags/*:refs/tags/*", NULL };
		double gp[20];

		for (r = 0; r < 20; r++) {
			t0 = clock_mono_s();
			run(fetch, -1, -1);
			gp[r] = clock_mono_s() - t0;
		}
		printf("  for scale: idle `git fetch` median %.1f ms (20 "
		       "runs)\n",
		    analysis_median_inplace(gp, 20) * 1e3);
	}
	rm_rf(pathf(dir, "pw.git"));
	rm_rf(pathf(dir, "g.git"));
	set_ref(up, "refs/heads/master", old);
	free(poll);
	gitm_global_shutdown();
	return 0;
}
