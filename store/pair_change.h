#ifndef STORE_PAIR_CHANGE_H
#define STORE_PAIR_CHANGE_H

/*
 * How much a pair changed: of its comparisons with one verdict
 * ("regression", "improvement"), the one that changed most, so that a
 * list can say by how much beside the verdict (the overview's badges).
 */
#include <stdint.h>

struct store;

struct store_pair_change {
	double change_pct; /* the comparison's relative change, percent */
	char *metric;      /* its metric (the struct's own copy) */
};
/* 0, ERR_NOTFOUND (no comparison of that verdict with a change), or -1
 * (store_errmsg()). */
int store_pair_change_get(struct store *, struct store_pair_change *out,
    int64_t pair_id, const char *verdict);
void store_pair_change_release(struct store_pair_change *); /* NULL ok */

#endif
