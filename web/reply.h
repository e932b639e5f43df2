#ifndef WEB_REPLY_H
#define WEB_REPLY_H

/*
 * The HTTP replies and checks that the API (web/api*.c) and the
 * dashboard (web/page_*.c) share, so that both answer alike: one JSON
 * reply, one map from the ERR_* codes to statuses, one reading of the
 * bearer token.
 */
#include <stddef.h>

#include <jansson.h>

struct httpd_req;

/* ERR_NOTFOUND 404, ERR_INVALID 400, ERR_CONFLICT and ERR_EXISTS 409,
 * anything else 500. */
int reply_status_of(int err);

/* Replies o (a reference is taken) as application/json with a final
 * newline; 500 when it does not fit CAP_HTTP_REPLY.  keep (NULL: none)
 * is handed the serialised bytes first, for a cache. */
typedef void reply_keep_fn(void *arg, const char *body, size_t len);
void reply_json_take(
    struct httpd_req *, int status, json_t *o, reply_keep_fn *keep, void *arg);

/* {"error": msg}. */
void reply_json_error(struct httpd_req *, int status, const char *msg);

/* The token of "Authorization: Bearer TOKEN", or NULL after replying
 * 401 (JSON) when there is none. */
const char *reply_bearer(struct httpd_req *);

#endif
