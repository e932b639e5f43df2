/*
 * Kernel builds, the pure parts and their records (see kernel.h): build
 * ids, config keys and fragments, version strings, where the source
 * comes from, and the record of a config's inputs that lets a build
 * reuse its .config.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/crypto.h"
#include "runners/kernel_int.h"

/* ---- pure parts ---- */

int
kernel_build_id(char *out, size_t n, int64_t job, const char *instance)
{
	size_t len = instance ? strlen(instance) : 0;

	if (len > 16 ||
	    strspn(instance ? instance : "", "0123456789abcdef") != len) {
		snprintf(out, n, "-pw%" PRId64, job);
		return -1;
	}
	if (len == 0)
		snprintf(out, n, "-pw%" PRId64, job);
	else
		snprintf(out, n, "-pw%" PRId64 "-%s", job, instance);
	return 0;
}

int
kernel_shared_build_id_ok(const char *id)
{
	size_t d, h;

	if (strncmp(id, "-pwb", 4) != 0)
		return 0;
	id += 4;
	d = strspn(id, "0123456789");
	if (d == 0 || d > 18 || id[0] == '0' || id[d] != '-')
		return 0;
	id += d + 1;
	h = strspn(id, "0123456789abcdef");
	return h >= 1 && h <= 16 && id[h] == '\0';
}

int
kernel_config_is_target(const char *config)
{
	/* Non-interactive targets only: make runs with stdin /dev/null. */
	static const char *const whole[] = { "tinyconfig", "allnoconfig",
		"allyesconfig", "allmodconfig", NULL };
	size_t i, n = strlen(config);

	for (i = 0; whole[i] != NULL; i++)
		if (strcmp(config, whole[i]) == 0)
			return 1;
	if (n < 9 || strcmp(config + n - 9, "defconfig") != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!((config[i] >= 'a' && config[i] <= 'z') ||
		        (config[i] >= '0' && config[i] <= '9') ||
		        config[i] == '_'))
			return 0;
	return 1;
}

int
kernel_compiler_ok(const char *cc)
{
	size_t i;

	if (cc == NULL || !isalnum((unsigned char)cc[0]))
		return 0;
	for (i = 1; cc[i] != '\0'; i++)
		if (i >= 63 ||
		    !(isalnum((unsigned char)cc[i]) || cc[i] == '.' ||
		        cc[i] == '_' || cc[i] == '+' || cc[i] == '-'))
			return 0;
	return 1;
}

void
kernel_config_key(char out[17], const char *config, const char *base_text,
    const struct strlist *fragment, const char *compiler)
{
	struct buf b = BUF_INIT(CONFIG_MAX * 2);
	char hex[65];
	size_t i;

	buf_printf(&b, "config %s\nalign %s\n", config, KERNEL_ALIGN_FLAGS);
	if (base_text != NULL)
		buf_printf(&b, "text %s\n", base_text);
	for (i = 0; fragment != NULL && i < fragment->n; i++)
		buf_printf(&b, "fragment %s\n", fragment->v[i]);
	if (compiler != NULL && strcmp(compiler, "gcc") != 0)
		buf_printf(&b, "compiler %s\n", compiler);
	crypto_sha256_hex(hex, b.data, b.len);
	memcpy(out, hex, 16);
	out[16] = '\0';
	buf_release(&b);
}

/* "CONFIG_X" of a fragment line and its wanted value ("n" for unset). */
static int
frag_split(const char *line, char *name, size_t nlen, const char **val)
{
	const char *s = line, *eq;
	size_t n;

	if (strncmp(s, "# ", 2) == 0) {
		s += 2;
		eq = strstr(s, " is not set");
		*val = "n";
	} else {
		eq = strchr(s, '=');
		*val = eq ? eq + 1 : NULL;
	}
	if (eq == NULL || strncmp(s, "CONFIG_", 7) != 0)
		return -1;
	n = (size_t)(eq - s);
	if (n >= nlen)
		return -1;
	memcpy(name, s, n);
	name[n] = '\0';
	return 0;
}

