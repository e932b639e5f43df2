/*
 * walk.c - the benchmark of `make eval-trust` (tests/bench/trust_eval.sh):
 * a dependent walk over a table larger than the caches.
 *
 * The table is one cycle through all of its slots in a scattered order
 * (a full-period linear congruential step), so every step loads an index
 * that names the next load: a cache and TLB miss the prefetchers cannot
 * hide.  OPS ops of STEPS_PER_OP steps each (walk.h): a change of
 * STEPS_PER_OP by N % changes ns_per_op by N %.
 *
 * Prints ns_per_op= (CPU time per op, as the demo's stock.c: a busy
 * machine preempts the walk, it does not stretch it) for the keyvalue
 * parser.  What still moves it is what other work does to the caches
 * and the memory bus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "walk.h"

/* 64 MiB: twice the L3 of the machines this was written on. */
#define SLOTS (16u << 20)
#define OPS 200

int
main(void)
{
	struct timespec a, b;
	uint32_t *next, at = 0;
	uint32_t i;
	long op, s;
	double ns;

	if ((next = malloc(SLOTS * sizeof(*next))) == NULL) {
		perror("malloc");
		return 1;
	}
	/* Hull-Dobell: odd increment, multiplier 1 mod 4, modulus 2^k. */
	for (i = 0; i < SLOTS; i++)
		next[i] = (i * 2654435761u + 12345u) & (SLOTS - 1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (op = 0; op < OPS; op++)
		for (s = 0; s < STEPS_PER_OP; s++)
			at = next[at];
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	/* The last index keeps the walk from being optimised away. */
	printf("ns_per_op=%.3f\n", ns / OPS);
	fprintf(stderr, "end=%u\n", (unsigned)at);
	free(next);
	return 0;
}
