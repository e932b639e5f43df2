#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "runners/exec.h"
#include "tests/unit/test.h"

/* Reads the pid a test script wrote; 0 when absent. */
static long
read_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	long pid = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* Whether pid is gone (or a zombie about to be reaped by init). */
static int
pid_gone(long pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int i;

	for (i = 0; i < 40; i++) {
		if (kill((pid_t)pid, 0) == -1 && errno == ESRCH)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "r")) != NULL) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			fclose(f);
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p != NULL && p[1] == ' ' && p[2] == 'Z')
				return 1;
		}
		usleep(50000);
	}
	return 0;
}

TEST(test_exec__argv_is_literal)
{
	char *argv[] = { "printf", "[%s]\\n", "a b", "$(echo x);|&>`id`", "*",
		"'\"", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT_STREQ(r.out.data, "[a b]\n[$(echo x);|&>`id`]\n[*]\n['\"]\n");
	ASSERT(r.exited);
	ASSERT_INTEQ(r.code, 0);
	ASSERT(!r.timed_out);
	exec_result_release(&r);
}

TEST(test_exec__exit_codes_and_stderr)
{
	char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	struct buf d = BUF_INIT(256);

	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(r.exited);
	ASSERT_INTEQ(r.code, 3);
	ASSERT_INTEQ(r.signo, 0);
	ASSERT_STREQ(r.out.data, "out\n");
	ASSERT_STREQ(r.err.data, "err\n");
	exec_describe(&d, &r);
	ASSERT_STREQ(d.data, "exit 3");
	buf_release(&d);
	exec_result_release(&r);
}

TEST(test_exec__signal_reported)
{
	char *argv[] = { "sh", "-c", "kill -USR1 $$; sleep 5", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(!r.exited);
	ASSERT_INTEQ(r.signo, SIGUSR1);
	ASSERT(!r.timed_out);
	exec_result_release(&r);
}

TEST(test_exec__sigpipe_is_default_in_child)
{
	/* The runner ignores SIGPIPE for curl; the child must not. */
	char *argv[] = { "sh", "-c", "kill -PIPE $$; echo survived", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	signal(SIGPIPE, SIG_IGN);
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT_INTEQ(r.signo, SIGPIPE);
	ASSERT_STREQ(r.out.data, "");
	exec_result_release(&r);
}

TEST(test_exec__timeout_kills_group_with_grandchildren)
{
	char pidfile[512], script[1024];
	char *argv[] = { "sh", "-c", script, NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	time_t t0 = time(NULL);
	long gc;

	snprintf(pidfile, sizeof(pidfile), "%s/gc.pid", test_tmpdir());
	/* The grandchild ignores SIGTERM: only the SIGKILL reaches it. */
	snprintf(script, sizeof(script),
	    "(trap '' TERM; exec sleep 30) & echo $! > %s; sleep 30", pidfile);
	s.timeout_ms = 300;
	s.grace_ms = 300;
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(r.timed_out);
	ASSERT(!r.exited);
	ASSERT(r.signo == SIGTERM || r.signo == SIGKILL);
	ASSERT(r.duration_s < 5);
	ASSERT(time(NULL) - t0 < 6);
	gc = read_pid(pidfile);
	ASSERT(gc > 0);
	ASSERT_MSG(pid_gone(gc), "grandchild %ld still alive", gc);
	exec_result_release(&r);
}

TEST(test_exec__term_ignored_gets_kill)
{
	char *argv[] = { "sh", "-c", "trap '' TERM; sleep 30 & wait; wait",
		NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	s.timeout_ms = 200;
	s.grace_ms = 200;
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(r.timed_out);
	ASSERT_INTEQ(r.signo, SIGKILL);
	ASSERT(r.duration_s < 5);
	exec_result_release(&r);
}

TEST(test_exec__leftover_background_killed_on_exit)
{
	char pidfile[512], script[1024];
	char *argv[] = { "sh", "-c", script, NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	long gc;

	snprintf(pidfile, sizeof(pidfile), "%s/bg.pid", test_tmpdir());
	snprintf(script, sizeof(script), "sleep 30 & echo $! > %s; echo done",
	    pidfile);
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(r.exited);
	ASSERT_INTEQ(r.code, 0);
	ASSERT_STREQ(r.out.data, "done\n");
	ASSERT(r.duration_s < 2);
	gc = read_pid(pidfile);
	ASSERT(gc > 0);
	ASSERT_MSG(pid_gone(gc), "background child %ld still alive", gc);
	exec_result_release(&r);
}

TEST(test_exec__output_capped_and_drained)
{
	char *argv[] = { "head", "-c", "3000000", "/dev/zero", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	s.out_max = 1000;
	s.timeout_ms = 10000;
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	/* The child was never blocked on a full pipe: it finished. */
	ASSERT(r.exited);
	ASSERT_INTEQ(r.code, 0);
	ASSERT(!r.timed_out);
	ASSERT_INTEQ(r.out.len, 1000);
	ASSERT(r.out_truncated);
	ASSERT(!r.err_truncated);
	exec_result_release(&r);
}

TEST(test_exec__cwd_and_env)
{
	char *argv[] = { "sh", "-c", "pwd; echo \"$FOO|$PATH\"", NULL };
	char *env[] = { "FOO=a b;c", "PATH=/usr/bin:/bin", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	char want[1200], real[1024];

	ASSERT(realpath(test_tmpdir(), real) != NULL);
	s.cwd = real;
	s.env = env;
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	snprintf(want, sizeof(want), "%s\na b;c|/usr/bin:/bin\n", real);
	ASSERT_STREQ(r.out.data, want);
	exec_result_release(&r);
}

TEST(test_exec__not_found_is_an_error)
{
	char *argv[] = { "perfwatch-no-such-program", "x", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	ASSERT_INTEQ(exec_run(&r, &s, &e), -1);
	ASSERT(strstr(err_msg(&e), "perfwatch-no-such-program") != NULL);
	ASSERT(strstr(err_msg(&e), "No such file") != NULL);
	exec_result_release(&r);
}

TEST(test_exec__bad_cwd_is_an_error)
{
	char *argv[] = { "true", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	s.cwd = "/nonexistent/perfwatch";
	ASSERT_INTEQ(exec_run(&r, &s, &e), -1);
	ASSERT(strstr(err_msg(&e), "/nonexistent/perfwatch") != NULL);
	exec_result_release(&r);
}

TEST(test_exec__cancel_flag_kills)
{
	static atomic_int cancel = 1;
	char *argv[] = { "sleep", "30", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	s.cancel = &cancel;
	ASSERT_INTEQ(exec_run(&r, &s, &e), 0);
	ASSERT(r.cancelled);
	ASSERT(!r.timed_out);
	ASSERT_INTEQ(r.signo, SIGTERM);
	ASSERT(r.duration_s < 5);
	exec_result_release(&r);
}

TEST(test_exec__background_start_stop)
{
	char pidfile[512], script[1024];
	char *argv[] = { "sh", "-c", script, NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_proc *p;
	struct err e = { 0 };
	long gc = 0;
	int i;

	snprintf(pidfile, sizeof(pidfile), "%s/srv.pid", test_tmpdir());
	snprintf(
	    script, sizeof(script), "sleep 30 & echo $! > %s; wait", pidfile);
	ASSERT_INTEQ(exec_start(&p, &s, &e), 0);
	for (i = 0; i < 100 && (gc = read_pid(pidfile)) == 0; i++)
		usleep(20000);
	ASSERT(gc > 0);
	ASSERT_INTEQ(exec_alive(p), 1);
	exec_stop(p);
	ASSERT_MSG(pid_gone(gc), "server child %ld still alive", gc);
}

struct prog_seen {
	int calls, saw_a_alone;
};

static void
on_progress(void *arg, const struct exec_result *r)
{
	struct prog_seen *p = arg;

	p->calls++;
	if (strcmp(r->out.data, "a\n") == 0)
		p->saw_a_alone = 1;
}

TEST(test_exec__progress_streams_output)
{
	char *argv[] = { "sh", "-c", "echo a; sleep 0.5; echo b", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	struct prog_seen p = { 0, 0 };

	s.progress = on_progress;
	s.progress_arg = &p;
	s.progress_ms = 50;
	ASSERT(exec_run(&r, &s, &e) == 0);
	ASSERT_STREQ(r.out.data, "a\nb\n");
	/* The first line was seen while the command still ran. */
	ASSERT(p.saw_a_alone);
	ASSERT(p.calls >= 2);
	exec_result_release(&r);
}

/* exec_spec.user: the command runs with that uid and gid, no
 * supplementary group, no_new_privs, HOME/USER of the user, in a session
 * it leads (no controlling terminal) and without core files; a
 * cgroup-less start takes the fork path too.  Not root: the switch
 * itself is refused, and the error names the user. */
TEST(test_exec__runs_as_user)
{
	char *argv[] = { "sh", "-c",
		"echo $(id -u) $(id -g) $(id -G | wc -w) $HOME $USER; "
		"grep NoNewPrivs /proc/self/status | tr -d '\\t '; "
		"set -- $(cut -d')' -f2 /proc/$$/stat); "
		"[ \"$4\" = $$ ] && echo session-leader; "
		"[ \"$5\" = 0 ] && echo no-tty; echo core=$(ulimit -c)",
		NULL };
	struct exec_user u = { geteuid() == 0 ? 65534 : geteuid(),
		geteuid() == 0 ? 65534 : getegid(), "someone", "/nonexistent" };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	char want[128];

	s.user = &u;
	if (geteuid() != 0) {
		ASSERT(exec_run(&r, &s, &e) == -1);
		ASSERT(
		    strstr(err_msg(&e), "cannot run as user someone") != NULL);
		return;
	}
	ASSERT_MSG(exec_run(&r, &s, &e) == 0, "%s", err_msg(&e));
	snprintf(want, sizeof(want),
	    "%ld %ld 1 /nonexistent someone\n"
	    "NoNewPrivs:1\nsession-leader\nno-tty\ncore=0\n",
	    (long)u.uid, (long)u.gid);
	ASSERT_STREQ(r.out.data, want);
	exec_result_release(&r);
}

/* A user's command runs under its RLIMIT_NPROC and RLIMIT_NOFILE: a
 * fork loop stops at the first and the failure names both. */
TEST(test_exec__user_limits)
{
	char *argv[] = { "sh", "-c",
		"sed -n 's/^Max \\(processes\\|open files\\) *\\([0-9]*\\) "
		"*\\([0-9]*\\).*/\\1 \\2 \\3/p' /proc/self/limits",
		NULL };
	char *bomb[] = { "sh", "-c", "while :; do sleep 5 & done", NULL };
	/* RLIMIT_NPROC counts the uid's processes host-wide: a uid of no
	 * account, which nothing else on the machine runs as (other tests
	 * run servers as nobody). */
	struct exec_user u = { 60123, 60123, "pwtest", "/nonexistent", 20, 40 };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	struct buf how = BUF_INIT(256);

	if (geteuid() != 0) {
		test_skip("needs root (the command runs as another uid)");
		return;
	}
	s.user = &u;
	ASSERT_MSG(exec_run(&r, &s, &e) == 0, "%s", err_msg(&e));
	ASSERT_STREQ(r.out.data, "processes 20 20\nopen files 40 40\n");
	exec_describe(&how, &r);
	ASSERT_STREQ(how.data, "exit 0");
	exec_result_release(&r);
	s = EXEC_SPEC_INIT(bomb);
	s.user = &u;
	s.timeout_ms = 20000;
	ASSERT_MSG(exec_run(&r, &s, &e) == 0, "%s", err_msg(&e));
	ASSERT_MSG(!r.timed_out && r.exited && r.code != 0, "%s %s", r.err.data,
	    r.out.data);
	ASSERT_MSG(strstr(r.err.data, "fork") != NULL, "%s", r.err.data);
	buf_reset(&how);
	exec_describe(&how, &r);
	ASSERT_MSG(strstr(how.data,
	               "(under RLIMIT_NPROC 20, RLIMIT_NOFILE "
	               "40)") != NULL,
	    "%s", how.data);
	exec_result_release(&r);
	buf_release(&how);
}
