/*
 * The validators of string values, by kind (enum vkind): names, URLs,
 * host:port, paths, placeholders, kconfig lines, CPU lists, labels and
 * references to the daemon's trees and inboxes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/cpufamily.h"
#include "common/database.h"
#include "common/xalloc.h"
#include "config/config_int.h"

int
cfg_i_is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9');
}

int
cfg_i_valid_name(const char *s)
{
	size_t i;

	if (!cfg_i_is_alnum(s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!cfg_i_is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	return i <= CFG_NAME_MAX;
}

int
cfg_i_has_space_or_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 1;
	return 0;
}

int
cfg_i_has_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return 1;
	return 0;
}

/* "scheme://host..." with one of the schemes, a non-empty host. */
static int
url_with_scheme(const char *s, const char *const *schemes)
{
	size_t i, n;

	for (i = 0; schemes[i] != NULL; i++) {
		n = strlen(schemes[i]);
		if (strncmp(s, schemes[i], n) != 0 ||
		    strncmp(s + n, "://", 3) != 0 || s[n + 3] == '\0')
			continue;
		/* Only file:// may leave the host empty (file:///srv/x). */
		if (s[n + 3] == '/' &&
		    (strcmp(schemes[i], "file") != 0 || s[n + 4] == '\0'))
			continue;
		return !cfg_i_has_space_or_ctl(s);
	}
	return 0;
}

static int
valid_hostport(const char *s)
{
	const char *colon;
	long port = 0;
	size_t i;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (end == NULL || end == s + 1 || end[1] != ':')
			return 0;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || colon == s ||
		    memchr(s, ':', (size_t)(colon - s)))
			return 0;
		for (i = 0; s + i < colon; i++)
			if (!cfg_i_is_alnum(s[i]) && s[i] != '.' &&
			    s[i] != '-' && s[i] != '_')
				return 0;
	}
	if (colon[1] == '\0' || strlen(colon + 1) > 5)
		return 0;
	for (i = 1; colon[i] != '\0'; i++) {
		if (colon[i] < '0' || colon[i] > '9')
			return 0;
		port = port * 10 + (colon[i] - '0');
	}
	return port <= 65535;
}

/* Relative to the config file's directory, unless c->dir is NULL. */
static char *
resolve_path(const struct ctx *c, const char *s)
{
	if (s[0] == '/' || c->dir == NULL || strcmp(s, ":memory:") == 0)
		return xstrdup(s);
	return xasprintf("%s/%s", c->dir, s);
}

int
cfg_i_is_builtin(const char *name, size_t len)
{
	size_t i;

	for (i = 0; config_builtin_params[i] != NULL; i++)
		if (strlen(config_builtin_params[i]) == len &&
		    memcmp(config_builtin_params[i], name, len) == 0)
			return 1;
	return 0;
}

static int
is_axis(const struct job_config *job, const char *name, size_t len)
{
	size_t i;

	for (i = 0; job != NULL && i < job->naxes; i++)
		if (strlen(job->axes[i].name) == len &&
		    memcmp(job->axes[i].name, name, len) == 0)
			return 1;
	return 0;
}

static void
known_params(const struct job_config *job, struct buf *b)
{
	size_t i;

	for (i = 0; job != NULL && i < job->naxes; i++)
		buf_printf(b, "%s%s", b->len ? ", " : "", job->axes[i].name);
	for (i = 0; config_builtin_params[i] != NULL; i++)
		buf_printf(
		    b, "%s%s", b->len ? ", " : "", config_builtin_params[i]);
}

static void
check_placeholders(
    struct ctx *c, const struct cfg_node *n, const char *path, const char *s)
{
	size_t pos = 0, off, len;

	while (config_next_placeholder(s, &pos, &off, &len) == 0) {
		struct buf b = BUF_INIT(CAP_ERRMSG);

		if (is_axis(c->job, s + off, len) ||
		    cfg_i_is_builtin(s + off, len))
			continue;
		known_params(c->job, &b);
		cfg_i_nerr(c, n, path, "unknown placeholder {%.*s} (known: %s)",
		    (int)len, s + off, b.data);
		buf_release(&b);
	}
}

