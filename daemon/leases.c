/*
 * The keeper of the workers' leases (daemon/leases.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/database.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "store/leases.h"
#include "store/store.h"

const char *const lease_worker_names[LEASE_NWORKERS] = { "watch", "sched",
	"verdict", "alerts", "canary", "bisect" };

struct leases {
	pthread_t thread;
	pthread_mutex_t mu; /* stop, lease_ms */
	pthread_cond_t cv;
	int stop, running;
	int64_t lease_ms;
	struct store *s;
	struct sched *sched;
	char *me;
	/* Held until this clock_mono_ms; __atomic. */
	int64_t until[LEASE_NWORKERS];
	/* The keeper thread's own: what was logged last, per worker. */
	int logged_held[LEASE_NWORKERS];
	char logged_who[LEASE_NWORKERS][STORE_LEASE_HOLDER_MAX];
	int failing; /* the store's error is logged */
};

static struct leases *
leases_new(void)
{
	struct leases *l = xcalloc(1, sizeof(*l));
	pthread_condattr_t ca;

	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	return l;
}

int
leases_held(struct leases *l, enum lease_worker w)
{
	if (l == NULL)
		return 1;
	return clock_mono_ms() <
	    __atomic_load_n(&l->until[w], __ATOMIC_ACQUIRE);
}

/* This host's clock, ms since the epoch. */
static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A tick: a third of the lease, at most a second. */
static int64_t
tick_ms(int64_t lease_ms)
{
	return lease_ms / 3 < 1000 ? lease_ms / 3 : 1000;
}

/* Takes or renews worker w's lease; 1 when it was taken now (not held
 * before). */
static int
keep(struct leases *l, enum lease_worker w, int64_t lease_ms)
{
	const char *name = lease_worker_names[w];
	struct store_lease le;
	int64_t t0 = clock_mono_ms();
	int64_t until = __atomic_load_n(&l->until[w], __ATOMIC_ACQUIRE);
	int64_t wall0;
	int took = 0;

	if (l->logged_held[w] && until <= t0) {
		log_warnx("leases: %s lapsed, not renewed in time: this "
		          "perfwatchd stops running it",
		    name);
		l->logged_held[w] = 0;
	}
	/* Renewed once a third of it has gone. */
	if (until - t0 > lease_ms - lease_ms / 3)
		return 0;
	store_errclear(l->s);
	wall0 = wall_ms();
	if (store_lease_take(l->s, &le, name, l->me, lease_ms) != 0) {
		if (!l->failing)
			log_warnx("leases: %s", store_errmsg(l->s));
		l->failing = 1;
		return 0;
	}
	l->failing = 0;
	/* The database's clock, read half way through the round trip: the
	 * job leases go by it (sched_clock_set). */
	if (le.db_ms > 0 && l->sched != NULL)
		sched_clock_set(l->sched, le.db_ms - (wall0 + wall_ms()) / 2);
	if (le.held) {
		__atomic_store_n(&l->until[w], t0 + lease_ms, __ATOMIC_RELEASE);
		if (!l->logged_held[w]) {
			log_info("leases: %s taken by this perfwatchd (%s)",
			    name, l->me);
			took = 1;
		}
		l->logged_held[w] = 1;
		l->logged_who[w][0] = '\0';
		return took;
	}
	__atomic_store_n(&l->until[w], 0, __ATOMIC_RELEASE);
	if (l->logged_held[w])
		log_warnx("leases: %s lost to %s", name,
		    le.holder[0] ? le.holder : "another perfwatchd");
	else if (strcmp(l->logged_who[w], le.holder) != 0)
		log_info("leases: %s is held by %s (%lld ms left)", name,
		    le.holder[0] ? le.holder : "another perfwatchd",
		    (long long)le.left_ms);
	l->logged_held[w] = 0;
	memcpy(l->logged_who[w], le.holder, sizeof(le.holder));
	return 0;
}

static void *
keeper(void *arg)
{
	struct leases *l = arg;
	struct timespec ts;
	int64_t lease_ms;
	int w, took;

	for (;;) {
		pthread_mutex_lock(&l->mu);
		lease_ms = l->lease_ms;
		if (l->stop) {
			pthread_mutex_unlock(&l->mu);
			break;
		}
		pthread_mutex_unlock(&l->mu);
		took = 0;
		for (w = 0; w < LEASE_NWORKERS; w++)
			took |= keep(l, (enum lease_worker)w, lease_ms);
		if (took && l->sched != NULL)
			sched_notify(l->sched);
		clock_deadline(&ts, tick_ms(lease_ms));
		pthread_mutex_lock(&l->mu);
		while (!l->stop &&
		    pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&l->mu);
	}
	return NULL;
}

int
leases_start(struct leases **out, const char *dbpath, const char *me,
    int64_t lease_s, struct sched *sched, struct err *e)
{
	struct leases *l = leases_new();
	int w;

	*out = NULL;
	l->lease_ms = lease_s * 1000;
	l->sched = sched;
	l->me = xstrdup(me);
	if (!database_is_pg(dbpath)) {
		for (w = 0; w < LEASE_NWORKERS; w++)
			l->until[w] = INT64_MAX;
		*out = l;
		return 0;
	}
	if (store_open(&l->s, dbpath, e) == -1) {
		leases_stop(l);
		return -1;
	}
	if (pthread_create(&l->thread, NULL, keeper, l) != 0) {
		leases_stop(l);
		return err_set(e, "leases: cannot start thread");
	}
	l->running = 1;
	*out = l;
	return 0;
}

struct leases *
leases_none(void)
{
	return leases_new();
}

void
leases_set_time(struct leases *l, int64_t lease_s)
{
	pthread_mutex_lock(&l->mu);
	l->lease_ms = lease_s * 1000;
	pthread_mutex_unlock(&l->mu);
}

void
leases_stop(struct leases *l)
{
	int w;

	if (l == NULL)
		return;
	if (l->running) {
		pthread_mutex_lock(&l->mu);
		l->stop = 1;
		pthread_cond_broadcast(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->thread, NULL);
		for (w = 0; w < LEASE_NWORKERS; w++) {
			if (!l->logged_held[w])
				continue;
			__atomic_store_n(&l->until[w], 0, __ATOMIC_RELEASE);
			store_errclear(l->s);
			if (store_lease_release(
			        l->s, lease_worker_names[w], l->me) != 0)
				log_warnx("leases: %s: %s",
				    lease_worker_names[w], store_errmsg(l->s));
			else
				log_info("leases: %s given up",
				    lease_worker_names[w]);
		}
	}
	store_close(l->s);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l->me);
	free(l);
}
