#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/check.h"
#include "store/claim.h"
#include "store/db.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/leases.h"
#include "store/store.h"
#include "tests/unit/test.h"

/* Two connections to one new store, as two daemons would have. */
static void
open_two(struct store **a, struct store **b, const char *name)
{
	char *p = test_store_where(name);
	struct err e = { 0 };

	*a = *b = NULL;
	if (store_open(a, p, &e) != 0 || store_open(b, p, &e) != 0)
		test_fail(__FILE__, __LINE__, "%s", err_msg(&e));
	free(p);
}

/* A lease goes to one holder at a time: renewed by it, refused to
 * another while it lasts, taken by another once it has ended or was
 * given up.  On SQLite (one daemon) every lease is held. */
TEST(test_store_leases__one_holder_at_a_time)
{
	struct store *a, *b;
	struct store_lease le;

	open_two(&a, &b, "leases");
	ASSERT(a != NULL && b != NULL);
	ASSERT(store_lease_take(a, &le, "watch", "A", 60000) == 0);
	ASSERT(le.held && strcmp(le.holder, "A") == 0);
	ASSERT(le.left_ms > 59000 && le.left_ms <= 60000);
	/* The database's clock (the server here runs on this host): what
	 * the job leases go by. */
	if (test_store_pg())
		ASSERT(llabs(le.db_ms - (int64_t)time(NULL) * 1000) < 5000);
	else
		ASSERT(le.db_ms == 0);
	if (!test_store_pg()) {
		ASSERT(store_lease_take(b, &le, "watch", "B", 60000) == 0);
		ASSERT(le.held);
		store_close(a);
		store_close(b);
		return;
	}
	ASSERT(store_lease_take(b, &le, "watch", "B", 60000) == 0);
	ASSERT(!le.held && strcmp(le.holder, "A") == 0);
	ASSERT(le.left_ms > 50000);
	/* Another worker's lease is another row. */
	ASSERT(store_lease_take(b, &le, "verdict", "B", 60000) == 0);
	ASSERT(le.held && strcmp(le.holder, "B") == 0);
	/* A renewal keeps its start. */
	usleep(20000);
	ASSERT(store_lease_take(a, &le, "watch", "A", 60000) == 0);
	ASSERT(le.held && le.held_ms >= 20);
	/* Given up: the other takes it at once. */
	ASSERT(store_lease_release(a, "watch", "A") == 0);
	ASSERT(store_lease_take(b, &le, "watch", "B", 50) == 0);
	ASSERT(le.held && strcmp(le.holder, "B") == 0 && le.held_ms == 0);
	/* Not renewed in time: it ends by itself. */
	ASSERT(store_lease_take(a, &le, "watch", "A", 60000) == 0);
	ASSERT(!le.held && strcmp(le.holder, "B") == 0);
	usleep(100000);
	ASSERT(store_lease_take(a, &le, "watch", "A", 60000) == 0);
	ASSERT(le.held && strcmp(le.holder, "A") == 0);
	/* A release by one that does not hold it changes nothing. */
	ASSERT(store_lease_release(b, "watch", "B") == 0);
	ASSERT(store_lease_take(b, &le, "watch", "B", 60000) == 0);
	ASSERT(!le.held && strcmp(le.holder, "A") == 0);
	/* Leases do not move the store's generation. */
	{
		struct store_version v0, v1;

		ASSERT(store_gen_poll(b) >= 0); /* where it starts */
		ASSERT(store_data_version(b, &v0) == 0);
		ASSERT(store_lease_take(a, &le, "watch", "A", 60000) == 0);
		ASSERT(store_lease_release(a, "verdict", "A") == 0);
		ASSERT(store_gen_poll(b) == 0);
		ASSERT(store_data_version(b, &v1) == 0 && v0.gen == v1.gen);
	}
	store_close(a);
	store_close(b);
}

/* The polled generation: a commit through a connection of this process
 * moves its data version at once, and the poll tells it from another
 * process's (1), which moves the data version only once polled; a
 * heartbeat's write moves neither. */