static int
valid_kconfig(const char *s)
{
	size_t i;

	if (strncmp(s, "# CONFIG_", 9) == 0) {
		for (i = 9; cfg_i_is_alnum(s[i]) || s[i] == '_'; i++)
			;
		return i > 9 && strcmp(s + i, " is not set") == 0;
	}
	if (strncmp(s, "CONFIG_", 7) != 0)
		return 0;
	for (i = 7; cfg_i_is_alnum(s[i]) || s[i] == '_'; i++)
		;
	return i > 7 && s[i] == '=' && s[i + 1] != '\0';
}

/* "0-3,8" (V_CPULIST), or also "node:N" (V_CPUS). */
static int
valid_cpus(const char *s, enum vkind vk)
{
	unsigned char mask[CFG_CPUS_MAX / 8];
	size_t i;

	if (vk == V_CPUS && strncmp(s, "node:", 5) == 0) {
		for (i = 5; s[i] >= '0' && s[i] <= '9'; i++)
			;
		return i > 5 && i <= 9 && s[i] == '\0';
	}
	return config_parse_cpulist(mask, CFG_CPUS_MAX, s) == 0;
}

static int
runner_has_label(const struct daemon_config *d, const char *label)
{
	size_t i, j;

	for (i = 0; i < d->nrunners; i++) {
		if (strcmp(d->runners[i].name, label) == 0)
			return 1;
		for (j = 0; j < d->runners[i].labels.n; j++)
			if (strcmp(d->runners[i].labels.v[j], label) == 0)
				return 1;
	}
	return 0;
}

/*
 * A label the daemon derives from what a runner reports (vendor:amd,
 * family:zen-2-rome; common/cpufamily.h): 1 when s is one, which no
 * runner in the daemon config carries until it registers; else 0, and
 * *plain 1 when s is not of that form (checked as other labels are),
 * 0 when it is but with a value no host can have (reported).
 */
static int
derived_label_ok(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *s, size_t *plain)
{
	char vals[512];
	int k = cpufamily_label_known(s);

	*plain = k == -1;
	if (k != 0)
		return k == 1;
	cpufamily_label_values(s[0] == 'v' ? 'v' : 'f', vals, sizeof(vals));
	cfg_i_nerr(c, n, path,
	    "'%s' is not a label a runner can have: %s is "
	    "one of %s",
	    s, s[0] == 'v' ? "vendor:" : "family:", vals);
	return 0;
}

/*
 * Checks one string value by kind; a malloc'd copy (paths resolved) or
 * NULL after reporting.
 */
