/*
 * stock.c - a model of the memcg per-cpu charge stock (mm/memcontrol.c:
 * consume_stock, refill_stock, drain_stock), for perfwatch's demo.
 *
 * Each charge first tries the local CPU's stock of pages already charged
 * to the memcg; on a miss it charges a batch up the page_counter
 * hierarchy (an atomic add per level) and keeps the rest in the stock.
 * An uncharge returns pages to the stock; when the stock grows past the
 * batch size it must give pages back to the hierarchy.  The workload is
 * the pattern behind "trim the per-cpu charge stock instead of draining
 * it": objects are charged a page at a time and freed two pages at a
 * time, so the stock overflows once per cycle.
 *
 * Prints ns_per_op= (CPU time per charge or uncharge) and ops= for the
 * keyvalue parser.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NR_CPUS		256	/* per-cpu stocks a drain has to visit */
#define LEVELS		4	/* root/a/b/c: nested memcgs */
#define CHARGE_BATCH	64	/* MEMCG_CHARGE_BATCH */
#define CYCLES		20000

struct page_counter {
	_Alignas(64) atomic_long usage;
};

struct stock {
	_Alignas(64) long nr_pages;
};

static struct page_counter counters[LEVELS];
static struct stock stocks[NR_CPUS];

static void
counter_charge(long nr)
{
	for (int i = 0; i < LEVELS; i++)
		atomic_fetch_add_explicit(&counters[i].usage, nr,
		    memory_order_relaxed);
}

static void
counter_uncharge(long nr)
{
	counter_charge(-nr);
}

/* Give every CPU's stock back to the hierarchy (drain_all_stock). */
static void
drain_stock(void)
{
	for (int cpu = 0; cpu < NR_CPUS; cpu++) {
		struct stock *s = &stocks[cpu];

		if (s->nr_pages > 0) {
			counter_uncharge(s->nr_pages);
			s->nr_pages = 0;
		} else {
			/* A remote CPU's stock is visited either way. */
			counter_uncharge(0);
		}
	}
}

static void
refill_stock(struct stock *s, long nr)
{
	s->nr_pages += nr;
	if (s->nr_pages > CHARGE_BATCH)
		drain_stock();
}

static void
charge(struct stock *s, long nr)
{
	if (s->nr_pages >= nr) {
		s->nr_pages -= nr;
		return;
	}
	counter_charge(CHARGE_BATCH);
	s->nr_pages += CHARGE_BATCH - nr;
}

/* Another CPU's task charged pages: its stock holds them. */
static void
stock_fill(struct stock *s, long nr)
{
	counter_charge(nr);
	s->nr_pages += nr;
}

int
main(void)
{
	struct timespec a, b;
	struct stock *local = &stocks[0];
	long ops = 0;
	double ns;

	/* Other CPUs hold a few pages each, as on a busy machine. */
	for (int cpu = 1; cpu < NR_CPUS; cpu++)
		stock_fill(&stocks[cpu], 1 + cpu % 7);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int c = 0; c < CYCLES; c++) {
		for (int i = 0; i < 96; i++, ops++)
			charge(local, 1);		/* one page ... */
		for (int i = 0; i < 48; i++, ops++)
			refill_stock(local, 2);		/* ... freed by two */
		for (int cpu = 1; cpu < NR_CPUS; cpu += 37)
			stock_fill(&stocks[cpu], 1 + (c + cpu) % 7);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	drain_stock();		/* the memcg goes offline: usage is 0 again */
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("ns_per_op=%.3f\nops=%ld\nusage=%ld\n", ns / ops, ops,
	    atomic_load(&counters[0].usage));
	return 0;
}
