/*
 * The job's schema: the custom fields (matrix, exclude, metrics,
 * baseline), the trigger, kernel, bisect and host sections, and the
 * whole-file checks against the daemon (runners, kernel hosts, cgroups).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config_int.h"

/* ---- custom fields of a job ---- */

void
cfg_i_axis_free(struct cfg_axis *a)
{
	free(a->name);
	cfg_i_strlist_free(&a->values);
}

static int
valid_cgroup(const char *s)
{
	const char *p;

	if (strcmp(s, "root") == 0)
		return 1;
	if (s[0] != '/' || s[1] == '\0')
		return 0;
	for (p = s + 1; *p != '\0'; p++) {
		/* Components: [A-Za-z0-9._-]+, not "." or "..". */
		const char *start = p;

		while (*p != '\0' && *p != '/') {
			if (!cfg_i_is_alnum(*p) && *p != '.' && *p != '_' &&
			    *p != '-')
				return 0;
			p++;
		}
		if (p == start || (p - start == 1 && start[0] == '.') ||
		    (p - start == 2 && start[0] == '.' && start[1] == '.'))
			return 0;
		if (*p == '\0')
			break;
	}
	return s[strlen(s) - 1] != '/';
}

/* Checks one axis value and appends it; bad ones are reported, left out. */
static void
add_value(struct ctx *c, struct cfg_axis *ax, const struct cfg_node *e,
    const char *vp)
{
	const char *s;
	char d[96];
	size_t k;

	if (e == NULL || (s = cfg_i_want_scalar(c, e, vp, "a value")) == NULL)
		return;
	for (k = 0; k < ax->values.n; k++)
		if (strcmp(ax->values.v[k], s) == 0) {
			cfg_i_nerr(c, e, vp, "'%s' is listed twice", s);
			return;
		}
	if (strlen(s) > CFG_VALUE_MAX || cfg_i_has_ctl(s) ||
	    strchr(s, ',') != NULL || strchr(s, '=') != NULL) {
		cfg_i_nerr(c, e, vp,
		    "value %s must be at most %d characters, without ',', '=' "
		    "or control characters",
		    cfg_i_describe(e, d, sizeof(d)), CFG_VALUE_MAX);
		return;
	}
	if (strcmp(ax->name, "cgroup") == 0 && !valid_cgroup(s)) {
		cfg_i_nerr(c, e, vp,
		    "%s is not 'root' or an absolute cgroup path like /bench "
		    "or /a/b",
		    cfg_i_describe(e, d, sizeof(d)));
		return;
	}
	ax->values.v[ax->values.n++] = xstrdup(s);
}

