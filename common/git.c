/*
 * The git module: mirrors, fetch, revwalk, paths touched, checkout.  The
 * only file that includes <git2.h>; libgit2 errors are translated here,
 * once, into the handle's struct err with the tree's name.
 */
#define _XOPEN_SOURCE 700 /* nftw */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/stream.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/files.h"
#include "common/git.h"
#include "common/xalloc.h"

extern char **environ;

#define PROGRESS_EVERY_MS 200
#define CLI_TAIL 1024 /* bytes of `git clone` stderr kept for messages */
_Static_assert(CLI_TAIL > 512, "a read chunk fits in the tail");
#define MAX_AUTH_ASKS 1

struct gitm_repo {
	struct err err;
	char *name; /* for messages: the tree name or the redacted URL */
	char *url;
	char *dir;  /* parent directory */
	char *path; /* dir/NAME.git */
	struct gitm_opts opts;
	git_repository *repo;
	int corrupt; /* a walk hit a missing or broken object */

	/* State of the current transfer, read by the callbacks. */
	long long deadline_ms, last_progress_ms;
	int timed_out, cancelled, auth_asked;
	struct gitm_progress prog;
};

/* ---- small helpers ---------------------------------------------------- */

/*
 * A copy of untrusted text of at most cap-1 bytes, cut on a UTF-8
 * boundary so a capped name never ends in half a character.
 */
