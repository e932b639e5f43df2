#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/batch.h"
#include "store/claim.h"
#include "store/db.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "tests/unit/test.h"

static int dbn;

static const struct store_job_new job_base = { "base", "{\"parser\":\"kv\"}",
	"[]", 3, 5, 2 };
static const struct store_job_new job_cand = { "candidate",
	"{\"parser\":\"kv\"}", "[]", 3, 5, 2 };

/* What a callback saw: its result, and whether another connection could
 * read the run at that moment (it must: answered after the commit). */
struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	struct store *reader; /* used only from the callbacks */
	int64_t job;
};

struct probe {
	struct seen *seen;
	struct store_upload *u;
	int64_t idx;
	int called, visible;
};

static void
on_done(void *arg)
{
	struct probe *p = arg;
	struct buf b = BUF_INIT(1 << 20);

	/* A separate connection sees the run iff it was committed. */
	p->visible =
	    store_run_raw(p->seen->reader, &b, p->seen->job, p->idx) == 0;
	store_errclear(p->seen->reader);
	buf_release(&b);
	pthread_mutex_lock(&p->seen->mu);
	p->called++;
	p->seen->done++;
	pthread_cond_broadcast(&p->seen->cv);
	pthread_mutex_unlock(&p->seen->mu);
}

static void
wait_done(struct seen *sn, int n)
{
	pthread_mutex_lock(&sn->mu);
	while (sn->done < n)
		pthread_cond_wait(&sn->cv, &sn->mu);
	pthread_mutex_unlock(&sn->mu);
}

/* Waits (up to 20 s) until the writer took n uploads off its queue. */
static int
taken(struct store_batch *b, uint64_t n)
{
	struct store_batch_stats st;
	int i;

	for (i = 0; i < 20000; i++) {
		store_batch_stats(b, &st);
		if (st.taken >= n)
			return 1;
		usleep(1000);
	}
	return 0;
}

static void
queue(struct store_batch *b, struct probe *p, struct seen *sn, int64_t host,
    int64_t job, int64_t idx, const char *dup_metric)
{
	struct store_metric m[2] = { { "iops", "IOPS", "higher", 100.0 + idx },
		{ "lat", "us", "lower", 5.0 } };
	struct store_run r = { job, idx, "ok", 1.5, NULL, "raw <&>", 7, m, 2,
		NULL, NULL };

	if (dup_metric != NULL)
		m[1].name = dup_metric;
	memset(p, 0, sizeof(*p));
	p->seen = sn;
	p->idx = idx;
	p->u = store_upload_new(host, &r, 1000, on_done, p);
	/* The upload is a copy: the caller's run may go away now. */
	memset(m, 0, sizeof(m));
	store_batch_add(b, p->u);
}

static int64_t
count(struct store *s, int64_t job)
{
	struct store_job_detail j;
	int64_t n;

	if (store_job_get(s, &j, job) != 0)
		return -1;
	n = (int64_t)j.nruns;
	store_job_detail_release(&j);
	return n;
}

/*
 * Holds the batch writer off job: on SQLite a write transaction of
 * another connection (the process's write lock), on PostgreSQL, whose
 * writers take no such lock, job's row locked as an update would (a run
 * refers to its job, so the writer's first run waits for it).  0 or -1.
 */
static int
hold_begin(struct store *hold, struct db **pg, const char *path, int64_t job)
{
	struct err e = { 0 };
	struct db_stmt *st;
	char q[96];
	int rc;

	*pg = NULL;
	if (!test_store_pg())
		return store_begin(hold);
	if (db_open(pg, path, &e) != 0 || db_begin_write(*pg) != 0)
		return -1;
	snprintf(q, sizeof(q), "SELECT id FROM jobs WHERE id = %lld FOR UPDATE",
	    (long long)job);
	st = db_prepare(*pg, q);
	rc = st != NULL && db_step(st) == DB_ROW ? 0 : -1;
	db_finalize(st);
	return rc;
}

static void
hold_end(struct store *hold, struct db *pg)
{
	if (pg == NULL) {
		store_rollback(hold);
		return;
	}
	db_exec(pg, "ROLLBACK");
	db_close(pg);
}

