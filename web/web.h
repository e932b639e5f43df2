#ifndef WEB_WEB_H
#define WEB_WEB_H

/*
 * The dashboard: HTML pages, their JSON mirrors under /api/v1, login and
 * triage, one file per page (web/page_*.c; their shared part web/web.c,
 * web/web_int.h).  Its routes are rows of the one route table
 * (web/api.c), marked as the dashboard's; the dispatch calls web_begin()
 * before such a route's authorisation and web_end() after its handler.
 * Each handler reads the store (store/, the only SQL), fills a
 * view struct and renders it (web/views.h), or replies the same data as
 * JSON.
 */
#include <stdint.h>

struct ctx;

/*
 * State kept across requests: admin sessions (the overview, as every
 * public page, is kept by the reply cache, web/cache.h).  Thread-safe.
 */
struct web;
struct web *web_new(void);   /* never NULL */
void web_free(struct web *); /* NULL ok */

/* The request's admin session (its cookie) and the replies its views
 * borrow strings from (x->keep); web_end() releases them. */
void web_begin(struct ctx *);
void web_end(struct ctx *);
/* A "session" route: 0 when the admin session posts the form with its
 * CSRF token, else -1 after replying 403 (a page). */
int web_session_ok(struct ctx *);
/* The same on the head, before the body: the admin session only. */
int web_session_head_ok(struct ctx *);

/* The handlers; x->rest is the path after a prefix route's '/'. */
void web_overview(struct ctx *);         /* GET / */
void web_commit(struct ctx *);           /* GET /commit/{sha} */
void web_series(struct ctx *);           /* GET /series/{id} */
void web_pair(struct ctx *);             /* GET /pair/{id} */
void web_history(struct ctx *);          /* GET /history */
void web_regressions(struct ctx *);      /* GET /regressions */
void web_bisect(struct ctx *);           /* GET /bisect/{id} */
void web_bisects(struct ctx *);          /* GET /bisect */
void web_series_list(struct ctx *);      /* GET /series */
void web_trees(struct ctx *);            /* GET /trees */
void web_commits(struct ctx *);          /* GET /commits */
void web_alerts(struct ctx *);           /* GET /alerts */
void web_alert(struct ctx *);            /* GET /alerts/{id} */
void web_triage(struct ctx *);           /* POST /regressions/{id}/triage */
void web_hosts(struct ctx *);            /* GET /hosts */
void web_jobs(struct ctx *);             /* GET /jobs */
void web_job(struct ctx *);              /* GET /jobs/{id}, /jobs/{id}/log */
void web_builds(struct ctx *);           /* GET /builds */
void web_build(struct ctx *);            /* GET /builds/{id} */
void web_login(struct ctx *);            /* GET /login */
void web_login_post(struct ctx *);       /* POST /login */
void web_logout(struct ctx *);           /* POST /logout */
void web_favicon(struct ctx *);          /* GET /favicon.ico */
void web_overview_json(struct ctx *);    /* GET /api/v1/overview */
void web_commit_json(struct ctx *);      /* GET /api/v1/commits/{sha} */
void web_series_json(struct ctx *);      /* GET /api/v1/series/{id} */
void web_comparisons_json(struct ctx *); /* GET /api/v1/comparisons */
void web_regressions_json(struct ctx *); /* GET /api/v1/regressions */
void web_history_json(struct ctx *);     /* GET /api/v1/history */
void web_triage_json(struct ctx *);      /* POST /api/v1/regressions/{id}/... */

#endif