static char *
cap_copy(const char *s, size_t len, size_t cap)
{
	if (s == NULL)
		return xstrdup("");
	if (len >= cap) {
		len = cap - 1;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return xstrndup(s, len);
}

/* Replaces control characters (from a remote, say) in a message. */
static void
sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* "https://user:secret@host/x" -> "https://host/x", capped. */
static char *
redact_url(const char *url)
{
	const char *p = strstr(url, "://"), *slash, *at;
	char *out;

	if (p != NULL) {
		p += 3;
		slash = strchr(p, '/');
		at = strchr(p, '@');
		if (at != NULL && (slash == NULL || at < slash)) {
			out = xasprintf("%.*s%s", (int)(p - url), url, at + 1);
			goto done;
		}
	}
	out = xstrdup(url);
done:
	if (strlen(out) >= CAP_NAME)
		out[CAP_NAME - 1] = '\0';
	sanitize(out);
	return out;
}

static int
is_safe_name(const char *s)
{
	size_t i;

	if (s[0] == '\0' || s[0] == '.' || strlen(s) >= CAP_NAME)
		return 0;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= 'A' && s[i] <= 'Z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		        s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static int
is_hex40(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* rm -rf without following symlinks; a missing path is fine. */
static int
rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
oid_hex(char out[GITM_SHA_SIZE], const git_oid *id)
{
	git_oid_tostr(out, GITM_SHA_SIZE, id);
}

/*
 * Translates the libgit2 error of a failed call into the handle's error,
 * once: "tree NAME: WHAT: why".  Returns ERR_AUTH when the remote wanted
 * credentials, else -1.
 */
static int gerr(struct gitm_repo *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
gerr(struct gitm_repo *r, int rc, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char what[256], why[CAP_ERRMSG];
	int code = -1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->timed_out)
		snprintf(why, sizeof(why), "timed out after %ld s",
		    r->opts.timeout_ms / 1000);
	else if (r->cancelled)
		snprintf(why, sizeof(why), "cancelled");
	else if (r->auth_asked || rc == GIT_EAUTH) {
		snprintf(why, sizeof(why),
		    "the remote requires authentication "
		    "(perfwatch fetches anonymously)");
		code = ERR_AUTH;
	} else {
		snprintf(why, sizeof(why), "%s",
		    e && e->message ? e->message : "unknown libgit2 error");
		sanitize(why);
	}
	err_set(&r->err, "tree %s: %s: %s", r->name, what, why);
	return code;
}

/* ---- a socket stream with timeouts ------------------------------------ */

/*
 * libgit2 1.5 waits forever on a silent server.  This stream replaces its
 * plain socket (TLS is layered on top of it) and gives up after
 * io_timeout_ms without progress on connect, read or write.
 */
static long io_timeout_ms = GITM_DEFAULT_IO_TIMEOUT_MS;

struct tstream {
	git_stream parent;
	char *host, *port;
	int fd;
};

static int
ts_net_error(const char *what, const char *host, const char *detail)
{
	char msg[CAP_ERRMSG];

	snprintf(msg, sizeof(msg), "%s %s: %s", what, host, detail);
	git_error_set_str(GIT_ERROR_NET, msg);
	return -1;
}

static int
ts_connect_one(const struct addrinfo *ai, int *out)
{
	struct timeval tv;
	struct pollfd pfd;
	socklen_t len;
	int fd, e = 0, fl;

	fd = socket(
	    ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1)
		return errno;
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		if (errno != EINPROGRESS) {
			e = errno;
			goto fail;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		while ((e = poll(&pfd, 1, (int)io_timeout_ms)) == -1 &&
		    errno == EINTR)
			;
		if (e == 0) {
			e = ETIMEDOUT;
			goto fail;
		}
		len = sizeof(e);
		if (e == -1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len))
			e = errno;
		if (e != 0)
			goto fail;
	}
	fcntl(fd, F_SETFL, fl);
	tv.tv_sec = io_timeout_ms / 1000;
	tv.tv_usec = (io_timeout_ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	*out = fd;
	return 0;
fail:
	close(fd);
	return e;
}

static int
ts_connect(git_stream *gs)
{
	struct tstream *s = (struct tstream *)gs;
	struct addrinfo hints = { 0 }, *res, *ai;
	int rc, e = ECONNREFUSED;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(s->host, s->port, &hints, &res);
	if (rc != 0)
		return ts_net_error(
		    "failed to resolve", s->host, gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((e = ts_connect_one(ai, &s->fd)) == 0)
			break;
	freeaddrinfo(res);
	if (s->fd == -1)
		return ts_net_error("failed to connect to", s->host,
		    e == ETIMEDOUT ? "connection timed out" : strerror(e));
	return 0;
}

static ssize_t
ts_read(git_stream *gs, void *data, size_t len)
{
	struct tstream *s = (struct tstream *)gs;
	ssize_t n;

	while ((n = recv(s->fd, data, len, 0)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return ts_net_error("reading from", s->host,
		    errno == EAGAIN || errno == EWOULDBLOCK
		        ? "no data within the I/O timeout"
		        : strerror(errno));
	return n;
}

static ssize_t
ts_write(git_stream *gs, const char *data, size_t len, int flags)
{
	struct tstream *s = (struct tstream *)gs;
	ssize_t n;

	(void)flags;
	while (
	    (n = send(s->fd, data, len, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return ts_net_error("writing to", s->host,
		    errno == EAGAIN || errno == EWOULDBLOCK
		        ? "stalled beyond the I/O timeout"
		        : strerror(errno));
	return n;
}

static int
ts_close(git_stream *gs)
{
	struct tstream *s = (struct tstream *)gs;

	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	return 0;
}

static void
ts_free(git_stream *gs)
{
	struct tstream *s = (struct tstream *)gs;

	ts_close(gs);
	free(s->host);
	free(s->port);
	free(s);
}

static int
ts_init(git_stream **out, const char *host, const char *port)
{
	struct tstream *s = xcalloc(1, sizeof(*s));

	s->parent.version = GIT_STREAM_VERSION;
	s->parent.connect = ts_connect;
	s->parent.read = ts_read;
	s->parent.write = ts_write;
	s->parent.close = ts_close;
	s->parent.free = ts_free;
	s->host = xstrdup(host);
	s->port = xstrdup(port);
	s->fd = -1;
	*out = &s->parent;
	return 0;
}

int
gitm_global_init(long io_timeout)
{
	git_stream_registration reg = { GIT_STREAM_VERSION, ts_init, NULL };

	if (git_libgit2_init() < 0)
		return -1;
	if (io_timeout > 0)
		io_timeout_ms = io_timeout;
	/* Only repositories this module made are opened (libgit2 1.5
	 * misreports foreign owners, LIBS.md). */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	if (git_stream_register(GIT_STREAM_STANDARD, &reg) < 0)
		return -1;
	return 0;
}

void
gitm_global_shutdown(void)
{
	git_libgit2_shutdown();
}

/* ---- handles ---------------------------------------------------------- */

static struct gitm_repo *
repo_alloc(const char *dir, const char *file, const char *name, const char *url,
    const struct gitm_opts *opts)
{
	struct gitm_repo *r = xcalloc(1, sizeof(*r));

	r->name = xstrdup(name);
	r->url = xstrdup(url);
	r->dir = xstrdup(dir);
	r->path = xasprintf("%s/%s.git", dir, file);
	if (opts != NULL)
		r->opts = *opts;
	if (r->opts.timeout_ms <= 0)
		r->opts.timeout_ms = GITM_DEFAULT_TIMEOUT_MS;
	if (r->opts.git_path == NULL)
		r->opts.git_path = "git";
	r->opts.git_path = xstrdup(r->opts.git_path);
	r->prog.tree = r->name;
	return r;
}

struct gitm_repo *
gitm_repo_new(const char *dir, const char *name, const char *url,
    const struct gitm_opts *opts)
{
	struct gitm_repo *r;

	if (is_safe_name(name))
		return repo_alloc(dir, name, name, url, opts);
	/* Keep the handle usable for messages; every call fails. */
	r = repo_alloc(dir, "invalid", "(invalid)", url, opts);
	err_set(&r->err,
	    "tree name \"%.64s\": only letters, digits, "
	    "'.', '_' and '-', not starting with '.'",
	    name);
	r->corrupt = -1;
	return r;
}

struct gitm_repo *
gitm_repo_for_url(
    const char *workdir, const char *url, const struct gitm_opts *opts)
{
	char hex[GITM_SHA_SIZE], file[32], *name;
	struct gitm_repo *r;
	git_oid id;

	git_odb_hash(&id, url, strlen(url), GIT_OBJECT_BLOB);
	oid_hex(hex, &id);
	snprintf(file, sizeof(file), "u-%.16s", hex);
	name = redact_url(url);
	r = repo_alloc(workdir, file, name, url, opts);
	free(name);
	return r;
}

void
gitm_repo_free(struct gitm_repo *r)
{
	if (r == NULL)
		return;
	git_repository_free(r->repo);
	free(r->name);
	free(r->url);
	free(r->dir);
	free(r->path);
	free((char *)r->opts.git_path);
	free(r);
}

const char *
gitm_errmsg(const struct gitm_repo *r)
{
	return err_msg(&r->err);
}

void
gitm_clearerr(struct gitm_repo *r)
{
	err_clear(&r->err);
}

const char *
gitm_path(const struct gitm_repo *r)
{
	return r->path;
}

/* ---- transfer callbacks ----------------------------------------------- */

static void
xfer_begin(struct gitm_repo *r)
{
	git_error_clear();
	r->deadline_ms = clock_mono_ms() + r->opts.timeout_ms;
	r->last_progress_ms = 0;
	r->timed_out = r->cancelled = r->auth_asked = 0;
	memset(&r->prog, 0, sizeof(r->prog));
	r->prog.tree = r->name;
}

/* Deadline and the caller's progress; non-zero cancels the transfer. */
static int
xfer_tick(struct gitm_repo *r, int force)
{
	long long t = clock_mono_ms();

	if (t > r->deadline_ms) {
		r->timed_out = 1;
		return -1;
	}
	if (r->opts.progress == NULL ||
	    (!force && t - r->last_progress_ms < PROGRESS_EVERY_MS))
		return 0;
	r->last_progress_ms = t;
	if (r->opts.progress(&r->prog, r->opts.arg) != 0) {
		r->cancelled = 1;
		return -1;
	}
	return 0;
}

static int
on_transfer(const git_indexer_progress *st, void *arg)
{
	struct gitm_repo *r = arg;

	r->prog.total_objects = st->total_objects;
	r->prog.received_objects = st->received_objects;
	r->prog.indexed_objects = st->indexed_objects;
	r->prog.total_deltas = st->total_deltas;
	r->prog.indexed_deltas = st->indexed_deltas;
	r->prog.received_bytes = st->received_bytes;
	r->prog.stage = st->received_objects < st->total_objects
	    ? GITM_STAGE_RECEIVING
	    : GITM_STAGE_INDEXING;
	return xfer_tick(r, 0);
}

/* libgit2's file:// transport builds a pack first: minutes on a big tree,
 * with no transfer progress meanwhile. */
static int
on_pack(int stage, uint32_t current, uint32_t total, void *arg)
{
	(void)stage;
	(void)current;
	(void)total;
	return xfer_tick(arg, 0);
}

/* Remote progress text is untrusted and dropped; only the clock counts. */
static int
on_sideband(const char *str, int len, void *arg)
{
	(void)str;
	(void)len;
	return xfer_tick(arg, 0);
}

static int
on_credentials(git_credential **out, const char *url, const char *user,
    unsigned int allowed, void *arg)
{
	struct gitm_repo *r = arg;

	(void)out;
	(void)url;
	(void)user;
	(void)allowed;
	r->auth_asked = 1;
	git_error_set_str(GIT_ERROR_NET, "authentication required");
	return -1;
}

static int
on_certificate(git_cert *cert, int valid, const char *host, void *arg)
{
	(void)cert;
	(void)valid;
	(void)host;
	(void)arg;
	/* Keep libgit2's verdict; a positive return would accept a bad
	 * certificate (LIBS.md, libgit2#5496). */
	return GIT_PASSTHROUGH;
}

static const char *mirror_specs[] = { "+refs/heads/*:refs/heads/*",
	"+refs/tags/*:refs/tags/*" };

/* Fetches refspecs from the URL into repo; 0, ERR_AUTH or -1. */
static int
fetch_specs(struct gitm_repo *r, git_repository *repo, const char **specs,
    size_t nspecs, int prune, struct gitm_fetch_stats *st)
{
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	git_remote_create_options co = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_strarray rs = { (char **)specs, nspecs };
	git_remote *remote = NULL;
	const git_indexer_progress *ip;
	int rc;

	xfer_begin(r);
	fo.callbacks.transfer_progress = on_transfer;
	fo.callbacks.sideband_progress = on_sideband;
	fo.callbacks.pack_progress = on_pack;
	fo.callbacks.credentials = on_credentials;
	fo.callbacks.certificate_check = on_certificate;
	fo.callbacks.payload = r;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.prune = prune ? GIT_FETCH_PRUNE : GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	/*
	 * An anonymous remote with the URL exactly as configured.  Skipping
	 * url.*.insteadOf also avoids libgit2 1.5's config regex, which
	 * leaks ~20 KiB per non-matching config entry (git_regexp_match
	 * does not free its match data on PCRE2_ERROR_NOMATCH).
	 */
	co.repository = repo;
	co.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	rc = git_remote_create_with_opts(&remote, r->url, &co);
	if (rc < 0)
		return gerr(r, rc, "remote %s", r->name);
	rc = git_remote_fetch(remote, &rs, &fo, NULL);
	if (rc < 0) {
		rc = gerr(r, rc, "fetch");
		git_remote_free(remote);
		return rc;
	}
	ip = git_remote_stats(remote);
	if (st != NULL) {
		st->received_objects += ip->received_objects;
		st->received_bytes += ip->received_bytes;
	}
	git_remote_free(remote);
	r->prog.stage = GITM_STAGE_DONE;
	if (r->opts.progress != NULL)
		r->opts.progress(&r->prog, r->opts.arg);
	return 0;
}

/* ---- opening, health, first copy -------------------------------------- */

/*
 * A mirror is healthy when it opens and every branch names a readable
 * commit with a readable tree.  Cheap (a few objects per branch), so it
 * runs at each open and after a failed fetch.
 */
static int
repo_healthy(git_repository *repo, char *why, size_t whylen)
{
	git_branch_iterator *it = NULL;
	git_reference *ref, *res;
	git_branch_t type;
	git_commit *c;
	git_tree *t;
	int rc, ok = 1;

	if (git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL) < 0) {
		snprintf(why, whylen, "branches unreadable");
		return 0;
	}
	while (ok && (rc = git_branch_next(&ref, &type, it)) == 0) {
		res = NULL;
		c = NULL;
		t = NULL;
		if (git_reference_resolve(&res, ref) < 0 ||
		    git_commit_lookup(&c, repo, git_reference_target(res)) <
		        0 ||
		    git_commit_tree(&t, c) < 0) {
			snprintf(why, whylen,
			    "%.200s: missing or broken commit",
			    git_reference_name(ref));
			sanitize(why);
			ok = 0;
		}
		git_tree_free(t);
		git_commit_free(c);
		git_reference_free(res);
		git_reference_free(ref);
	}
	if (ok && rc != GIT_ITEROVER) {
		snprintf(why, whylen, "branches unreadable");
		ok = 0;
	}
	git_branch_iterator_free(it);
	return ok;
}

/* Opens the mirror: 0, ERR_NOTFOUND (no mirror yet) or ERR_CONFLICT
 * (it exists but is corrupt; why says how). */
static int
repo_open(struct gitm_repo *r, char *why, size_t whylen)
{
	git_repository *repo = NULL;
	struct stat st;
	int rc;

	if (r->repo != NULL)
		return 0;
	if (lstat(r->path, &st) == -1 && errno == ENOENT)
		return ERR_NOTFOUND;
	rc = git_repository_open_ext(&repo, r->path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
	if (rc < 0) {
		const git_error *e = git_error_last();

		snprintf(why, whylen, "%.300s",
		    e && e->message ? e->message : "does not open");
		sanitize(why);
		return ERR_CONFLICT;
	}
	if (!repo_healthy(repo, why, whylen)) {
		git_repository_free(repo);
		return ERR_CONFLICT;
	}
	r->repo = repo;
	return 0;
}

/* Opens the mirror for reading, without fetching. */
static int
repo_ready(struct gitm_repo *r)
{
	char why[256];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (r->repo != NULL)
		return 0;
	rc = repo_open(r, why, sizeof(why));
	if (rc == ERR_NOTFOUND)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no mirror at %s yet (not fetched)", r->name,
		    r->path);
	if (rc < 0)
		return err_set(&r->err, "tree %s: mirror %s is corrupt: %s",
		    r->name, r->path, why);
	return 0;
}

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
static int
cli_git(struct gitm_repo *r, const char *what, const char *const *args,
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
	    (io_timeout_ms + 999) / 1000);
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
		if (left <= 0 || xfer_tick(r, 0) != 0) {
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
	sanitize(tail);
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

/*
 * Makes a fresh copy in a temporary directory next to the mirror and
 * renames it into place, so a crash or a failed clone never leaves a
 * half-made mirror where a good one is expected, and a corrupt one is
 * replaced only once its replacement is complete.
 */
static int
make_copy(struct gitm_repo *r, struct gitm_fetch_stats *st)
{
	char *tmp = xasprintf("%s.tmp", r->path), *old = NULL;
	git_repository *repo = NULL;
	int rc = -1, cli = r->opts.transfer != GITM_XFER_LIBGIT2;

	git_repository_free(r->repo);
	r->repo = NULL;
	if (files_mkdir_p(r->dir) == -1) {
		err_set(&r->err, "tree %s: creating %s: %s", r->name, r->dir,
		    strerror(errno));
		goto out;
	}
	if (rm_tree(tmp) == -1) {
		err_set(&r->err, "tree %s: removing %s: %s", r->name, tmp,
		    strerror(errno));
		goto out;
	}
	xfer_begin(r);
	if (cli) {
		const char *args[] = { "clone", "--bare", "--quiet", "--",
			r->url, tmp };

		rc = cli_git(r, "clone", args, 6);
		if (rc == ERR_NOTFOUND && r->opts.transfer == GITM_XFER_AUTO) {
			/* No git program: libgit2 does the copy. */
			err_clear(&r->err);
			cli = 0;
		} else if (rc < 0) {
			rm_tree(tmp);
			rc = -1;
			goto out;
		} else
			st->by_cli = 1;
	}
	if (!cli) {
		rc = git_repository_init(&repo, tmp, 1);
		if (rc < 0) {
			rc = gerr(r, rc, "creating %s", tmp);
			goto out;
		}
		rc = fetch_specs(r, repo, mirror_specs, 2, 1, st);
		git_repository_free(repo);
		if (rc < 0) {
			rm_tree(tmp);
			goto out;
		}
	}
	old = xasprintf("%s.old", r->path);
	rm_tree(old);
	if (rename(r->path, old) == -1 && errno != ENOENT) {
		rc = err_set(&r->err, "tree %s: moving %s away: %s", r->name,
		    r->path, strerror(errno));
		goto out;
	}
	if (rename(tmp, r->path) == -1) {
		rc = err_set(&r->err, "tree %s: renaming %s: %s", r->name, tmp,
		    strerror(errno));
		goto out;
	}
	rm_tree(old);
	rc = git_repository_open_bare(&r->repo, r->path);
	if (rc < 0)
		rc = gerr(r, rc, "opening %s", r->path);
	r->corrupt = 0;
out:
	free(tmp);
	free(old);
	return rc;
}

static int
count_ref(const char *name, void *arg)
{
	if (strncmp(name, "refs/heads/", 11) == 0 ||
	    strncmp(name, "refs/tags/", 10) == 0)
		(*(size_t *)arg)++;
	return 0;
}

/*
 * Lists the remote's branches and tags with libgit2 (no objects move)
 * and compares them with the mirror's: 1 when any differs or exists on
 * one side only, 0 when all match, ERR_AUTH or -1.
 */
static int
remote_differs(struct gitm_repo *r)
{
	git_remote_create_options co = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
	const git_remote_head **heads;
	git_remote *remote = NULL;
	size_t n, i, nremote = 0, nlocal = 0, len;
	int rc, differs = 0;
	git_oid id;

	xfer_begin(r);
	cb.sideband_progress = on_sideband;
	cb.credentials = on_credentials;
	cb.certificate_check = on_certificate;
	cb.payload = r;
	co.repository = r->repo;
	co.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	if ((rc = git_remote_create_with_opts(&remote, r->url, &co)) < 0)
		return gerr(r, rc, "remote %s", r->name);
	if ((rc = git_remote_connect(
	         remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL)) < 0 ||
	    (rc = git_remote_ls(&heads, &n, remote)) < 0) {
		rc = gerr(r, rc, "fetch");
		git_remote_free(remote);
		return rc;
	}
	for (i = 0; i < n && !differs; i++) {
		const char *name = heads[i]->name;

		len = strlen(name);
		if ((strncmp(name, "refs/heads/", 11) != 0 &&
		        strncmp(name, "refs/tags/", 10) != 0) ||
		    (len > 3 && strcmp(name + len - 3, "^{}") == 0))
			continue;
		nremote++;
		if (git_reference_name_to_id(&id, r->repo, name) < 0 ||
		    !git_oid_equal(&id, &heads[i]->oid))
			differs = 1;
	}
	git_remote_disconnect(remote);
	git_remote_free(remote);
	if (differs)
		return 1;
	if (git_reference_foreach_name(r->repo, count_ref, &nlocal) < 0)
		return 1; /* let the fetch sort it out */
	return nlocal != nremote;
}

/* Incremental fetch by git: 0, ERR_NOTFOUND (no git) or -1. */
static int
cli_fetch(struct gitm_repo *r)
{
	const char *args[] = { "--git-dir", r->path, "fetch", "--quiet",
		"--prune", "--no-tags", "--", r->url, mirror_specs[0],
		mirror_specs[1] };

	xfer_begin(r);
	return cli_git(r, "fetch", args, 10);
}

/* Fetches into the open mirror by the configured means. */
static int
fetch_mirror(struct gitm_repo *r, struct gitm_fetch_stats *st)
{
	int rc;

	if (r->opts.transfer == GITM_XFER_LIBGIT2) {
		st->changed = -1; /* unknown: libgit2 fetches whatever moved */
		return fetch_specs(r, r->repo, mirror_specs, 2, 1, st);
	}
	if ((rc = remote_differs(r)) <= 0)
		return rc;
	st->changed = 1;
	rc = cli_fetch(r);
	if (rc == ERR_NOTFOUND && r->opts.transfer == GITM_XFER_AUTO) {
		/* No git program: libgit2 does it. */
		err_clear(&r->err);
		return fetch_specs(r, r->repo, mirror_specs, 2, 1, st);
	}
	if (rc == 0) {
		st->by_cli = 1;
		/* git wrote packs and refs behind libgit2's back. */
		git_repository_free(r->repo);
		r->repo = NULL;
		rc = git_repository_open_bare(&r->repo, r->path);
		if (rc < 0)
			rc = gerr(r, rc, "opening %s", r->path);
	}
	return rc;
}

int
gitm_fetch(struct gitm_fetch_stats *out, struct gitm_repo *r)
{
	struct gitm_fetch_stats st = { 0 };
	long long t0 = clock_mono_ms();
	char why[320];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (r->corrupt) {
		/* A walk found a broken object: start again. */
		st.recreated = 1;
		rc = make_copy(r, &st);
		goto done;
	}
	rc = repo_open(r, why, sizeof(why));
	if (rc == ERR_NOTFOUND || rc == ERR_CONFLICT) {
		st.cloned = rc == ERR_NOTFOUND;
		st.recreated = rc == ERR_CONFLICT;
		rc = make_copy(r, &st);
		goto done;
	}
	rc = fetch_mirror(r, &st);
	if (rc < 0 && rc != ERR_AUTH && !r->timed_out && !r->cancelled &&
	    r->repo != NULL && !repo_healthy(r->repo, why, sizeof(why))) {
		/* The failure was ours, not the remote's. */
		err_clear(&r->err);
		st.recreated = 1;
		rc = make_copy(r, &st);
	}
done:
	st.ms = (long)(clock_mono_ms() - t0);
	if (out != NULL)
		*out = st;
	return rc;
}

/* ---- branch tips ------------------------------------------------------ */

static int
tip_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gitm_tip *)a)->branch,
	    ((const struct gitm_tip *)b)->branch);
}

int
gitm_tips(struct gitm_tip **out, size_t *n, struct gitm_repo *r)
{
	git_branch_iterator *it = NULL;
	struct gitm_tip *tips = NULL;
	size_t cnt = 0, cap = 0;
	git_reference *ref;
	git_object *obj;
	git_branch_t type;
	const char *name;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = repo_ready(r)) < 0)
		return rc;
	if ((rc = git_branch_iterator_new(&it, r->repo, GIT_BRANCH_LOCAL)) < 0)
		return gerr(r, rc, "listing branches");
	while ((rc = git_branch_next(&ref, &type, it)) == 0) {
		if (git_branch_name(&name, ref) < 0 ||
		    strlen(name) >= CAP_NAME ||
		    git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) < 0) {
			git_reference_free(ref);
			continue;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			tips = xreallocarray(tips, cap, sizeof(*tips));
		}
		tips[cnt].branch = xstrdup(name);
		oid_hex(tips[cnt].sha, git_object_id(obj));
		cnt++;
		git_object_free(obj);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	if (rc != GIT_ITEROVER) {
		gitm_tips_free(tips, cnt);
		return gerr(r, rc, "listing branches");
	}
	if (cnt > 1)
		qsort(tips, cnt, sizeof(*tips), tip_cmp);
	*out = tips;
	*n = cnt;
	return 0;
}

void
gitm_tips_free(struct gitm_tip *tips, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(tips[i].branch);
	free(tips);
}

int
gitm_tip(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *branch)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int rc;

	out[0] = '\0';
	if ((rc = repo_ready(r)) < 0)
		return rc;
	rc = git_branch_lookup(&ref, r->repo, branch, GIT_BRANCH_LOCAL);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no branch \"%.200s\"", r->name, branch);
	if (rc < 0)
		return gerr(r, rc, "branch %.200s", branch);
	rc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	if (rc < 0)
		rc = gerr(r, rc, "branch %.200s", branch);
	else
		oid_hex(out, git_object_id(obj));
	git_object_free(obj);
	git_reference_free(ref);
	return rc;
}

/* ---- commit lookup helpers -------------------------------------------- */

/* Parses a 40-digit id and checks it names a commit in the mirror. */
static int
lookup_commit(git_commit **out, struct gitm_repo *r, const char *sha)
{
	git_oid id;
	int rc;

	*out = NULL;
	if (sha == NULL || !is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	git_oid_fromstr(&id, sha);
	rc = git_commit_lookup(out, r->repo, &id);
	if (rc == GIT_ENOTFOUND)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: no commit %s in the mirror", r->name, sha);
	if (rc < 0)
		return gerr(r, rc, "commit %s", sha);
	return 0;
}

int
gitm_first_parent(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha)
{
	git_commit *c;
	int rc;

	out[0] = '\0';
	if ((rc = repo_ready(r)) < 0 || (rc = lookup_commit(&c, r, sha)) < 0)
		return rc;
	if (git_commit_parentcount(c) == 0)
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: commit %s has no parent", r->name, sha);
	else
		oid_hex(out, git_commit_parent_id(c, 0));
	git_commit_free(c);
	return rc;
}

int
gitm_merge_base(
    char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *a, const char *b)
{
	git_commit *ca = NULL, *cb = NULL;
	git_oid base;
	int rc;

	out[0] = '\0';
	if ((rc = repo_ready(r)) < 0 || (rc = lookup_commit(&ca, r, a)) < 0 ||
	    (rc = lookup_commit(&cb, r, b)) < 0)
		goto out;
	rc = git_merge_base(
	    &base, r->repo, git_commit_id(ca), git_commit_id(cb));
	if (rc == GIT_ENOTFOUND)
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: %s and %s have no common ancestor", r->name, a,
		    b);
	else if (rc < 0)
		rc = gerr(r, rc, "merge base of %s and %s", a, b);
	else
		oid_hex(out, &base);
out:
	git_commit_free(ca);
	git_commit_free(cb);
	return rc;
}

int
gitm_is_ancestor(struct gitm_repo *r, const char *ancestor, const char *commit)
{
	git_commit *ca = NULL, *cc = NULL;
	int rc;

	if ((rc = repo_ready(r)) < 0 ||
	    (rc = lookup_commit(&ca, r, ancestor)) < 0 ||
	    (rc = lookup_commit(&cc, r, commit)) < 0)
		goto out;
	if (git_oid_equal(git_commit_id(ca), git_commit_id(cc)))
		rc = 1;
	else {
		rc = git_graph_descendant_of(
		    r->repo, git_commit_id(cc), git_commit_id(ca));
		if (rc < 0)
			rc = gerr(
			    r, rc, "is %s an ancestor of %s", ancestor, commit);
	}
out:
	git_commit_free(ca);
	git_commit_free(cc);
	return rc;
}

int
gitm_resolve(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *ref)
{
	static const char *prefixes[] = { "refs/heads/", "refs/tags/" };
	git_reference *rf = NULL;
	git_object *obj = NULL;
	git_commit *c;
	char *name;
	size_t i;
	int rc;

	out[0] = '\0';
	if ((rc = repo_ready(r)) < 0)
		return rc;
	if (is_hex40(ref)) {
		if ((rc = lookup_commit(&c, r, ref)) < 0)
			return rc;
		oid_hex(out, git_commit_id(c));
		git_commit_free(c);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		if (strncmp(ref, "refs/", 5) == 0) {
			if (i > 0)
				break;
			name = xstrdup(ref);
		} else
			name = xasprintf("%s%s", prefixes[i], ref);
		rc = git_reference_lookup(&rf, r->repo, name);
		free(name);
		if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
			continue;
		if (rc < 0)
			return gerr(r, rc, "ref %.200s", ref);
		rc = git_reference_peel(&obj, rf, GIT_OBJECT_COMMIT);
		git_reference_free(rf);
		if (rc < 0)
			return gerr(r, rc, "ref %.200s is not a commit", ref);
		oid_hex(out, git_object_id(obj));
		git_object_free(obj);
		return 0;
	}
	return err_setc(
	    &r->err, ERR_NOTFOUND, "tree %s: no ref \"%.200s\"", r->name, ref);
}

int
gitm_baseline(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *policy,
    const char *candidate)
{
	char ref[GITM_SHA_SIZE];
	int rc;

	out[0] = '\0';
	if (strcmp(policy, "parent") == 0)
		return gitm_first_parent(out, r, candidate);
	if (strncmp(policy, "ref:", 4) == 0 && policy[4] != '\0')
		return gitm_resolve(out, r, policy + 4);
	if (strncmp(policy, "branch-base:", 12) == 0 && policy[12] != '\0') {
		if ((rc = gitm_resolve(ref, r, policy + 12)) < 0)
			return rc;
		return gitm_merge_base(out, r, candidate, ref);
	}
	return err_setc(&r->err, ERR_INVALID,
	    "tree %s: baseline \"%.100s\": expected parent, branch-base:REF "
	    "or ref:REF",
	    r->name, policy);
}

/* ---- new commits ------------------------------------------------------ */

/* The configured paths, split into literal paths and globs. */
struct pathset {
	size_t n;
	char **lit;          /* per path: normalised literal, or NULL */
	git_pathspec **glob; /* per path: compiled glob, or NULL */
	char **globs;        /* the glob strings, for the diff */
	size_t nglobs;
};

static void
pathset_free(struct pathset *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++) {
		free(ps->lit[i]);
		git_pathspec_free(ps->glob[i]);
	}
	free(ps->lit);
	free(ps->glob);
	free(ps->globs);
}