TEST(test_store_leases__poll_tells_another_process_commit)
{
	struct store *a, *b;
	struct store_version v0, v1;
	struct db *other = NULL;
	struct err e = { 0 };
	char *p;
	int64_t h = 0;

	open_two(&a, &b, "gen_poll");
	ASSERT(a != NULL && b != NULL);
	if (!test_store_pg()) {
		ASSERT(store_gen_poll(a) == 0);
		store_close(a);
		store_close(b);
		return;
	}
	p = test_store_where("gen_poll");
	ASSERT_MSG(db_open(&other, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	store_gen_poll(a); /* the first poll sets where it starts */
	ASSERT(store_gen_poll(a) == 0);
	ASSERT(store_data_version(a, &v0) == 0);
	ASSERT(store_host_register(b, &h, "h", "[]", "{}", 1) == 0);
	ASSERT(store_data_version(a, &v1) == 0 && v1.gen != v0.gen);
	ASSERT(store_gen_poll(a) == 0); /* this process's own */
	/* Another process's commit (as the store makes it, by hand). */
	ASSERT(store_data_version(a, &v0) == 0);
	ASSERT(db_exec(other, "SELECT nextval('store_gen_seq')") == 0);
	ASSERT(store_data_version(a, &v1) == 0 && v1.gen == v0.gen);
	ASSERT(store_gen_poll(a) == 1);
	ASSERT(store_data_version(a, &v1) == 0 && v1.gen != v0.gen);
	ASSERT(store_gen_poll(a) == 0);
	/* A heartbeat's write does not move it. */
	ASSERT(store_data_version(a, &v0) == 0);
	ASSERT(store_host_seen(b, h, 5) == 0);
	ASSERT(store_gen_poll(a) == 0);
	ASSERT(store_data_version(a, &v1) == 0 && v1.gen == v0.gen);
	db_close(other);
	store_close(a);
	store_close(b);
}

/* Opening a store moves no generation: a connection that has not
 * written owes no bump (a daemon of role web, each page thread opens
 * its own); nor does a read. */
TEST(test_store_leases__open_moves_no_generation)
{
	static const char gen[] = "SELECT last_value FROM store_gen_seq";
	struct store *a, *b, *c = NULL;
	struct db *other = NULL;
	struct err e = { 0 };
	struct store_version v;
	char *p;
	int64_t n0;

	open_two(&a, &b, "gen_open");
	ASSERT(a != NULL && b != NULL);
	if (!test_store_pg()) {
		store_close(a);
		store_close(b);
		test_skip("the generation's sequence: make check-pg");
		return;
	}
	p = test_store_where("gen_open");
	ASSERT_MSG(db_open(&other, p, &e) == 0, "%s", err_msg(&e));
	n0 = test_db_number(other, gen);
	ASSERT_MSG(store_open(&c, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_read_begin(c) == 0);
	ASSERT(store_data_version(c, &v) == 0);
	store_read_end(c);
	store_close(c);
	ASSERT_INTEQ(test_db_number(other, gen), n0);
	db_close(other);
	store_close(a);
	store_close(b);
}

/* A commit that changed a row moves the generation once (its bump goes
 * after the COMMIT, in its round trip), a heartbeat's does not, and the
 * id a new row got is still the one read after the bump. */
TEST(test_store_leases__commit_moves_generation_once)
{
	static const char gen[] = "SELECT last_value FROM store_gen_seq";
	struct store *a, *b;
	struct db *other = NULL;
	struct err e = { 0 };
	char *p;
	int64_t h = 0, h2 = 0, n0;

	open_two(&a, &b, "gen_once");
	ASSERT(a != NULL && b != NULL);
	store_close(b);
	if (!test_store_pg()) {
		store_close(a);
		test_skip("the generation's sequence: make check-pg");
		return;
	}
	p = test_store_where("gen_once");
	ASSERT_MSG(db_open(&other, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	n0 = test_db_number(other, gen);
	ASSERT(n0 > 0);
	ASSERT(store_host_register(a, &h, "h", "[]", "{}", 1) == 0);
	ASSERT_INTEQ(test_db_number(other, gen), n0 + 1);
	ASSERT_INTEQ(
	    h, test_db_number(other, "SELECT id FROM hosts WHERE name = 'h'"));
	ASSERT(store_host_seen(a, h, 5) == 0);
	ASSERT_INTEQ(test_db_number(other, gen), n0 + 1);
	ASSERT(store_host_register(a, &h2, "h2", "[]", "{}", 2) == 0);
	ASSERT_INTEQ(test_db_number(other, gen), n0 + 2);
	ASSERT_INTEQ(h2,
	    test_db_number(other, "SELECT id FROM hosts WHERE name = 'h2'"));
	db_close(other);
	store_close(a);
}

/* The other daemon's writes (writers_do_not_wait): a run of a job its
 * host holds, then a claim; done is set when both have returned. */
struct other_writes {
	struct store *s;
	int64_t host_run, job, host_claim;
	int run_rc, claim_rc;
	struct store_claimed claimed;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static int
run_of(struct store *s, int64_t host, int64_t job)
{
	struct store_metric m = { "iops", "IOPS", "higher", 100.0 };
	struct store_run r = { job, 0, "ok", 1.5, NULL, "raw", 3, &m, 1 };

	return store_run_add(s, host, &r, 1000);
}

static void *
other_writes_run(void *arg)
{
	struct other_writes *w = arg;

	w->run_rc = run_of(w->s, w->host_run, w->job);
	w->claim_rc = store_claim(w->s, &w->claimed, w->host_claim, 1000, 3600);
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Two daemons' writers do not wait for each other: while one
 * connection's write transaction, having stored a run and claimed a
 * job, stays open, another connection (of this process, as another
 * writer thread, and with its own process lock it would be another
 * daemon) stores a run of another job and claims another pair's job,
 * and both commit.  A row every upload or claim changes (a single
 * count, the generation) or a process-wide writer lock on PostgreSQL
 * would hold the second until the first commits: it gives up on a lock
 * after a second (lock_timeout) and retries, and the case fails after
 * 20 s.  Then the counts add up and the store checks consistent.
 */
TEST(test_store_leases__writers_do_not_wait_on_each_other)
{
	struct store *a = NULL, *b = NULL;
	struct store_claimed c1, c2, c3;
	struct other_writes w;
	struct store_stats st;
	struct store_check_result res[32];
	struct timespec until;
	struct err e = { 0 };
	pthread_t t;
	int64_t h[4];
	char *p, *pb;
	size_t i;
	int k, rc = 0;

	if (!test_store_pg()) {
		test_skip("SQLite has one writer at a time: make check-pg");
		return;
	}
	p = test_store_where("writers");
	pb = xasprintf("%s options='-c lock_timeout=1000'", p);
	ASSERT_MSG(store_open(&a, p, &e) == 0 && store_open(&b, pb, &e) == 0,
	    "%s", err_msg(&e));
	free(p);
	free(pb);
	for (k = 0; k < 4; k++) {
		char name[16];

		snprintf(name, sizeof(name), "h%d", k);
		ASSERT(store_host_register(a, &h[k], name, "[]", "{}", 1) == 0);
		snprintf(name, sizeof(name), "p%d", k);
		ASSERT(test_pair_new(a, "job", name, "{}", "{}", 1, NULL) > 0);
	}
	ASSERT(store_claim(a, &c1, h[0], 1000, 3600) == 0);
	ASSERT(store_claim(a, &c2, h[1], 1000, 3600) == 0);
	ASSERT(c1.pair_id != c2.pair_id);

	ASSERT(store_begin(a) == 0);
	ASSERT(run_of(a, h[0], c1.job_id) == 0);
	ASSERT(store_claim(a, &c3, h[2], 1000, 3600) == 0);

	memset(&w, 0, sizeof(w));
	w.s = b;
	w.host_run = h[1];
	w.job = c2.job_id;
	w.host_claim = h[3];
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	ASSERT(pthread_create(&t, NULL, other_writes_run, &w) == 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	pthread_mutex_lock(&w.mu);
	while (!w.done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w.cv, &w.mu, &until);
	k = w.done;
	pthread_mutex_unlock(&w.mu);
	/* The first transaction ends only now. */
	ASSERT(store_commit(a) == 0);
	pthread_join(t, NULL);
	ASSERT_MSG(k, "the second writer waited 20 s for the first");
	ASSERT_MSG(w.run_rc == 0, "run: %d", w.run_rc);
	ASSERT_MSG(w.claim_rc == 0, "claim: %d", w.claim_rc);
	ASSERT(w.claimed.pair_id != c3.pair_id);
	ASSERT(w.claimed.job_id != c3.job_id);

	ASSERT(store_stats(b, &st, 1000, 60) == 0);
	ASSERT_INTEQ(st.runs, 2);
	ASSERT_INTEQ(st.jobs[1], 4); /* running */
	ASSERT_INTEQ(st.jobs[0], 4); /* queued */
	ASSERT(store_check_count(b) <= sizeof(res) / sizeof(res[0]));
	ASSERT(store_check(b, res) == 0);
	for (i = 0; i < store_check_count(b); i++)
		ASSERT_MSG(res[i].bad == 0, "%s: %lld", res[i].name,
		    (long long)res[i].bad);
	store_claimed_release(&c1);
	store_claimed_release(&c2);
	store_claimed_release(&c3);
	store_claimed_release(&w.claimed);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	store_close(a);
	store_close(b);
}