char *
cfg_i_check_str(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *s, enum vkind vk, int first_argv)
{
	static const char *const http[] = { "http", "https", NULL };
	static const char *const git[] = { "http", "https", "git", "ssh",
		"file", NULL };
	static const char *const smtp[] = { "smtp", "smtps", NULL };
	char d[96];
	size_t len = strlen(s), i;
	size_t max =
	    vk == V_NAME || vk == V_LABEL || vk == V_TREEREF || vk == V_INBOXREF
	    ? CFG_NAME_MAX
	    : CFG_STR_MAX;

	if (len > max) {
		cfg_i_nerr(
		    c, n, path, "too long (%zu bytes, at most %zu)", len, max);
		return NULL;
	}
	switch (vk) {
	case V_ANY:
		if (cfg_i_has_ctl(s)) {
			cfg_i_nerr(c, n, path, "contains a control character");
			return NULL;
		}
		break;
	case V_LABEL:
		if (derived_label_ok(c, n, path, s, &i))
			break;
		if (i == 0)
			return NULL;
		/* FALLTHROUGH */
	case V_NAME:
	case V_TREEREF:
	case V_INBOXREF:
		if (!cfg_i_valid_name(s)) {
			cfg_i_nerr(c, n, path,
			    "%s is not a valid name (a letter or digit, then "
			    "letters, digits, '.', '_', '-')",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		if (vk == V_TREEREF && c->daemon != NULL) {
			for (i = 0; i < c->daemon->ntrees; i++)
				if (strcmp(c->daemon->trees[i].name, s) == 0)
					break;
			if (i == c->daemon->ntrees) {
				cfg_i_nerr(c, n, path,
				    "no tree named '%s' in %s", s,
				    c->daemon->file);
				return NULL;
			}
		}
		if (vk == V_INBOXREF && c->daemon != NULL) {
			for (i = 0; i < c->daemon->ninboxes; i++)
				if (strcmp(c->daemon->inboxes[i].name, s) == 0)
					break;
			if (i == c->daemon->ninboxes) {
				cfg_i_nerr(c, n, path,
				    "no inbox named '%s' in %s", s,
				    c->daemon->file);
				return NULL;
			}
		}
		if (vk == V_LABEL && c->daemon != NULL &&
		    c->daemon->nrunners > 0 &&
		    !runner_has_label(c->daemon, s)) {
			cfg_i_nerr(c, n, path,
			    "no runner in %s carries the label '%s'",
			    c->daemon->file, s);
			return NULL;
		}
		break;
	case V_DATABASE:
		if (len > 0 && !cfg_i_has_ctl(s) && database_is_pg(s))
			break;
		/* FALLTHROUGH */
	case V_PATH:
		if (len == 0 || cfg_i_has_ctl(s)) {
			cfg_i_nerr(c, n, path, "%s is not a valid path",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		return resolve_path(c, s);
	case V_HTTPURL:
		if (!url_with_scheme(s, http)) {
			cfg_i_nerr(c, n, path,
			    "%s is not an http:// or https:// URL",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_SMTPURL:
		if (!url_with_scheme(s, smtp)) {
			cfg_i_nerr(c, n, path,
			    "%s is not an smtp:// or smtps:// URL",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_GITURL:
		if (strstr(s, "://") != NULL) {
			if (!url_with_scheme(s, git)) {
				cfg_i_nerr(c, n, path,
				    "%s is not a git URL (http, https, git, "
				    "ssh, file) or a path",
				    cfg_i_describe(n, d, sizeof(d)));
				return NULL;
			}
			break;
		}
		if (len == 0 || cfg_i_has_ctl(s)) {
			cfg_i_nerr(c, n, path, "%s is not a git URL or a path",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		/* scp-like host:path stays; a local path is resolved. */
		{
			const char *colon = strchr(s, ':');
			const char *slash = strchr(s, '/');

			if (colon != NULL && (slash == NULL || colon < slash))
				break;
		}
		return resolve_path(c, s);
	case V_HOSTPORT:
		if (!valid_hostport(s)) {
			cfg_i_nerr(c, n, path,
			    "%s is not host:port (e.g. 127.0.0.1:8080, "
			    "[::1]:8080)",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_ARGV:
		if (cfg_i_has_ctl(s)) {
			cfg_i_nerr(c, n, path, "contains a control character");
			return NULL;
		}
		if (first_argv && len == 0) {
			cfg_i_nerr(c, n, path, "the program name is empty");
			return NULL;
		}
		check_placeholders(c, n, path, s);
		break;
	case V_REF:
	case V_REPOPATH:
		if (len == 0 || cfg_i_has_space_or_ctl(s)) {
			cfg_i_nerr(c, n, path,
			    "%s is not valid (no spaces or control characters)",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		if (vk == V_REPOPATH && s[0] == '/') {
			cfg_i_nerr(c, n, path,
			    "%s must be relative to the repository top",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_CPUS:
	case V_CPULIST:
		if (!valid_cpus(s, vk)) {
			cfg_i_nerr(c, n, path,
			    "%s is not a CPU list (e.g. 0-3,8)%s",
			    cfg_i_describe(n, d, sizeof(d)),
			    vk == V_CPUS ? " or node:N" : "");
			return NULL;
		}
		break;
	case V_GOVERNOR:
		if (len == 0 || len > 15 || !cfg_i_valid_name(s)) {
			cfg_i_nerr(c, n, path,
			    "%s is not a cpufreq governor name (performance, "
			    "powersave, ..., or keep)",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_KCONFIG:
		if (!valid_kconfig(s)) {
			cfg_i_nerr(c, n, path,
			    "%s is not a config line (CONFIG_FOO=y or "
			    "\"# CONFIG_FOO is not set\")",
			    cfg_i_describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	}
	return xstrdup(s);
}