static int
pathset_init(
    struct pathset *ps, struct gitm_repo *r, const char *const *paths, size_t n)
{
	git_strarray one;
	size_t i, len;
	char *p;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->n = n;
	ps->lit = xcalloc(n ? n : 1, sizeof(*ps->lit));
	ps->glob = xcalloc(n ? n : 1, sizeof(*ps->glob));
	ps->globs = xcalloc(n ? n : 1, sizeof(*ps->globs));
	for (i = 0; i < n; i++) {
		if (strpbrk(paths[i], "*?[") != NULL) {
			one.strings = (char **)&paths[i];
			one.count = 1;
			rc = git_pathspec_new(&ps->glob[i], &one);
			if (rc < 0)
				return gerr(r, rc, "path %.200s", paths[i]);
			ps->globs[ps->nglobs++] = (char *)paths[i];
			continue;
		}
		p = paths[i][0] == '/' ? xstrdup(paths[i] + 1)
		                       : xstrdup(paths[i]);
		len = strlen(p);
		while (len > 0 && p[len - 1] == '/')
			p[--len] = '\0';
		ps->lit[i] = p;
	}
	return 0;
}

/*
 * Did PATH (a file or a directory, "" = everything) change from a to b?
 * Walks the path one component at a time and stops at the first level
 * where both sides hold the same object, so a commit that leaves mm/
 * alone costs two lookups in root trees already loaded, not two loads of
 * mm/.
 */
