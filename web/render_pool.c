/*
 * The render pool: cache misses rendered off the event threads, so every
 * page stays fast while the fleet writes.  A libmicrohttpd thread serves many
 * connections, and a page it renders itself (history.json at 1M runs:
 * over a millisecond of CPU, more on a loaded machine) holds up every
 * other connection of that thread.  Under a fleet's uploads each commit
 * moves the store's version, so each is followed by a render per thread:
 * the cached history's p99 went from 5 ms to 14-32 ms beside a paced
 * fleet (make bench-web LIVE=1), and worse with more threads.  So a miss
 * parks its request and a render thread (a->renders) makes the reply,
 * while the event thread goes on answering from its cache.  Requests for
 * the same key under the same stamp that come meanwhile wait for that
 * render (answer "shared") instead of queueing their own.
 *
 * An event thread's tasks are in its tl_renders, which only that thread
 * touches (a connection is served by one thread, its resumption too); a
 * task lives until each of its requests is answered.  The render thread
 * writes the leader's reply (the leader is parked: its thread leaves it
 * alone) and moves it into the task, for every request of the task,
 * then sets done and unparks them all under the task's mutex.  api_stop runs
 * what is queued before it stops the server, so no task is left undone.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/workq.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "web/api_int.h"
#include "web/cache.h"
#include "web/httpd.h"
#include "web/render_pool.h"
#include "web/reply.h"
#include "web/web.h"

#define RENDERS_MAX 32

struct rwait {
	struct httpd_req *r;
	double wall0;
};

struct rtask {
	pthread_mutex_t mu;
	int done;                 /* mu */
	struct rwait *wait;       /* mu: parked, not yet answered */
	size_t nwait, capwait;    /* mu */
	struct httpd_req *leader; /* whose ctx and reply it is */
	struct ctx x;             /* the leader's */
	const struct route *rt;
	struct cache_stamp st;
	char *key;
	size_t keylen;
	int kept;     /* the event thread tried cache_keep */
	int own;      /* the leader's alone: no key, never shared or kept */
	double cpu_s; /* the render's, and the leader's before it parked */
	/* The reply, for each request: status, type, body, headers. */
	int status, cookie;
	char *ctype, *body;
	size_t len;
	int nhdr;
	char *hdr[2 * HTTPD_REPLY_HEADERS];
};

static _Thread_local struct rtask *tl_renders[RENDERS_MAX];

