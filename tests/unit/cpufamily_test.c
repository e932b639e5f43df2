#include <stddef.h>
#include <string.h>

#include "common/cpufamily.h"
#include "tests/unit/test.h"

/* Model strings as /proc/cpuinfo has them on real hosts. */
TEST(test_cpufamily__server_generations)
{
	static const struct {
		const char *model, *family;
	} t[] = {
		{ "AMD EPYC 7551 32-Core Processor", "Zen (Naples)" },
		{ "AMD EPYC 7702 64-Core Processor", "Zen 2 (Rome)" },
		{ "AMD EPYC 7R32", "Zen 2 (Rome)" },
		{ "AMD EPYC 7763 64-Core Processor", "Zen 3 (Milan)" },
		{ "AMD EPYC 7R13 Processor", "Zen 3 (Milan)" },
		{ "AMD EPYC 9654 96-Core Processor", "Zen 4 (Genoa)" },
		{ "AMD EPYC 8534P 64-Core Processor", "Zen 4c (Siena)" },
		{ "AMD EPYC 9755 128-Core Processor", "Zen 5 (Turin)" },
		{ "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz",
		    "Skylake-SP" },
		{ "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz", "Cascade Lake" },
		{ "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
		    "Ice Lake-SP" },
		{ "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "Ice Lake-SP" },
		{ "Intel(R) Xeon(R) Platinum 8480+", "Sapphire Rapids" },
		{ "Intel(R) Xeon(R) Platinum 8592+", "Emerald Rapids" },
		{ "Intel(R) Xeon(R) 6980P", "Granite Rapids" },
		{ "Intel(R) Xeon(R) 6780E", "Sierra Forest" },
		{ "Intel(R) Xeon(R) CPU E5-2699 v4 @ 2.20GHz", "Broadwell-EP" },
		{ "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", "Haswell-EP" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *f = cpufamily_of(t[i].model);

		ASSERT_MSG(f != NULL && strcmp(f, t[i].family) == 0,
		    "%s: %s, want %s", t[i].model, f ? f : "NULL", t[i].family);
	}
}

/* What the table does not know is unknown, never a guess. */
TEST(test_cpufamily__unknown_is_null)
{
	static const char *const m[] = { NULL, "",
		"QEMU Virtual CPU version 2.5+", "AMD EPYC Processor",
		"AMD EPYC 7", "AMD Ryzen 9 7950X 16-Core Processor",
		"Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz",
		"Intel(R) Xeon(R) Platinum 8980 CPU", "ARM Neoverse-N1",
		"<script>alert(1)</script> EPYC 12345" };
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		ASSERT_MSG(cpufamily_of(m[i]) == NULL, "%s: %s",
		    m[i] ? m[i] : "NULL", cpufamily_of(m[i]));
}