static int
path_changed(
    int *out, git_repository *repo, git_tree *a, git_tree *b, const char *path)
{
	git_tree *ta = a, *tb = b, *na, *nb;
	const git_tree_entry *ea, *eb;
	char comp[CAP_LINE];
	const char *p = path, *slash;
	size_t len;
	int rc = 0;

	*out = 0;
	if (path[0] == '\0') {
		*out = a == NULL
		    ? git_tree_entrycount(b) > 0
		    : !git_oid_equal(git_tree_id(a), git_tree_id(b));
		return 0;
	}
	for (;;) {
		slash = strchr(p, '/');
		len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || len >= sizeof(comp))
			break; /* "a//b" or absurd: matches nothing */
		memcpy(comp, p, len);
		comp[len] = '\0';
		ea = ta ? git_tree_entry_byname(ta, comp) : NULL;
		eb = tb ? git_tree_entry_byname(tb, comp) : NULL;
		if (ea == NULL || eb == NULL) {
			*out = (ea == NULL) != (eb == NULL);
			break;
		}
		if (git_oid_equal(
		        git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			break; /* same object: nothing below changed */
		if (slash == NULL) {
			*out = 1;
			break;
		}
		/* Both differ and the path goes deeper: both must be trees. */
		if (git_tree_entry_type(ea) != GIT_OBJECT_TREE ||
		    git_tree_entry_type(eb) != GIT_OBJECT_TREE) {
			*out = git_tree_entry_type(ea) == GIT_OBJECT_TREE ||
			    git_tree_entry_type(eb) == GIT_OBJECT_TREE;
			break;
		}
		if ((rc = git_tree_lookup(&na, repo, git_tree_entry_id(ea))) <
		    0)
			break;
		if ((rc = git_tree_lookup(&nb, repo, git_tree_entry_id(eb))) <
		    0) {
			git_tree_free(na);
			break;
		}
		if (ta != a)
			git_tree_free(ta);
		if (tb != b)
			git_tree_free(tb);
		ta = na;
		tb = nb;
		p = slash + 1;
	}
	if (ta != a)
		git_tree_free(ta);
	if (tb != b)
		git_tree_free(tb);
	return rc;
}

static int
touched_paths(struct gitm_commit *out, git_repository *repo, git_commit *c,
    const struct pathset *ps)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	size_t i, j, nd;
	int rc, ch;

	out->touches = xcalloc(ps->n ? ps->n : 1, 1);
	if (ps->n == 0)
		return 0;
	if ((rc = git_commit_tree(&b, c)) < 0)
		goto out;
	if (git_commit_parentcount(c) > 0) {
		if ((rc = git_commit_parent(&parent, c, 0)) < 0 ||
		    (rc = git_commit_tree(&a, parent)) < 0)
			goto out;
	}
	for (i = 0; i < ps->n; i++) {
		if (ps->lit[i] == NULL)
			continue;
		if ((rc = path_changed(&ch, repo, a, b, ps->lit[i])) < 0)
			goto out;
		out->touches[i] = (unsigned char)ch;
	}
	if (ps->nglobs > 0) {
		git_diff_options o = GIT_DIFF_OPTIONS_INIT;

		o.pathspec.strings = ps->globs;
		o.pathspec.count = ps->nglobs;
		if ((rc = git_diff_tree_to_tree(&diff, repo, a, b, &o)) < 0)
			goto out;
		nd = git_diff_num_deltas(diff);
		for (j = 0; j < nd; j++) {
			const git_diff_delta *d = git_diff_get_delta(diff, j);

			for (i = 0; i < ps->n; i++)
				if (ps->glob[i] != NULL &&
				    (git_pathspec_matches_path(
				         ps->glob[i], 0, d->new_file.path) ||
				        git_pathspec_matches_path(
				            ps->glob[i], 0, d->old_file.path)))
					out->touches[i] = 1;
		}
	}
	for (i = 0; i < ps->n; i++)
		if (out->touches[i])
			out->touches_any = 1;
	rc = 0;
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return rc;
}

static void
commit_release(struct gitm_commit *c)
{
	free(c->parents);
	free(c->author_name);
	free(c->author_email);
	free(c->committer_name);
	free(c->committer_email);
	free(c->subject);
	free(c->touches);
}

/* Fills out from commit c: ids, people, dates, subject, paths touched. */
static int
commit_info(struct gitm_commit *out, git_repository *repo, git_commit *c,
    const struct pathset *ps)
{
	const git_signature *au = git_commit_author(c);
	const git_signature *co = git_commit_committer(c);
	const char *msg = git_commit_message_raw(c), *eol;
	size_t i;

	memset(out, 0, sizeof(*out));
	oid_hex(out->sha, git_commit_id(c));
	out->nparents = git_commit_parentcount(c);
	out->parents =
	    xcalloc(out->nparents ? out->nparents : 1, sizeof(*out->parents));
	for (i = 0; i < out->nparents; i++)
		oid_hex(out->parents[i], git_commit_parent_id(c, (unsigned)i));
	out->author_name = cap_copy(au->name, strlen(au->name), CAP_NAME);
	out->author_email = cap_copy(au->email, strlen(au->email), CAP_NAME);
	out->committer_name = cap_copy(co->name, strlen(co->name), CAP_NAME);
	out->committer_email = cap_copy(co->email, strlen(co->email), CAP_NAME);
	out->author_time = au->when.time;
	out->author_tz = au->when.offset;
	out->commit_time = co->when.time;
	out->commit_tz = co->when.offset;
	if (msg == NULL)
		msg = "";
	while (*msg == '\n' || *msg == '\r')
		msg++;
	eol = strchr(msg, '\n');
	i = eol ? (size_t)(eol - msg) : strlen(msg);
	if (i > 0 && msg[i - 1] == '\r')
		i--;
	out->subject = cap_copy(msg, i, CAP_SUBJECT);
	return touched_paths(out, repo, c, ps);
}

static int
commit_sha_cmp(const void *a, const void *b)
{
	const struct gitm_commit *const *x = a, *const *y = b;

	return strcmp((*x)->sha, (*y)->sha);
}

/*
 * Orders the walked commits parents first.  The walk gives them newest
 * first; reversing that is enough for a topological walk, but a capped
 * walk of a new branch is sorted by date only, so clock skew could put a
 * child before its parent: a depth-first post-order over the parents
 * inside the set fixes that, keeping the reversed walk order otherwise.
 */
static void
order_parents_first(struct gitm_commit *v, size_t n)
{
	struct gitm_commit **byid, *out, key, *kp, **hit;
	size_t *stack, *pos, top, i, emitted = 0, cur;
	unsigned char *state;

	if (n < 2)
		return;
	byid = xcalloc(n, sizeof(*byid));
	for (i = 0; i < n; i++)
		byid[i] = &v[i];
	qsort(byid, n, sizeof(*byid), commit_sha_cmp);
	state = xcalloc(n, 1);
	stack = xcalloc(n, sizeof(*stack));
	pos = xcalloc(n, sizeof(*pos));
	out = xcalloc(n, sizeof(*out));
	for (i = n; i-- > 0;) {
		if (state[i])
			continue;
		top = 0;
		stack[top++] = i;
		state[i] = 1;
		pos[i] = 0;
		while (top > 0) {
			cur = stack[top - 1];
			if (pos[cur] < v[cur].nparents) {
				memcpy(key.sha, v[cur].parents[pos[cur]++],
				    GITM_SHA_SIZE);
				kp = &key;
				hit = bsearch(&kp, byid, n, sizeof(*byid),
				    commit_sha_cmp);
				if (hit != NULL) {
					size_t k = (size_t)(*hit - v);

					if (state[k] == 0) {
						state[k] = 1;
						pos[k] = 0;
						stack[top++] = k;
					}
				}
				continue;
			}
			state[cur] = 2;
			out[emitted++] = v[cur];
			top--;
		}
	}
	memcpy(v, out, n * sizeof(*v));
	free(out);
	free(pos);
	free(stack);
	free(state);
	free(byid);
}

/* Counts the commits of old ^base (a rewrite's losses), up to cap. */
static int
count_dropped(size_t *out, git_repository *repo, const git_oid *old,
    const git_oid *base, size_t cap)
{
	git_revwalk *w = NULL;
	git_oid id;
	size_t n = 0;
	int rc;

	*out = 0;
	if ((rc = git_revwalk_new(&w, repo)) < 0 ||
	    (rc = git_revwalk_push(w, old)) < 0 ||
	    (base != NULL && (rc = git_revwalk_hide(w, base)) < 0))
		goto out;
	while (n < cap && (rc = git_revwalk_next(&id, w)) == 0)
		n++;
	rc = rc == GIT_ITEROVER || n == cap ? 0 : rc;
	*out = n;
out:
	git_revwalk_free(w);
	return rc;
}

/* An object read failure in the middle of a walk means a broken mirror:
 * the next gitm_fetch makes it again. */
static int
walk_fail(struct gitm_repo *r, int rc, const char *what)
{
	const git_error *e = git_error_last();

	if (rc == GIT_ENOTFOUND ||
	    (e != NULL &&
	        (e->klass == GIT_ERROR_ODB || e->klass == GIT_ERROR_ZLIB)))
		r->corrupt = 1;
	return gerr(r, rc, "%s", what);
}

int
gitm_new_commits(struct gitm_walk *out, struct gitm_repo *r, const char *old,
    const char *new_tip, const char *const *paths, size_t npaths, size_t max)
{
	git_commit *cnew = NULL, *cold = NULL, *c;
	git_revwalk *w = NULL;
	struct pathset ps = { 0 };
	size_t cap = 0;
	git_oid base, id;
	int rc, hide = 0;

	memset(out, 0, sizeof(*out));
	if (max == 0 || max > GITM_MAX_WALK)
		max = GITM_MAX_WALK;
	if ((rc = repo_ready(r)) < 0 ||
	    (rc = lookup_commit(&cnew, r, new_tip)) < 0)
		return rc;
	if (old != NULL && old[0] != '\0') {
		rc = lookup_commit(&cold, r, old);
		if (rc == ERR_NOTFOUND) {
			err_clear(&r->err);
			out->old_missing = 1;
		} else if (rc < 0)
			goto fail;
	}
	if (cold != NULL &&
	    git_oid_equal(git_commit_id(cold), git_commit_id(cnew)))
		goto done;
	if ((rc = pathset_init(&ps, r, paths, npaths)) < 0)
		goto fail;
	if ((rc = git_revwalk_new(&w, r->repo)) < 0 ||
	    (rc = git_revwalk_push(w, git_commit_id(cnew))) < 0) {
		rc = walk_fail(r, rc, "walk");
		goto fail;
	}
	if (cold != NULL) {
		rc = git_merge_base(
		    &base, r->repo, git_commit_id(cold), git_commit_id(cnew));
		if (rc < 0 && rc != GIT_ENOTFOUND) {
			rc = walk_fail(r, rc, "merge base");
			goto fail;
		}
		if (rc == 0 && git_oid_equal(&base, git_commit_id(cold))) {
			hide = 1; /* fast-forward */
		} else {
			out->rewrite = 1;
			if (rc == 0) {
				oid_hex(out->base, &base);
				hide = 1;
			}
			rc = count_dropped(&out->dropped, r->repo,
			    git_commit_id(cold), hide ? &base : NULL, max);
			if (rc < 0) {
				rc = walk_fail(r, rc, "walk of the old tip");
				goto fail;
			}
		}
		if (hide && (rc = git_revwalk_hide(w, &base)) < 0) {
			rc = walk_fail(r, rc, "walk");
			goto fail;
		}
	}
	/* Topological order needs the whole range first: fine when it is
	 * bounded by a hidden commit, not for a new branch. */
	git_revwalk_sorting(
	    w, hide ? GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME : GIT_SORT_TIME);
	while ((rc = git_revwalk_next(&id, w)) == 0) {
		if (out->n == max) {
			out->truncated = 1;
			break;
		}
		if ((rc = git_commit_lookup(&c, r->repo, &id)) < 0) {
			rc = walk_fail(r, rc, "walk");
			goto fail;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->commits = xreallocarray(
			    out->commits, cap, sizeof(*out->commits));
		}
		rc = commit_info(&out->commits[out->n], r->repo, c, &ps);
		out->n++;
		git_commit_free(c);
		if (rc < 0) {
			rc = walk_fail(r, rc, "reading a commit");
			goto fail;
		}
	}
	if (rc < 0 && rc != GIT_ITEROVER && !out->truncated) {
		rc = walk_fail(r, rc, "walk");
		goto fail;
	}
	order_parents_first(out->commits, out->n);
done:
	git_revwalk_free(w);
	pathset_free(&ps);
	git_commit_free(cold);
	git_commit_free(cnew);
	return 0;
fail:
	git_revwalk_free(w);
	if (ps.lit != NULL)
		pathset_free(&ps);
	git_commit_free(cold);
	git_commit_free(cnew);
	gitm_walk_release(out);
	return rc < 0 ? rc : -1;
}

