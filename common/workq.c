/*
 * A fixed thread pool over one queue (common/workq.h): a mutex, a
 * condition variable and a singly linked FIFO.
 */
#include <pthread.h>
#include <stdlib.h>

#include "common/workq.h"
#include "common/xalloc.h"

struct work {
	void (*fn)(void *);
	void *arg;
	struct work *next;
};

struct workq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct work *head, **tail;
	unsigned queued;
	int stopping, stopped;
	int nthreads;
	pthread_t *t;
};

static void *
worker(void *arg)
{
	struct workq *q = arg;
	struct work *w;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == NULL && !q->stopping)
			pthread_cond_wait(&q->cv, &q->mu);
		if ((w = q->head) == NULL)
			break; /* stopping, and nothing left */
		if ((q->head = w->next) == NULL)
			q->tail = &q->head;
		q->queued--;
		pthread_mutex_unlock(&q->mu);
		w->fn(w->arg);
		free(w);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct workq *
workq_new(int nthreads)
{
	struct workq *q = xcalloc(1, sizeof(*q));
	int i;

	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->tail = &q->head;
	q->t = xcalloc((size_t)(nthreads > 0 ? nthreads : 1), sizeof(*q->t));
	for (i = 0; i < (nthreads > 0 ? nthreads : 1); i++) {
		if (pthread_create(&q->t[i], NULL, worker, q) != 0)
			break; /* fewer threads; none: submit runs inline */
		q->nthreads++;
	}
	if (q->nthreads == 0)
		q->stopping = q->stopped = 1;
	return q;
}

void
workq_submit(struct workq *q, void (*fn)(void *), void *arg)
{
	struct work *w;

	pthread_mutex_lock(&q->mu);
	if (q->stopping) {
		pthread_mutex_unlock(&q->mu);
		fn(arg);
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->fn = fn;
	w->arg = arg;
	*q->tail = w;
	q->tail = &w->next;
	q->queued++;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void
workq_stop(struct workq *q)
{
	int i;

	pthread_mutex_lock(&q->mu);
	if (q->stopped) {
		pthread_mutex_unlock(&q->mu);
		return;
	}
	q->stopping = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (i = 0; i < q->nthreads; i++)
		pthread_join(q->t[i], NULL);
	pthread_mutex_lock(&q->mu);
	q->stopped = 1;
	pthread_mutex_unlock(&q->mu);
}

unsigned
workq_queued(struct workq *q)
{
	unsigned n;

	pthread_mutex_lock(&q->mu);
	n = q->queued;
	pthread_mutex_unlock(&q->mu);
	return n;
}

void
workq_free(struct workq *q)
{
	if (q == NULL)
		return;
	workq_stop(q);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->t);
	free(q);
}
