#ifndef RUNNERS_INVENTORY_H
#define RUNNERS_INVENTORY_H

/*
 * The host's hardware inventory for POST /api/v1/runners/register: CPU
 * model and vendor, sockets, cores, threads (/proc/cpuinfo), NUMA nodes
 * (/sys/devices/system/node), memory (/proc/meminfo), kernel release
 * (/proc/sys/kernel/osrelease) and cgroup version (/proc/mounts: "v2" when
 * the unified hierarchy is mounted on /sys/fs/cgroup, "v1" when the memory
 * controller is on a v1 hierarchy, "v2" for cgroup2 elsewhere, else
 * "none").  What cannot be found is JSON null, never a guess.
 *
 * root prefixes every path ("" for the real system; tests use a fake
 * tree).  Returns a new JSON object, never NULL.
 */
#include "common/json.h"

json_t *inventory_collect(const char *root);

#endif
