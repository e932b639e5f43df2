/*
 * Server CPU generations by model number.  AMD EPYC: the last digit of
 * the four-digit number is the generation (7xx1 Naples .. 9xx5 Turin);
 * Intel Xeon Scalable: the second digit (8180 Skylake-SP, 8280 Cascade
 * Lake, 8380 Ice Lake-SP, 8480+ Sapphire Rapids, 8580 Emerald Rapids),
 * Xeon 6 (6xxxP/E) Granite and Sierra Forest; Xeon E5/E7 by their "vN".
 */
#include <ctype.h>
#include <stdio.h>
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

/* Every name cpufamily_of returns: the values family: labels can have. */
static const char *const families[] = { "Zen (Naples)", "Zen 2 (Rome)",
	"Zen 3 (Milan)", "Zen 4 (Genoa)", "Zen 4c (Siena)", "Zen 5 (Turin)",
	"Sandy Bridge-EP", "Ivy Bridge-EP", "Haswell-EP", "Broadwell-EP",
	"Skylake-SP", "Cascade Lake", "Ice Lake-SP", "Sapphire Rapids",
	"Emerald Rapids", "Granite Rapids", "Sierra Forest", NULL };

static const char *const vendors[] = { "amd", "intel", NULL };

/* "family:" and the family's slug into out (CPUFAMILY_LABEL_MAX). */
static void
family_label(const char *name, char *out)
{
	size_t o = strlen("family:"), k;

	memcpy(out, "family:", o);
	for (k = 0; name[k] && o < CPUFAMILY_LABEL_MAX - 1; k++) {
		unsigned char c = (unsigned char)name[k];

		if (isalnum(c))
			out[o++] = (char)tolower(c);
		else if (out[o - 1] != '-' && out[o - 1] != ':')
			out[o++] = '-';
	}
	while (out[o - 1] == '-')
		o--;
	out[o] = '\0';
}

void
cpufamily_labels(
    const char *model, const char *vendor_id, char *vendor, char *family)
{
	const char *f = cpufamily_of(model), *v = NULL;

	if (vendor_id != NULL && strcmp(vendor_id, "AuthenticAMD") == 0)
		v = "amd";
	else if (vendor_id != NULL && strcmp(vendor_id, "GenuineIntel") == 0)
		v = "intel";
	else if (vendor_id == NULL && model != NULL &&
	    strncmp(model, "AMD ", 4) == 0)
		v = "amd";
	else if (vendor_id == NULL && model != NULL &&
	    strncmp(model, "Intel(R) ", 9) == 0)
		v = "intel";
	snprintf(vendor, CPUFAMILY_LABEL_MAX, "vendor:%s", v ? v : "unknown");
	if (f != NULL)
		family_label(f, family);
	else
		snprintf(family, CPUFAMILY_LABEL_MAX, "family:unknown");
}

int
cpufamily_label_known(const char *label)
{
	char l[CPUFAMILY_LABEL_MAX];
	size_t i;

	if (strncmp(label, "vendor:", 7) == 0) {
		for (i = 0; vendors[i]; i++)
			if (strcmp(label + 7, vendors[i]) == 0)
				return 1;
		return strcmp(label + 7, "unknown") == 0;
	}
	if (strncmp(label, "family:", 7) != 0)
		return -1;
	for (i = 0; families[i]; i++) {
		family_label(families[i], l);
		if (strcmp(label, l) == 0)
			return 1;
	}
	return strcmp(label + 7, "unknown") == 0;
}

void
cpufamily_label_values(int kind, char *out, size_t n)
{
	char l[CPUFAMILY_LABEL_MAX];
	size_t o = 0, i;

	out[0] = '\0';
	for (i = 0; kind == 'v' ? vendors[i] != NULL : families[i] != NULL;
	     i++) {
		if (kind == 'v')
			snprintf(l, sizeof(l), "%s", vendors[i]);
		else
			family_label(families[i], l);
		o += (size_t)snprintf(out + o, o < n ? n - o : 0, "%s%s",
		    o ? ", " : "", kind == 'v' ? l : l + 7);
		if (o >= n)
			return;
	}
	snprintf(out + o, o < n ? n - o : 0, ", unknown");
}