int
gitm_range(struct gitm_walk *out, struct gitm_repo *r, const char *good,
    const char *bad, int first_parent, const char *const *paths, size_t npaths,
    size_t max)
{
	git_commit *cgood = NULL, *cbad = NULL, *c;
	git_revwalk *w = NULL;
	struct pathset ps = { 0 };
	size_t cap = 0;
	git_oid id;
	int rc;

	memset(out, 0, sizeof(*out));
	if (max == 0 || max > GITM_MAX_WALK)
		max = GITM_MAX_WALK;
	if ((rc = repo_ready(r)) < 0 ||
	    (rc = lookup_commit(&cgood, r, good)) < 0 ||
	    (rc = lookup_commit(&cbad, r, bad)) < 0)
		goto fail;
	rc = git_graph_descendant_of(
	    r->repo, git_commit_id(cbad), git_commit_id(cgood));
	if (rc < 0) {
		rc = walk_fail(r, rc, "ancestry");
		goto fail;
	}
	if (rc == 0) {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: %.12s is not an ancestor of %.12s", r->name, good,
		    bad);
		goto fail;
	}
	if ((rc = pathset_init(&ps, r, paths, npaths)) < 0)
		goto fail;
	if ((rc = git_revwalk_new(&w, r->repo)) < 0 ||
	    (rc = git_revwalk_push(w, git_commit_id(cbad))) < 0 ||
	    (rc = git_revwalk_hide(w, git_commit_id(cgood))) < 0) {
		rc = walk_fail(r, rc, "walk");
		goto fail;
	}
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	if (first_parent && (rc = git_revwalk_simplify_first_parent(w)) < 0) {
		rc = walk_fail(r, rc, "walk");
		goto fail;
	}
	while ((rc = git_revwalk_next(&id, w)) == 0) {
		if (out->n == max) {
			out->truncated = 1;
			break;
		}
		if ((rc = git_commit_lookup(&c, r->repo, &id)) < 0) {
			rc = walk_fail(r, rc, "walk");
			goto fail;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->commits = xreallocarray(
			    out->commits, cap, sizeof(*out->commits));
		}
		rc = commit_info(&out->commits[out->n], r->repo, c, &ps);
		out->n++;
		git_commit_free(c);
		if (rc < 0) {
			rc = walk_fail(r, rc, "reading a commit");
			goto fail;
		}
	}
	if (rc < 0 && rc != GIT_ITEROVER && !out->truncated) {
		rc = walk_fail(r, rc, "walk");
		goto fail;
	}
	order_parents_first(out->commits, out->n);
	git_revwalk_free(w);
	pathset_free(&ps);
	git_commit_free(cgood);
	git_commit_free(cbad);
	return 0;
fail:
	git_revwalk_free(w);
	if (ps.lit != NULL)
		pathset_free(&ps);
	git_commit_free(cgood);
	git_commit_free(cbad);
	gitm_walk_release(out);
	return rc < 0 ? rc : -1;
}

void
gitm_walk_release(struct gitm_walk *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < w->n; i++)
		commit_release(&w->commits[i]);
	free(w->commits);
	memset(w, 0, sizeof(*w));
}

/* ---- checkout for the runner ------------------------------------------ */

static int
have_commit(struct gitm_repo *r, const char *sha)
{
	git_commit *c = NULL;
	git_oid id;
	int rc;

	git_oid_fromstr(&id, sha);
	rc = git_commit_lookup(&c, r->repo, &id);
	git_commit_free(c);
	return rc == 0;
}

int
gitm_fetch_commit(struct gitm_repo *r, const char *sha)
{
	char spec[GITM_SHA_SIZE + 64];
	const char *specs[1];
	int rc;

	if (r->corrupt < 0)
		return -1;
	if (sha == NULL || !is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if (repo_ready(r) == 0 && have_commit(r, sha))
		return 0;
	err_clear(&r->err);
	if ((rc = gitm_fetch(NULL, r)) < 0)
		return rc;
	if (have_commit(r, sha))
		return 0;
	/* Not on a branch or tag: ask for the object itself. */
	snprintf(spec, sizeof(spec), "+%s:refs/perfwatch/fetched", sha);
	specs[0] = spec;
	rc = fetch_specs(r, r->repo, specs, 1, 0, NULL);
	if (rc == ERR_AUTH)
		return rc;
	err_clear(&r->err);
	if (rc == 0 && have_commit(r, sha))
		return 0;
	/*
	 * libgit2's file:// transport never sends unadvertised objects,
	 * whatever the server's uploadpack.allowAnySHA1InWant; git does.
	 */
	if (r->opts.transfer != GITM_XFER_LIBGIT2) {
		const char *args[] = { "--git-dir", r->path, "fetch", "--quiet",
			"--no-tags", "--", r->url, spec };

		xfer_begin(r);
		rc = cli_git(r, "fetch", args, 8);
		err_clear(&r->err);
		if (rc == 0 && have_commit(r, sha))
			return 0;
	}
	return err_setc(&r->err, ERR_NOTFOUND,
	    "tree %s: commit %s is on no branch or tag and the server "
	    "did not send it",
	    r->name, sha);
}

int
gitm_checkout(struct gitm_repo *r, const char *sha, const char *dir)
{
	git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
	git_commit *c = NULL;
	git_tree *t = NULL;
	int rc;

	if (dir[0] == '\0' || strcmp(dir, "/") == 0)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: refusing to check out into \"%s\"", r->name, dir);
	if ((rc = gitm_fetch_commit(r, sha)) < 0)
		return rc;
	if ((rc = lookup_commit(&c, r, sha)) < 0)
		return rc;
	if ((rc = git_commit_tree(&t, c)) < 0) {
		rc = walk_fail(r, rc, "tree of the commit");
		goto out;
	}
	if (rm_tree(dir) == -1 || files_mkdir_p(dir) == -1) {
		rc = err_set(&r->err, "tree %s: preparing %s: %s", r->name, dir,
		    strerror(errno));
		goto out;
	}
	/* Exact bytes as committed: no .gitattributes filters run. */
	co.checkout_strategy =
	    GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
	co.disable_filters = 1;
	co.target_directory = dir;
	rc = git_checkout_tree(r->repo, (const git_object *)t, &co);
	if (rc < 0)
		rc = gerr(r, rc, "checking out %s into %s", sha, dir);
out:
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

/*
 * Why a tree path could leave the directory it is written in, or write
 * into a .git: NULL when it cannot.
 */
static const char *
tree_path_problem(const char *p)
{
	const char *s = p, *e;
	size_t n;

	if (p == NULL || *p == '\0')
		return "an empty path";
	if (*p == '/')
		return "an absolute path";
	for (;;) {
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			return "an empty or \".\" component";
		if (n == 2 && memcmp(s, "..", 2) == 0)
			return "a \"..\" component";
		if (n == 4 && strncasecmp(s, ".git", 4) == 0)
			return "a \".git\" component";
		if (e == NULL)
			return NULL;
		s = e + 1;
	}
}

/* A tree path that cannot leave DIR or write into a .git. */
static int
safe_tree_path(const char *p)
{
	return tree_path_problem(p) == NULL;
}

/* Writes blob id at dir/path (mode from the tree: file, +x, symlink). */
static int
write_blob(struct gitm_repo *r, const char *dir, const char *path,
    const git_oid *id, uint16_t mode)
{
	char *full = xasprintf("%s/%s", dir, path), *slash;
	git_blob *b = NULL;
	const char *data;
	size_t len;
	FILE *f;
	int rc = -1;

	if (git_blob_lookup(&b, r->repo, id) < 0) {
		rc = gerr(r, -1, "blob of %s", path);
		goto out;
	}
	data = git_blob_rawcontent(b);
	len = (size_t)git_blob_rawsize(b);
	slash = strrchr(full, '/');
	*slash = '\0';
	if (files_mkdir_p(full) == -1) {
		rc = err_set(&r->err, "tree %s: mkdir %s: %s", r->name, full,
		    strerror(errno));
		goto out;
	}
	*slash = '/';
	if (unlink(full) == -1 && errno != ENOENT) {
		rc = err_set(&r->err, "tree %s: unlink %s: %s", r->name, full,
		    strerror(errno));
		goto out;
	}
	if (mode == GIT_FILEMODE_LINK) {
		char *target = xmalloc(len + 1);

		memcpy(target, data, len);
		target[len] = '\0';
		rc = symlink(target, full);
		free(target);
	} else if ((f = fopen(full, "wb")) == NULL)
		rc = -1;
	else {
		rc = fwrite(data, 1, len, f) == len ? 0 : -1;
		if (fclose(f) != 0)
			rc = -1;
		if (rc == 0 && mode == GIT_FILEMODE_BLOB_EXECUTABLE)
			rc = chmod(full, 0755);
	}
	if (rc == -1)
		err_set(&r->err, "tree %s: writing %s: %s", r->name, full,
		    strerror(errno));
out:
	git_blob_free(b);
	free(full);
	return rc;
}

int
gitm_checkout_update(size_t *out_n, struct gitm_repo *r, const char *from,
    const char *to, const char *dir)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *d = NULL;
	size_t i, n = 0;
	int rc;

	if (out_n != NULL)
		*out_n = 0;
	if ((rc = gitm_fetch_commit(r, to)) < 0 ||
	    (rc = lookup_commit(&ca, r, from)) < 0 ||
	    (rc = lookup_commit(&cb, r, to)) < 0)
		goto out;
	if ((rc = git_commit_tree(&ta, ca)) < 0 ||
	    (rc = git_commit_tree(&tb, cb)) < 0) {
		rc = walk_fail(r, rc, "tree of the commit");
		goto out;
	}
	/* Type changes as a delete plus an add, so both sides are seen. */
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if ((rc = git_diff_tree_to_tree(&d, r->repo, ta, tb, &o)) < 0) {
		rc = gerr(r, rc, "diff %.12s..%.12s", from, to);
		goto out;
	}
	n = git_diff_num_deltas(d);
	for (i = 0; i < n && rc == 0; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		const char *op = dd->old_file.path, *np = dd->new_file.path;

		if (!safe_tree_path(op) || !safe_tree_path(np)) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: refusing path \"%.200s\"", r->name,
			    safe_tree_path(op) ? np : op);
			break;
		}
		if (dd->status == GIT_DELTA_DELETED ||
		    dd->status == GIT_DELTA_RENAMED ||
		    dd->status == GIT_DELTA_TYPECHANGE) {
			char *full = xasprintf("%s/%s", dir, op);

			if (unlink(full) == -1 && errno != ENOENT)
				rc = err_set(&r->err, "tree %s: unlink %s: %s",
				    r->name, full, strerror(errno));
			free(full);
		}
		if (rc == 0 && dd->status != GIT_DELTA_DELETED &&
		    dd->new_file.mode != GIT_FILEMODE_COMMIT)
			rc = write_blob(
			    r, dir, np, &dd->new_file.id, dd->new_file.mode);
	}
	if (rc == 0 && out_n != NULL)
		*out_n = n;
