#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/db.h"
#include "store/hosts.h"
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
	ASSERT(
	    db_exec(other, "UPDATE store_gen SET n = n + 1 WHERE id = 1") == 0);
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
