/*
 * Background workers of the daemon (worker.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "daemon/worker.h"
#include "store/store.h"

struct worker {
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	struct dconf *conf;
	struct sched *sched;
	struct store *store;
	worker_pass_fn pass;
	void *arg;
	struct leases *leases;
	enum lease_worker lease;
};

static void *
run(void *arg)
{
	struct worker *w = arg;
	struct dconf *c;
	uint64_t gen;
	int64_t wait_ms;

	for (;;) {
		gen = sched_generation(w->sched);
		pthread_mutex_lock(&w->mu);
		if (w->stop) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		if (!leases_held(w->leases, w->lease)) {
			pthread_mutex_unlock(&w->mu);
			sched_wait(w->sched, gen, LEASE_IDLE_MS);
			continue;
		}
		c = dconf_ref(w->conf);
		pthread_mutex_unlock(&w->mu);
		store_errclear(w->store);
		wait_ms = w->pass(w->store, c, w->sched, w->arg);
		dconf_unref(c);
		if (wait_ms < 1)
			wait_ms = 1;
		if (wait_ms > 3600 * 1000)
			wait_ms = 3600 * 1000;
		sched_wait(w->sched, gen, (int)wait_ms);
	}
	return NULL;
}

int
worker_start(struct worker **out, const char *name, struct dconf *conf,
    struct sched *sched, struct leases *leases, enum lease_worker lease,
    worker_pass_fn pass, void *arg, struct err *e)
{
	struct worker *w = xcalloc(1, sizeof(*w));

	*out = NULL;
	pthread_mutex_init(&w->mu, NULL);
	w->sched = sched;
	w->leases = leases;
	w->lease = lease;
	w->pass = pass;
	w->arg = arg;
	if (store_open(&w->store, conf->dc->database, e) == -1) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return -1;
	}
	w->conf = dconf_ref(conf);
	if (pthread_create(&w->thread, NULL, run, w) != 0) {
		dconf_unref(w->conf);
		store_close(w->store);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return err_set(e, "%s: cannot start thread", name);
	}
	*out = w;
	return 0;
}

void
worker_reload(struct worker *w, struct dconf *conf)
{
	struct dconf *old;

	if (w == NULL)
		return;
	old = dconf_swap(&w->conf, &w->mu, conf);
	dconf_unref(old);
}

void
worker_stop(struct worker *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_mutex_unlock(&w->mu);
	sched_notify(w->sched);
	pthread_join(w->thread, NULL);
	dconf_unref(w->conf);
	store_close(w->store);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
