#ifndef WEB_WEB_INT_H
#define WEB_WEB_INT_H

/*
 * Inside the dashboard: what web/web.c (the state across requests, the
 * small helpers, the replies, the sessions) shares with the page files,
 * web/page_*.c, one per page and its JSON mirror.  Strings in view
 * structs are borrowed from the store's JSON replies, which live in
 * x->keep (web_keep) until the request ends.  Not for use outside web/.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "web/views.h"

struct buf;
struct ctx;
struct store_alert;
struct session_table;
struct throttle;

#define COOKIE_SESSION "pw_session"
#define COOKIE_PRE "pw_pre" /* login form CSRF (double submit) */
#define PAGE_ROWS 50
#define PAGE_MAX 500
#define RECENT_JOBS 400   /* candidate jobs the overview looks at */
#define OVERVIEW_ITEMS 60 /* commits and pairs it shows */
#define HISTORY_JOBS 200  /* jobs per history page */
#define PAIRS_PER_PAGE 40 /* pairs of one commit or series */
#define FORM_FIELD_MAX 4096

struct web {
	struct session_table *sessions;
	struct throttle *logins; /* failed logins per address */
};

/* A query parameter, NULL when absent or empty. */
const char *web_q(struct ctx *x, const char *key);
json_t *web_keep(struct ctx *x, json_t *o);
const char *web_jstr(json_t *o, const char *key);
int64_t web_jint(json_t *o, const char *key);
double web_jnum(json_t *o, const char *key);
json_t *web_jnumber(double v);
/* A positive decimal id from text; 0 when it is not one. */
int64_t web_parse_id(const char *s, const char **end);
/* An integer query parameter in [lo, hi]; dflt when absent; -1 bad. */
int web_q_int(struct ctx *x, int64_t *out, const char *key, int64_t dflt,
    int64_t lo, int64_t hi);
/* A page's ?cursor=: 0 (the first page) when absent or not a number. */
int64_t web_q_cursor(struct ctx *x);
/*
 * A page's pager: "newest" when it did not start at the first page
 * (cursor), "older" when next_cursor is not 0 (its text is kept in next,
 * which must outlive the pager).
 */
void web_pager(
    struct view_pager *p, int64_t cursor, int64_t next_cursor, char next[32]);
/*
 * The JSON of a commit (sha), series or pair (id) with its
 * "comparisons" (/api/v1/comparisons, /api/v1/commits/...): 0 with *out
 * the caller's, or a store error.  Borrows from x->keep.
 */
int web_target_json(
    struct ctx *x, enum view_target kind, const char *id, json_t **out);
struct store;
struct store_history_q;
struct buf;
/*
 * The page of a commit (sha), series or pair (id), /commit/, /series/,
 * /pair/: 0 with the HTML in *out (the caller releases it), or a store
 * error.  What the routes answer, without the request.
 */
int web_target_html(
    struct ctx *x, enum view_target kind, const char *id, struct buf *out);
/*
 * GET /api/v1/history (its JSON into *out_json, the caller's) and the
 * /history page (into out_html) of the query q; either may be NULL.
 * What the routes answer, without the request: 0 or a store error.
 */
int web_history_doc(struct store *, const struct store_history_q *q,
    json_t **out_json, struct buf *out_html);
/* An alert's row on a page, its target and error shown as its JSON shows
 * them (redacted) in shown[0] and shown[1], which the caller frees. */
void web_alert_row(
    struct view_alert *v, const struct store_alert *a, char **shown);
/* What GET /jobs/{id}/log answers: the job's log tail appended to out.
 * 0, or a store error. */
int web_job_log_text(struct store *, int64_t id, struct buf *out);
/* What GET /api/v1/bisect/{id} answers, from the read its page makes:
 * the bisection, its steps each with its two comparisons of the
 * bisected metric ("vs_good_cmp", "vs_bad_cmp": interval, each side's
 * mean, sd and runs) and each step pair's "sides".  0 with *out the
 * caller's, or a store error.  Borrows from x->keep. */
int web_bisect_json(struct ctx *x, int64_t id, json_t **out);
/* What GET /api/v1/overview answers: 0 with *out the
 * caller's, or a store error.  Borrows from x->keep. */
int web_overview_doc(struct ctx *x, json_t **out);
/* What GET /api/v1/regressions answers for these filters (NULL: any):
 * 0 with *out the caller's, or a store error. */
int web_regressions_doc(struct store *, json_t **out, const char *tree,
    const char *host, const char *bench, const char *state, int64_t limit,
    int64_t cursor);
/* The value of cookie name in the Cookie header into out, or "". */
void web_cookie(struct ctx *x, const char *name, char *out, size_t len);
/*
 * A field of an application/x-www-form-urlencoded body, decoded into out
 * (capped).  0, or ERR_NOTFOUND when absent.
 */
int web_form(struct ctx *x, const char *key, struct buf *out);
void web_security_headers(struct ctx *x);

void web_redirect(struct ctx *x, const char *location);
/* 1 when token is the admin token. */
int web_is_admin_token(struct ctx *x, const char *token);

#endif
