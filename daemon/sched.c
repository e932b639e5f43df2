/*
 * The scheduler: leases, long-poll and the ticker thread.  The SQL is in
 * the store; this file decides when to call it and who to wake.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "store/builds.h"
#include "store/claim.h"
#include "store/jobs.h"
#include "store/leases.h"
#include "store/store.h"

struct sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen;
	int64_t lease_s, claim_wait_s;
	/* ticker */
	pthread_t thread;
	int running, stop;
	struct store *store;
	int tick_ms;
	void (*tick)(void *, int);
	void *arg;
	struct leases *leases; /* the requeue runs while LEASE_SCHED is held */
	int64_t clock_off_ms;  /* __atomic: sched_clock_set */
};

void
sched_clock_set(struct sched *s, int64_t offset_ms)
{
	__atomic_store_n(&s->clock_off_ms, offset_ms, __ATOMIC_RELAXED);
}

int64_t
sched_now_s(struct sched *s)
{
	struct timespec ts;
	int64_t ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
	    __atomic_load_n(&s->clock_off_ms, __ATOMIC_RELAXED);
	return ms / 1000;
}

struct sched *
sched_new(int64_t lease_s, int64_t claim_wait_s)
{
	struct sched *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;

	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->lease_s = lease_s > 0 ? lease_s : 60;
	s->claim_wait_s = claim_wait_s >= 0 ? claim_wait_s : 30;
	return s;
}

