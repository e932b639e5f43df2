/*
 * perfwatch-pagefault [-s SECONDS] [-m MIB]: a will-it-scale page_fault
 * style loop (one task): map MIB of anonymous memory, write one byte per
 * page (a fault and a memcg page charge each), unmap, repeat for SECONDS.
 * Prints what the will-it-scale parser reads (runners/bench/wis.c):
 * "testcase:..." and "average:N" (faults per second).  Static, so the
 * qemu guest can run it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/clock.h"

int
main(int argc, char **argv)
{
	double secs = 2, t0, t;
	long mib = 16, page = sysconf(_SC_PAGESIZE);
	unsigned long long faults = 0;
	size_t len, off;
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-s") == 0)
			secs = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "-m") == 0)
			mib = strtol(argv[i + 1], NULL, 10);
		else
			break;
	}
	if (i < argc || secs <= 0 || mib <= 0 || mib > 4096) {
		fprintf(stderr,
		    "usage: perfwatch-pagefault [-s SECONDS] "
		    "[-m MIB (1..4096)]\n");
		return 2;
	}
	len = (size_t)mib << 20;
	printf("testcase:Anonymous memory page fault (%ld MiB maps)\n", mib);
	t0 = clock_mono_s();
	do {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (off = 0; off < len; off += (size_t)page)
			p[off] = 1;
		faults += len / (size_t)page;
		munmap(p, len);
		t = clock_mono_s() - t0;
	} while (t < secs);
	printf(
	    "min:%.0f max:%.0f total:%llu\n", faults / t, faults / t, faults);
	printf("average:%.0f\n", faults / t);
	return 0;
}