out:
	git_diff_free(d);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	return rc;
}

int
gitm_borrow_objects(struct gitm_repo *r, const char *other)
{
	git_odb *odb = NULL;
	struct stat st;
	char *dir;
	int rc;

	if ((rc = repo_ready(r)) < 0)
		return rc;
	/* A bare clone (DIR/NAME.git) or a work tree's .git. */
	dir = xasprintf("%s/objects", other);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(dir);
		dir = xasprintf("%s/.git/objects", other);
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: %.200s has no objects directory", r->name, other);
		free(dir);
		return rc;
	}
	if ((rc = git_repository_odb(&odb, r->repo)) < 0 ||
	    (rc = git_odb_add_disk_alternate(odb, dir)) < 0)
		rc = gerr(r, rc, "objects of %.200s", other);
	else
		rc = 0;
	git_odb_free(odb);
	free(dir);
	return rc;
}

/* ---- patch series ----------------------------------------------------- */

/* The file the apply is at, for messages (delta_cb of git_apply). */
struct apply_at {
	char path[256];
};

static int
on_apply_delta(const git_diff_delta *d, void *arg)
{
	struct apply_at *at = arg;
	const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;

	snprintf(at->path, sizeof(at->path), "%s", p ? p : "?");
	sanitize(at->path);
	return 0;
}

/*
 * Like git's ident.c crud() (git 2.39): what git strips from both ends of
 * an author's name and address.  A name of nothing else is empty to git,
 * which refuses it.
 */
static int
ident_crud(unsigned char c)
{
	return c <= 32 || c == '.' || c == ',' || c == ':' || c == ';' ||
	    c == '<' || c == '>' || c == '"' || c == '\\' || c == '\'';
}

/* s into out (size n), bad bytes as ' ' (as '_' in an address);
 * "unknown" when it has nothing but crud. */
static void
ident_clean(char *out, size_t n, const char *s, int email)
{
	size_t i;
	int real = 0;

	snprintf(out, n, "%s", s ? s : "");
	for (i = 0; out[i]; i++) {
		if (out[i] == '<' || out[i] == '>' ||
		    (unsigned char)out[i] < 0x20 || out[i] == 0x7f ||
		    (email && out[i] == ' '))
			out[i] = email ? '_' : ' ';
		real |= !ident_crud((unsigned char)out[i]);
	}
	if (!real)
		snprintf(out, n, "unknown");
}

void
gitm_patch_author(char name[CAP_NAME + 1], char email[CAP_NAME + 1],
    const struct gitm_patch *p)
{
	ident_clean(name, CAP_NAME + 1, p->author_name, 0);
	ident_clean(email, CAP_NAME + 1, p->author_email, 1);
}

/*
 * Whether a symlink at path with this target stays inside the tree: the
 * target is relative and its ".." never climb above the top.
 */
static int
link_stays_inside(const char *path, const char *target, size_t len)
{
	const char *s = target, *end = target + len, *e;
	long depth = 0;

	if (len == 0 || target[0] == '/' || memchr(target, '\0', len))
		return 0;
	for (e = path; (e = strchr(e, '/')) != NULL; e++)
		depth++; /* the directories the link sits in */
	while (s < end) {
		size_t n;

		e = memchr(s, '/', (size_t)(end - s));
		n = e ? (size_t)(e - s) : (size_t)(end - s);
		if (n == 2 && memcmp(s, "..", 2) == 0) {
			if (--depth < 0)
				return 0;
		} else if (n > 0 && !(n == 1 && s[0] == '.')) {
			depth++;
		}
		s += n + 1;
	}
	return 1;
}

/*
 * An absolute path as the patch text names it ("--- a//etc/x", "+++
 * /etc/x", "rename to /etc/x"): libgit2 makes such a name relative, so
 * it is looked for in the text itself.  NULL, or the line (its first 200
 * bytes in out).
 */
static const char *
absolute_in_text(char *out, size_t outlen, const char *diff, size_t len)
{
	static const char *const pre[] = { "--- ", "+++ ", "rename from ",
		"rename to ", "copy from ", "copy to " };
	const char *s = diff, *end = diff + len;
	size_t i;

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);
		int abs = 0;

		if (n > 14 && memcmp(s, "diff --git ", 11) == 0) {
			const char *q;

			abs = memcmp(s + 11, "a//", 3) == 0;
			for (q = s + 11; !abs && q + 4 <= s + n; q++)
				abs = memcmp(q, " b//", 4) == 0;
		}
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]) && !abs; i++) {
			size_t k = strlen(pre[i]);
			const char *p = s + k;

			if (n <= k || memcmp(s, pre[i], k) != 0)
				continue;
			if (n > k + 2 && (p[0] == 'a' || p[0] == 'b') &&
			    p[1] == '/')
				p += 2;
			abs = p < s + n && *p == '/' &&
			    !((size_t)(s + n - p) >= 9 &&
			        memcmp(p, "/dev/null", 9) == 0);
		}
		if (abs) {
			snprintf(
			    out, outlen, "%.*s", (int)(n < 200 ? n : 200), s);
			sanitize(out);
			return out;
		}
		s += n + 1;
	}
	return NULL;
}

/*
 * Whether a proper prefix of path is a symlink: in tree (the parent's),
 * or made by this patch (links[0..nlinks)).  out gets the prefix (cut to
 * len), for the message.
 */
static int
through_link(char *out, size_t len, git_tree *tree, const char *path,
    const char *const *links, size_t nlinks)
{
	const char *e;
	size_t i;

	for (e = path; (e = strchr(e, '/')) != NULL; e++) {
		char *pre = xstrndup(path, (size_t)(e - path));
		git_tree_entry *te = NULL;
		int link = 0;

		for (i = 0; i < nlinks && !link; i++)
			link = strcmp(links[i], pre) == 0;
		if (!link && git_tree_entry_bypath(&te, tree, pre) == 0) {
			link = git_tree_entry_filemode(te) == GIT_FILEMODE_LINK;
			git_tree_entry_free(te);
		}
		snprintf(out, len, "%s", pre);
		free(pre);
		if (link)
			return 1;
	}
	return 0;
}

/* Whether text has a line that is exactly line. */
static int
has_line(const char *text, size_t len, const char *line)
{
	const char *s = text, *end = text + len;
	size_t k = strlen(line);

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t n = eol ? (size_t)(eol - s) : (size_t)(end - s);

		if (n == k && memcmp(s, line, k) == 0)
			return 1;
		s += n + 1;
	}
	return 0;
}

/*
 * A symlink the patch makes (or changes) whose target, its one added
 * line, is absolute or climbs out of the tree: ERR_INVALID, else 0.
 */
static int
new_link_refusal(struct gitm_repo *r, const git_diff_delta *d, git_patch *pt,
    const char *clean)
{
	const git_diff_line *ln;
	char to[256];
	size_t k, n, len;

	if (d->new_file.mode != GIT_FILEMODE_LINK ||
	    git_patch_num_hunks(pt) == 0)
		return 0;
	n = (size_t)git_patch_num_lines_in_hunk(pt, 0);
	for (k = 0; k < n; k++) {
		if (git_patch_get_line_in_hunk(&ln, pt, 0, k) < 0 ||
		    ln->origin != GIT_DIFF_LINE_ADDITION)
			continue;
		/* Without its newline (stricter: "..\n" counts as ".."). */
		len = ln->content_len;
		if (len > 0 && ln->content[len - 1] == '\n')
			len--;
		if (link_stays_inside(d->new_file.path, ln->content, len))
			return 0;
		snprintf(to, sizeof(to), "%.*s", (int)(len < 200 ? len : 200),
		    ln->content);
		sanitize(to);
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch makes the symlink \"%.200s\" point "
		    "out of the tree (to \"%s\")",
		    r->name, clean, to);
	}
	return 0;
}

/*
 * A patch of a series is untrusted mail: before either applier (libgit2,
 * then git am --3way) sees it, refuse one that names a path outside the
 * tree or inside a .git, makes a symlink pointing out of the tree,
 * writes through a symlink (of the parent tree, or one it makes), or
 * carries a hunk or a file count over the caps.  0, or ERR_INVALID with
 * the reason in r's error.
 */
static int
patch_refusal(struct gitm_repo *r, const struct gitm_patch *p, git_diff *diff,
    git_tree *tree)
{
	size_t nd = git_diff_num_deltas(diff), i, h, nlinks = 0;
	const char **links;
	char pre[256];
	int rc = 0;

	if (absolute_in_text(pre, sizeof(pre), p->diff, p->len) != NULL)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch names an absolute path: \"%s\"",
		    r->name, pre);
	if (nd > CAP_PATCH_FILES)
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: the patch touches %zu files, more than the %d "
		    "allowed",
		    r->name, nd, CAP_PATCH_FILES);
	links = xcalloc(nd + 1, sizeof(*links));
	for (i = 0; i < nd && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (d->new_file.mode == GIT_FILEMODE_LINK &&
		    d->new_file.path != NULL)
			links[nlinks++] = d->new_file.path;
	}
	for (i = 0; i < nd && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *paths[2] = { d->old_file.path, d->new_file.path };
		const git_diff_hunk *hk;
		git_patch *pt = NULL;
		size_t k, nlines;
		char clean[256];

		for (k = 0; k < 2 && rc == 0; k++) {
			const char *why;

			if (k == 0 && d->status == GIT_DELTA_ADDED)
				continue; /* "/dev/null" */
			if (k == 1 && d->status == GIT_DELTA_DELETED)
				continue;
			snprintf(clean, sizeof(clean), "%s",
			    paths[k] ? paths[k] : "");
			sanitize(clean);
			if ((why = tree_path_problem(paths[k])) != NULL)
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch names \"%.200s\": %s",
				    r->name, clean, why);
			else if (through_link(pre, sizeof(pre), tree, paths[k],
			             links, nlinks)) {
				sanitize(pre);
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: the patch writes \"%.200s\" "
				    "through the symlink \"%.200s\"",
				    r->name, clean, pre);
			}
		}
		if (rc != 0)
			break;
		if (git_patch_from_diff(&pt, diff, i) < 0 || pt == NULL)
			continue; /* the applier reports what does not parse */
		for (h = 0; h < git_patch_num_hunks(pt) && rc == 0; h++) {
			if (git_patch_get_hunk(&hk, &nlines, pt, h) < 0)
				break;
			if (hk->old_lines > CAP_PATCH_HUNK_LINES ||
			    hk->new_lines > CAP_PATCH_HUNK_LINES ||
			    nlines > CAP_PATCH_HUNK_LINES)
				rc = err_setc(&r->err, ERR_INVALID,
				    "tree %s: hunk %zu of \"%.200s\": %d old "
				    "and %d new lines, more than the %d "
				    "allowed",
				    r->name, h + 1, clean, hk->old_lines,
				    hk->new_lines, CAP_PATCH_HUNK_LINES);
		}
		if (rc == 0)
			rc = new_link_refusal(r, d, pt, clean);
		git_patch_free(pt);
	}
	free(links);
	return rc;
}

