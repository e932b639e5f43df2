/*
 * Fuzzes every benchmark output parser.  The first byte picks the tool;
 * the rest is the raw output.  Checks the contract: success means at
 * least one metric, all finite, with names and units terminated; failure
 * means no metrics and an error naming the tool.
 *
 * make fuzz (clang -fsanitize=fuzzer,address,undefined); the seeds are
 * the fixtures with their selector byte (tests/fuzz/seeds.sh).
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runners/bench/bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const *tools = bench_tools();
	struct bench_result r;
	const char *tool;
	size_t ntools = 0, i;
	int rc;

	if (size < 1)
		return 0;
	while (tools[ntools] != NULL)
		ntools++;
	tool = tools[data[0] % ntools];
	bench_result_init(&r);
	rc = bench_parse(&r, tool, (const char *)data + 1, size - 1);
	if (rc == 0) {
		assert(r.n > 0);
		for (i = 0; i < r.n; i++) {
			assert(isfinite(r.metrics[i].value));
			assert(memchr(r.metrics[i].name, '\0',
			           sizeof(r.metrics[i].name)) != NULL);
			assert(r.metrics[i].name[0] != '\0');
			assert(memchr(r.metrics[i].unit, '\0',
			           sizeof(r.metrics[i].unit)) != NULL);
		}
	} else {
		assert(r.n == 0);
		assert(strncmp(err_msg(&r.err), tool, strlen(tool)) == 0);
	}
	bench_result_release(&r);
	return 0;
}
