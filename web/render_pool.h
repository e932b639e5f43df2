#ifndef WEB_RENDER_POOL_H
#define WEB_RENDER_POOL_H

/*
 * The render pool (web/render_pool.c): the reply cache's misses rendered
 * by the render threads (struct api's renders, a common/workq.h) instead
 * of the event thread that serves many connections, and one render
 * shared by the requests for the same key under the same stamp.  An
 * event thread's renders are its own (thread-local); not for use outside
 * web/.
 */
#include "web/api_int.h"

struct buf;
struct cache_stamp;
struct httpd_req;

/* What render_pool_park did with a request. */
enum render_park {
	RENDER_NOT_PARKED, /* no render threads, or too many renders in
	                    * progress: the caller renders it itself */
	RENDER_LEADS,      /* parked, leading a new render */
	RENDER_SHARED,     /* answered now with the reply of a render of
	                    * the same key and stamp that has just ended */
	RENDER_WAITS,      /* parked, waiting for a render in progress */
};

/*
 * A cache miss of x's request (key, made under st; its clocks at its
 * start wall0 and, this thread's CPU, cpu0): parks it on the
 * render of the same key and stamp in progress, or on a new one.  When
 * parked (RENDER_LEADS, RENDER_WAITS) the caller's ctx belongs to the
 * render: what it held is moved and x is left empty.  key and st NULL:
 * a request the cache does not answer (a cookie, a token), on a render
 * of its own that no other request shares and the cache does not keep
 * (RENDER_LEADS, or RENDER_NOT_PARKED).
 */
enum render_park render_pool_park(struct ctx *x, const struct route *rt,
    const struct buf *key, const struct cache_stamp *st, double wall0,
    double cpu0);
/*
 * A resumed request: 1 when it waited for a render and is answered now;
 * 0 when it did not (the caller goes on), or when the render set a
 * cookie, which is the leader's only (then the caller renders afresh).
 */
int render_pool_resume(struct api *a, struct httpd_req *r);
/* A request that completed while it waited (the server stopping): out
 * of its render. */
void render_pool_gone(struct httpd_req *r);

#endif
