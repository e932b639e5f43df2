/*
 * Process execution for the runner.  posix_spawn does the fork/exec (with
 * CLONE_VFORK in glibc, so a failed exec is reported back as an error),
 * puts the child in a new process group and resets the signal state that
 * the runner changed (SIGPIPE is ignored for curl; ignored signals survive
 * exec).
 *
 * The group's leader is never reaped before its group is killed: waitid()
 * with WNOWAIT sees the exit while the zombie still pins the pid, so
 * kill(-pid) cannot reach a recycled pid.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runners/exec.h"

extern char **environ;

#define POLL_MS 50
#define DRAIN_MS 1000 /* after exit, wait this long for pipes to close */

struct exec_proc {
	pid_t pid;
	int reaped;
	int64_t grace_ms;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Where execve finds argv0: PATH lookup done before fork (the child of a
 * threaded process may only call async-signal-safe functions). */
static char *
resolve(const char *argv0)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(argv0, '/') != NULL)
		return xstrdup(argv0);
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		char *cand;

		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		cand = xasprintf(
		    "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", argv0);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	return NULL;
}

/*
 * fork + execve for a command that joins cgroups first (s->procs_fds).
 * The child does what the posix_spawn attributes do -- own process group,
 * default dispositions, empty mask, stdin from /dev/null, stdout/stderr
 * to po/pe (or /dev/null), cwd -- then writes "0" to each procs fd, then
 * execs.  A failing step sends its errno and step number through a
 * CLOEXEC pipe, so the parent reports it as a spawn error.
 */
/*
 * The environment of a command run as s->user: env (or the runner's)
 * with HOME, USER and LOGNAME replaced.  Made before fork: the child of
 * a threaded process may not allocate.
 */
static char **
user_env(const struct exec_spec *s)
{
	char *const *env = s->env != NULL ? s->env : environ;
	static const char *const drop[] = { "HOME=", "USER=", "LOGNAME=" };
	size_t n = 0, k = 0, i, d;
	char **out;

	while (env[n] != NULL)
		n++;
	out = xcalloc(n + 4, sizeof(*out));
	for (i = 0; i < n; i++) {
		for (d = 0; d < 3; d++)
			if (strncmp(env[i], drop[d], strlen(drop[d])) == 0)
				break;
		if (d == 3)
			out[k++] = xstrdup(env[i]);
	}
	out[k++] = xasprintf("HOME=%s", s->user->home);
	out[k++] = xasprintf("USER=%s", s->user->name);
	out[k++] = xasprintf("LOGNAME=%s", s->user->name);
	out[k] = NULL;
	return out;
}

