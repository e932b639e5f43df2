/*
 * The git module's git-CLI fallback (git/git_int.h): `git` run with
 * an argv (no shell), in its own process group, under a deadline.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "git/git_int.h"

extern char **environ;

static void
env_add(char ***envp, size_t *n, char *s)
{
	*envp = xreallocarray(*envp, *n + 2, sizeof(**envp));
	(*envp)[(*n)++] = s;
	(*envp)[*n] = NULL;
}

/* Variables that would point git at another repository. */
static int
env_dropped(const char *s)
{
	static const char *drop[] = { "GIT_DIR=", "GIT_WORK_TREE=",
		"GIT_INDEX_FILE=", "GIT_OBJECT_DIRECTORY=",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=", "GIT_NAMESPACE=",
		"GIT_COMMON_DIR=", "GIT_TERMINAL_PROMPT=", "GIT_ASKPASS=" };
	size_t i;

	for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		if (strncmp(s, drop[i], strlen(drop[i])) == 0)
			return 1;
	return 0;
}

/*
 * Runs `git ARGS...` (an argv, no shell) in its own process group, killed
 * at the deadline, with git's own stall timeout set like the socket
 * stream's.  0, ERR_NOTFOUND (git is not installed) or -1 with the tail
 * of git's stderr in the message.
 */
int
gitm_i_cli_git(struct gitm_repo *r, const char *what, const char *const *args,
    size_t nargs)
{
	char lowtime[64];
	char *argv[24];
	char tail[CLI_TAIL + 1], chunk[512];
	size_t tlen = 0, k;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def, none;
	char **envp = NULL;
	size_t nenv = 0, i, na = 0;
	struct pollfd pfd;
	int pfds[2], rc, status = 0, killed = 0;
	long long left;
	ssize_t n;
	pid_t pid;

	argv[na++] = (char *)r->opts.git_path;
	argv[na++] = "-c";
	argv[na++] = "http.lowSpeedLimit=1";
	argv[na++] = "-c";
	argv[na++] = lowtime;
	for (i = 0; i < nargs && na < 23; i++)
		argv[na++] = (char *)args[i];
	argv[na] = NULL;
	/* git's own stall timeout, as the socket stream has for libgit2. */
	snprintf(lowtime, sizeof(lowtime), "http.lowSpeedTime=%ld",
	    (gitm_i_io_timeout_ms + 999) / 1000);
	for (i = 0; environ[i] != NULL; i++)
		if (!env_dropped(environ[i]))
			env_add(&envp, &nenv, environ[i]);
	env_add(&envp, &nenv, "GIT_TERMINAL_PROMPT=0");
	if (pipe(pfds) == -1) {
		free(envp);
		return err_set(
		    &r->err, "tree %s: pipe: %s", r->name, strerror(errno));
	}
	fcntl(pfds[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfds[1], 2);
	posix_spawn_file_actions_addclose(&fa, pfds[1]);
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
	        POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawnp(&pid, r->opts.git_path, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfds[1]);
	free(envp);
	if (rc != 0) {
		close(pfds[0]);
		return err_setc(&r->err, rc == ENOENT ? ERR_NOTFOUND : -1,
		    "tree %s: running %s: %s", r->name, r->opts.git_path,
		    strerror(rc));
	}
	r->prog.stage = GITM_STAGE_CLI;
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	for (;;) {
		left = r->deadline_ms - clock_mono_ms();
		if (left <= 0 || gitm_i_xfer_tick(r, 0) != 0) {
			if (left <= 0)
				r->timed_out = 1;
			kill(-pid, SIGKILL);
			killed = 1;
			break;
		}
		rc = poll(&pfd, 1,
		    left < PROGRESS_EVERY_MS ? (int)left : PROGRESS_EVERY_MS);
		if (rc == -1 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		n = read(pfds[0], chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* Keep the last CLI_TAIL bytes (a chunk is smaller). */
		k = (size_t)n;
		if (tlen + k > CLI_TAIL) {
			memmove(
			    tail, tail + (tlen + k - CLI_TAIL), CLI_TAIL - k);
			tlen = CLI_TAIL - k;
		}
		memcpy(tail + tlen, chunk, k);
		tlen += k;
	}
	close(pfds[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!killed && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	tail[tlen] = '\0';
	gitm_i_sanitize(tail);
	if (r->timed_out)
		return err_set(&r->err,
		    "tree %s: git %s: timed out after "
		    "%ld s",
		    r->name, what, r->opts.timeout_ms / 1000);
	if (r->cancelled)
		return err_set(
		    &r->err, "tree %s: git %s: cancelled", r->name, what);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return err_setc(&r->err, ERR_NOTFOUND, "tree %s: %s not found",
		    r->name, r->opts.git_path);
	return err_set(&r->err, "tree %s: git %s failed (%s %d): %s", r->name,
	    what, WIFEXITED(status) ? "exit" : "signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail);
}
