/*
 * Group commit of uploaded runs: one writer thread, one transaction per
 * batch, one SAVEPOINT per upload (store/batch.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "store/batch.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/store_int.h"

struct store_upload {
	struct store_upload *next; /* the queue */
	int64_t host_id, now;
	struct store_run run;
	void (*done)(void *);
	void *arg;
	int result;
	char msg[CAP_ERRMSG];
	/* then the metrics array and every string of the run */
};

struct store_batch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct store_upload *head, **tail; /* queued, oldest first */
	uint64_t nqueued;
	int stop, running;
	struct store_batch_stats st; /* under mu */
	struct store *s;             /* the writer thread's connection */
};

/* Bump allocator over the upload's one block. */
struct carve {
	char *p;
	size_t left;
};

static size_t
str_size(const char *v)
{
	return v ? strlen(v) + 1 : 0;
}

static const char *
carve_str(struct carve *c, const char *v, size_t len)
{
	char *d;

	if (v == NULL)
		return NULL;
	d = c->p;
	memcpy(d, v, len);
	d[len] = '\0';
	c->p += len + 1;
	c->left -= len + 1;
	return d;
}

struct store_upload *
store_upload_new(int64_t host_id, const struct store_run *run, int64_t now,
    void (*done)(void *), void *arg)
{
	struct store_upload *u;
	struct store_metric *ms;
	struct carve c;
	size_t size, i;

	size = sizeof(*u) + run->nmetrics * sizeof(*ms) +
	    str_size(run->status) + str_size(run->error) +
	    (run->raw ? run->raw_len + 1 : 0) + str_size(run->profile) +
	    str_size(run->host_state);
	for (i = 0; i < run->nmetrics; i++)
		size += str_size(run->metrics[i].name) +
		    str_size(run->metrics[i].unit) +
		    str_size(run->metrics[i].better);
	u = xmalloc(size);
	memset(u, 0, sizeof(*u));
	u->host_id = host_id;
	u->now = now;
	u->done = done;
	u->arg = arg;
	u->result = -1;
	u->run = *run;
	ms = (struct store_metric *)(u + 1);
	c.p = (char *)(ms + run->nmetrics);
	c.left = size - sizeof(*u) - run->nmetrics * sizeof(*ms);
	for (i = 0; i < run->nmetrics; i++) {
		const struct store_metric *m = &run->metrics[i];

		ms[i].value = m->value;
		ms[i].name = carve_str(&c, m->name, str_size(m->name) - 1);
		ms[i].unit = carve_str(&c, m->unit, str_size(m->unit) - 1);
		ms[i].better =
		    carve_str(&c, m->better, str_size(m->better) - 1);
	}
	u->run.metrics = run->nmetrics ? ms : NULL;
	u->run.status = carve_str(&c, run->status, str_size(run->status) - 1);
	u->run.error = carve_str(&c, run->error, str_size(run->error) - 1);
	u->run.raw = carve_str(&c, run->raw, run->raw_len);
	u->run.profile =
	    carve_str(&c, run->profile, str_size(run->profile) - 1);
	u->run.host_state =
	    carve_str(&c, run->host_state, str_size(run->host_state) - 1);
	return u;
}

int
store_upload_result(const struct store_upload *u, const char **out_msg)
{
	if (out_msg)
		*out_msg = u->msg;
	return u->result;
}

static void
set_result(struct store_upload *u, int r, const char *msg)
{
	u->result = r;
	snprintf(u->msg, sizeof(u->msg), "%s", r == 0 || !msg ? "" : msg);
}

/* Runs one of the savepoint statements (cached per connection). */
static int
savepoint(struct store *s, enum stmt_slot slot, const char *sql)
{
	struct db_stmt *st = store_i_cached(s, slot, sql);
	int r;

	if (st == NULL)
		return -1;
	r = store_i_step_done(s, st, sql);
	db_reset(st);
	return r;
}

/* PostgreSQL: a savepoint's command goes with the next statement, the
 * next upload's first or the COMMIT (db_exec_later): no round trip of
 * its own. */
static int
later(struct store *s, const char *sql)
{
	if (db_exec_later(s->db, sql) != 0)
		return store_i_dberr(s, sql);
	return 0;
}

/*
 * Stores the uploads of one batch in one transaction; sets each result:
 * 0, or -1 when the whole batch failed.  An upload that lost to another
 * transaction (DB_BUSY) fails the batch, which commit_batch runs again.
 */
