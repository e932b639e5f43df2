#ifndef STORE_CHECK_H
#define STORE_CHECK_H

/*
 * The store's consistency (`perfwatch store check`): what its writes
 * keep true whichever daemon made them, and however many of them died
 * mid-write.  Each check counts the rows that break one rule; a store
 * is consistent when every count is 0.  The rules are read in one
 * snapshot (a read transaction), so a daemon writing meanwhile cannot
 * make a half-done change of its own show.  On SQLite also the file's
 * own checks (quick_check, foreign_key_check); PostgreSQL keeps its
 * pages and its foreign keys itself.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

struct store_check_result {
	const char *name; /* "runs_twice" */
	const char *rule; /* what is true of a consistent store */
	int64_t bad;      /* rows that break it */
};

/* How many checks store_check runs on s's backend. */
size_t store_check_count(const struct store *);
/* Runs them into out (store_check_count of them); 0, or -1 with the
 * store's error when one could not be read. */
int store_check(struct store *, struct store_check_result *out);

#endif