static void
env_free(char **env)
{
	size_t i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* Added to a step-4 errno so spawn tells a failed user switch apart. */
#define EXEC_USER_ERR 100000

static int
fork_exec(pid_t *out, const struct exec_spec *s, const int *reset,
    size_t nreset, int po1, int pe1)
{
	char **uenv = s->user != NULL ? user_env(s) : NULL;
	char *const *envp = uenv != NULL ? uenv
	    : s->env != NULL             ? s->env
	                                 : environ;
	char *file = resolve(s->argv[0]);
	int rep[2], msg[2] = { 0, 0 };
	sigset_t none;
	ssize_t n;
	pid_t pid;
	size_t i;

	if (file == NULL) {
		env_free(uenv);
		return ENOENT;
	}
	if (pipe2(rep, O_CLOEXEC) == -1) {
		free(file);
		env_free(uenv);
		return errno;
	}
	sigemptyset(&none);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		int fd, step = 0, k;

		close(rep[0]);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		for (i = 0; i < nreset; i++)
			sigaction(reset[i], &sa, NULL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Another user's command gets a session of its own (no
		 * controlling terminal it could push input into) and writes
		 * no core file; either way its group is its pid. */
		if (s->user != NULL ? setsid() == -1 : setpgid(0, 0) == -1)
			goto fail;
		if (s->user != NULL) {
			struct rlimit core = { 0, 0 };
			struct rlimit np = { s->user->nproc, s->user->nproc };
			struct rlimit nf = { s->user->nofile, s->user->nofile };

			if (setrlimit(RLIMIT_CORE, &core) == -1 ||
			    (np.rlim_cur > 0 &&
			        setrlimit(RLIMIT_NPROC, &np) == -1) ||
			    (nf.rlim_cur > 0 &&
			        setrlimit(RLIMIT_NOFILE, &nf) == -1))
				goto fail;
		}
		step = 1;
		if ((fd = open("/dev/null", O_RDWR)) == -1 || dup2(fd, 0) == -1)
			goto fail;
		if (dup2(po1 >= 0 ? po1 : fd, 1) == -1 ||
		    dup2(pe1 >= 0 ? pe1 : fd, 2) == -1)
			goto fail;
		step = 2;
		if (s->cwd != NULL && chdir(s->cwd) == -1)
			goto fail;
		step = 3;
		for (k = 0; k < s->n_procs_fds; k++)
			if (write(s->procs_fds[k], "0", 1) != 1)
				goto fail;
		step = 4;
		if (s->user != NULL &&
		    (setgroups(0, NULL) == -1 || setgid(s->user->gid) == -1 ||
		        setuid(s->user->uid) == -1 || setuid(0) != -1 ||
		        prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) == -1))
			goto fail;
		step = 5;
		execve(file, s->argv, envp);
	fail:
		msg[0] = errno;
		msg[1] = step;
		n = write(rep[1], msg, sizeof(msg));
		(void)n;
		_exit(127);
	}
	free(file);
	env_free(uenv);
	close(rep[1]);
	if (pid == -1) {
		msg[0] = errno;
		close(rep[0]);
		return msg[0];
	}
	do
		n = read(rep[0], msg, sizeof(msg));
	while (n == -1 && errno == EINTR);
	close(rep[0]);
	*out = pid;
	if (n == (ssize_t)sizeof(msg)) {
		waitpid(pid, NULL, 0);
		/* Step 3 (cgroup) and 4 (user) errors are told apart by
		 * the caller. */
		if (msg[1] == 4)
			return -(msg[0] != 0 ? msg[0] : EPERM) - EXEC_USER_ERR;
		return msg[1] == 3 ? -msg[0] : msg[0];
	}
	return 0;
}

/*
 * Spawns s->argv.  With capture, *outfd and *errfd are the read ends of
 * the stdout and stderr pipes (non-blocking); without, both go to
 * /dev/null.
 */
static int
spawn(pid_t *pid, int *outfd, int *errfd, const struct exec_spec *s,
    int capture, struct err *e)
{
	static const int reset[] = { SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP,
		SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def, mask;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	size_t i;
	int rc;

	*outfd = *errfd = -1;
	if (s->argv == NULL || s->argv[0] == NULL)
		return err_set(e, "empty command");
	if (capture &&
	    (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1)) {
		rc = errno;
		close_fd(&po[0]);
		close_fd(&po[1]);
		return err_set(e, "pipe: %s", strerror(rc));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (capture) {
		posix_spawn_file_actions_adddup2(&fa, po[1], 1);
		posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	} else {
		posix_spawn_file_actions_addopen(
		    &fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(
		    &fa, 2, "/dev/null", O_WRONLY, 0);
	}
	if (s->cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, s->cwd);

	posix_spawnattr_init(&at);
	sigemptyset(&def);
	for (i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		sigaddset(&def, reset[i]);
	sigemptyset(&mask);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &mask);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
	        POSIX_SPAWN_SETSIGMASK);

	if (s->n_procs_fds > 0 || s->user != NULL)
		rc = fork_exec(pid, s, reset, sizeof(reset) / sizeof(reset[0]),
		    capture ? po[1] : -1, capture ? pe[1] : -1);
	else
		rc = posix_spawnp(pid, s->argv[0], &fa, &at, s->argv,
		    s->env != NULL ? s->env : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	if (rc <= -EXEC_USER_ERR) {
		close_fd(&po[0]);
		close_fd(&pe[0]);
		return err_set(e, "%s: cannot run as user %s (uid %ld): %s",
		    s->argv[0], s->user->name, (long)s->user->uid,
		    strerror(-rc - EXEC_USER_ERR));
	}
	if (rc < 0) {
		close_fd(&po[0]);
		close_fd(&pe[0]);
		return err_set(e, "%s: cannot join the cgroup before exec: %s",
		    s->argv[0], strerror(-rc));
	}
	if (rc != 0) {
		close_fd(&po[0]);
		close_fd(&pe[0]);
		if (s->cwd != NULL && (rc == ENOENT || rc == ENOTDIR) &&
		    access(s->cwd, X_OK) != 0)
			return err_set(e, "%s: cannot run in %s: %s",
			    s->argv[0], s->cwd, strerror(rc));
		return err_set(e, "%s: %s", s->argv[0], strerror(rc));
	}
	if (capture) {
		fcntl(po[0], F_SETFL, fcntl(po[0], F_GETFL) | O_NONBLOCK);
		fcntl(pe[0], F_SETFL, fcntl(pe[0], F_GETFL) | O_NONBLOCK);
		*outfd = po[0];
		*errfd = pe[0];
	}
	return 0;
}

/* 1 when pid has exited (still a zombie), 0 while it runs. */
static int
has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return errno == ECHILD;
	return si.si_pid == pid;
}

/* Waits for pid; its status, and its CPU time (with the children it
 * waited for) in *cpu_s when not NULL. */
static int
reap(pid_t pid, double *cpu_s)
{
	struct rusage ru;
	int status = 0;

	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &status, 0, &ru) == -1 && errno == EINTR)
		;
	if (cpu_s != NULL)
		*cpu_s = (double)ru.ru_utime.tv_sec +
		    (double)ru.ru_utime.tv_usec / 1e6 +
		    (double)ru.ru_stime.tv_sec +
		    (double)ru.ru_stime.tv_usec / 1e6;
	return status;
}

