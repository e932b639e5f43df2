#ifndef STORE_TX_H
#define STORE_TX_H

/*
 * A transaction a caller outside the store opens itself (store_begin
 * .. store_commit, store/store.h), run again whole when it lost to
 * another, as the store runs its own: on PostgreSQL a serialization
 * failure, a deadlock or a lock timeout (40001, 40P01, 55P03) ends the
 * whole transaction, and on SQLite a busy database, so no statement of
 * it can be tried alone.
 *
 * fn(s, arg) runs one transaction from store_begin to store_commit or
 * store_rollback and returns 0, or -1 when it failed with the store's
 * error (its rollback done).  store_tx_retry calls it again from its
 * start, after a short wait, while the failure was a lost race and
 * tries are left (STORE_TX_TRIES, the store's own); fn's other results
 * (0, or a code of its own like ERR_CONFLICT) come back at once.  So fn
 * must leave nothing of a failed try behind outside the store: what it
 * builds for its caller it builds afresh on each call.  Inside another
 * store_begin it runs once.
 */
struct store;

int store_tx_retry(
    struct store *, int (*fn)(struct store *s, void *arg), void *arg);
/* 1 when the store's last failure lost a race (fn should fail with -1
 * for store_tx_retry to run it again, not take it for bad input), else
 * 0. */
int store_tx_lost(const struct store *);

#endif