static void
h_matrix(struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	struct job_config *job = base;
	struct cfg_pair *p;
	size_t i, j, cnt;
	uint64_t total = 1;
	char d[96], ap[512], vp[512];

	if (n == NULL)
		return;
	if (n->type != CFG_NODE_MAP) {
		cfg_i_nerr(c, n, path,
		    "expected a mapping of axes (name: [values]), got %s",
		    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	if (cfg_i_check_keys(c, n, NULL, path) != 0)
		return;
	cnt = cfg_i_map_len(n);
	if (cnt > CFG_AXES_MAX) {
		cfg_i_nerr(c, n, path, "too many axes (%zu, at most %d)", cnt,
		    CFG_AXES_MAX);
		return;
	}
	job->axes = xcalloc(cnt ? cnt : 1, sizeof(*job->axes));
	for (i = 0, p = n->pairs; i < cnt; i++, p++) {
		const struct cfg_node *kn = cfg_i_node(c, p->key),
		                      *vn = cfg_i_node(c, p->value);
		struct cfg_axis *ax;
		const char *name;

		if (kn == NULL || vn == NULL || kn->type != CFG_NODE_SCALAR ||
		    cfg_i_is_null(kn) || cfg_i_earlier_dup(c, n, i) >= 0)
			continue; /* reported by check_keys */
		name = cfg_i_scalar(kn);
		cfg_i_join(ap, sizeof(ap), path, name);
		if (!cfg_i_valid_name(name) || strchr(name, '.') != NULL ||
		    strchr(name, '-') != NULL) {
			cfg_i_nerr(c, kn, ap,
			    "not a valid axis name (letters, digits, '_'; at "
			    "most %d)",
			    CFG_NAME_MAX);
			/* Keep the name: {name} in commands is then known. */
			ax = &job->axes[job->naxes++];
			memset(ax, 0, sizeof(*ax));
			ax->name = xstrdup(name);
			continue;
		}
		if (cfg_i_is_builtin(name, strlen(name))) {
			cfg_i_nerr(c, kn, ap,
			    "'%s' is a built-in parameter and cannot be an "
			    "axis",
			    name);
			continue;
		}
		ax = &job->axes[job->naxes];
		memset(ax, 0, sizeof(*ax));
		ax->name = xstrdup(name);
		if (vn->type == CFG_NODE_SCALAR && !cfg_i_is_null(vn)) {
			/* A scalar is a one-value axis. */
			ax->values.v = xcalloc(2, sizeof(char *));
			add_value(c, ax, vn, ap);
		} else if (vn->type != CFG_NODE_SEQ || cfg_i_seq_len(vn) == 0) {
			cfg_i_nerr(c, vn, ap,
			    "expected a non-empty list of values, got %s",
			    vn->type == CFG_NODE_SEQ
			        ? "an empty list"
			        : cfg_i_describe(vn, d, sizeof(d)));
		} else if (cfg_i_seq_len(vn) > CFG_AXIS_VALUES_MAX) {
			cfg_i_nerr(c, vn, ap,
			    "too many values (%zu, at most %d)",
			    cfg_i_seq_len(vn), CFG_AXIS_VALUES_MAX);
		} else {
			int *it = vn->items;

			ax->values.v =
			    xcalloc(cfg_i_seq_len(vn) + 1, sizeof(char *));
			for (j = 0; j < cfg_i_seq_len(vn); j++, it++) {
				cfg_i_join_idx(vp, sizeof(vp), ap, j);
				add_value(c, ax, cfg_i_node(c, *it), vp);
			}
		}
		job->naxes++;
		if (ax->values.n > 0 && total <= CFG_POINTS_MAX)
			total *= ax->values.n;
	}
	if (total > CFG_POINTS_MAX)
		cfg_i_nerr(c, n, path, "expands to more than %d points",
		    CFG_POINTS_MAX);
}

static struct cfg_axis *
find_axis(struct job_config *job, const char *name)
{
	size_t i;

	for (i = 0; i < job->naxes; i++)
		if (strcmp(job->axes[i].name, name) == 0)
			return &job->axes[i];
	return NULL;
}

static void
h_exclude(struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	struct job_config *job = base;
	int *it;
	size_t i, j, k, cnt;
	char d[96], ep[512], kp[512];

	if (n == NULL)
		return;
	if (n->type != CFG_NODE_SEQ) {
		cfg_i_nerr(c, n, path,
		    "expected a list of partial points, got %s",
		    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	if (cfg_i_list_len(c, n, path, &cnt) == -1)
		return;
	job->exclude = xcalloc(cnt ? cnt : 1, sizeof(*job->exclude));
	for (i = 0, it = n->items; i < cnt; i++, it++) {
		const struct cfg_node *e = cfg_i_node(c, *it);
		struct cfg_point *pt;
		struct cfg_pair *p;
		int bad = 0;

		cfg_i_join_idx(ep, sizeof(ep), path, i);
		if (e == NULL || e->type != CFG_NODE_MAP) {
			if (e != NULL)
				cfg_i_nerr(c, e, ep,
				    "expected a mapping of axis: value, got %s",
				    cfg_i_describe(e, d, sizeof(d)));
			continue;
		}
		if (cfg_i_map_len(e) == 0) {
			cfg_i_nerr(c, e, ep,
			    "an empty entry would exclude every point");
			continue;
		}
		if (cfg_i_check_keys(c, e, NULL, ep) != 0)
			continue;
		pt = &job->exclude[job->nexclude];
		memset(pt, 0, sizeof(*pt));
		pt->keys = xcalloc(cfg_i_map_len(e) + 1, sizeof(char *));
		pt->values = xcalloc(cfg_i_map_len(e) + 1, sizeof(char *));
		for (j = 0, p = e->pairs; j < cfg_i_map_len(e); j++, p++) {
			const struct cfg_node *kn = cfg_i_node(c, p->key),
			                      *vn = cfg_i_node(c, p->value);
			struct cfg_axis *ax;
			const char *v;

			if (kn == NULL || vn == NULL ||
			    kn->type != CFG_NODE_SCALAR || cfg_i_is_null(kn) ||
			    cfg_i_earlier_dup(c, e, j) >= 0) {
				bad = 1;
				continue;
			}
			cfg_i_join(kp, sizeof(kp), ep, cfg_i_scalar(kn));
			if ((ax = find_axis(job, cfg_i_scalar(kn))) == NULL) {
				struct buf names = BUF_INIT(CAP_ERRMSG);

				for (k = 0; k < job->naxes; k++)
					buf_printf(&names, "%s%s",
					    k ? ", " : "", job->axes[k].name);
				cfg_i_nerr(c, kn, kp,
				    "no axis named '%s' in matrix%s%s%s",
				    cfg_i_scalar(kn),
				    names.len ? " (axes: " : "", names.data,
				    names.len ? ")" : "");
				buf_release(&names);
				bad = 1;
				continue;
			}
			if ((v = cfg_i_want_scalar(c, vn, kp, "a value")) ==
			    NULL) {
				bad = 1;
				continue;
			}
			for (k = 0; k < ax->values.n; k++)
				if (strcmp(ax->values.v[k], v) == 0)
					break;
			if (k == ax->values.n) {
				struct buf names = BUF_INIT(CAP_ERRMSG);
				size_t m;

				for (m = 0; m < ax->values.n; m++)
					buf_printf(&names, "%s%s",
					    m ? ", " : "", ax->values.v[m]);
				cfg_i_nerr(c, vn, kp,
				    "%s is not a value of axis %s (values: %s)",
				    cfg_i_describe(vn, d, sizeof(d)), ax->name,
				    names.data);
				buf_release(&names);
				bad = 1;
				continue;
			}
			pt->keys[pt->n] = ax->name;
			pt->values[pt->n] = ax->values.v[k];
			pt->n++;
		}
		if (bad) {
			free(pt->keys);
			free(pt->values);
			memset(pt, 0, sizeof(*pt));
			continue;
		}
		pt->label = config_point_label(pt);
		job->nexclude++;
	}
}

static const struct enumv better_enum[] = {
	{ "higher", CFG_BETTER_HIGHER },
	{ "lower", CFG_BETTER_LOWER },
	{ NULL, 0 },
};

static const struct field metric_fields[] = {
	{ .key = "better",
	    .type = F_ENUM,
	    .flags = F_REQ,
	    .off = offsetof(struct cfg_metric, better),
	    .enums = better_enum },
	{ .key = "min_effect",
	    .type = F_PERCENT,
	    .off = offsetof(struct cfg_metric, min_effect_pct),
	    .def = "1%",
	    .min = 0,
	    .max = 100 },
};
static const struct schema metric_schema = { sizeof(struct cfg_metric),
	metric_fields, NFIELDS(metric_fields), NULL };

static int
valid_metric_name(const char *s)
{
	size_t i;

	if (!cfg_i_is_alnum(s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!cfg_i_is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-' && s[i] != ':' && s[i] != '/')
			return 0;
	return i < CAP_NAME;
}
static void
add_metric(struct ctx *c, const char *name, const struct cfg_node *vn,
    const char *kp, void *arg)
{
	struct job_config *job = arg;
	struct cfg_metric *m;

	job->metrics = xreallocarray(
	    job->metrics, job->nmetrics + 1, sizeof(*job->metrics));
	m = &job->metrics[job->nmetrics++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	cfg_i_load_map(c, vn, &metric_schema, m, kp);
}

static void
h_metrics(struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	cfg_i_named_maps(c, n, path, "{better: higher|lower, min_effect: N%}",
	    valid_metric_name,
	    "not a valid metric name (letters, digits, '.', '_', '-', ':', "
	    "'/')",
	    add_metric, base);
}

/* counters_ops: the name of a metric of the run's own output. */
static void
h_counters_ops(
    struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	struct job_config *job = base;
	const char *s;
	char d[96];

	if (n == NULL ||
	    (s = cfg_i_want_scalar(c, n, path, "a metric name")) == NULL)
		return;
	if (!valid_metric_name(s)) {
		cfg_i_nerr(c, n, path,
		    "%s is not a valid metric name (letters, digits, '.', "
		    "'_', '-', ':', '/')",
		    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	job->counters_ops = xstrdup(s);
}

static void
h_baseline(
    struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	struct job_config *job = base;
	const char *s, *ref = NULL;
	char d[96];

	if (n == NULL) {
		job->baseline = CFG_BASELINE_PARENT;
		return;
	}
	if ((s = cfg_i_want_scalar(c, n, path,
	         "parent, previous-tip, branch-base:REF or ref:REF")) == NULL)
		return;
	if (strcmp(s, "parent") == 0) {
		job->baseline = CFG_BASELINE_PARENT;
		return;
	}
	if (strcmp(s, "previous-tip") == 0) {
		job->baseline = CFG_BASELINE_PREVIOUS_TIP;
		return;
	}
	if (strncmp(s, "branch-base:", 12) == 0) {
		job->baseline = CFG_BASELINE_BRANCH_BASE;
		ref = s + 12;
	} else if (strncmp(s, "ref:", 4) == 0) {
		job->baseline = CFG_BASELINE_REF;
		ref = s + 4;
	} else {
		cfg_i_nerr(c, n, path,
		    "%s is not one of parent, previous-tip, branch-base:REF, "
		    "ref:REF",
		    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	if (*ref == '\0' || cfg_i_has_space_or_ctl(ref) ||
	    strlen(ref) > CAP_NAME) {
		cfg_i_nerr(c, n, path,
		    "%s: the ref after ':' is empty or invalid",
		    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	job->baseline_ref = xstrdup(ref);
}

static const struct enumv parser_enum[] = {
	{ "neper", CFG_PARSER_NEPER },
	{ "fio", CFG_PARSER_FIO },
	{ "will-it-scale", CFG_PARSER_WIS },
	{ "netperf", CFG_PARSER_NETPERF },
	{ "keyvalue", CFG_PARSER_KEYVALUE },
	{ "json", CFG_PARSER_JSON },
	{ NULL, 0 },
};

static const struct enumv coalesce_enum[] = {
	{ "cancel", CFG_COALESCE_CANCEL },
	{ "keep", CFG_COALESCE_KEEP },
	{ "deprioritise", CFG_COALESCE_DEPRIORITISE },
	{ NULL, 0 },
};

static const struct field trigger_fields[] = {
	LIST("trees", struct job_config, trigger.trees, F_UNIQUE, V_TREEREF),
	LIST("branches", struct job_config, trigger.branches, F_UNIQUE, V_REF),
	LIST("paths", struct job_config, trigger.paths, F_UNIQUE, V_REPOPATH),
	LIST("inboxes", struct job_config, trigger.inboxes, F_UNIQUE,
	    V_INBOXREF),
	{ .key = "every_commit",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, trigger.every_commit),
	    .def = "true" },
	{ .key = "every_patch",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, trigger.every_patch),
	    .def = "false" },
	{ .key = "coalesce",
	    .type = F_ENUM,
	    .off = offsetof(struct job_config, trigger.coalesce),
	    .def = "cancel",
	    .enums = coalesce_enum },
	NUM("baseline_max_age", F_DURATION, struct job_config,
	    trigger.baseline_max_age_s, "7d", 0, 366 * 86400),
};
static const struct schema trigger_schema = { 0, trigger_fields,
	NFIELDS(trigger_fields), NULL };

static const struct field kernel_fields[] = {
	{ .key = "config",
	    .type = F_STR,
	    .off = offsetof(struct job_config, kernel.config),
	    .def = "defconfig",
	    .vk = V_REF },
	LIST("fragment", struct job_config, kernel.fragment, F_UNIQUE,
	    V_KCONFIG),
	{ .key = "compiler",
	    .type = F_STR,
	    .off = offsetof(struct job_config, kernel.compiler),
	    .def = "gcc",
	    .vk = V_NAME },
	NUM("build_timeout", F_DURATION, struct job_config,
	    kernel.build_timeout_s, "2h", 60, 86400),
	NUM("boot_timeout", F_DURATION, struct job_config,
	    kernel.boot_timeout_s, "10m", 10, 86400),
};
static const struct schema kernel_schema = { 0, kernel_fields,
	NFIELDS(kernel_fields), NULL };

static const struct field bisect_fields[] = {
	{ .key = "auto",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, bisect.automatic),
	    .def = "true" },
	{ .key = "full_dag",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, bisect.full_dag),
	    .def = "false" },
	NUM("max_steps", F_INT, struct job_config, bisect.max_steps, "16", 1,
	    64),
	NUM("max_inconclusive", F_INT, struct job_config,
	    bisect.max_inconclusive, "2", 0, 64),
	NUM("host_timeout", F_DURATION, struct job_config,
	    bisect.host_timeout_s, "1h", 10, 7 * 86400),
};
static const struct schema bisect_schema = { 0, bisect_fields,
	NFIELDS(bisect_fields), NULL };

const struct enumv cfg_i_thp_enum[] = {
	{ "keep", CFG_THP_KEEP },
	{ "always", CFG_THP_ALWAYS },
	{ "madvise", CFG_THP_MADVISE },
	{ "never", CFG_THP_NEVER },
	{ NULL, 0 },
};

const struct enumv cfg_i_defrag_enum[] = {
	{ "keep", CFG_THP_KEEP },
	{ "always", CFG_THP_ALWAYS },
	{ "defer", CFG_THP_DEFER },
	{ "defer+madvise", CFG_THP_DEFER_MADVISE },
	{ "madvise", CFG_THP_MADVISE },
	{ "never", CFG_THP_NEVER },
	{ NULL, 0 },
};

/* Job host: benchmark hygiene of one job (runners/host.h). */
static const struct field jobhost_fields[] = {
	STR("cpus", struct job_config, host.cpus, 0, V_CPUS),
	STR("server_cpus", struct job_config, host.server_cpus, 0, V_CPUS),
	{ .key = "thp",
	    .type = F_ENUM,
	    .off = offsetof(struct job_config, host.thp),
	    .def = "keep",
	    .enums = cfg_i_thp_enum },
	{ .key = "drop_caches",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, host.drop_caches),
	    .def = "false" },
	NUM("warmup", F_INT, struct job_config, host.warmup, "0", 0, 100),
	NUM("pause", F_DURATION, struct job_config, host.pause_s, "0s", 0,
	    3600),
};
static const struct schema jobhost_schema = { 0, jobhost_fields,
	NFIELDS(jobhost_fields), NULL };

static void
h_name(struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	static const struct field f = { .key = "name",
		.type = F_STR,
		.off = offsetof(struct job_config, name),
		.vk = V_NAME };
	struct job_config *job = base;
	size_t i;

	if (n == NULL)
		return;
	cfg_i_load_field(c, n, &f, base, path);
	if (job->name == NULL)
		return;
	for (i = 0; i < c->nothers; i++)
		if (c->others[i]->name != NULL &&
		    strcmp(c->others[i]->name, job->name) == 0) {
			cfg_i_nerr(c, n, path,
			    "job '%s' is already defined in %s", job->name,
			    c->others[i]->file);
			return;
		}
}

static const struct field job_fields[] = {
	{ .key = "name", .type = F_CUSTOM, .flags = F_REQ, .fn = h_name },
	{ .key = "parser",
	    .type = F_ENUM,
	    .flags = F_REQ,
	    .off = offsetof(struct job_config, parser),
	    .enums = parser_enum },
	/* Before the commands: their placeholders name the axes. */
	{ .key = "matrix", .type = F_CUSTOM, .fn = h_matrix },
	{ .key = "exclude", .type = F_CUSTOM, .fn = h_exclude },
	LIST("command", struct job_config, command, F_REQ | F_NONEMPTY, V_ARGV),
	LIST("server_command", struct job_config, server_command, 0, V_ARGV),
	LIST("build", struct job_config, build, 0, V_ARGV),
	{ .key = "trigger", .type = F_SECTION, .sub = &trigger_schema },
	LIST("hosts", struct job_config, hosts, F_UNIQUE, V_LABEL),
	{ .key = "baseline", .type = F_CUSTOM, .fn = h_baseline },
	{ .key = "kernel", .type = F_SECTION, .sub = &kernel_schema },
	{ .key = "bisect", .type = F_SECTION, .sub = &bisect_schema },
	NUM("runs", F_INT, struct job_config, runs, "5", 1, 100),
	NUM("max_runs", F_INT, struct job_config, max_runs, "24", 1, 1000),
	NUM("rounds", F_INT, struct job_config, rounds, "0", 0, 100),
	{ .key = "profile",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, profile),
	    .def = "false" },
	NUM("profile_runs", F_INT, struct job_config, profile_runs, "0", 0,
	    1000),
	{ .key = "profile_min_effect",
	    .type = F_PERCENT,
	    .off = offsetof(struct job_config, profile_min_effect_pct),
	    .def = "10%",
	    .min = 0,
	    .max = 100 },
	{ .key = "counters",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, counters),
	    .def = "false" },
	{ .key = "counters_ops", .type = F_CUSTOM, .fn = h_counters_ops },
	{ .key = "adjust_other_work",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, adjust_other_work),
	    .def = "true" },
	{ .key = "metrics", .type = F_CUSTOM, .fn = h_metrics },
	NUM("timeout", F_DURATION, struct job_config, timeout_s, "10m", 1,
	    86400),
	NUM("memory_max", F_SIZE, struct job_config, memory_max, NULL,
	    (int64_t)1 << 20, (int64_t)1 << 50),
	NUM("memory_high", F_SIZE, struct job_config, memory_high, NULL,
	    (int64_t)1 << 20, (int64_t)1 << 50),
	{ .key = "host", .type = F_SECTION, .sub = &jobhost_schema },
};
const struct schema cfg_i_job_schema = { sizeof(struct job_config), job_fields,
	NFIELDS(job_fields), NULL };

static int
has_nested_cgroup(const struct job_config *job)
{
	size_t i, j;

	for (i = 0; i < job->naxes; i++)
		if (strcmp(job->axes[i].name, "cgroup") == 0)
			for (j = 0; j < job->axes[i].values.n; j++)
				if (job->axes[i].values.v[j][0] == '/')
					return 1;
	return 0;
}

/* 1 when runner r may run job (its hosts labels, or any without). */
static int
runner_fits(const struct cfg_runner_ref *r, const struct job_config *job)
{
	size_t i, k;

	if (job->hosts.n == 0)
		return 1;
	for (i = 0; i < job->hosts.n; i++) {
		if (strcmp(job->hosts.v[i], r->name) == 0)
			return 1;
		for (k = 0; k < r->labels.n; k++)
			if (strcmp(job->hosts.v[i], r->labels.v[k]) == 0)
				return 1;
	}
	return 0;
}

/*
 * A job that builds a kernel, whose runners (those the daemon config
 * says how they boot) all have boot: none, could never be measured: the
 * runners refuse it at claim time.  Say so now.
 */
static void
check_kernel_hosts(
    struct ctx *c, const struct job_config *job, const struct cfg_node *n)
{
	char names[512] = "";
	size_t i, fit = 0, none = 0, len = 0;

	for (i = 0; i < c->daemon->nrunners; i++) {
		const struct cfg_runner_ref *r = &c->daemon->runners[i];

		if (!runner_fits(r, job))
			continue;
		fit++;
		if (!r->boot_set || r->boot != CFG_BOOT_NONE)
			continue;
		none++;
		len += (size_t)snprintf(names + len,
		    len < sizeof(names) ? sizeof(names) - len : 0, "%s%s",
		    none > 1 ? ", " : "", r->name);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	if (fit > 0 && none == fit)
		cfg_i_nerr(c, n, "kernel",
		    "the job builds a kernel, but every runner it can run on "
		    "has boot: none (%s) and would refuse it",
		    names);
}

void
cfg_i_check_job(
    struct ctx *c, struct job_config *job, const struct cfg_node *root)
{
	const struct cfg_node *n,
	    *mx = cfg_i_lookup(c, root, "memory_max", NULL),
	    *mh = cfg_i_lookup(c, root, "memory_high", NULL);

	if ((n = cfg_i_lookup(c, root, "kernel", NULL)) != NULL) {
		job->kernel.build = 1;
		if (job->build.n > 0)
			cfg_i_nerr(c, n, "kernel",
			    "a job builds either a kernel (kernel:) or its "
			    "tree (build:), not both");
	}
	if (job->kernel.build && c->daemon != NULL &&
	    (n = cfg_i_lookup(c, root, "kernel", NULL)) != NULL)
		check_kernel_hosts(c, job, n);
	if (job->rounds > job->runs &&
	    (n = cfg_i_lookup(c, root, "rounds", NULL)))
		cfg_i_nerr(c, n, "rounds", "%lld is more than runs (%lld)",
		    (long long)job->rounds, (long long)job->runs);
	/*
	 * Unset (or 0): one run a side a round, so base and candidate take
	 * turns run by run; a kernel job, whose round costs a boot, two
	 * rounds a side (docs/KERNEL.md).
	 */
	if (job->rounds == 0)
		job->rounds =
		    job->kernel.build ? (job->runs < 2 ? 1 : 2) : job->runs;
	if (job->runs > job->max_runs) {
		if ((n = cfg_i_lookup(c, root, "runs", NULL)) != NULL)
			cfg_i_nerr(c, n, "runs",
			    "%lld is more than max_runs (%lld)",
			    (long long)job->runs, (long long)job->max_runs);
		else if ((n = cfg_i_lookup(c, root, "max_runs", NULL)) != NULL)
			cfg_i_nerr(c, n, "max_runs",
			    "%lld is less than runs (%lld by default)",
			    (long long)job->max_runs, (long long)job->runs);
	}
	if (!job->profile &&
	    (n = cfg_i_lookup(c, root, "profile_runs", NULL)) != NULL &&
	    job->profile_runs > 0)
		cfg_i_nerr(c, n, "profile_runs", "needs profile: true");
	if (!job->counters && job->counters_ops != NULL &&
	    (n = cfg_i_lookup(c, root, "counters_ops", NULL)) != NULL)
		cfg_i_nerr(c, n, "counters_ops", "needs counters: true");
	if (job->memory_max > 0 && job->memory_high > job->memory_max && mh &&
	    mx)
		cfg_i_nerr(c, mh, "memory_high",
		    "%s is more than memory_max (%s)", cfg_i_scalar(mh),
		    cfg_i_scalar(mx));
	if ((job->memory_max > 0 || job->memory_high > 0) &&
	    !has_nested_cgroup(job))
		cfg_i_nerr(c, mx ? mx : mh, mx ? "memory_max" : "memory_high",
		    "applies to a nested cgroup, but matrix.cgroup has none "
		    "(e.g. cgroup: [root, /bench])");
	if (job->naxes > 0 && job->nexclude > 0 &&
	    (n = cfg_i_lookup(c, root, "exclude", NULL)) != NULL) {
		struct cfg_point *pts;
		size_t npts;

		config_expand(&pts, &npts, job);
		if (npts == 0)
			cfg_i_nerr(c, n, "exclude",
			    "excludes every point of the matrix");
		config_points_free(pts, npts);
	}
}
