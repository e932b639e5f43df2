#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/memcg_tax.h"
#include "tests/unit/test.h"

static const struct memcg_tax_result *
get(const struct memcg_tax_result *r, size_t n, const char *point,
    const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(r[i].point, point) == 0 &&
		    strcmp(r[i].name, name) == 0)
			return &r[i];
	return NULL;
}

/* flows x cgroup: each nested point pairs with its own flows' root. */
TEST(test_memcg_tax__pairs_by_other_axes)
{
	const struct memcg_tax_metric root10[] = {
		{ "throughput", 100000, MEMCG_TAX_HIGHER },
		{ "latency_p99", 50, MEMCG_TAX_LOWER },
		{ "memcg.pgfault_delta", 10, MEMCG_TAX_INFO },
	};
	const struct memcg_tax_metric bench10[] = {
		{ "throughput", 80000, MEMCG_TAX_HIGHER },
		{ "latency_p99", 70, MEMCG_TAX_LOWER },
		{ "memcg.pgfault_delta", 30, MEMCG_TAX_INFO },
	};
	const struct memcg_tax_metric root20[] = {
		{ "throughput", 200000, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_metric deep20[] = {
		{ "throughput", 100000, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_metric bench20[] = {
		{ "throughput", 150000, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_point pts[] = {
		{ "flows=10,cgroup=root", root10, 3 },
		{ "flows=10,cgroup=/bench", bench10, 3 },
		/* Keys in another order still pair. */
		{ "cgroup=root,flows=20", root20, 1 },
		{ "flows=20,cgroup=/l1/l2/l3", deep20, 1 },
		{ "flows=20,cgroup=/bench", bench20, 1 },
	};
	struct memcg_tax_result *r;
	const struct memcg_tax_result *x;
	struct err e = { 0 };
	size_t n;

	ASSERT(memcg_tax_compute(&r, &n, pts, 5, &e) == 0);
	ASSERT_INTEQ(n, 3);
	x = get(r, n, "flows=10,cgroup=/bench", "memcg_tax.throughput");
	ASSERT(x != NULL);
	ASSERT_NEAR(x->value, 0.8, 1e-12);
	ASSERT_STREQ(x->root_point, "flows=10,cgroup=root");
	x = get(r, n, "flows=20,cgroup=/l1/l2/l3", "memcg_tax.throughput");
	ASSERT(x != NULL);
	ASSERT_NEAR(x->value, 0.5, 1e-12);
	ASSERT_STREQ(x->root_point, "cgroup=root,flows=20");
	x = get(r, n, "flows=20,cgroup=/bench", "memcg_tax.throughput");
	ASSERT(x != NULL);
	ASSERT_NEAR(x->value, 0.75, 1e-12);
	/* Lower-is-better and info metrics are not taxed. */
	ASSERT(get(r, n, "flows=10,cgroup=/bench", "memcg_tax.latency_p99") ==
	    NULL);
	ASSERT(get(r, n, "flows=10,cgroup=/bench",
	           "memcg_tax.memcg.pgfault_delta") == NULL);
	memcg_tax_free(r, n);
}

TEST(test_memcg_tax__nothing_made_up)
{
	const struct memcg_tax_metric zero[] = {
		{ "throughput", 0, MEMCG_TAX_HIGHER },
		{ "iops", 10, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_metric nested[] = {
		{ "throughput", 5, MEMCG_TAX_HIGHER },
		{ "bw", 3, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_metric lonely[] = {
		{ "throughput", 5, MEMCG_TAX_HIGHER },
	};
	const struct memcg_tax_point pts[] = {
		{ "rw=read,cgroup=root", zero, 2 },
		{ "rw=read,cgroup=/bench", nested, 2 },
		/* No root point with rw=write. */
		{ "rw=write,cgroup=/bench", lonely, 1 },
	};
	const struct memcg_tax_point noaxis[] = {
		{ "rw=read", zero, 2 },
		{ "rw=write", lonely, 1 },
	};
	struct memcg_tax_result *r;
	struct err e = { 0 };
	size_t n;

	/* Root throughput 0 (no ratio), bw missing at root, iops missing
	 * in the nested point, rw=write unpaired: nothing. */
	ASSERT(memcg_tax_compute(&r, &n, pts, 3, &e) == 0);
	ASSERT_INTEQ(n, 0);
	memcg_tax_free(r, n);
	ASSERT(memcg_tax_compute(&r, &n, noaxis, 2, &e) == 0);
	ASSERT_INTEQ(n, 0);
	memcg_tax_free(r, n);
	ASSERT(memcg_tax_compute(&r, &n, NULL, 0, &e) == 0);
	ASSERT_INTEQ(n, 0);
}

TEST(test_memcg_tax__bad_label_and_label_get)
{
	const struct memcg_tax_point bad[] = { { "flows", NULL, 0 } };
	struct memcg_tax_result *r;
	struct err e = { 0 };
	size_t n;
	char *v;

	ASSERT(memcg_tax_compute(&r, &n, bad, 1, &e) == -1);
	ASSERT(strstr(err_msg(&e), "'flows' is not key=value") != NULL);
	v = memcg_tax_label_get("flows=10,cgroup=/a/b", "cgroup");
	ASSERT_STREQ(v, "/a/b");
	free(v);
	ASSERT(memcg_tax_label_get("flows=10", "cgroup") == NULL);
	ASSERT(memcg_tax_label_get("cgroupx=1", "cgroup") == NULL);
}

/* Runs pair by index, whatever their order; unpaired or unusable runs
 * are left out rather than guessed. */
TEST(test_memcg_tax__ratios_by_run_index)
{
	const struct memcg_tax_run nested[] = { { 2, 90 }, { 0, 70 }, { 1, 80 },
		{ 4, 50 }, { 5, NAN }, { 6, 10 } };
	const struct memcg_tax_run root[] = { { 0, 100 }, { 1, 100 }, { 2, 90 },
		{ 3, 100 }, { 5, 100 }, { 6, 0 } };
	double out[6];

	ASSERT_INTEQ(memcg_tax_ratios(out, nested, 6, root, 6), 3);
	ASSERT_NEAR(out[0], 1.0, 1e-12);
	ASSERT_NEAR(out[1], 0.7, 1e-12);
	ASSERT_NEAR(out[2], 0.8, 1e-12);
	ASSERT_INTEQ(memcg_tax_ratios(out, nested, 6, NULL, 0), 0);
	ASSERT_INTEQ(memcg_tax_ratios(out, NULL, 0, root, 6), 0);
}

TEST(test_memcg_tax__which_metrics_are_taxed)
{
	ASSERT(memcg_tax_taxed("throughput", "higher", -1));
	ASSERT(memcg_tax_taxed("ops", "higher", 1));
	/* The config lists other throughput metrics, not this one. */
	ASSERT(!memcg_tax_taxed("ops", "higher", 0));
	ASSERT(!memcg_tax_taxed("latency_p99", "lower", -1));
	ASSERT(!memcg_tax_taxed("hits", "info", -1));
	ASSERT(!memcg_tax_taxed("hits", NULL, -1));
	ASSERT(!memcg_tax_taxed("memcg.sock_delta", "higher", -1));
	ASSERT(
	    !memcg_tax_taxed("system.psi_memory.some_us_delta", "higher", -1));
	ASSERT(!memcg_tax_taxed("memcg_tax.ops", "higher", -1));
}