TEST(test_store_batch__a_bad_upload_fails_alone_and_replies_follow_commit)
{
	struct db *pg = NULL;
	struct store *s = NULL, *hold = NULL;
	struct store_batch *b = NULL;
	struct store_batch_stats st;
	struct seen sn;
	struct probe p[6];
	struct err e = { 0 };
	char *path = test_store_at("b%d.db", dbn++);
	const char *msg;
	struct store_claimed c;
	int64_t h = 0, job;
	int i;

	memset(&sn, 0, sizeof(sn));
	pthread_mutex_init(&sn.mu, NULL);
	pthread_cond_init(&sn.cv, NULL);
	ASSERT(store_open(&s, path, &e) == 0);
	ASSERT(store_open(&hold, path, &e) == 0);
	ASSERT(store_open(&sn.reader, path, &e) == 0);
	ASSERT(store_host_register(s, &h, "h", "[]", "{}", 1000) == 0);
	ASSERT(store_pair_create(s, NULL, NULL, NULL, "j", "", &job_base,
	           &job_cand, 1000) == 0);
	ASSERT(store_claim(s, &c, h, 1000, 600) == 0);
	job = c.job_id;
	store_claimed_release(&c);
	sn.job = job;
	ASSERT_MSG(store_batch_start(&b, path, &e) == 0, "%s", err_msg(&e));

	/* Holding the writer off, so what follows queues up: the writer
	 * takes the first upload and waits; the next five become one
	 * batch. */
	ASSERT(hold_begin(hold, &pg, path, job) == 0);
	queue(b, &p[0], &sn, h, job, 0, NULL);
	ASSERT(taken(b, 1));
	queue(b, &p[1], &sn, h, job, 1, NULL);
	queue(b, &p[2], &sn, h, job, 3, "iops"); /* duplicate metric */
	queue(b, &p[3], &sn, h, job, 2, NULL);
	queue(b, &p[4], &sn, h, job, 1, NULL); /* a resend of p[1] */
	queue(b, &p[5], &sn, h, job, 9, NULL); /* beyond max_runs */
	usleep(20000);
	for (i = 0; i < 6; i++)
		ASSERT_MSG(
		    p[i].called == 0, "upload %d answered before commit", i);
	hold_end(hold, pg);
	wait_done(&sn, 6);

	ASSERT_INTEQ(store_upload_result(p[0].u, NULL), 0);
	ASSERT_INTEQ(store_upload_result(p[1].u, NULL), 0);
	ASSERT_INTEQ(store_upload_result(p[2].u, &msg), ERR_INVALID);
	ASSERT_MSG(strstr(msg, "metrics[1]") && strstr(msg, "duplicate"),
	    "message: %s", msg);
	ASSERT_INTEQ(store_upload_result(p[3].u, NULL), 0);
	ASSERT_INTEQ(store_upload_result(p[4].u, &msg), ERR_EXISTS);
	ASSERT_INTEQ(store_upload_result(p[5].u, &msg), ERR_INVALID);
	ASSERT_MSG(strstr(msg, "field 'index'") != NULL, "message: %s", msg);
	/* Each stored upload was readable elsewhere when it was answered. */
	for (i = 0; i < 6; i++) {
		ASSERT_INTEQ(p[i].called, 1);
		if (i != 2 && i != 5)
			ASSERT_MSG(p[i].visible,
			    "upload %d answered before "
			    "its commit",
			    i);
	}
	ASSERT(!p[2].visible);
	store_batch_stats(b, &st);
	ASSERT_INTEQ(st.batches, 2);
	ASSERT_INTEQ(st.uploads, 6);
	ASSERT_INTEQ(st.max_size, 5);
	ASSERT_INTEQ(st.failed, 0);
	/* Runs 0, 1, 2 once each; nothing of the refused run 3. */
	ASSERT_INTEQ(count(s, job), 3);
	{
		struct buf raw = BUF_INIT(1 << 20);

		ASSERT(store_run_raw(s, &raw, job, 3) == ERR_NOTFOUND);
		ASSERT(store_run_raw(s, &raw, job, 2) == 0);
		ASSERT_STREQ(raw.data, "raw <&>");
		buf_release(&raw);
	}
	store_batch_release(b);
	for (i = 0; i < 6; i++)
		free(p[i].u);
	store_close(sn.reader);
	store_close(hold);
	store_close(s);
	free(path);
}

TEST(test_store_batch__stopped_writer_refuses_at_once)
{
	struct store *s = NULL;
	struct store_batch *b = NULL;
	struct seen sn;
	struct probe p;
	struct err e = { 0 };
	char *path = test_store_at("b%d.db", dbn++);
	const char *msg;

	memset(&sn, 0, sizeof(sn));
	pthread_mutex_init(&sn.mu, NULL);
	pthread_cond_init(&sn.cv, NULL);
	ASSERT(store_open(&s, path, &e) == 0);
	ASSERT(store_open(&sn.reader, path, &e) == 0);
	ASSERT(store_batch_start(&b, path, &e) == 0);
	store_batch_stop(b);
	queue(b, &p, &sn, 1, 1, 0, NULL);
	/* Answered on this thread, before store_batch_add returned. */
	ASSERT_INTEQ(p.called, 1);
	ASSERT_INTEQ(store_upload_result(p.u, &msg), -1);
	ASSERT_MSG(strstr(msg, "stopping") != NULL, "message: %s", msg);
	store_batch_release(b);
	free(p.u);
	store_close(sn.reader);
	store_close(s);
	free(path);
}
