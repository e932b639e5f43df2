#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "runners/inventory.h"
#include "tests/unit/test.h"

/* Two sockets, two cores each, two threads per core: 8 threads. */
static const char cpuinfo2s[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
    "physical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 2\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 3\nphysical id\t: 1\ncore id\t\t: 1\n\n"
    "processor\t: 4\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 5\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 6\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 7\nphysical id\t: 1\ncore id\t\t: 1\n\n";

TEST(test_inventory__fake_two_socket_v2_host)
{
	char *root = xasprintf("%s/inv1", test_tmpdir());
	json_t *inv;

	test_write_file(root, "/proc/cpuinfo", cpuinfo2s);
	test_write_file(root, "/proc/meminfo",
	    "MemTotal:       527318232 kB\nMemFree: 1 kB\n");
	test_write_file(root, "/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	test_write_file(root, "/proc/mounts",
	    "sysfs /sys sysfs rw 0 0\n"
	    "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n");
	test_write_file(root, "/sys/devices/system/node/node0/x", "");
	test_write_file(root, "/sys/devices/system/node/node1/x", "");
	test_write_file(root, "/sys/devices/system/node/online", "0-1\n");
	inv = inventory_collect(root);
	ASSERT_STREQ(json_string_value(json_object_get(inv, "cpu_model")),
	    "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
	ASSERT_STREQ(json_string_value(json_object_get(inv, "cpu_vendor")),
	    "GenuineIntel");
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "sockets")), 2);
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "cores")), 4);
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "threads")), 8);
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "numa_nodes")), 2);
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "memory_bytes")),
	    527318232LL * 1024);
	ASSERT_STREQ(json_string_value(json_object_get(inv, "kernel")),
	    "6.1.0-18-amd64");
	ASSERT_STREQ(json_string_value(json_object_get(inv, "cgroup")), "v2");
	json_decref(inv);
	free(root);
}

TEST(test_inventory__unknowns_are_null)
{
	char *root = xasprintf("%s/inv2", test_tmpdir());
	json_t *inv;

	/* An arm64-style cpuinfo: no model name, no physical id. */
	test_write_file(root, "/proc/cpuinfo",
	    "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n"
	    "processor\t: 1\nBogoMIPS\t: 50.00\n\n");
	test_write_file(root, "/proc/mounts",
	    "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
	    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
	inv = inventory_collect(root);
	ASSERT(json_is_null(json_object_get(inv, "cpu_model")));
	ASSERT(json_is_null(json_object_get(inv, "sockets")));
	ASSERT(json_is_null(json_object_get(inv, "cores")));
	ASSERT_INTEQ(json_integer_value(json_object_get(inv, "threads")), 2);
	ASSERT(json_is_null(json_object_get(inv, "numa_nodes")));
	ASSERT(json_is_null(json_object_get(inv, "memory_bytes")));
	ASSERT(json_is_null(json_object_get(inv, "kernel")));
	/* Hybrid: memcg lives on the v1 hierarchy. */
	ASSERT_STREQ(json_string_value(json_object_get(inv, "cgroup")), "v1");
	json_decref(inv);
	free(root);
}

TEST(test_inventory__no_cgroup_is_none)
{
	char *root = xasprintf("%s/inv3", test_tmpdir());
	json_t *inv;

	test_write_file(root, "/proc/mounts", "proc /proc proc rw 0 0\n");
	inv = inventory_collect(root);
	ASSERT_STREQ(json_string_value(json_object_get(inv, "cgroup")), "none");
	json_decref(inv);
	free(root);
}

TEST(test_inventory__this_host)
{
	json_t *inv = inventory_collect("");
	json_t *t = json_object_get(inv, "threads");
	json_t *m = json_object_get(inv, "memory_bytes");

	/* Every Linux has /proc/cpuinfo processors and MemTotal. */
	ASSERT(json_is_integer(t) && json_integer_value(t) >= 1);
	ASSERT(json_is_integer(m) && json_integer_value(m) > 1024 * 1024);
	ASSERT(json_is_string(json_object_get(inv, "kernel")));
	ASSERT(json_is_string(json_object_get(inv, "cgroup")));
	json_decref(inv);
}
