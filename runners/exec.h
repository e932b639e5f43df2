#ifndef RUNNERS_EXEC_H
#define RUNNERS_EXEC_H

/*
 * Running commands: an argv vector spawned with posix_spawn (never a
 * shell), in a process group of its own, stdin from /dev/null, stdout and
 * stderr captured through pipes into capped buffers.  A time limit or a
 * cancel flag kills the whole group (SIGTERM, then SIGKILL after a grace
 * period), so grandchildren die with the command.  When the command exits,
 * whatever it left running in its group is killed too.
 *
 *	struct exec_spec s = EXEC_SPEC_INIT(argv);
 *	s.timeout_ms = 60000;
 *	struct exec_result r;
 *	if (exec_run(&r, &s, &err) == 0) ... r.exited, r.code, r.out.data
 *	exec_result_release(&r);
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"

struct exec_result;

/* Who runs a command the runner does not trust (runner.yaml `user`). */
struct exec_user {
	uid_t uid;
	gid_t gid;
	const char *name, *home; /* USER/LOGNAME and HOME of the command */
	/* RLIMIT_NPROC (processes of this uid, host-wide) and RLIMIT_NOFILE
	 * (open files) of the command, soft and hard; 0: left as is. */
	rlim_t nproc, nofile;
};

struct exec_spec {
	char *const *argv;       /* argv[0] looked up in PATH; NULL-ended */
	const char *cwd;         /* NULL: the runner's own */
	char *const *env;        /* NULL: the runner's environment */
	int64_t timeout_ms;      /* 0: no limit */
	int64_t grace_ms;        /* SIGTERM to SIGKILL; default 2000 */
	size_t out_max, err_max; /* capture caps; 0: CAP_RAW_OUTPUT */
	/* Polled every ~50 ms; non-zero kills the group (cancelled). */
	const atomic_int *cancel;
	/*
	 * cgroup placement before exec (runners/cgroup.h): open cgroup.procs
	 * fds the child writes "0" to between fork and exec, so the command
	 * runs in those cgroups from its first instruction (and so do its
	 * children).  With n_procs_fds > 0 the command is started by fork +
	 * execve instead of posix_spawn (which has no such hook); everything
	 * else is the same.  A failed write fails the start (e says which).
	 * The fds stay open in the parent (the caller closes them).
	 */
	const int *procs_fds;
	int n_procs_fds;
	/*
	 * NULL: the command runs as the runner.  Else the child starts a
	 * session of its own (setsid: no controlling terminal) with no core
	 * files, and after joining its cgroups (which needs the runner's
	 * rights) drops every supplementary group, takes user's gid and
	 * uid, sets no_new_privs (no set-uid program gives them back) and
	 * runs with HOME, USER and LOGNAME of user; started by fork +
	 * execve.
	 */
	const struct exec_user *user;
	/*
	 * exec_run only (may be NULL): called about every progress_ms with
	 * the output so far, so a long build's log can be streamed.
	 */
	void (*progress)(void *arg, const struct exec_result *sofar);
	void *progress_arg;
	int64_t progress_ms;
};
#define EXEC_SPEC_INIT(av) ((struct exec_spec){ .argv = (av) })

struct exec_result {
	struct buf out, err;              /* captured, NUL-terminated, capped */
	int out_truncated, err_truncated; /* bytes were dropped */
	int exited;                       /* 1: ended by exit(), code valid */
	int code;                         /* exit code */
	int signo;                        /* signal that ended it, else 0 */
	int timed_out;                    /* killed because of timeout_ms */
	int cancelled;                    /* killed because of *cancel */
	double duration_s;
	/* CPU time (user + system) of the command and the children it
	 * waited for, seconds. */
	double cpu_s;
	/* The user's limits it ran under ("RLIMIT_NPROC 64, ..."), or "":
	 * named by exec_describe when the command failed. */
	char limits[80];
};

/*
 * Runs to completion.  0 when the command was started and has ended
 * (however it ended: look at the result), -1 when it could not be started
 * (e set: not found, not executable, bad cwd).  *out must be released
 * with exec_result_release() after a 0.
 */
int exec_run(struct exec_result *out, const struct exec_spec *, struct err *);
void exec_result_release(struct exec_result *); /* NULL ok */

/*
 * A background process (a benchmark's server side): output is discarded,
 * no time limit.  exec_stop() kills its group (SIGTERM, grace, SIGKILL)
 * and reaps it.
 */
struct exec_proc;
int exec_start(struct exec_proc **out, const struct exec_spec *, struct err *);
/* 1 while the process is running, 0 once it has exited (and is reaped). */
int exec_alive(struct exec_proc *);
pid_t exec_pid(const struct exec_proc *);
void exec_stop(struct exec_proc *); /* stops, reaps and frees; NULL ok */

/*
 * Waits up to ms for child pid (a helper the runner forked itself, such
 * as perf); SIGKILL and reap after.  Its wait status, or -1; *ru (may be
 * NULL) gets its resource use.
 */
int exec_wait_bounded(pid_t pid, long ms, struct rusage *ru);

/* Appends how it ended: "exit 3", "signal 9 (Killed)", "timed out, ...";
 * a failed command run under a user's limits names them too. */
void exec_describe(struct buf *b, const struct exec_result *);

#endif
