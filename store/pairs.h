#ifndef STORE_PAIRS_H
#define STORE_PAIRS_H

/*
 * Pairs and their verdicts (store/pairs.c).  The verdict reads and
 * writes, a pair's reads and the trigger's pairs are declared in
 * store/store.h; this header holds the verdict's check of shared bases.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * Shared bases under adaptive runs.  A base job shared by several pairs
 * can be re-opened for more runs by one pair while another pair's
 * verdict is being computed from it.  The verdict remembers each side's
 * job, wanted runs and stored runs as it read them (store_verdict_pair's
 * runs and stored); before it writes, in its transaction, this says
 * whether they are still so.  0, or ERR_CONFLICT (the message names the
 * job that changed): the verdict is dropped and made again later from a
 * complete side.
 */
struct store_side_stamp {
	int64_t job_id, runs, stored;
};
int store_verdict_unchanged(
    struct store *, const struct store_side_stamp *sides, size_t n);

#endif