/* The author's signature (gitm_patch_author). */
static int
mail_signature(git_signature **out, const struct gitm_patch *p)
{
	char n[CAP_NAME + 1], m[CAP_NAME + 1];

	gitm_patch_author(n, m, p);
	return git_signature_new(out, n, m,
	    (git_time_t)(p->author_time < 0 ? 0 : p->author_time),
	    p->author_tz);
}

int
gitm_apply_series(char (*out)[GITM_SHA_SIZE], size_t *out_failed,
    struct gitm_repo *r, const char *base, const struct gitm_patch *patches,
    size_t n, const char *ref)
{
	git_commit *parent = NULL, *next = NULL;
	git_reference *rf = NULL;
	git_oid cid;
	size_t i;
	int rc;

	*out_failed = 0;
	if ((rc = repo_ready(r)) < 0)
		return rc;
	if ((rc = lookup_commit(&parent, r, base)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		const struct gitm_patch *p = &patches[i];
		git_apply_options ao = GIT_APPLY_OPTIONS_INIT;
		struct apply_at at = { "" };
		git_diff *diff = NULL;
		git_tree *tree = NULL, *nt = NULL;
		git_index *idx = NULL;
		git_signature *au = NULL, *co = NULL;
		const char *nul;
		git_oid tid;

		*out_failed = i;
		/* libgit2 1.5 reads past its buffers applying a hunk whose
		 * lines hold a NUL byte (ASan: heap-buffer-overflow in
		 * git_apply_to_tree); a text patch has none (binary ones are
		 * base85), but mail decoding can make one (=00). */
		if ((nul = memchr(p->diff, '\0', p->len)) != NULL) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: the patch holds a NUL byte (offset %zu "
			    "of its diff)",
			    r->name, (size_t)(nul - p->diff));
			goto next;
		}
		rc = git_diff_from_buffer(&diff, p->diff, p->len);
		if (rc < 0) {
			rc = err_setc(&r->err, ERR_INVALID,
			    "tree %s: the patch does not parse: %s", r->name,
			    git_error_last() ? git_error_last()->message : "?");
			goto next;
		}
		ao.delta_cb = on_apply_delta;
		ao.payload = &at;
		if ((rc = git_commit_tree(&tree, parent)) < 0) {
			rc = gerr(r, rc, "tree of %s", base);
			goto next;
		}
		if ((rc = patch_refusal(r, p, diff, tree)) != 0)
			goto next;
		/* libgit2 1.5 can spin for ever inflating a corrupt binary
		 * literal (found by the patch fuzz target: one flipped bit
		 * of a "literal 3"); git's own apply refuses one, so a
		 * binary patch goes to git am, as one libgit2 cannot apply. */
		if (has_line(p->diff, p->len, "GIT binary patch")) {
			rc = err_setc(&r->err, ERR_CONFLICT,
			    "tree %s: a binary patch (left to git am)",
			    r->name);
			goto next;
		}
		rc = git_apply_to_tree(&idx, r->repo, tree, diff, &ao);
		if (rc < 0) {
			char why[300];
			const git_error *ge = git_error_last();

			snprintf(why, sizeof(why), "%s",
			    ge && ge->message ? ge->message : "does not apply");
			sanitize(why);
			rc = err_setc(&r->err, ERR_CONFLICT,
			    "does not apply to %s: %s",
			    at.path[0] ? at.path : "(no file)", why);
			goto next;
		}
		if ((rc = git_index_write_tree_to(&tid, idx, r->repo)) < 0 ||
		    (rc = git_tree_lookup(&nt, r->repo, &tid)) < 0) {
			rc = gerr(r, rc, "write tree");
			goto next;
		}
		if ((rc = mail_signature(&au, p)) < 0 ||
		    (rc = git_signature_new(&co, "perfwatch",
		         "perfwatch@localhost",
		         (git_time_t)(p->author_time < 0 ? 0 : p->author_time),
		         p->author_tz)) < 0) {
			rc = gerr(r, rc, "signature");
			goto next;
		}
		rc = git_commit_create(&cid, r->repo, NULL, au, co, NULL,
		    p->message, nt, 1, (const git_commit **)&parent);
		if (rc < 0) {
			rc = gerr(r, rc, "commit");
			goto next;
		}
		oid_hex(out[i], &cid);
		if ((rc = git_commit_lookup(&next, r->repo, &cid)) < 0)
			rc = gerr(r, rc, "commit lookup");
	next:
		git_signature_free(au);
		git_signature_free(co);
		git_tree_free(nt);
		git_index_free(idx);
		git_tree_free(tree);
		git_diff_free(diff);
		if (rc < 0) {
			git_commit_free(parent);
			return rc;
		}
		git_commit_free(parent);
		parent = next;
		next = NULL;
	}
	*out_failed = n;
	if (ref != NULL) { /* n == 0: REF at BASE */
		rc = git_reference_create(&rf, r->repo, ref,
		    git_commit_id(parent), 1, "perfwatch: series applied");
		git_reference_free(rf);
		if (rc < 0) {
			git_commit_free(parent);
			return gerr(r, rc, "ref %.200s", ref);
		}
	}
	git_commit_free(parent);
	return 0;
}

int
gitm_revert(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha,
    const char *onto, const char *ref)
{
	git_commit *c = NULL, *base = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_signature *who = NULL;
	git_reference *rf = NULL;
	git_oid tid, cid;
	char *msg = NULL;
	const char *subj, *eol;
	int rc;

	if ((rc = repo_ready(r)) < 0 || (rc = lookup_commit(&c, r, sha)) < 0 ||
	    (rc = lookup_commit(&base, r, onto)) < 0)
		goto out;
	rc = git_revert_commit(&idx, r->repo, c, base,
	    git_commit_parentcount(c) > 1 ? 1 : 0, NULL);
	if (rc < 0) {
		rc = gerr(r, rc, "revert of %.12s", sha);
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		const git_index_entry *anc, *ours, *theirs;
		git_index_conflict_iterator *it = NULL;
		char path[256] = "(unknown)";

		if (git_index_conflict_iterator_new(&it, idx) == 0 &&
		    git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
			const git_index_entry *e = ours ? ours : theirs;

			if (e == NULL)
				e = anc;
			if (e != NULL)
				snprintf(path, sizeof(path), "%s", e->path);
		}
		git_index_conflict_iterator_free(it);
		sanitize(path);
		rc = err_setc(&r->err, ERR_CONFLICT,
		    "tree %s: the revert of %.12s does not apply cleanly on "
		    "%.12s: conflict in %s",
		    r->name, sha, onto, path);
		goto out;
	}
	if ((rc = git_index_write_tree_to(&tid, idx, r->repo)) < 0 ||
	    (rc = git_tree_lookup(&tree, r->repo, &tid)) < 0) {
		rc = gerr(r, rc, "write tree");
		goto out;
	}
	subj = git_commit_message(c);
	subj = subj ? subj : "";
	eol = strchr(subj, '\n');
	msg = xasprintf("Revert \"%.*s\"\n\nThis reverts commit %s.\n"
	                "(made by perfwatch to verify a bisection)\n",
	    (int)(eol ? eol - subj : (ptrdiff_t)strlen(subj)), subj, sha);
	if ((rc = git_signature_new(&who, "perfwatch", "perfwatch@localhost",
	         git_commit_time(base), git_commit_time_offset(base))) < 0 ||
	    (rc = git_commit_create(&cid, r->repo, NULL, who, who, NULL, msg,
	         tree, 1, (const git_commit **)&base)) < 0) {
		rc = gerr(r, rc, "revert commit");
		goto out;
	}
	oid_hex(out, &cid);
	if (ref != NULL) {
		rc = git_reference_create(
		    &rf, r->repo, ref, &cid, 1, "perfwatch: bisect revert");
		if (rc < 0)
			rc = gerr(r, rc, "ref %.200s", ref);
	}
out:
	free(msg);
	git_reference_free(rf);
	git_signature_free(who);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(base);
	git_commit_free(c);
	return rc < 0 ? rc : 0;
}

