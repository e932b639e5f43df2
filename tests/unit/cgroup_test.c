/*
 * cgroup placement on this machine's real cgroups.  Development and CI
 * machines have the cgroup v1 memory hierarchy (/sys/fs/cgroup/memory,
 * writable below the process's own cgroup) plus a cgroup2 mount without
 * the memory controller (/sys/fs/cgroup/unified), and run tests as root.
 * The v1 path and the cgroup2 companion are tested for real.  The v2
 * memory-controller path (subtree_control, memory.max/high) cannot be:
 * no cgroup2 here offers `memory`, so it is tested on a directory tree
 * under test_tmpdir() that mimics cgroupfs (control files pre-created);
 * that covers the path logic only, not the kernel's behaviour.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/exec.h"
#include "tests/unit/test.h"

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Forks a child that attaches itself through fds, then execs argv with
 * stdout to a pipe when out != NULL.  Returns the pid. */
static pid_t
spawn_in(const struct cgroup *cg, char *const argv[], int *out)
{
	int fds[CGROUP_MAX_FDS], n, p[2] = { -1, -1 }, i;
	struct err e = { 0 };
	pid_t pid;

	n = cgroup_procs_fds(cg, fds, &e);
	if (n < 0)
		return -1;
	if (out && pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (cgroup_attach_fds(fds, n))
			_exit(126);
		if (out) {
			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (out) {
		close(p[1]);
		*out = p[0];
	}
	return pid;
}

static void
read_all(struct buf *b, int fd)
{
	char tmp[512];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(b, tmp, (size_t)n);
	close(fd);
}

static char *
unique_path(const char *tail)
{
	return xasprintf("/pwtest-%d%s", (int)getpid(), tail);
}

TEST(test_cgroup__detects_this_machine)
{
	struct cgroup_sys s;

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "no cgroups: %s", s.reason);
	ASSERT(s.mount != NULL && s.base != NULL);
	ASSERT(s.base[0] == '/');
	if (s.kind == CGROUP_V1) {
		ASSERT(strstr(s.mount, "memory") != NULL);
		ASSERT(exists(s.mount));
	}
	ASSERT_STREQ(
	    cgroup_kind_name(s.kind), s.kind == CGROUP_V1 ? "v1" : "v2");
	cgroup_sys_release(&s);
}

TEST(test_cgroup__path_check)
{
	struct err e = { 0 };

	ASSERT_INTEQ(cgroup_path_check("root", &e), 0);
	ASSERT_INTEQ(cgroup_path_check("/bench", &e), 0);
	ASSERT_INTEQ(cgroup_path_check("/l1/l2/l3", &e), 0);
	ASSERT_INTEQ(cgroup_path_check("bench", &e), -1);
	ASSERT(strstr(err_msg(&e), "start with '/'") != NULL);
	err_clear(&e);
	ASSERT_INTEQ(cgroup_path_check("/a/../b", &e), -1);
	ASSERT(strstr(err_msg(&e), "'..'") != NULL);
	err_clear(&e);
	ASSERT_INTEQ(cgroup_path_check("/a//b", &e), -1);
	err_clear(&e);
	ASSERT_INTEQ(cgroup_path_check("/a b", &e), -1);
	err_clear(&e);
	ASSERT_INTEQ(cgroup_path_check("/cgroup.procs", &e), -1);
	err_clear(&e);
	ASSERT_INTEQ(cgroup_path_check("", &e), -1);
}

TEST(test_cgroup__none_refuses_with_reason)
{
	struct cgroup_sys s;
	struct cgroup_spec spec = { "root", 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };

	cgroup_sys_set(&s, CGROUP_NONE, NULL, NULL, NULL, NULL);
	snprintf(s.reason, sizeof(s.reason), "no memory controller");
	ASSERT_INTEQ(cgroup_place(&cg, &s, &spec, &e), -1);
	ASSERT(cg == NULL);
	ASSERT(strstr(err_msg(&e), "no memory controller") != NULL);
	cgroup_sys_release(&s);
}

/* Nested path with limits, a child placed before exec, teardown. */
TEST(test_cgroup__nested_v1_place_attach_teardown)
{
	struct cgroup_sys s;
	char *path = unique_path("/l2/l3"), *top = NULL, *f;
	struct cgroup_spec spec = { path, 64 << 20, 48 << 20 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	struct buf b = BUF_INIT(1 << 16), want = BUF_INIT(4096);
	char *cat[] = { "cat", "/proc/self/cgroup", NULL };
	char *slp[] = { "sleep", "60", NULL };
	int fd, status;
	pid_t pid, sleeper;

	cgroup_detect(&s);
	ASSERT_MSG(s.kind == CGROUP_V1 || s.kind == CGROUP_V2, "%s", s.reason);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	buf_printf(
	    &want, "%s%s%s", s.mount, strcmp(s.base, "/") ? s.base : "", path);
	ASSERT_STREQ(cgroup_dir(cg), want.data);
	ASSERT(exists(cgroup_dir(cg)));
	ASSERT(!cgroup_is_root(cg));
	top = xasprintf("%s%s/pwtest-%d", s.mount,
	    strcmp(s.base, "/") ? s.base : "", (int)getpid());

	/* Limits. */
	f = xasprintf("%s/%s", cgroup_dir(cg),
	    s.kind == CGROUP_V1 ? "memory.limit_in_bytes" : "memory.max");
	ASSERT(files_read(&b, f, 4096) == 0);
	free(f);
	ASSERT_INTEQ(strtoll(b.data, NULL, 10), 64 << 20);
	f = xasprintf("%s/%s", cgroup_dir(cg),
	    s.kind == CGROUP_V1 ? "memory.soft_limit_in_bytes" : "memory.high");
	ASSERT(files_read(&b, f, 4096) == 0);
	free(f);
	ASSERT_INTEQ(strtoll(b.data, NULL, 10), 48 << 20);

	/* The child is in the cgroup from its first instruction on. */
	pid = spawn_in(cg, cat, &fd);
	ASSERT(pid > 0);
	buf_reset(&b);
	read_all(&b, fd);
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	buf_reset(&want);
	buf_printf(
	    &want, ":memory:%s%s\n", strcmp(s.base, "/") ? s.base : "", path);
	if (s.kind == CGROUP_V1)
		ASSERT_MSG(strstr(b.data, want.data) != NULL,
		    "want '%s' in:\n%s", want.data, b.data);
	if (cgroup_v2_dir(cg)) {
		/* The cgroup2 companion holds it too (PSI, perf -G). */
		buf_reset(&want);
		buf_printf(&want, "0::%s\n", cgroup_perf_name(cg));
		ASSERT_MSG(strstr(b.data, want.data) != NULL,
		    "want '%s' in:\n%s", want.data, b.data);
		ASSERT(exists(cgroup_v2_dir(cg)));
	}

	/* A leftover process is killed at teardown; nothing remains. */
	sleeper = spawn_in(cg, slp, NULL);
	ASSERT(sleeper > 0);
	usleep(100000);
	ASSERT_INTEQ(cgroup_count_procs(cgroup_dir(cg)), 1);
	ASSERT_MSG(cgroup_teardown(cg, &e) == 0, "%s", err_msg(&e));
	ASSERT(waitpid(sleeper, &status, 0) == sleeper);
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT(!exists(top));
	if (cgroup_v2_dir(cg))
		ASSERT(!exists(cgroup_v2_dir(cg)));
	cgroup_free(cg);
	cgroup_sys_release(&s);
	buf_release(&b);
	buf_release(&want);
	free(top);
	free(path);
}

/* Teardown removes only what it created: an existing level stays. */
TEST(test_cgroup__teardown_keeps_existing_levels)
{
	struct cgroup_sys s;
	char *path = unique_path("/keep"), *outer = unique_path("");
	char *outerdir;
	struct cgroup_spec spec = { path, 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	outerdir = xasprintf(
	    "%s%s%s", s.mount, strcmp(s.base, "/") ? s.base : "", outer);
	ASSERT(mkdir(outerdir, 0755) == 0);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT(exists(cgroup_dir(cg)));
	ASSERT(cgroup_teardown(cg, &e) == 0);
	ASSERT(!exists(cgroup_dir(cg)));
	ASSERT(exists(outerdir));
	ASSERT(rmdir(outerdir) == 0);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(outerdir);
	free(outer);
	free(path);
}

/* root: the runner's own cgroup; nothing of it is killed or removed. */
TEST(test_cgroup__root_is_own_cgroup)
{
	struct cgroup_sys s;
	struct cgroup_spec spec = { "root", 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	char *own;

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	ASSERT(cgroup_place(&cg, &s, &spec, &e) == 0);
	own = xasprintf("%s%s", s.mount, strcmp(s.base, "/") ? s.base : "");
	ASSERT_STREQ(cgroup_dir(cg), own);
	ASSERT(cgroup_is_root(cg));
	ASSERT(cgroup_teardown(cg, &e) == 0);
	ASSERT(exists(own));
	if (cgroup_v2_dir(cg) && s.kind == CGROUP_V1)
		ASSERT(!exists(cgroup_v2_dir(cg)));
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(own);
}

static void
touch(const char *dir, const char *file, const char *text)
{
	char *p = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

static int
file_is(const char *dir, const char *file, const char *want)
{
	char *p = xasprintf("%s/%s", dir, file);
	struct buf b = BUF_INIT(4096);
	int ok = files_read(&b, p, 4096) == 0 && strcmp(b.data, want) == 0;

	if (!ok)
		fprintf(stdout, "  %s: '%s' != '%s'\n", p, b.data, want);
	buf_release(&b);
	free(p);
	return ok;
}

/*
 * v2 path logic on a fake tree (see the top of this file): +memory goes
 * to the base and every level above the leaf, limits to the leaf, and
 * the leaf is the perf -G name.
 */
TEST(test_cgroup__v2_path_logic_on_fake_tree)
{
	char *mnt = xasprintf("%s/fakecg", test_tmpdir());
	char *base = xasprintf("%s/svc", mnt), *a = xasprintf("%s/a", base);
	char *b = xasprintf("%s/b", a);
	const char *dirs[3] = { base, a, b };
	struct cgroup_sys s;
	struct cgroup_spec spec = { "/a/b", 1 << 30, 1 << 29 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	int i;

	ASSERT(mkdir(mnt, 0755) == 0);
	for (i = 0; i < 3; i++) {
		ASSERT(mkdir(dirs[i], 0755) == 0);
		touch(dirs[i], "cgroup.subtree_control", "");
		touch(dirs[i], "cgroup.procs", "");
		touch(dirs[i], "memory.max", "max\n");
		touch(dirs[i], "memory.high", "max\n");
	}
	cgroup_sys_set(&s, CGROUP_V2, mnt, "/svc", mnt, "/svc");
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT_STREQ(cgroup_dir(cg), b);
	ASSERT_STREQ(cgroup_v2_dir(cg), b);
	ASSERT_STREQ(cgroup_perf_name(cg), "/svc/a/b");
	ASSERT(file_is(base, "cgroup.subtree_control", "+memory"));
	ASSERT(file_is(a, "cgroup.subtree_control", "+memory"));
	ASSERT(file_is(b, "cgroup.subtree_control", ""));
	ASSERT(file_is(b, "memory.max", "1073741824"));
	ASSERT(file_is(b, "memory.high", "536870912"));
	ASSERT(file_is(a, "memory.max", "max\n"));
	ASSERT(cgroup_socket_accounting(cg));
	/* The levels existed: teardown leaves them. */
	ASSERT(cgroup_teardown(cg, &e) == 0);
	ASSERT(exists(b));
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(b);
	free(a);
	free(base);
	free(mnt);
}

/* pids.max on a v2 leaf when the pids controller is offered, and the
 * refused forks named once after a failed command. */
TEST(test_cgroup__v2_pids_max_on_fake_tree)
{
	char *mnt = xasprintf("%s/fakepids", test_tmpdir());
	char *leaf = xasprintf("%s/bench", mnt);
	struct cgroup_sys s;
	struct cgroup_spec spec = { "/bench", 0, 0, 64 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	char named[80] = "RLIMIT_NPROC 32";

	ASSERT(mkdir(mnt, 0755) == 0);
	ASSERT(mkdir(leaf, 0755) == 0);
	touch(mnt, "cgroup.subtree_control", "");
	touch(leaf, "cgroup.procs", "");
	touch(leaf, "pids.max", "");
	touch(leaf, "pids.events", "max 0\n");
	cgroup_sys_set(&s, CGROUP_V2, mnt, "/", mnt, "/");
	s.v2_pids = 1;
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT(file_is(mnt, "cgroup.subtree_control", "+memory +pids"));
	ASSERT(file_is(leaf, "pids.max", "64"));
	cgroup_pids_refusals(cg, named, sizeof(named));
	ASSERT_STREQ(named, "RLIMIT_NPROC 32");
	touch(leaf, "pids.events", "max 7\n");
	cgroup_pids_refusals(cg, named, sizeof(named));
	ASSERT_STREQ(named, "RLIMIT_NPROC 32, pids.max 64 (7 forks refused)");
	named[0] = '\0';
	cgroup_pids_refusals(cg, named, sizeof(named));
	ASSERT_STREQ(named, "");
	cgroup_free(cg);
	/* Without the controller nothing is written. */
	touch(mnt, "cgroup.subtree_control", "");
	touch(leaf, "pids.max", "max\n");
	s.v2_pids = 0;
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT(file_is(mnt, "cgroup.subtree_control", "+memory"));
	ASSERT(file_is(leaf, "pids.max", "max\n"));
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(leaf);
	free(mnt);
}

/* v1: pids.max in a companion leaf of the pids hierarchy, one per
 * runner process whatever the job's path, the benchmark attached to it
 * too, and its refusals read there. */
TEST(test_cgroup__v1_pids_max_in_pids_hierarchy)
{
	char *mem = xasprintf("%s/fakev1mem", test_tmpdir());
	char *pids = xasprintf("%s/fakev1pids", test_tmpdir());
	char *leaf = xasprintf("%s/perfwatch-root-%d", pids, (int)getpid());
	struct cgroup_sys s;
	struct cgroup_spec spec = { "/bench", 0, 0, 64 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	char named[80] = "";
	int fds[CGROUP_MAX_FDS], n, i;

	ASSERT(mkdir(mem, 0755) == 0);
	ASSERT(mkdir(pids, 0755) == 0);
	ASSERT(mkdir(leaf, 0755) == 0);
	touch(leaf, "pids.max", "");
	cgroup_sys_set(&s, CGROUP_V1, mem, "/", NULL, NULL);
	s.pids_mount = xstrdup(pids);
	s.pids_base = xstrdup("/");
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	/* A fake tree: the files the kernel would make, made by hand. */
	ASSERT(file_is(leaf, "pids.max", "64"));
	touch(leaf, "cgroup.procs", "");
	touch(cgroup_dir(cg), "cgroup.procs", "");
	n = cgroup_procs_fds(cg, fds, &e);
	ASSERT_MSG(n == 2, "%d fds: %s", n, err_msg(&e));
	for (i = 0; i < n; i++)
		close(fds[i]);
	touch(leaf, "pids.events", "max 3\n");
	cgroup_pids_refusals(cg, named, sizeof(named));
	ASSERT_STREQ(named, "pids.max 64 (3 forks refused)");
	ASSERT(strstr(cgroup_notes(cg), "pids.max 64 (v1)") != NULL);
	cgroup_free(cg);
	/* Without limits.pids the benchmark joins no pids leaf. */
	spec.path = "/other";
	spec.pids_max = 0;
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT(strstr(cgroup_notes(cg), "pids") == NULL);
	touch(cgroup_dir(cg), "cgroup.procs", "");
	n = cgroup_procs_fds(cg, fds, &e);
	ASSERT_MSG(n == 1, "%d fds: %s", n, err_msg(&e));
	for (i = 0; i < n; i++)
		close(fds[i]);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(leaf);
	free(pids);
	free(mem);
}

/* At start the runner proves it can manage its subtree; a hierarchy it
 * cannot create in stops it with the path named. */
TEST(test_cgroup__check_subtree)
{
	char *file = xasprintf("%s/not-a-cgroup", test_tmpdir());
	char *want;
	struct cgroup_sys s;
	struct err e = { 0 };

	cgroup_detect(&s);
	ASSERT_MSG(cgroup_check_subtree(&s, &e) == 0, "%s", err_msg(&e));
	if (s.kind != CGROUP_NONE) {
		char *top = xasprintf("%s%s/perfwatch-check-%d", s.mount,
		    strcmp(s.base, "/") ? s.base : "", (int)getpid());

		ASSERT(!exists(top));
		free(top);
	}
	cgroup_sys_release(&s);
	touch(test_tmpdir(), "not-a-cgroup", "");
	cgroup_sys_set(&s, CGROUP_V1, file, "/", NULL, NULL);
	ASSERT(cgroup_check_subtree(&s, &e) == -1);
	want = xasprintf("cgroup: cannot create %s/perfwatch-check-%d: Not a "
	                 "directory",
	    file, (int)getpid());
	ASSERT_MSG(strstr(err_msg(&e), want) != NULL, "%s", err_msg(&e));
	ASSERT(strstr(err_msg(&e), "Delegate=yes") != NULL);
	cgroup_sys_release(&s);
	cgroup_sys_set(&s, CGROUP_NONE, NULL, NULL, NULL, NULL);
	ASSERT(cgroup_check_subtree(&s, &e) == 0);
	/* A root runner whose cgroup is there but not its to write. */
	err_clear(&e);
	s.denied = 1;
	snprintf(s.reason, sizeof(s.reason),
	    "cgroup2: /sys/fs/cgroup/x is not writable: Read-only file system");
	if (geteuid() == 0) {
		ASSERT(cgroup_check_subtree(&s, &e) == -1);
		ASSERT_MSG(strstr(err_msg(&e),
		               "cgroup: cgroup2: /sys/fs/cgroup/x is not "
		               "writable: Read-only file system (") != NULL,
		    "%s", err_msg(&e));
	} else
		ASSERT(cgroup_check_subtree(&s, &e) == 0);
	cgroup_sys_release(&s);
	free(want);
	free(file);
}

/*
 * The SIGKILL loop (no cgroup.kill used) on a real cgroup2 directory
 * treated as a plain hierarchy; cgroup.kill itself is exercised by the
 * companion in the nested test.
 */
TEST(test_cgroup__sigkill_loop_on_real_cgroup2)
{
	struct cgroup_sys s, real;
	struct cgroup_spec spec;
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	char *path = unique_path("/k"), *slp[] = { "sleep", "60", NULL };
	char *top;
	int status;
	pid_t pid;

	cgroup_detect(&real);
	if (real.v2_mount == NULL) {
		/* Nothing to test on a host without a writable cgroup2. */
		cgroup_sys_release(&real);
		free(path);
		ASSERT_MSG(0, "no writable cgroup2 mount on this machine");
	}
	/* Use the cgroup2 mount as a "v1-like" primary: no controller writes.
	 */
	cgroup_sys_set(&s, CGROUP_V1, real.v2_mount, real.v2_base, NULL, NULL);
	spec.path = path;
	spec.memory_max = spec.memory_high = 0;
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	pid = spawn_in(cg, slp, NULL);
	ASSERT(pid > 0);
	usleep(100000);
	ASSERT_INTEQ(cgroup_count_procs(cgroup_dir(cg)), 1);
	ASSERT(cgroup_teardown(cg, &e) == 0);
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFSIGNALED(status));
	top = xasprintf("%s%s/pwtest-%d", real.v2_mount,
	    strcmp(real.v2_base, "/") ? real.v2_base : "", (int)getpid());
	ASSERT(!exists(top));
	free(top);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	cgroup_sys_release(&real);
	free(path);
}

/* runners/exec.c's pre-exec hook: exec_run() with procs_fds. */
TEST(test_cgroup__exec_run_places_before_exec)
{
	struct cgroup_sys s;
	char *path = unique_path("/exec");
	struct cgroup_spec spec = { path, 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	char *argv[] = { "cat", "/proc/self/cgroup", NULL };
	struct exec_spec es = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct buf want = BUF_INIT(4096);
	int fds[CGROUP_MAX_FDS], n, bad[1] = { 9999 };

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	n = cgroup_procs_fds(cg, fds, &e);
	ASSERT(n > 0);
	es.procs_fds = fds;
	es.n_procs_fds = n;
	es.timeout_ms = 10000;
	ASSERT_MSG(exec_run(&r, &es, &e) == 0, "%s", err_msg(&e));
	ASSERT(r.exited && r.code == 0);
	buf_printf(&want, "%s%s\n", strcmp(s.base, "/") ? s.base : "", path);
	ASSERT_MSG(strstr(r.out.data, want.data) != NULL, "want %s in %s",
	    want.data, r.out.data);
	exec_result_release(&r);
	/* A PATH lookup failure and a bad fd are start errors. */
	argv[0] = "no-such-command-pw";
	err_clear(&e);
	ASSERT(exec_run(&r, &es, &e) == -1);
	ASSERT(strstr(err_msg(&e), "no-such-command-pw") != NULL);
	argv[0] = "cat";
	es.procs_fds = bad;
	es.n_procs_fds = 1;
	err_clear(&e);
	ASSERT(exec_run(&r, &es, &e) == -1);
	ASSERT_MSG(strstr(err_msg(&e), "cannot join the cgroup") != NULL, "%s",
	    err_msg(&e));
	while (n > 0)
		close(fds[--n]);
	ASSERT(cgroup_teardown(cg, &e) == 0);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	buf_release(&want);
	free(path);
}

/* A runner killed mid-job: its journalled directories (with a process
 * still inside) are emptied and removed at the next start; a directory
 * outside the runner's cgroup is refused. */
TEST(test_cgroup__remove_stale_journalled_dirs)
{
	struct cgroup_sys s;
	char *top, *leaf, *dirs[2], *outside[1];
	char *slp[] = { "sleep", "60", NULL };
	struct err e = { 0 };
	int fd, status;
	pid_t pid;

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	top = xasprintf("%s%s/pwtest-st-%d", s.mount,
	    strcmp(s.base, "/") ? s.base : "", (int)getpid());
	leaf = xasprintf("%s/leaf", top);
	ASSERT(mkdir(top, 0755) == 0 && mkdir(leaf, 0755) == 0);
	pid = fork();
	if (pid == 0) {
		char *procs = xasprintf("%s/cgroup.procs", leaf);

		fd = open(procs, O_WRONLY);
		if (fd < 0 || cgroup_attach_self_fd(fd))
			_exit(126);
		execvp(slp[0], slp);
		_exit(127);
	}
	usleep(100000);
	ASSERT_INTEQ(cgroup_count_procs(leaf), 1);
	dirs[0] = top;
	dirs[1] = leaf;
	ASSERT_INTEQ(cgroup_remove_stale(&s, dirs, 2, &e), 2);
	ASSERT(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
	ASSERT(!exists(top));
	/* Gone already: nothing to do. */
	ASSERT_INTEQ(cgroup_remove_stale(&s, dirs, 2, &e), 0);
	outside[0] = xasprintf("%s/elsewhere", s.mount);
	if (strcmp(s.base, "/") != 0) {
		ASSERT_INTEQ(cgroup_remove_stale(&s, outside, 1, &e), -1);
		ASSERT(strstr(err_msg(&e), "not below") != NULL);
	}
	free(outside[0]);
	free(leaf);
	free(top);
	cgroup_sys_release(&s);
}

/* perfwatch-root-PID companions of dead runners are swept; a live
 * runner's (this process's) is kept. */
TEST(test_cgroup__sweep_dead_runner_companions)
{
	struct cgroup_sys s;
	struct err e = { 0 };
	char *dead, *mine, *top;
	pid_t pid;

	cgroup_detect(&s);
	if (s.kind != CGROUP_V1 || s.v2_mount == NULL) {
		cgroup_sys_release(&s);
		ASSERT_MSG(0, "this machine should be a hybrid v1 host");
	}
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	top = xasprintf(
	    "%s%s", s.v2_mount, strcmp(s.v2_base, "/") ? s.v2_base : "");
	dead = xasprintf("%s/perfwatch-root-%d", top, (int)pid);
	mine = xasprintf("%s/perfwatch-root-%d", top, (int)getpid());
	ASSERT(mkdir(dead, 0755) == 0);
	ASSERT(mkdir(mine, 0755) == 0);
	ASSERT(cgroup_sweep_stale(&s, &e) >= 1);
	ASSERT(!exists(dead));
	ASSERT(exists(mine));
	ASSERT(rmdir(mine) == 0);
	free(dead);
	free(mine);
	free(top);
	cgroup_sys_release(&s);
}
