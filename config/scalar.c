/*
 * Scalar types of the configuration files: durations, sizes, percentages,
 * booleans, and the names of the enums.  Pure functions, shared by the
 * loader, the API (uploaded jobs) and the CLI.
 */
#include <stdint.h>
#include <string.h>

#include "config/config.h"

const char *const config_builtin_params[] = { "server", "workdir", "run",
	"host", "cpus", NULL };

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads a run of digits into *out; the number of digits, 0 on overflow. */
static size_t
digits(int64_t *out, const char *s)
{
	int64_t v = 0;
	size_t i;

	for (i = 0; is_digit(s[i]); i++) {
		if (v > (INT64_MAX - (s[i] - '0')) / 10)
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return i;
}

/* Up to 100 years, so sums of parts cannot overflow. */
#define DURATION_MAX ((int64_t)100 * 366 * 86400)

int
config_parse_duration(int64_t *out_s, const char *s)
{
	int64_t total = 0, v, mul;
	size_t n;

	if (s == NULL || *s == '\0')
		return -1;
	n = digits(&v, s);
	if (n > 0 && s[n] == '\0') {
		/* A bare number is seconds. */
		if (v > DURATION_MAX)
			return -1;
		*out_s = v;
		return 0;
	}
	while (*s != '\0') {
		n = digits(&v, s);
		if (n == 0 || v > DURATION_MAX)
			return -1;
		s += n;
		switch (*s) {
		case 's':
			mul = 1;
			break;
		case 'm':
			mul = 60;
			break;
		case 'h':
			mul = 3600;
			break;
		case 'd':
			mul = 86400;
			break;
		default:
			return -1;
		}
		s++;
		if (v > DURATION_MAX / mul)
			return -1;
		total += v * mul;
		if (total > DURATION_MAX)
			return -1;
	}
	*out_s = total;
	return 0;
}

int
config_parse_size(int64_t *out, const char *s)
{
	int64_t v, mul = 1;
	size_t n;

	if (s == NULL)
		return -1;
	n = digits(&v, s);
	if (n == 0)
		return -1;
	s += n;
	switch (*s) {
	case '\0':
		break;
	case 'B':
		if (s[1] != '\0')
			return -1;
		break;
	case 'k':
	case 'K':
		mul = (int64_t)1 << 10;
		break;
	case 'm':
	case 'M':
		mul = (int64_t)1 << 20;
		break;
	case 'g':
	case 'G':
		mul = (int64_t)1 << 30;
		break;
	case 't':
	case 'T':
		mul = (int64_t)1 << 40;
		break;
	default:
		return -1;
	}
	if (mul > 1) {
		s++;
		/* K, KB, KiB all mean 1024. */
		if (strcmp(s, "") != 0 && strcmp(s, "B") != 0 &&
		    strcmp(s, "iB") != 0)
			return -1;
	}
	if (v > INT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int
config_parse_percent(double *out, const char *s)
{
	double v = 0, scale = 1;
	int neg = 0, any = 0;

	if (s == NULL)
		return -1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	for (; is_digit(*s); s++, any = 1) {
		if (v > 1e12)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; is_digit(*s); s++, any = 1) {
			scale /= 10;
			v += (*s - '0') * scale;
		}
	}
	if (!any || strcmp(s, "%") != 0)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

int
config_parse_bool(int *out, const char *s)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
		"YES", "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
		"NO", "off", "Off", "OFF" };
	size_t i;

	if (s == NULL)
		return -1;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static const char *const parser_names[] = {
	[CFG_PARSER_NEPER] = "neper",
	[CFG_PARSER_FIO] = "fio",
	[CFG_PARSER_WIS] = "will-it-scale",
	[CFG_PARSER_NETPERF] = "netperf",
	[CFG_PARSER_KEYVALUE] = "keyvalue",
	[CFG_PARSER_JSON] = "json",
};

const char *
config_parser_name(enum cfg_parser p)
{
	if ((size_t)p < sizeof(parser_names) / sizeof(parser_names[0]))
		return parser_names[p];
	return "unknown";
}

int
config_parser_from_name(enum cfg_parser *out, const char *s)
{
	size_t i;

	if (s == NULL)
		return -1;
	for (i = 0; i < sizeof(parser_names) / sizeof(parser_names[0]); i++)
		if (strcmp(s, parser_names[i]) == 0) {
			*out = (enum cfg_parser)i;
			return 0;
		}
	return -1;
}

const char *
config_boot_name(enum cfg_boot b)
{
	switch (b) {
	case CFG_BOOT_NONE:
		return "none";
	case CFG_BOOT_KEXEC:
		return "kexec";
	case CFG_BOOT_REBOOT:
		return "reboot";
	case CFG_BOOT_QEMU:
		return "qemu";
	}
	return "unknown";
}

const char *
config_better_name(enum cfg_better b)
{
	return b == CFG_BETTER_LOWER ? "lower" : "higher";
}

const char *
config_baseline_name(enum cfg_baseline b)
{
	switch (b) {
	case CFG_BASELINE_PARENT:
		return "parent";
	case CFG_BASELINE_BRANCH_BASE:
		return "branch-base";
	case CFG_BASELINE_REF:
		return "ref";
	case CFG_BASELINE_PREVIOUS_TIP:
		return "previous-tip";
	}
	return "unknown";
}

const char *
config_kind_name(enum cfg_kind k)
{
	switch (k) {
	case CFG_KIND_DAEMON:
		return "daemon";
	case CFG_KIND_JOB:
		return "job";
	case CFG_KIND_RUNNER:
		return "runner";
	case CFG_KIND_UNKNOWN:
		break;
	}
	return "unknown";
}

int
config_parse_cpulist(unsigned char *mask, size_t nbits, const char *s)
{
	int64_t lo, hi, i;
	size_t n;

	memset(mask, 0, (nbits + 7) / 8);
	if (s == NULL || *s == '\0')
		return -1;
	for (;;) {
		if ((n = digits(&lo, s)) == 0)
			return -1;
		s += n;
		hi = lo;
		if (*s == '-') {
			if ((n = digits(&hi, ++s)) == 0)
				return -1;
			s += n;
		}
		if (hi < lo || hi >= (int64_t)nbits)
			return -1;
		for (i = lo; i <= hi; i++)
			mask[i / 8] |= (unsigned char)(1u << (i % 8));
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

static const char *const thp_names[] = { "keep", "always", "madvise", "never",
	"defer", "defer+madvise" };

const char *
config_thp_name(enum cfg_thp t)
{
	return (unsigned)t < sizeof(thp_names) / sizeof(thp_names[0])
	    ? thp_names[t]
	    : "?";
}

const char *
config_turbo_name(enum cfg_turbo t)
{
	return t == CFG_TURBO_OFF ? "off" : t == CFG_TURBO_ON ? "on" : "keep";
}
