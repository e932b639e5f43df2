/*
 * Fuzzes the qemu guest's result framing (runners/qemu.c): any bytes as
 * the serial console.  Checks the contract of qemu_parse_console():
 * success leaves NUL-terminated version and error strings, at most
 * QEMU_MAX_RUNS runs with distinct non-negative indexes, at most
 * QEMU_MAX_METRICS metrics each, streams within their cap; failure says
 * which console line was bad.
 *
 * make fuzz (clang -fsanitize=fuzzer,address,undefined).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "runners/qemu.h"

#define OUT_MAX 4096 /* per run and stream: small, to reach the cap */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qemu_result q;
	struct buf why = BUF_INIT(1024);
	size_t i, j;
	int rc;

	rc = qemu_parse_console(&q, (const char *)data, size, OUT_MAX, &why);
	assert(memchr(q.version, '\0', sizeof(q.version)) != NULL);
	assert(memchr(q.error, '\0', sizeof(q.error)) != NULL);
	assert(q.nruns <= QEMU_MAX_RUNS);
	for (i = 0; i < q.nruns; i++) {
		const struct qemu_run *r = &q.runs[i];

		assert(r->index >= 0);
		assert(r->nm <= QEMU_MAX_METRICS);
		assert(r->r.out.len <= OUT_MAX && r->r.err.len <= OUT_MAX);
		for (j = 0; j < r->nm; j++) {
			assert(memchr(r->m[j].name, '\0',
			           sizeof(r->m[j].name)) != NULL);
			assert(memchr(r->m[j].unit, '\0',
			           sizeof(r->m[j].unit)) != NULL);
		}
		for (j = i + 1; j < q.nruns; j++)
			assert(q.runs[j].index != r->index);
	}
	if (rc != 0)
		assert(strncmp(why.data, "console line ", 13) == 0);
	else
		assert(why.len == 0);
	qemu_result_release(&q);
	buf_release(&why);
	return 0;
}
