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

		char v[CPUFAMILY_LABEL_MAX], l[CPUFAMILY_LABEL_MAX];

		ASSERT_MSG(f != NULL && strcmp(f, t[i].family) == 0,
		    "%s: %s, want %s", t[i].model, f ? f : "NULL", t[i].family);
		/* Every family has its label, which a job's hosts: accepts. */
		cpufamily_labels(t[i].model, NULL, v, l);
		ASSERT_MSG(cpufamily_label_known(l) == 1 &&
		        strcmp(l, "family:unknown") != 0,
		    "%s: %s", t[i].model, l);
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

/* The labels a runner's reported CPU gives it; unknown, never a guess. */
TEST(test_cpufamily__derived_labels)
{
	static const struct {
		const char *model, *vendor_id, *vendor, *family;
	} t[] = {
		{ "AMD EPYC 7702 64-Core Processor", "AuthenticAMD",
		    "vendor:amd", "family:zen-2-rome" },
		{ "AMD EPYC 8534P 64-Core Processor", NULL, "vendor:amd",
		    "family:zen-4c-siena" },
		{ "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz", NULL,
		    "vendor:intel", "family:ice-lake-sp" },
		{ "Intel(R) Xeon(R) Platinum 8480+", "GenuineIntel",
		    "vendor:intel", "family:sapphire-rapids" },
		{ "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "GenuineIntel",
		    "vendor:intel", "family:unknown" },
		{ "QEMU Virtual CPU version 2.5+", NULL, "vendor:unknown",
		    "family:unknown" },
		{ "AMD EPYC 7702", "HygonGenuine", "vendor:unknown",
		    "family:zen-2-rome" },
		{ NULL, NULL, "vendor:unknown", "family:unknown" },
	};
	char v[CPUFAMILY_LABEL_MAX], f[CPUFAMILY_LABEL_MAX];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cpufamily_labels(t[i].model, t[i].vendor_id, v, f);
		ASSERT_MSG(
		    strcmp(v, t[i].vendor) == 0 && strcmp(f, t[i].family) == 0,
		    "%s: %s %s, want %s %s", t[i].model ? t[i].model : "NULL",
		    v, f, t[i].vendor, t[i].family);
		ASSERT_INTEQ(cpufamily_label_known(v), 1);
		ASSERT_INTEQ(cpufamily_label_known(f), 1);
	}
	ASSERT_INTEQ(cpufamily_label_known("family:zen2"), 0);
	ASSERT_INTEQ(cpufamily_label_known("vendor:arm"), 0);
	ASSERT_INTEQ(cpufamily_label_known("epyc"), -1);
}
