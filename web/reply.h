#ifndef WEB_REPLY_H
#define WEB_REPLY_H

/*
 * Every reply of the API (web/api*.c) and the dashboard (web/page_*.c),
 * one family so that both answer alike: JSON (and its {"error": ...}),
 * a page (with the security headers), a message page, a store result as
 * either, one map from the ERR_* codes to statuses, and one reading of
 * the bearer token.
 */
#include "common/json.h"

struct buf;
struct ctx;
struct httpd_req;

/* ERR_NOTFOUND 404, ERR_INVALID 400, ERR_CONFLICT and ERR_EXISTS 409,
 * anything else 500. */
int reply_status_of(int err);

/* o (its reference taken) as application/json with a final newline;
 * 500 when it does not fit CAP_HTTP_REPLY. */
void reply_json(struct ctx *, int status, json_t *o);
/* {"error": the formatted message}; a 5xx is logged. */
void reply_err(struct ctx *, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A store result as JSON: the expected ERR_* codes become 4xx. */
void reply_store_err(struct ctx *, int r);

/* The page in b (taken) as text/html with the security headers; 500
 * when b overflowed. */
void reply_page(struct ctx *, int status, struct buf *b);
/* A page of one message. */
void reply_message(
    struct ctx *, int status, const char *title, const char *text);
/* A store result as a message page. */
void reply_page_store_err(struct ctx *, int r);

/* The token of "Authorization: Bearer TOKEN", or NULL after replying
 * 401 (JSON) when there is none. */
const char *reply_bearer(struct httpd_req *);

#endif