/* The value line "CONFIG_X=..." of name in dotconfig, or NULL. */
static const char *
config_value(const char *dotconfig, const char *name, size_t *len)
{
	size_t n = strlen(name);
	const char *p = dotconfig, *nl;

	while (p != NULL && *p) {
		nl = strchr(p, '\n');
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			*len =
			    nl ? (size_t)(nl - p - n - 1) : strlen(p + n + 1);
			return p + n + 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

size_t
kernel_fragment_dropped(
    struct buf *out, const char *dotconfig, const struct strlist *fragment)
{
	char name[256];
	const char *want, *have;
	size_t i, len = 0, dropped = 0;

	for (i = 0; fragment != NULL && i < fragment->n; i++) {
		if (frag_split(fragment->v[i], name, sizeof(name), &want) != 0)
			continue; /* config/ validated the lines */
		have = config_value(dotconfig, name, &len);
		if (strcmp(want, "n") == 0
		        ? have == NULL
		        : (have != NULL && strlen(want) == len &&
		              memcmp(want, have, len) == 0))
			continue;
		buf_printf(
		    out, "%s%s (now: ", dropped ? ", " : "", fragment->v[i]);
		if (have == NULL)
			buf_printf(out, "not set)");
		else
			buf_printf(out, "%s=%.*s)", name, (int)len, have);
		dropped++;
	}
	return dropped;
}

int
kernel_version_release(char *out, size_t n, const char *proc_version)
{
	char rel[128];

	if (n == 0 || sscanf(proc_version, "Linux version %127s", rel) != 1 ||
	    strlen(rel) >= n)
		return -1;
	memcpy(out, rel, strlen(rel) + 1);
	return 0;
}

int
kernel_version_check(
    const char *proc_version, const char *build_id, struct buf *why)
{
	char rel[128];
	size_t n, b = strlen(build_id);

	if (kernel_version_release(rel, sizeof(rel), proc_version) != 0) {
		buf_printf(why,
		    "booted kernel unknown (/proc/version: \"%.100s\"), "
		    "expected a kernel ending in %s",
		    proc_version, build_id);
		return -1;
	}
	n = strlen(rel);
	if (b > 0 && n >= b && strcmp(rel + n - b, build_id) == 0)
		return 0;
	buf_printf(why,
	    "wrong kernel: booted %s, expected a kernel ending in %s", rel,
	    build_id);
	return -1;
}

static int
is_commit_id(const char *s, size_t n)
{
	return n == 40 && strspn(s, "0123456789abcdef") == 40;
}

enum kernel_src_plan
kernel_source_plan(const char *mark, const char *commit, const char *clone,
    char prev[41], char *prev_clone, size_t n)
{
	const char *nl, *c;
	size_t len;

	prev[0] = '\0';
	if (n > 0)
		prev_clone[0] = '\0';
	if (mark == NULL)
		return KERNEL_SRC_EXPORT;
	/* "COMMIT\n" (older runners), or "COMMIT\nCLONE\n". */
	nl = strchr(mark, '\n');
	len = nl ? (size_t)(nl - mark) : strlen(mark);
	if (!is_commit_id(mark, len))
		return KERNEL_SRC_EXPORT;
	memcpy(prev, mark, 40);
	prev[40] = '\0';
	if (nl != NULL && nl[1] != '\0') {
		c = nl + 1;
		len = strcspn(c, "\n");
		if (len < n) {
			memcpy(prev_clone, c, len);
			prev_clone[len] = '\0';
		}
	}
	if (strcmp(prev, commit) == 0)
		return KERNEL_SRC_SAME;
	if (n > 0 && prev_clone[0] != '\0' && strcmp(prev_clone, clone) != 0)
		return KERNEL_SRC_BORROW;
	return KERNEL_SRC_UPDATE;
}

/* ---- files ---- */

/* meta: "key value" lines. */
int
kernel_i_meta_get(const char *meta, const char *key, char *out, size_t n)
{
	size_t k = strlen(key), len;
	const char *p = meta, *nl;

	while (p != NULL && *p) {
		nl = strchr(p, '\n');
		if (strncmp(p, key, k) == 0 && p[k] == ' ') {
			len = nl ? (size_t)(nl - p - k - 1) : strlen(p + k + 1);
			if (len >= n)
				return -1;
			memcpy(out, p + k + 1, len);
			out[len] = '\0';
			return 0;
		}
		p = nl ? nl + 1 : NULL;
	}
	return -1;
}

int
kernel_config_input_path(const char *rel)
{
	const char *base = strrchr(rel, '/'), *p;

	base = base ? base + 1 : rel;
	if (strncmp(base, "Kconfig", 7) == 0 || strcmp(rel, "Makefile") == 0)
		return 1;
	if (strncmp(rel, "scripts/", 8) == 0)
		return strchr(rel + 8, '/') == NULL ||
		    strncmp(rel + 8, "kconfig/", 8) == 0;
	if (strncmp(rel, "kernel/configs/", 15) == 0)
		return 1;
	if (strncmp(rel, "arch/", 5) != 0 || (p = strchr(rel + 5, '/')) == NULL)
		return 0;
	/* arch/x/Makefile (its defconfig), arch/x/configs/... */
	return strcmp(p, "/Makefile") == 0 || strncmp(p, "/configs/", 9) == 0;
}

int
kernel_config_reuse(
    const char *record, const char *inputs, const char *dotconfig_sha256)
{
	char have[65], sha[65];

	if (record == NULL || dotconfig_sha256 == NULL ||
	    kernel_i_meta_get(record, "inputs", have, sizeof(have)) != 0 ||
	    kernel_i_meta_get(record, "config_sha256", sha, sizeof(sha)) != 0)
		return 0;
	return strlen(have) == 64 && strcmp(have, inputs) == 0 &&
	    strlen(sha) == 64 && strcmp(sha, dotconfig_sha256) == 0;
}