/* Reads what is there into b, keeping at most max bytes. */
static void
drain(int *fd, struct buf *b, size_t max, int *truncated)
{
	char chunk[65536];
	ssize_t n;
	size_t keep;

	for (;;) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close_fd(fd);
			return;
		}
		keep = (size_t)n;
		if (b->len + keep > max) {
			keep = max - b->len;
			*truncated = 1;
		}
		if (keep > 0)
			buf_add(b, chunk, keep);
	}
}

/* "RLIMIT_NPROC 64, RLIMIT_NOFILE 256": the limits a user's command
 * gets, for the message of a failure ("" when none). */
static void
name_limits(char *dst, size_t n, const struct exec_user *u)
{
	int k = 0;

	dst[0] = '\0';
	if (u->nproc > 0)
		k = snprintf(dst, n, "RLIMIT_NPROC %ju", (uintmax_t)u->nproc);
	if (u->nofile > 0 && k >= 0 && (size_t)k < n)
		snprintf(dst + k, n - (size_t)k, "%sRLIMIT_NOFILE %ju",
		    k > 0 ? ", " : "", (uintmax_t)u->nofile);
}

int
exec_run(struct exec_result *out, const struct exec_spec *s, struct err *e)
{
	size_t out_max = s->out_max ? s->out_max : CAP_RAW_OUTPUT;
	size_t err_max = s->err_max ? s->err_max : CAP_RAW_OUTPUT;
	int64_t grace = s->grace_ms > 0 ? s->grace_ms : 2000;
	int64_t start, t, term_at = 0, exit_at = 0, prog_at;
	struct pollfd pfd[2];
	int fds[2], nfd, i, status = 0, exited = 0;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	out->out = BUF_INIT(out_max);
	out->err = BUF_INIT(err_max);
	if (s->user != NULL)
		name_limits(out->limits, sizeof(out->limits), s->user);
	if (spawn(&pid, &fds[0], &fds[1], s, 1, e) == -1)
		return -1;
	start = clock_mono_ms();
	prog_at = start;
	for (;;) {
		nfd = 0;
		for (i = 0; i < 2; i++) {
			if (fds[i] < 0)
				continue;
			pfd[nfd].fd = fds[i];
			pfd[nfd].events = POLLIN;
			pfd[nfd].revents = 0;
			nfd++;
		}
		if (exited && nfd == 0)
			break;
		if (poll(pfd, (nfds_t)nfd, POLL_MS) == -1 && errno != EINTR)
			break;
		if (fds[0] >= 0)
			drain(&fds[0], &out->out, out_max, &out->out_truncated);
		if (fds[1] >= 0)
			drain(&fds[1], &out->err, err_max, &out->err_truncated);
		t = clock_mono_ms();
		if (s->progress != NULL && t - prog_at >= s->progress_ms) {
			s->progress(s->progress_arg, out);
			prog_at = t;
		}
		if (!exited && has_exited(pid)) {
			/* Whatever it left behind in its group goes too. */
			kill(-pid, SIGKILL);
			status = reap(pid, &out->cpu_s);
			exited = 1;
			exit_at = t;
			out->duration_s = (double)(t - start) / 1000.0;
			continue;
		}
		if (exited) {
			/* Only an escaped grandchild can hold a pipe now. */
			if (t - exit_at > DRAIN_MS)
				break;
			continue;
		}
		if (term_at == 0 && s->timeout_ms > 0 &&
		    t - start >= s->timeout_ms)
			out->timed_out = 1;
		if (term_at == 0 && s->cancel != NULL && atomic_load(s->cancel))
			out->cancelled = 1;
		if (term_at == 0 && (out->timed_out || out->cancelled)) {
			kill(-pid, SIGTERM);
			term_at = t;
		} else if (term_at != 0 && t - term_at >= grace) {
			kill(-pid, SIGKILL);
			term_at = t; /* repeat each grace period */
		}
	}
	close_fd(&fds[0]);
	close_fd(&fds[1]);
	if (WIFEXITED(status)) {
		out->exited = 1;
		out->code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status))
		out->signo = WTERMSIG(status);
	return 0;
}

