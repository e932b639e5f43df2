/*
 * Server CPU generations by model number.  AMD EPYC: the last digit of
 * the four-digit number is the generation (7xx1 Naples .. 9xx5 Turin);
 * Intel Xeon Scalable: the second digit (8180 Skylake-SP, 8280 Cascade
 * Lake, 8380 Ice Lake-SP, 8480+ Sapphire Rapids, 8580 Emerald Rapids),
 * Xeon 6 (6xxxP/E) Granite and Sierra Forest; Xeon E5/E7 by their "vN".
 */
#include <ctype.h>
#include <string.h>

#include "common/cpufamily.h"

/* The first number of 4 digits after word in s, -1 when none. */
static int
number_after(const char *s, const char *word)
{
	const char *p = strstr(s, word);
	int n = 0, k = 0;

	if (p == NULL)
		return -1;
	for (p += strlen(word); *p; p++) {
		if (!isdigit((unsigned char)*p))
			continue;
		for (n = 0, k = 0; isdigit((unsigned char)p[k]); k++)
			n = n * 10 + (p[k] - '0');
		if (k == 4)
			return n;
		p += k - 1;
	}
	return -1;
}

static const char *
amd(const char *m)
{
	static const char *const gen[] = { NULL, "Zen (Naples)", "Zen 2 (Rome)",
		"Zen 3 (Milan)", "Zen 4 (Genoa)", "Zen 5 (Turin)" };
	int n = number_after(m, "EPYC"), g;

	/* EPYC 7R13 (a cloud part): "7" "13"; the number is 7xx3. */
	if (n < 0) {
		const char *p = strstr(m, "EPYC");

		if (p && (p = strpbrk(p, "79")) &&
		    isalpha((unsigned char)p[1]) &&
		    isdigit((unsigned char)p[2]) &&
		    isdigit((unsigned char)p[3]))
			n = (p[0] - '0') * 1000 + (p[3] - '0');
	}
	if (n < 0)
		return NULL;
	g = n % 10;
	if (n / 1000 == 7 && g >= 1 && g <= 3)
		return gen[g];
	if (n / 1000 == 9 && (g == 4 || g == 5))
		return gen[g];
	if (n / 1000 == 8 && g == 4)
		return "Zen 4c (Siena)";
	return NULL;
}

static const char *
intel(const char *m)
{
	static const char *const scalable[] = { NULL, "Skylake-SP",
		"Cascade Lake", "Ice Lake-SP", "Sapphire Rapids",
		"Emerald Rapids" };
	const char *v;
	int n = -1, d;

	if (strstr(m, "Xeon") == NULL)
		return NULL;
	if (strstr(m, "E5-") || strstr(m, "E7-")) {
		if ((v = strstr(m, " v")) == NULL)
			return "Sandy Bridge-EP";
		switch (v[2]) {
		case '2':
			return "Ivy Bridge-EP";
		case '3':
			return "Haswell-EP";
		case '4':
			return "Broadwell-EP";
		}
		return NULL;
	}
	/* Xeon 6: 6900P/6700P Granite Rapids, 6700E Sierra Forest. */
	if ((v = strstr(m, "Xeon(R) 6")) || (v = strstr(m, "Xeon 6"))) {
		n = number_after(v, "Xeon");
		if (n >= 6000 && n <= 6999) {
			const char *s = strpbrk(v + 5, "PE");

			if (s && s[0] == 'E')
				return "Sierra Forest";
			return "Granite Rapids";
		}
	}
	if ((v = strstr(m, "Platinum")) || (v = strstr(m, "Gold")) ||
	    (v = strstr(m, "Silver")) || (v = strstr(m, "Bronze")))
		n = number_after(v, " ");
	if (n < 1000)
		return NULL;
	d = n / 100 % 10;
	if (d >= 1 && d <= 5)
		return scalable[d];
	return NULL;
}

const char *
cpufamily_of(const char *model)
{
	if (model == NULL)
		return NULL;
	if (strstr(model, "AMD") || strstr(model, "EPYC"))
		return amd(model);
	if (strstr(model, "Intel") || strstr(model, "Xeon"))
		return intel(model);
	return NULL;
}