static void
rtask_free(struct rtask *t)
{
	int i;

	for (i = 0; i < 2 * t->nhdr; i++)
		free(t->hdr[i]);
	free(t->ctype);
	free(t->body);
	free(t->key);
	free(t->wait);
	dconf_unref(t->x.conf);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* The render thread: the leader's route, its reply copied, every
 * request of the task unparked. */
static void
rtask_run(void *arg)
{
	struct rtask *t = arg;
	struct ctx *x = &t->x;
	double cpu0 = clock_thread_cpu_s();
	const char *body, *ctype, *name, *value;
	size_t i;
	int k;

	if ((x->s = api_thread_store(x->a, &x->err)) == NULL)
		reply_err(x, 503, "database: %s", err_msg(&x->err));
	else
		api_route_call(x, t->rt, 1);
	if (t->rt->page)
		web_end(x);
	json_decref(x->body);
	x->body = NULL;
	t->status = httpd_status(t->leader);
	body = httpd_reply_body(t->leader, &t->len, &ctype);
	t->body = xmalloc(t->len + 1);
	if (t->len > 0)
		memcpy(t->body, body, t->len);
	t->body[t->len] = '\0';
	t->ctype = xstrdup(ctype != NULL ? ctype : "application/json");
	t->nhdr = httpd_reply_nheaders(t->leader);
	for (k = 0; k < t->nhdr; k++) {
		httpd_reply_header_at(t->leader, k, &name, &value);
		t->hdr[2 * k] = xstrdup(name);
		t->hdr[2 * k + 1] = xstrdup(value);
		if (strcasecmp(name, "Set-Cookie") == 0)
			t->cookie = 1;
	}
	/* The leader answers from the copy too: a request with a reply
	 * is not handled again when it resumes (web/httpd.c). */
	httpd_reply_clear(t->leader);
	t->cpu_s += clock_thread_cpu_s() - cpu0;
	pthread_mutex_lock(&t->mu);
	t->done = 1;
	for (i = 0; i < t->nwait; i++)
		httpd_unpark(t->wait[i].r);
	pthread_mutex_unlock(&t->mu);
}

static void
rtask_wait(struct rtask *t, struct httpd_req *r, double wall0)
{
	if (t->nwait == t->capwait) {
		t->capwait = t->capwait ? 2 * t->capwait : 4;
		t->wait = xreallocarray(t->wait, t->capwait, sizeof(*t->wait));
	}
	t->wait[t->nwait].r = r;
	t->wait[t->nwait++].wall0 = wall0;
}

/* The task r waits in, and its place in the task's list; NULL. */
static struct rtask *
rtask_of(struct httpd_req *r, size_t *at, int *slot)
{
	struct rtask *t;
	size_t i;
	int k;

	for (k = 0; k < RENDERS_MAX; k++) {
		if ((t = tl_renders[k]) == NULL)
			continue;
		pthread_mutex_lock(&t->mu);
		for (i = 0; i < t->nwait; i++)
			if (t->wait[i].r == r) {
				pthread_mutex_unlock(&t->mu);
				*at = i;
				*slot = k;
				return t;
			}
		pthread_mutex_unlock(&t->mu);
	}
	return NULL;
}

/* r answered (or gone): out of its task, which goes with its last. */
static void
rtask_leave(struct rtask *t, size_t at, int slot)
{
	int last;

	pthread_mutex_lock(&t->mu);
	t->wait[at] = t->wait[--t->nwait];
	last = t->nwait == 0 && t->done;
	pthread_mutex_unlock(&t->mu);
	if (last) {
		tl_renders[slot] = NULL;
		rtask_free(t);
	}
}

/* The task's reply copied into r's. */
static void
rtask_reply(struct rtask *t, struct httpd_req *r)
{
	int k;

	if (t->status == 0)
		return; /* the route made no reply: web/httpd.c's 500 */
	httpd_reply(r, t->status, t->ctype, t->body, t->len);
	for (k = 0; k < t->nhdr; k++)
		httpd_reply_header(r, t->hdr[2 * k], t->hdr[2 * k + 1]);
}

/*
 * A resumed request: 1 when it waited for a render and is answered now;
 * 0 when it did not (the caller goes on), or when the render set a
 * cookie, which is the leader's only (then the caller renders afresh).
 */
int
render_pool_resume(struct api *a, struct httpd_req *r)
{
	struct rtask *t;
	struct ctx x;
	size_t at;
	double wall0;
	int slot, done;

	if ((t = rtask_of(r, &at, &slot)) == NULL)
		return 0;
	pthread_mutex_lock(&t->mu);
	done = t->done;
	wall0 = t->wait[at].wall0;
	if (!done) {
		/* Unparked by someone else: the render will do it again
		 * (parked under the mutex, as in render_pool_park). */
		httpd_park(r);
		pthread_mutex_unlock(&t->mu);
		return 1;
	}
	pthread_mutex_unlock(&t->mu);
	if (r != t->leader && t->cookie) {
		rtask_leave(t, at, slot);
		return 0;
	}
	rtask_reply(t, r);
	if (!t->kept) {
		t->kept = 1;
		memset(&x, 0, sizeof(x));
		x.a = a;
		x.r = r;
		if ((x.s = api_thread_store(a, &x.err)) != NULL) {
			struct buf k = { 0 };

			k.data = t->key;
			k.len = t->keylen;
			api_cache_keep(&x, &k, &t->st);
		}
	}
	if (r == t->leader)
		api_route_time_add(a, t->rt, t->own ? API_RENDERED : API_MISS,
		    clock_mono_s() - wall0, t->cpu_s);
	else
		api_route_time_add(
		    a, t->rt, API_SHARED, clock_mono_s() - wall0, 0);
	rtask_leave(t, at, slot);
	return 1;
}

void
render_pool_gone(struct httpd_req *r)
{
	struct rtask *t;
	size_t at;
	int slot;

	if ((t = rtask_of(r, &at, &slot)) != NULL)
		rtask_leave(t, at, slot);
}

enum render_park
render_pool_park(struct ctx *x, const struct route *rt, const struct buf *key,
    const struct cache_stamp *st, double wall0, double cpu0)
{
	struct rtask *t;
	int k, free_slot = -1;

	if (x->a->renders == NULL)
		return RENDER_NOT_PARKED;
	for (k = 0; k < RENDERS_MAX; k++) {
		if ((t = tl_renders[k]) == NULL) {
			if (free_slot < 0)
				free_slot = k;
			continue;
		}
		if (key == NULL || t->own || t->keylen != key->len ||
		    memcmp(t->key, key->data, key->len) != 0 ||
		    t->st.v.gen != st->v.gen || t->st.conf != st->conf)
			continue;
		pthread_mutex_lock(&t->mu);
		if (!t->done) {
			/* Parked before it is listed, under the mutex: the
			 * render cannot unpark it first (a resume of a
			 * request not suspended is lost). */
			httpd_park(x->r);
			rtask_wait(t, x->r, wall0);
			pthread_mutex_unlock(&t->mu);
			return RENDER_WAITS;
		}
		pthread_mutex_unlock(&t->mu);
		if (!t->cookie) {
			rtask_reply(t, x->r);
			return RENDER_SHARED;
		}
	}
	if (free_slot < 0)
		return RENDER_NOT_PARKED;
	t = xcalloc(1, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	t->x = *x;
	t->x.s = NULL;
	x->conf = NULL; /* moved: the task's now */
	x->keep = NULL;
	x->body = NULL;
	t->leader = x->r;
	t->cpu_s = clock_thread_cpu_s() - cpu0;
	t->rt = rt;
	if (key == NULL) {
		t->own = 1;
		t->kept = 1; /* nothing to keep */
	} else {
		t->st = *st;
		t->key = xmalloc(key->len + 1);
		memcpy(t->key, key->data, key->len);
		t->key[key->len] = '\0';
		t->keylen = key->len;
	}
	rtask_wait(t, x->r, wall0);
	tl_renders[free_slot] = t;
	httpd_park(x->r);
	workq_submit(x->a->renders, rtask_run, t);
	return RENDER_LEADS;
}
