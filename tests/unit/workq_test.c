/*
 * The thread pool of common/workq.h: every function submitted runs once,
 * in submission order on a pool of one, also when submitted from many
 * threads at once; workq_stop runs what is queued before it returns, and
 * a submit after it runs in the caller's thread.
 */
#include <pthread.h>
#include <string.h>

#include "common/workq.h"
#include "tests/unit/test.h"

#define N 2000

struct log {
	pthread_mutex_t mu;
	int v[4 * N];
	int n;
	pthread_t ran_in[4 * N];
};

struct item {
	struct log *l;
	int k;
};

static void
record(void *arg)
{
	struct item *it = arg;

	pthread_mutex_lock(&it->l->mu);
	it->l->ran_in[it->l->n] = pthread_self();
	it->l->v[it->l->n++] = it->k;
	pthread_mutex_unlock(&it->l->mu);
}

TEST(test_workq__one_thread_keeps_the_order_and_stop_drains)
{
	static struct item items[N];
	static struct log l;
	struct workq *q = workq_new(1);
	int i, inorder = 1;

	memset(&l, 0, sizeof(l));
	pthread_mutex_init(&l.mu, NULL);
	for (i = 0; i < N; i++) {
		items[i].l = &l;
		items[i].k = i;
		workq_submit(q, record, &items[i]);
	}
	workq_stop(q);
	ASSERT_MSG(l.n == N, "ran %d of %d before stop returned", l.n, N);
	for (i = 0; i < l.n; i++)
		inorder &= l.v[i] == i;
	ASSERT_MSG(inorder, "a pool of one ran them out of order");
	ASSERT(workq_queued(q) == 0);
	/* After stop: in the caller's thread, at once. */
	items[0].k = -1;
	workq_submit(q, record, &items[0]);
	ASSERT_MSG(l.n == N + 1 && l.v[N] == -1,
	    "a submit after stop did not "
	    "run at once");
	ASSERT(pthread_equal(l.ran_in[N], pthread_self()));
	ASSERT_MSG(!pthread_equal(l.ran_in[0], pthread_self()),
	    "the queued ones ran in the caller's thread");
	workq_free(q);
	pthread_mutex_destroy(&l.mu);
}

struct submitter {
	struct workq *q;
	struct item *items;
};

static void *
submit_all(void *arg)
{
	struct submitter *s = arg;
	int i;

	for (i = 0; i < N; i++)
		workq_submit(s->q, record, &s->items[i]);
	return NULL;
}

TEST(test_workq__many_submitters_each_item_runs_once)
{
	static struct item items[4][N];
	static struct log l;
	static int seen[4 * N];
	struct submitter s[4];
	pthread_t t[4];
	struct workq *q = workq_new(3);
	int i, k, once = 1;

	memset(&l, 0, sizeof(l));
	memset(seen, 0, sizeof(seen));
	pthread_mutex_init(&l.mu, NULL);
	for (k = 0; k < 4; k++) {
		for (i = 0; i < N; i++) {
			items[k][i].l = &l;
			items[k][i].k = k * N + i;
		}
		s[k].q = q;
		s[k].items = items[k];
		ASSERT(pthread_create(&t[k], NULL, submit_all, &s[k]) == 0);
	}
	for (k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	workq_free(q); /* stops: runs what is queued */
	ASSERT_MSG(l.n == 4 * N, "ran %d of %d", l.n, 4 * N);
	for (i = 0; i < l.n; i++)
		seen[l.v[i]]++;
	for (i = 0; i < 4 * N; i++)
		once &= seen[i] == 1;
	ASSERT_MSG(once, "an item ran twice or never");
	pthread_mutex_destroy(&l.mu);
}