void
sched_free(struct sched *s)
{
	if (s == NULL)
		return;
	sched_stop(s);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void
sched_set_params(struct sched *s, int64_t lease_s, int64_t claim_wait_s)
{
	pthread_mutex_lock(&s->mu);
	if (lease_s > 0)
		s->lease_s = lease_s;
	if (claim_wait_s >= 0)
		s->claim_wait_s = claim_wait_s;
	pthread_mutex_unlock(&s->mu);
}

int64_t
sched_lease_s(struct sched *s)
{
	int64_t v;

	pthread_mutex_lock(&s->mu);
	v = s->lease_s;
	pthread_mutex_unlock(&s->mu);
	return v;
}

int64_t
sched_claim_wait_s(struct sched *s)
{
	int64_t v;

	pthread_mutex_lock(&s->mu);
	v = s->claim_wait_s;
	pthread_mutex_unlock(&s->mu);
	return v;
}

void
sched_notify(struct sched *s)
{
	pthread_mutex_lock(&s->mu);
	s->gen++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

uint64_t
sched_generation(struct sched *s)
{
	uint64_t g;

	pthread_mutex_lock(&s->mu);
	g = s->gen;
	pthread_mutex_unlock(&s->mu);
	return g;
}

uint64_t
sched_wait(struct sched *s, uint64_t gen, int timeout_ms)
{
	struct timespec ts;
	uint64_t g;

	clock_deadline(&ts, timeout_ms);
	pthread_mutex_lock(&s->mu);
	while (s->gen == gen && !s->stop)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
			break;
	g = s->gen;
	pthread_mutex_unlock(&s->mu);
	return g;
}

int
sched_requeue(struct sched *s, struct store *st, int *out_n)
{
	int n = 0;
	int nb = 0;

	if (store_requeue_expired(st, sched_now_s(s), &n) == -1 ||
	    store_builds_requeue_expired(st, sched_now_s(s), &nb) == -1)
		return -1;
	n += nb;
	if (n > 0)
		sched_notify(s);
	if (out_n)
		*out_n = n;
	return 0;
}

int
sched_claim(struct sched *s, struct store *st, struct store_claimed *out,
    int64_t host_id)
{
	/* Expired leases are put back by the ticker (sched_start) or by
	 * sched_claim_wait; a claim stays one short transaction. */
	return store_claim(st, out, host_id, sched_now_s(s), sched_lease_s(s));
}

int
sched_claim_pair(struct sched *s, struct store *st, struct store_claimed *out,
    int64_t host_id)
{
	return store_claim_pair(
	    st, out, host_id, sched_now_s(s), sched_lease_s(s));
}

int
sched_claim_as(struct sched *s, struct store *st, struct store_claimed *out,
    int64_t host_id, int pairs, int builds, const char *claim_id)
{
	return store_claim_as(st, out, host_id, sched_now_s(s),
	    sched_lease_s(s), pairs, builds, claim_id);
}

int
sched_claim_wait(struct sched *s, struct store *st, struct store_claimed *out,
    int64_t host_id, int64_t wait_s)
{
	int64_t end, left;
	uint64_t gen;
	int r;

	if (wait_s > sched_claim_wait_s(s))
		wait_s = sched_claim_wait_s(s);
	end = clock_mono_ms() + (int)(wait_s * 1000);
	for (;;) {
		gen = sched_generation(s);
		if (sched_requeue(s, st, NULL) == -1)
			return -1;
		r = sched_claim(s, st, out, host_id);
		if (r != ERR_NOTFOUND)
			return r;
		left = end - clock_mono_ms();
		if (left <= 0)
			return ERR_NOTFOUND;
		/* Wake at least every second: leases expire by the clock,
		 * not by a notification. */
		sched_wait(s, gen, left < 1000 ? (int)left : 1000);
	}
}

int
sched_heartbeat(struct sched *s, struct store *st, int64_t *out_expires,
    int64_t *out_runs, int64_t host_id, int64_t job_id, const char *progress)
{
	return store_heartbeat(st, out_expires, out_runs, host_id, job_id,
	    progress, sched_now_s(s), sched_lease_s(s));
}

int
sched_heartbeat_boot(struct sched *s, struct store *st, int64_t *out_expires,
    int64_t *out_runs, int64_t host_id, int64_t job_id, const char *progress,
    int64_t boot_s)
{
	int64_t lease = sched_lease_s(s);

	return store_heartbeat(st, out_expires, out_runs, host_id, job_id,
	    progress, sched_now_s(s), boot_s > lease ? boot_s : lease);
}

int
sched_finish(struct sched *s, struct store *st, int64_t host_id, int64_t job_id,
    int ok, const char *error)
{
	int r = store_finish(st, host_id, job_id, ok, error, sched_now_s(s));

	if (r == 0)
		sched_notify(s);
	return r;
}

int
sched_cancel(struct sched *s, struct store *st, int64_t job_id)
{
	int r = store_cancel(st, job_id, sched_now_s(s));

	if (r == 0)
		sched_notify(s);
	return r;
}

int
sched_retry(struct sched *s, struct store *st, int64_t job_id)
{
	int r = store_retry(st, job_id, sched_now_s(s));

	if (r == 0)
		sched_notify(s);
	return r;
}

static void *
ticker(void *arg)
{
	struct sched *s = arg;
	uint64_t seen = sched_generation(s), g;
	int stop;

	for (;;) {
		g = sched_wait(s, seen, s->tick_ms);
		pthread_mutex_lock(&s->mu);
		stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		/* Another daemon's writes: the workers and the parked
		 * claims look again. */
		store_errclear(s->store);
		if (store_gen_poll(s->store) == 1)
			sched_notify(s);
		store_errclear(s->store);
		if (leases_held(s->leases, LEASE_SCHED)) {
			if (sched_requeue(s, s->store, NULL) == -1)
				log_warnx("scheduler: requeue: %s",
				    store_errmsg(s->store));
			if (store_checkpoint(s->store) == -1)
				log_warnx(
				    "scheduler: %s", store_errmsg(s->store));
		}
		g = sched_generation(s);
		s->tick(s->arg, g != seen);
		seen = g;
	}
	return NULL;
}

int
sched_start(struct sched *s, const char *dbpath, int tick_ms,
    void (*tick)(void *, int), void *arg, struct leases *leases, struct err *e)
{
	if (store_open(&s->store, dbpath, e) == -1)
		return -1;
	store_set_writer(s->store, STORE_W_SCHED);
	s->tick_ms = tick_ms > 0 ? tick_ms : 1000;
	s->tick = tick;
	s->arg = arg;
	s->leases = leases;
	s->stop = 0;
	if (pthread_create(&s->thread, NULL, ticker, s) != 0) {
		store_close(s->store);
		s->store = NULL;
		return err_set(e, "scheduler: cannot start thread");
	}
	s->running = 1;
	return 0;
}

void
sched_stop(struct sched *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	s->running = 0;
	store_close(s->store);
	s->store = NULL;
}
