/*
 * Fuzzes the `perf stat -x,` parser (runners/perfstat.c): any bytes as
 * perf's output; the low bit of the first byte says whether it has the
 * -G column.  Checks the contract of perfstat_parse() and
 * perfstat_total(): success gives at least one counter line, each with
 * terminated strings, its line number in order, a count that is finite
 * and >= 0, a percent within 0..100; a known total is a finite sum of
 * counts that all ran 100 % of the time; failure names the line ("perf
 * stat: ...") and leaves no line.
 *
 * make fuzz (clang -fsanitize=fuzzer,address,undefined).
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runners/perfstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_total(const struct perfstat_report *r, const char *event)
{
	struct perfstat_total t;
	int known = perfstat_total(&t, r, event);

	assert(memchr(t.reason, '\0', sizeof(t.reason)) != NULL);
	if (known) {
		assert(isfinite(t.value) && t.value >= 0);
		assert(t.counted > 0 && t.pct == 100);
		assert(t.reason[0] == '\0');
	} else {
		assert(t.value == 0 && t.reason[0] != '\0');
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfstat_report r;
	size_t i;
	int cgroup;

	if (size == 0)
		return 0;
	cgroup = data[0] & 1;
	perfstat_report_init(&r);
	if (perfstat_parse(&r, (const char *)data + 1, size - 1, cgroup) != 0) {
		assert(r.n == 0 && r.lines == NULL);
		assert(strncmp(err_msg(&r.err), "perf stat: ", 11) == 0);
		return 0;
	}
	assert(r.n > 0);
	for (i = 0; i < r.n; i++) {
		const struct perfstat_line *l = &r.lines[i];

		assert(memchr(l->event, '\0', sizeof(l->event)) != NULL);
		assert(memchr(l->unit, '\0', sizeof(l->unit)) != NULL);
		assert(memchr(l->cgroup, '\0', sizeof(l->cgroup)) != NULL);
		assert(l->event[0] != '\0');
		assert(!cgroup || l->cgroup[0] != '\0');
		assert(i == 0 || l->lineno > r.lines[i - 1].lineno);
		assert(l->pct <= 100);
		if (l->state == PERFSTAT_COUNTED)
			assert(isfinite(l->value) && l->value >= 0 &&
			    l->pct >= 0 && l->runtime >= 0);
	}
	check_total(&r, "instructions");
	check_total(&r, "cycles");
	perfstat_report_release(&r);
	return 0;
}
