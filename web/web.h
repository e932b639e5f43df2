#ifndef WEB_WEB_H
#define WEB_WEB_H

/*
 * The dashboard's routes: HTML pages, their JSON mirrors under /api/v1,
 * login and triage.  A route table as in cgit; each handler reads the
 * store (daemon/store.h, the only SQL), fills a view struct and renders
 * it (web/views.h).  The HTTP surface (web/api.c) hands over every
 * request web_match() claims, with a store connection of its thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct httpd_req;
struct store;
struct dconf;

/*
 * State kept across requests: admin sessions and a one-second cache of
 * the overview (the page every visitor loads first, and the costliest:
 * its counts scan the jobs table).  Thread-safe.
 */
struct web;
struct web *web_new(void);   /* never NULL */
void web_free(struct web *); /* NULL ok */

#define WEB_CACHE_MS 1000

struct web_env {
	struct httpd_req *r;
	struct store *s;
	const struct dconf *conf;
	struct web *web;
	int64_t now;
	int64_t online_s; /* a host is online when seen this recently */
};

/* Route i of the table (0, or -1 past its end): a path ending in '/'
 * is a prefix; auth is "none", "session" or "admin". */
int web_route_at(
    size_t i, const char **method, const char **path, const char **auth);
/* 1 when method and path are a dashboard route, else 0. */
int web_match(const char *method, const char *path);
/* Answers the request (always sets a reply). */
void web_serve(const struct web_env *);

#endif