static int
batch_once(struct store *s, struct store_upload *list)
{
	struct store_upload *u;
	const char *why = NULL;
	char msg[CAP_ERRMSG];
	int r, open = 0, pg = db_backend(s->db) == DB_PG;

	store_errclear(s);
	if (store_begin(s) == -1) {
		why = "begin";
		goto fail;
	}
	for (u = list; u != NULL; u = u->next) {
		if (!open &&
		    (pg ? later(s, "SAVEPOINT upload")
		        : savepoint(s, S_SAVEPOINT, "SAVEPOINT upload")) ==
		        -1) {
			why = "savepoint";
			goto fail_tx;
		}
		open = 0;
		r = store_run_add(s, u->host_id, &u->run, u->now);
		set_result(u, r, store_errmsg(s));
		if (r != 0 && s->lost_race) {
			why = "upload";
			goto fail_tx;
		}
		store_errclear(s);
		/* A failure can end the whole transaction (a full disk,
		 * an I/O error): then nothing of the batch stands. */
		if (db_autocommit(s->db)) {
			why = "transaction";
			snprintf(msg, sizeof(msg), "%s", u->msg);
			err_set(&s->err, "%s", msg);
			goto fail_tx;
		}
		if (r != 0 &&
		    savepoint(s, S_ROLLBACK_TO, "ROLLBACK TO upload") == -1) {
			why = "release";
			goto fail_tx;
		}
		/* PostgreSQL: this upload's savepoint ends, and the next
		 * one's opens, with the next statement. */
		if (pg) {
			if (later(s, "RELEASE upload") == -1 ||
			    (u->next != NULL &&
			        later(s, "SAVEPOINT upload") == -1)) {
				why = "release";
				goto fail_tx;
			}
			open = 1;
		} else if (savepoint(s, S_RELEASE, "RELEASE upload") == -1) {
			why = "release";
			goto fail_tx;
		}
	}
	if (store_commit(s) == -1) {
		why = "commit";
		goto fail;
	}
	return 0;
fail_tx:
	store_rollback(s);
fail:
	snprintf(msg, sizeof(msg), "upload batch %s: %s", why, store_errmsg(s));
	for (u = list; u != NULL; u = u->next)
		set_result(u, -1, msg);
	return -1;
}

/* Nothing is answered here: the callbacks run after this returns. */
static void
commit_batch(struct store *s, struct store_upload *list, uint64_t *failed)
{
	int try;

	for (try = 0; batch_once(s, list) != 0; try++)
		if (!store_i_tx_again(s, try)) {
			(*failed)++;
			return;
		}
}

static void *
writer(void *arg)
{
	struct store_batch *b = arg;
	struct store_upload *list, *u, *next, **cut;
	uint64_t n, failed;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (b->head == NULL && !b->stop)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->head == NULL)
			break; /* stopping, and nothing is left */
		/* Everything queued, up to the cap. */
		list = b->head;
		cut = &b->head;
		for (n = 0; *cut != NULL && n < STORE_BATCH_MAX; n++)
			cut = &(*cut)->next;
		b->head = *cut;
		*cut = NULL;
		if (b->head == NULL)
			b->tail = &b->head;
		b->st.taken += n;
		b->nqueued -= n;
		pthread_mutex_unlock(&b->mu);

		failed = 0;
		commit_batch(b->s, list, &failed);
		/* Counted before the answers, which may look at the counts. */
		pthread_mutex_lock(&b->mu);
		b->st.batches++;
		b->st.uploads += n;
		b->st.failed += failed;
		if (n > b->st.max_size)
			b->st.max_size = n;
		pthread_mutex_unlock(&b->mu);
		for (u = list; u != NULL; u = next) {
			next = u->next; /* u is the caller's once done ran */
			u->done(u->arg);
		}
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

int
store_batch_start(struct store_batch **out, const char *path, struct err *e)
{
	struct store_batch *b = xcalloc(1, sizeof(*b));

	*out = NULL;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->tail = &b->head;
	if (store_open(&b->s, path, e) == -1)
		goto fail;
	/* The scheduler's ticker checkpoints; commits here stay short. */
	store_set_autocheckpoint(b->s, 0);
	store_set_writer(b->s, STORE_W_UPLOADS);
	if (pthread_create(&b->thread, NULL, writer, b) != 0) {
		err_set(e, "upload batch: cannot start thread");
		goto fail;
	}
	b->running = 1;
	*out = b;
	return 0;
fail:
	store_close(b->s);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
	return -1;
}

void
store_batch_stop(struct store_batch *b)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	if (b->running)
		pthread_join(b->thread, NULL);
	b->running = 0;
}

void
store_batch_release(struct store_batch *b)
{
	if (b == NULL)
		return;
	store_batch_stop(b);
	store_close(b->s);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void
store_batch_add(struct store_batch *b, struct store_upload *u)
{
	u->next = NULL;
	pthread_mutex_lock(&b->mu);
	if (b->stop) {
		pthread_mutex_unlock(&b->mu);
		set_result(u, -1, "upload batch: the daemon is stopping");
		u->done(u->arg);
		return;
	}
	*b->tail = u;
	b->tail = &u->next;
	b->nqueued++;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
store_batch_stats(struct store_batch *b, struct store_batch_stats *out)
{
	pthread_mutex_lock(&b->mu);
	*out = b->st;
	out->queued = b->nqueued;
	pthread_mutex_unlock(&b->mu);
}