void
exec_result_release(struct exec_result *r)
{
	if (r == NULL)
		return;
	buf_release(&r->out);
	buf_release(&r->err);
}

int
exec_start(struct exec_proc **out, const struct exec_spec *s, struct err *e)
{
	struct exec_proc *p;
	int ofd, efd;
	pid_t pid;

	*out = NULL;
	if (spawn(&pid, &ofd, &efd, s, 0, e) == -1)
		return -1;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->grace_ms = s->grace_ms > 0 ? s->grace_ms : 2000;
	*out = p;
	return 0;
}

int
exec_alive(struct exec_proc *p)
{
	if (p->reaped)
		return 0;
	if (!has_exited(p->pid))
		return 1;
	kill(-p->pid, SIGKILL);
	reap(p->pid, NULL);
	p->reaped = 1;
	return 0;
}

pid_t
exec_pid(const struct exec_proc *p)
{
	return p->pid;
}

void
exec_stop(struct exec_proc *p)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };
	int64_t t0;

	if (p == NULL)
		return;
	if (exec_alive(p)) {
		kill(-p->pid, SIGTERM);
		t0 = clock_mono_ms();
		while (
		    !has_exited(p->pid) && clock_mono_ms() - t0 < p->grace_ms)
			nanosleep(&ts, NULL);
		kill(-p->pid, SIGKILL);
		reap(p->pid, NULL);
		p->reaped = 1;
	}
	free(p);
}

void
exec_describe(struct buf *b, const struct exec_result *r)
{
	if (r->timed_out)
		buf_printf(b, "timed out, killed (signal %d)", r->signo);
	else if (r->cancelled)
		buf_printf(b, "cancelled, killed (signal %d)", r->signo);
	else if (r->exited)
		buf_printf(b, "exit %d", r->code);
	else
		buf_printf(b, "signal %d (%s)", r->signo, strsignal(r->signo));
	if (r->limits[0] != '\0' && !(r->exited && r->code == 0))
		buf_printf(b, " (under %s)", r->limits);
}

int
exec_wait_bounded(pid_t pid, long ms, struct rusage *ru)
{
	struct rusage dummy;
	int status;
	long waited = 0;

	for (;;) {
		pid_t r = wait4(pid, &status, WNOHANG, ru ? ru : &dummy);

		if (r == pid)
			return status;
		if (r == -1 && errno != EINTR)
			return -1;
		if (waited >= ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		clock_sleep_ms(20);
		waited += 20;
	}
}