int
gitm_tree_id(char out[GITM_SHA_SIZE], struct gitm_repo *r, const char *sha)
{
	git_commit *c;
	int rc;

	out[0] = '\0';
	if ((rc = repo_ready(r)) < 0)
		return rc;
	if ((rc = lookup_commit(&c, r, sha)) < 0)
		return rc;
	oid_hex(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

int
gitm_inbox_read(char out_last[GITM_SHA_SIZE], size_t *out_n,
    struct gitm_repo *r, const char *old, size_t max,
    int (*cb)(const char *sha, const char *data, size_t len, void *arg),
    void *arg)
{
	git_revwalk *w = NULL;
	git_oid head, oid, old_id;
	size_t n = 0;
	int rc;

	out_last[0] = '\0';
	*out_n = 0;
	if ((rc = repo_ready(r)) < 0)
		return rc;
	if (git_reference_name_to_id(&head, r->repo, "HEAD") < 0 &&
	    git_reference_name_to_id(&head, r->repo, "refs/heads/master") < 0)
		return err_setc(&r->err, ERR_NOTFOUND,
		    "inbox %s: the archive has no HEAD or master", r->name);
	if ((rc = git_revwalk_new(&w, r->repo)) < 0)
		return gerr(r, rc, "revwalk");
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if ((rc = git_revwalk_push(w, &head)) < 0) {
		rc = gerr(r, rc, "revwalk push");
		goto out;
	}
	if (old != NULL && is_hex40(old)) {
		git_oid_fromstr(&old_id, old);
		if (git_revwalk_hide(w, &old_id) < 0)
			git_error_clear(); /* gone (rewritten): read all */
	}
	while (n < max && (rc = git_revwalk_next(&oid, w)) == 0) {
		git_commit *c = NULL;
		git_tree *t = NULL;
		git_tree_entry *te = NULL;
		git_blob *b = NULL;
		char hex[GITM_SHA_SIZE];
		int stop = 0;

		oid_hex(hex, &oid);
		if (cb != NULL && git_commit_lookup(&c, r->repo, &oid) == 0 &&
		    git_commit_tree(&t, c) == 0 &&
		    git_tree_entry_bypath(&te, t, "m") == 0 &&
		    git_blob_lookup(&b, r->repo, git_tree_entry_id(te)) == 0)
			stop = cb(hex, git_blob_rawcontent(b),
			    (size_t)git_blob_rawsize(b), arg);
		git_error_clear();
		git_blob_free(b);
		git_tree_entry_free(te);
		git_tree_free(t);
		git_commit_free(c);
		snprintf(out_last, GITM_SHA_SIZE, "%s", hex);
		n++;
		if (stop)
			break;
	}
	if (rc == GIT_ITEROVER || rc == 0)
		rc = 0;
	else
		rc = gerr(r, rc, "revwalk");
out:
	git_revwalk_free(w);
	*out_n = n;
	return rc;
}

/* ---- series commits as packs (daemon -> remote runner) ---------------- */

int
gitm_has_commit(struct gitm_repo *r, const char *sha)
{
	if (sha == NULL || !is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if (repo_ready(r) != 0) {
		err_clear(&r->err);
		return 0;
	}
	return have_commit(r, sha);
}

struct pack_sink {
	struct buf *out;
	int toobig;
};

static int
pack_chunk(void *data, size_t len, void *arg)
{
	struct pack_sink *k = arg;

	if (buf_add(k->out, data, len) == -1) {
		k->toobig = 1;
		return -1; /* stops git_packbuilder_foreach */
	}
	return 0;
}

/* A walk of tip ^have. */
static int
pack_walk(
    git_revwalk **out, struct gitm_repo *r, git_commit *tip, git_commit *have)
{
	int rc;

	if ((rc = git_revwalk_new(out, r->repo)) < 0 ||
	    (rc = git_revwalk_push(*out, git_commit_id(tip))) < 0 ||
	    (rc = git_revwalk_hide(*out, git_commit_id(have))) < 0)
		return gerr(r, rc, "walk for the pack");
	return 0;
}

int
gitm_pack_build(struct buf *out, size_t *out_commits, struct gitm_repo *r,
    const char *tip, const char *have)
{
	git_commit *ct = NULL, *ch = NULL;
	git_revwalk *w = NULL;
	git_packbuilder *pb = NULL;
	struct pack_sink k = { out, 0 };
	git_oid id;
	size_t n = 0;
	int rc;

	if (out_commits != NULL)
		*out_commits = 0;
	buf_reset(out);
	if ((rc = repo_ready(r)) < 0 || (rc = lookup_commit(&ct, r, tip)) < 0 ||
	    (rc = lookup_commit(&ch, r, have)) < 0)
		goto out;
	if ((rc = gitm_is_ancestor(r, have, tip)) < 0)
		goto out;
	if (rc == 0) {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: %s is not an ancestor of %s", r->name, have, tip);
		goto out;
	}
	/* The commits, counted on a walk of their own: the packbuilder
	 * consumes the one it is given. */
	if ((rc = pack_walk(&w, r, ct, ch)) < 0)
		goto out;
	while ((rc = git_revwalk_next(&id, w)) == 0)
		n++;
	git_revwalk_free(w);
	w = NULL;
	if (rc != GIT_ITEROVER) {
		rc = walk_fail(r, rc, "walk for the pack");
		goto out;
	}
	if ((rc = pack_walk(&w, r, ct, ch)) < 0)
		goto out;
	if ((rc = git_packbuilder_new(&pb, r->repo)) < 0 ||
	    (rc = git_packbuilder_insert_walk(pb, w)) < 0) {
		rc = walk_fail(r, rc, "packing");
		goto out;
	}
	rc = git_packbuilder_foreach(pb, pack_chunk, &k);
	if (k.toobig) {
		buf_release(out);
		rc = err_setc(&r->err, ERR_TOOBIG,
		    "tree %s: the pack of %s (%zu commits over %s) is larger "
		    "than %zu bytes",
		    r->name, tip, n, have, out->max);
		goto out;
	}
	if (rc < 0) {
		rc = gerr(r, rc, "writing the pack");
		goto out;
	}
	if (out_commits != NULL)
		*out_commits = n;
	rc = 0;
out:
	git_packbuilder_free(pb);
	git_revwalk_free(w);
	git_commit_free(ct);
	git_commit_free(ch);
	return rc;
}

/* What a pack holds and the first object it names but does not bring. */
struct pack_scan {
	git_repository *view; /* the clone with the pack added */
	git_odb *all, *pack;
	git_oid commits[4]; /* the first commits of the pack */
	size_t ncommits;
	char missing[GITM_SHA_SIZE], by[GITM_SHA_SIZE];
	int failed; /* a libgit2 call failed: its error is current */
};

/* 0 when id is in the clone or the pack; else records it. */
static int
scan_need(struct pack_scan *sc, const git_oid *id, const git_oid *by)
{
	if (git_odb_exists(sc->all, id))
		return 0;
	oid_hex(sc->missing, id);
	oid_hex(sc->by, by);
	return -1;
}

static int
scan_one(const git_oid *id, void *arg)
{
	struct pack_scan *sc = arg;
	git_object_t type;
	git_commit *c = NULL;
	git_tree *t = NULL;
	size_t len, i;
	int rc = 0;

	if (git_odb_read_header(&len, &type, sc->pack, id) < 0) {
		sc->failed = 1;
		return -1;
	}
	if (type == GIT_OBJECT_COMMIT) {
		if (git_commit_lookup(&c, sc->view, id) < 0) {
			sc->failed = 1;
			return -1;
		}
		if (sc->ncommits < sizeof(sc->commits) / sizeof(sc->commits[0]))
			git_oid_cpy(&sc->commits[sc->ncommits], id);
		sc->ncommits++;
		rc = scan_need(sc, git_commit_tree_id(c), id);
		for (i = 0; rc == 0 && i < git_commit_parentcount(c); i++)
			rc = scan_need(sc, git_commit_parent_id(c, i), id);
		git_commit_free(c);
	} else if (type == GIT_OBJECT_TREE) {
		if (git_tree_lookup(&t, sc->view, id) < 0) {
			sc->failed = 1;
			return -1;
		}
		for (i = 0; rc == 0 && i < git_tree_entrycount(t); i++) {
			const git_tree_entry *te = git_tree_entry_byindex(t, i);

			/* A submodule's commit lives in another repository. */
			if (git_tree_entry_type(te) != GIT_OBJECT_COMMIT)
				rc = scan_need(sc, git_tree_entry_id(te), id);
		}
		git_tree_free(t);
	}
	return rc;
}

/*
 * Checks the indexed pack at IDX against the clone: 0, or ERR_INVALID /
 * ERR_NOTFOUND / -1 with the message set (see gitm_pack_add).
 */
static int
pack_check(struct gitm_repo *r, const char *idx, const char *sha)
{
	git_odb_backend *b1 = NULL, *b2 = NULL;
	struct pack_scan sc;
	char *objects = xasprintf("%s/objects", r->path);
	git_object_t type;
	git_oid want;
	size_t len, i;
	int rc;

	memset(&sc, 0, sizeof(sc));
	if ((rc = git_odb_new(&sc.pack)) < 0 ||
	    (rc = git_odb_backend_one_pack(&b1, idx)) < 0 ||
	    (rc = git_odb_add_backend(sc.pack, b1, 1)) < 0) {
		rc = gerr(r, rc, "opening the pack");
		goto out;
	}
	b1 = NULL; /* the odb owns it */
	if ((rc = git_odb_new(&sc.all)) < 0 ||
	    (rc = git_odb_backend_one_pack(&b2, idx)) < 0 ||
	    (rc = git_odb_add_backend(sc.all, b2, 2)) < 0) {
		rc = gerr(r, rc, "opening the pack");
		goto out;
	}
	b2 = NULL;
	if ((rc = git_odb_add_disk_alternate(sc.all, objects)) < 0 ||
	    (rc = git_repository_wrap_odb(&sc.view, sc.all)) < 0) {
		rc = gerr(r, rc, "opening the clone's objects");
		goto out;
	}
	rc = git_odb_foreach(sc.pack, scan_one, &sc);
	if (sc.failed) {
		rc = gerr(r, rc, "reading the pack");
		goto out;
	}
	if (sc.missing[0] != '\0') {
		rc = err_setc(&r->err, ERR_INVALID,
		    "tree %s: the pack is incomplete: %s names object %s, "
		    "which is neither in the pack nor in the clone",
		    r->name, sc.by, sc.missing);
		goto out;
	}
	if (rc < 0) {
		rc = gerr(r, rc, "reading the pack");
		goto out;
	}
	git_oid_fromstr(&want, sha);
	if (git_odb_read_header(&len, &type, sc.all, &want) == 0 &&
	    type == GIT_OBJECT_COMMIT) {
		rc = 0;
		goto out;
	}
	{
		char held[4 * (GITM_SHA_SIZE + 2)] = "";
		size_t k = strlen(held);

		for (i = 0; i < sc.ncommits && i < 4; i++) {
			char hex[GITM_SHA_SIZE];

			oid_hex(hex, &sc.commits[i]);
			k += (size_t)snprintf(held + k, sizeof(held) - k,
			    "%s%s", i ? ", " : "", hex);
		}
		rc = err_setc(&r->err, ERR_NOTFOUND,
		    "tree %s: the pack does not hold commit %s; it holds "
		    "%zu commit%s%s%s%s",
		    r->name, sha, sc.ncommits, sc.ncommits == 1 ? "" : "s",
		    sc.ncommits ? " (" : "", held,
		    sc.ncommits > 4   ? ", ...)"
		        : sc.ncommits ? ")"
		                      : "");
	}
out:
	if (b1 != NULL)
		b1->free(b1);
	if (b2 != NULL)
		b2->free(b2);
	git_repository_free(sc.view);
	git_odb_free(sc.all);
	git_odb_free(sc.pack);
	free(objects);
	return rc;
}

int
gitm_pack_add(
    struct gitm_repo *r, const char *sha, const void *pack, size_t len)
{
	git_indexer_options io = GIT_INDEXER_OPTIONS_INIT;
	git_indexer_progress st;
	git_indexer *ix = NULL;
	git_odb *odb = NULL;
	char *tmp = NULL, *src[2] = { NULL, NULL }, *dst[2] = { NULL, NULL };
	const char *name;
	int rc, k;

	if (sha == NULL || !is_hex40(sha))
		return err_setc(&r->err, ERR_INVALID,
		    "tree %s: \"%.64s\" is not a 40-digit commit id", r->name,
		    sha ? sha : "(null)");
	if ((rc = repo_ready(r)) < 0)
		return rc;
	/* Inside the clone, so the final renames stay on one file system;
	 * not in objects/pack, where git and libgit2 look for packs. */
	tmp = xasprintf("%s/pack-in-XXXXXX", r->path);
	if (mkdtemp(tmp) == NULL) {
		rc = err_set(&r->err, "tree %s: mkdtemp %s: %s", r->name, tmp,
		    strerror(errno));
		free(tmp);
		return rc;
	}
	memset(&st, 0, sizeof(st));
	if ((rc = git_indexer_new(&ix, tmp, 0444, NULL, &io)) < 0) {
		rc = gerr(r, rc, "indexer");
		goto out;
	}
	if ((rc = git_indexer_append(ix, pack, len, &st)) < 0 ||
	    (rc = git_indexer_commit(ix, &st)) < 0) {
		gerr(r, rc, "indexing the pack (%zu bytes)", len);
		rc = ERR_INVALID;
		goto out;
	}
	name = git_indexer_name(ix);
	src[0] = xasprintf("%s/pack-%s.pack", tmp, name);
	src[1] = xasprintf("%s/pack-%s.idx", tmp, name);
	if ((rc = pack_check(r, src[1], sha)) != 0)
		goto out;
	dst[0] = xasprintf("%s/objects/pack/pack-%s.pack", r->path, name);
	dst[1] = xasprintf("%s/objects/pack/pack-%s.idx", r->path, name);
	/* The pack before its index: a reader finds packs by their index. */
	for (k = 0; k < 2; k++)
		if (rename(src[k], dst[k]) == -1) {
			rc = err_set(&r->err, "tree %s: rename %s: %s", r->name,
			    src[k], strerror(errno));
			if (k == 1)
				unlink(dst[0]);
			goto out;
		}
	if (git_repository_odb(&odb, r->repo) == 0)
		git_odb_refresh(odb);
	git_odb_free(odb);
	if (!have_commit(r, sha))
		rc = err_set(&r->err,
		    "tree %s: commit %s not readable after adding its pack",
		    r->name, sha);
out:
	git_indexer_free(ix);
	rm_tree(tmp);
	for (k = 0; k < 2; k++) {
		free(src[k]);
		free(dst[k]);
	}
	free(tmp);
	return rc;
}
