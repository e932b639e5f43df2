/*
 * The git module's transport (git/git_int.h): a socket stream with
 * timeouts registered with libgit2, and the transfer callbacks (progress,
 * deadline, cancel, credentials, certificates) of a fetch.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <git2/sys/stream.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/xalloc.h"
#include "git/git_int.h"

/* ---- a socket stream with timeouts ------------------------------------ */

/*
 * libgit2 1.5 waits forever on a silent server.  This stream replaces its
 * plain socket (TLS is layered on top of it) and gives up after
 * gitm_i_io_timeout_ms without progress on connect, read or write.
 */
long gitm_i_io_timeout_ms = GITM_DEFAULT_IO_TIMEOUT_MS;

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
		while ((e = poll(&pfd, 1, (int)gitm_i_io_timeout_ms)) == -1 &&
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
	tv.tv_sec = gitm_i_io_timeout_ms / 1000;
	tv.tv_usec = (gitm_i_io_timeout_ms % 1000) * 1000;
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
		gitm_i_io_timeout_ms = io_timeout;
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

/* ---- transfer callbacks ----------------------------------------------- */

void
gitm_i_xfer_begin(struct gitm_repo *r)
{
	git_error_clear();
	r->deadline_ms = clock_mono_ms() + r->opts.timeout_ms;
	r->last_progress_ms = 0;
	r->timed_out = r->cancelled = r->auth_asked = 0;
	memset(&r->prog, 0, sizeof(r->prog));
	r->prog.tree = r->name;
}

/* Deadline and the caller's progress; non-zero cancels the transfer. */
int
gitm_i_xfer_tick(struct gitm_repo *r, int force)
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
	return gitm_i_xfer_tick(r, 0);
}

/* libgit2's file:// transport builds a pack first: minutes on a big tree,
 * with no transfer progress meanwhile. */
static int
on_pack(int stage, uint32_t current, uint32_t total, void *arg)
{
	(void)stage;
	(void)current;
	(void)total;
	return gitm_i_xfer_tick(arg, 0);
}

/* Remote progress text is untrusted and dropped; only the clock counts. */
int
gitm_i_on_sideband(const char *str, int len, void *arg)
{
	(void)str;
	(void)len;
	return gitm_i_xfer_tick(arg, 0);
}

int
gitm_i_on_credentials(git_credential **out, const char *url, const char *user,
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

int
gitm_i_on_certificate(git_cert *cert, int valid, const char *host, void *arg)
{
	(void)cert;
	(void)valid;
	(void)host;
	(void)arg;
	/* Keep libgit2's verdict; a positive return would accept a bad
	 * certificate (LIBS.md, libgit2#5496). */
	return GIT_PASSTHROUGH;
}

const char *gitm_i_mirror_specs[] = { "+refs/heads/*:refs/heads/*",
	"+refs/tags/*:refs/tags/*" };

/* Fetches refspecs from the URL into repo; 0, ERR_AUTH or -1. */
int
gitm_i_fetch_specs(struct gitm_repo *r, git_repository *repo,
    const char **specs, size_t nspecs, int prune, struct gitm_fetch_stats *st)
{
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	git_remote_create_options co = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_strarray rs = { (char **)specs, nspecs };
	git_remote *remote = NULL;
	const git_indexer_progress *ip;
	int rc;

	gitm_i_xfer_begin(r);
	fo.callbacks.transfer_progress = on_transfer;
	fo.callbacks.sideband_progress = gitm_i_on_sideband;
	fo.callbacks.pack_progress = on_pack;
	fo.callbacks.credentials = gitm_i_on_credentials;
	fo.callbacks.certificate_check = gitm_i_on_certificate;
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
		return gitm_i_gerr(r, rc, "remote %s", r->name);
	rc = git_remote_fetch(remote, &rs, &fo, NULL);
	if (rc < 0) {
		rc = gitm_i_gerr(r, rc, "fetch");
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
