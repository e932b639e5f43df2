#ifndef COMMON_ROUNDS_H
#define COMMON_ROUNDS_H

/*
 * The geometry of a job run in rounds (docs/CONFIG.md `rounds`), shared
 * by the claim that schedules the rounds (store/jobs.c) and the
 * verdict that judges within them (daemon/verdict.c): the job's first
 * `runs` runs are split into `rounds` rounds of ceil(runs / rounds) runs
 * each, and runs added later (adaptive) go on in rounds of that size.
 * Run idx (from 0) belongs to round idx / size (from 0).
 */
#include <stdint.h>

/* Runs a round; 0 when the job is not run in rounds. */
static inline int64_t
rounds_size(int64_t runs, int64_t rounds)
{
	return rounds > 1 && runs > 0 ? (runs + rounds - 1) / rounds : 0;
}

/*
 * Which of the pair's jobs runs first in round k (from 0): 1 the base,
 * 0 the candidate.  Randomised blocks: each round's order is drawn from
 * the pair and the round, so a linear drift favours neither side on
 * average and the within-round contrasts (docs/ANALYSIS.md, "Rounds")
 * take what it leaves as noise.  Not a fixed ABBA order: with noise
 * correlated from one run to the next, ABBA's fixed same-side
 * neighbours at every round boundary made a side's runs look more alike
 * than they are (make eval-stats, table R).  The same on every call.
 */
static inline int
rounds_base_first(int64_t pair_id, int64_t k)
{
	uint64_t x = (uint64_t)pair_id * 0x9e3779b97f4a7c15ULL +
	    (uint64_t)k * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 29;
	return (int)(x & 1);
}

#endif
