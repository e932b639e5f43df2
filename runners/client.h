#ifndef RUNNERS_CLIENT_H
#define RUNNERS_CLIENT_H

/*
 * The runner's side of the API in docs/API.md ("Runner routes"), over
 * common/http.  One struct client per thread (it owns one HTTP handle).
 *
 * Every call returns 0 on a 2xx, or:
 *	ERR_AGAIN	transport failure, 429 or 5xx: worth retrying
 *	ERR_AUTH	401, ERR_FORBIDDEN 403, ERR_NOTFOUND 404,
 *	ERR_CONFLICT	409 (the lease is not ours), ERR_TOOBIG 413,
 *	ERR_INVALID	any other 4xx or a reply that is not the documented JSON
 * with client_errmsg() naming the route, the status and the server's
 * "error" text.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/json.h"

struct client;

/* server is the base URL ("http://127.0.0.1:8080"); token may be NULL. */
struct client *client_new(const char *server, const char *token);
/*
 * n >= 1 servers of one database (runner.yaml server and servers), the
 * first talked to first.  A call that finds its server unreachable
 * (refused, cut off, timed out) or answering 5xx goes on to the next
 * server at once, each at most once a call (a streamed transfer, a
 * build's file or an artifact, leaves its next try to the caller), and
 * the client stays with the server that answered; each switch is logged.
 * ERR_AGAIN after a round of them all: the caller's backoff applies.
 */
struct client *client_new_list(
    const char *const *servers, size_t n, const char *token);
/* The base URL of the server the client talks to now. */
const char *client_server(const struct client *);
void client_free(struct client *); /* NULL ok */
const char *client_errmsg(const struct client *);
/* A flag that aborts transfers and retry sleeps (the runner's SIGTERM). */
/* The CA certificates an https server is verified against (a private
 * CA; runner.yaml ca_file); NULL: the system's. */
void client_set_ca(struct client *, const char *path);
void client_set_stop(struct client *, const atomic_int *stop);

/*
 * Any call: method, path under the server ("/api/v1/..."), a body (NULL:
 * none).  *reply (may be NULL to ignore) gets the parsed JSON of a 2xx
 * reply, NULL for an empty one (204).  *status (may be NULL) gets the
 * HTTP status, 0 when there was none.  One try, no retry.
 */
int client_call(json_t **reply, long *status, struct client *,
    const char *method, const char *path, const json_t *body);

/*
 * GET of a reply that is not JSON (a git pack): the body into *out (the
 * caller releases it; empty on failure), at most max bytes (ERR_TOOBIG
 * beyond), within total_ms.  One try.
 */
int client_get_raw(struct buf *out, struct client *, const char *path,
    size_t max, long total_ms);

/* register: body is the whole request; the reply's intervals out. */
int client_register(int64_t *heartbeat_s, int64_t *lease_s, struct client *,
    const json_t *body);
/*
 * heartbeat: job_id 0 = idle.  *cancel and *runs (may be NULL) from the
 * reply; *runs is left alone when the reply has none.
 */
int client_heartbeat(int *cancel, int64_t *runs, struct client *,
    int64_t job_id, const char *progress);
/* The same during a kexec or reboot: asks for a lease of boot_s. */
int client_heartbeat_boot(int *cancel, int64_t *runs, struct client *,
    int64_t job_id, const char *progress, int64_t boot_s);
/* claim: 0 with *job (the reply's "job" object, caller decrefs) or, for
 * a runner that builds, *build (a shared kernel build, docs/KERNEL.md;
 * the other one NULL), or ERR_NOTFOUND for a 204.  The transfer timeout
 * is wait_s + 15 s.  pairs: this runner measures both jobs of a pair in
 * turns (the reply's job may then hold a "partner" job).  builds 0:
 * this runner never compiles a kernel (sent as "builds": false). */
int client_claim(json_t **job, json_t **build, struct client *, int64_t wait_s,
    int pairs, int builds);
/* heartbeat of a build this runner holds: extends its lease; *cancel
 * (may be NULL) when it was cancelled or its lease went elsewhere. */
int client_heartbeat_build(
    int *cancel, struct client *, int64_t build_id, const char *progress);
/* A build's log, text appended (sanitized UTF-8). */
int client_build_log(struct client *, int64_t build_id, const char *text);
/*
 * One artifact of a build: the next size bytes of fd as file name, with
 * its sha256 (64 hex digits) for the daemon to check, within total_ms.
 */
int client_build_put(struct client *, int64_t build_id, const char *name,
    int fd, int64_t size, const char *sha256, long total_ms);
/* A build finished: body as docs/API.md POST /builds/{id}/finish. */
int client_build_finish(struct client *, int64_t build_id, const json_t *body);
/*
 * GET /api/v1/artifacts/SHA256 from byte from on (a Range request when
 * from > 0): the body is written to fd at its offset, which must be
 * from; a server that sends the whole file (200) has it written from the
 * start (*restarted 1, fd truncated first).  *status the HTTP status (0:
 * none), *got the bytes written.  Returns as the other calls (a cut
 * transfer: ERR_AGAIN, with what arrived written).
 */
int client_artifact_get(long *status, int64_t *got, int *restarted,
    struct client *, const char *sha256, int fd, int64_t from, long total_ms);
/* One run, body already serialized (it comes from the spool). */
int client_upload_run(
    struct client *, int64_t job_id, const char *body, size_t len);
int client_log(struct client *, int64_t job_id, const char *text);
/* status "success" or "failure" (then error says why). */
int client_finish(
    struct client *, int64_t job_id, const char *status, const char *error);

#endif
