/*
 * Fuzzes patch application: any bytes as one mailed patch (daemon/mail
 * mail_parse), applied as daemon/series applies a series: libgit2 first
 * (git/series.c gitm_apply_series, exact hunks), then `git am --3way` in
 * a scratch worktree when that does not apply (git/am.c).  The
 * repository is real and made once per process in a scratch directory:
 * an upstream with a small tree (PATCH_BASE_FILES below, which the seeds
 * in tests/data/fuzz/patch/ are made against) and its mirror.
 *
 * The contract: the result is applied, a conflict or a parse error (never
 * -1, a crash or a hang), an applied patch names a commit of 40 hex
 * digits whose tree holds no file over CAP_PATCH_FILE_BYTES (the cap
 * either path keeps: libgit2's declared sizes, git am's RLIMIT_FSIZE),
 * and nothing is left or written in the scratch directory
 * outside the mirror and the upstream (git am's worktrees live under
 * TMPDIR, which is DIR/am here, and must be gone afterwards).
 *
 * make fuzz (clang -fsanitize=fuzzer,address,undefined).
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "daemon/mail.h"
#include "git/am.h"
#include "git/git.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

extern char **environ;

static char *dir, *amdir;
static struct gitm_repo *repo;
static char base[GITM_SHA_SIZE];

/* git with fixed arguments in cwd, output to /dev/null; aborts on error. */
static void
git(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "git", &fa, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "patch_fuzz: git %s failed\n", argv[3]);
		abort();
	}
	posix_spawn_file_actions_destroy(&fa);
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* Names in d other than . and ..; -1 if d cannot be read. */
static int
entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	int n = 0;

	if (dp == NULL)
		return -1;
	while ((de = readdir(dp)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(dp);
	return n;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char *up, *mm, *url, *p;
	char lines[64 * 12] = "";
	struct gitm_fetch_stats st;
	int i;

	(void)argc;
	(void)argv;
	dir = xasprintf("%s/pwfuzz-patch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	up = xasprintf("%s/up", dir);
	mm = xasprintf("%s/up/mm", dir);
	amdir = xasprintf("%s/am", dir);
	if (mkdir(up, 0755) != 0 || mkdir(mm, 0755) != 0 ||
	    mkdir(amdir, 0700) != 0)
		abort();
	setenv("TMPDIR", amdir, 1);
	setenv("HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Ann Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "ann@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Cal Committer", 1);
	setenv("GIT_COMMITTER_EMAIL", "cal@example.org", 1);
	setenv("GIT_AUTHOR_DATE", "@1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "@1700000000 +0000", 1);
	/* PATCH_BASE_FILES: f, and mm/memcontrol.c of 40 numbered lines. */
	p = xasprintf("%s/f", up);
	put(p, "one\ntwo\nthree\n");
	free(p);
	for (i = 1; i <= 40; i++)
		snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
		    "line %d\n", i);
	p = xasprintf("%s/memcontrol.c", mm);
	put(p, lines);
	free(p);
	{
		char *init[] = { "git", "-C", up, "init", "-q", "-b", "master",
			NULL };
		char *add[] = { "git", "-C", up, "add", "-A", NULL };
		char *ci[] = { "git", "-C", up, "commit", "-q", "-m", "base",
			NULL };

		git(init);
		git(add);
		git(ci);
	}
	if (gitm_global_init(5000) != 0)
		abort();
	url = xasprintf("file://%s", up);
	repo = gitm_repo_new(dir, "mirror", url, NULL);
	if (gitm_fetch(&st, repo) != 0 || gitm_tip(base, repo, "master") != 0) {
		fprintf(stderr, "patch_fuzz: %s\n", gitm_errmsg(repo));
		abort();
	}
	free(url);
	free(up);
	free(mm);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mail_msg m;
	struct gitm_patch gp;
	struct err e = { 0 };
	char sha[1][GITM_SHA_SIZE], *msg;
	size_t failed = 0;
	int rc;

	if (mail_parse(&m, (const char *)data, size, 1, &e) != 0)
		return 0;
	if (m.patch_off < 0) {
		mail_msg_release(&m);
		return 0;
	}
	memset(&gp, 0, sizeof(gp));
	gp.diff = m.patch;
	gp.len = m.patch_len;
	gp.author_name = m.from_name;
	gp.author_email = m.from_email;
	gp.author_time = m.date;
	gp.author_tz = m.tz;
	/* As daemon/series.c's commit_message(): title, blank, text. */
	msg = m.message[0] ? xasprintf("%s\n\n%s\n", m.tag.title, m.message)
	                   : xasprintf("%s\n", m.tag.title);
	gp.message = msg;
	sha[0][0] = '\0';
	rc = gitm_apply_series(sha, &failed, repo, base, &gp, 1, NULL);
	assert(rc == 0 || rc == ERR_CONFLICT || rc == ERR_INVALID);
	if (rc == ERR_CONFLICT) {
		gitm_clearerr(repo);
		rc = gitam_apply(sha[0], gitm_path(repo), base, &gp, &e);
		if (rc != 0 && rc != ERR_CONFLICT) {
			fprintf(stderr, "patch_fuzz: git am: %d %s\n", rc,
			    err_msg(&e));
			abort();
		}
		assert(rc == 0 || err_msg(&e)[0] != '\0');
	}
	gitm_clearerr(repo);
	if (rc == 0) {
		int64_t largest = -1;

		assert(strlen(sha[0]) == GITM_SHA_SIZE - 1 &&
		    strspn(sha[0], "0123456789abcdef") == GITM_SHA_SIZE - 1);
		assert(gitm_largest_blob(&largest, repo, sha[0]) == 0);
		assert(largest >= 0 && largest <= CAP_PATCH_FILE_BYTES);
	}
	/* up, mirror.git and am (empty again): nothing else appeared. */
	assert(entries(dir) == 3);
	assert(entries(amdir) == 0);
	free(msg);
	mail_msg_release(&m);
	return 0;
}
