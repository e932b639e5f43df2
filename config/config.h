#ifndef CONFIG_CONFIG_H
#define CONFIG_CONFIG_H

/*
 * Configuration: the three YAML file kinds of DESIGN.md ("Configuration
 * (the contract)") loaded into plain structs.  Only config/ includes
 * libyaml.  Every error is "file:line:column: message" naming the key; a
 * load reports all errors in a file, not only the first.
 *
 * Ownership: config_load_*() return a struct the caller frees with the
 * matching *_free() (NULL ok).  Strings inside belong to the struct.
 */
#include <stddef.h>
#include <stdint.h>

struct strlist {
	char **v;
	size_t n;
};

/* A 1-based position in a file. */
struct cfg_mark {
	unsigned line, col;
};

/* Limits every loader enforces (see docs/CONFIG.md). */
#define CFG_NAME_MAX 64   /* job, tree, inbox, runner, label, axis names */
#define CFG_STR_MAX 4096  /* any other string */
#define CFG_LIST_MAX 1024 /* entries in one list or mapping */
#define CFG_AXES_MAX 16   /* matrix axes */
#define CFG_AXIS_VALUES_MAX 256
#define CFG_VALUE_MAX 256   /* one axis value */
#define CFG_POINTS_MAX 4096 /* matrix points (product of the axes) */
#define CFG_ERRORS_MAX 100  /* errors kept per file */

/* Collected error lines, each "file:line:col: message". */
struct cfg_errors {
	char **msg;
	size_t n;
};
void cfg_errors_free(struct cfg_errors *); /* releases contents */
/* Appends one preformatted line (e.g. the daemon's own "file: ..."). */
void cfg_errors_add(struct cfg_errors *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

enum cfg_kind {
	CFG_KIND_UNKNOWN,
	CFG_KIND_DAEMON,
	CFG_KIND_JOB,
	CFG_KIND_RUNNER
};
enum cfg_boot { CFG_BOOT_NONE, CFG_BOOT_KEXEC, CFG_BOOT_REBOOT, CFG_BOOT_QEMU };
enum cfg_better { CFG_BETTER_HIGHER, CFG_BETTER_LOWER };
enum cfg_parser {
	CFG_PARSER_NEPER,
	CFG_PARSER_FIO,
	CFG_PARSER_WIS,
	CFG_PARSER_NETPERF,
	CFG_PARSER_KEYVALUE,
	CFG_PARSER_JSON
};
enum cfg_coalesce {
	CFG_COALESCE_CANCEL,
	CFG_COALESCE_KEEP,
	CFG_COALESCE_DEPRIORITISE
};
enum cfg_thp {
	CFG_THP_KEEP,
	CFG_THP_ALWAYS,
	CFG_THP_MADVISE,
	CFG_THP_NEVER,
	CFG_THP_DEFER,        /* defrag only */
	CFG_THP_DEFER_MADVISE /* defrag only: "defer+madvise" */
};
enum cfg_turbo { CFG_TURBO_OFF, CFG_TURBO_ON, CFG_TURBO_KEEP };
enum cfg_baseline {
	CFG_BASELINE_PARENT,
	CFG_BASELINE_BRANCH_BASE,
	CFG_BASELINE_REF,
	/* The tip this job last measured on the host, else the tip before
	 * the push (a tip-only trigger whose regressions get bisected). */
	CFG_BASELINE_PREVIOUS_TIP
};

/* ---- daemon.yaml ---- */

struct cfg_tree {
	char *name, *url;
	struct strlist branches, paths;
	int64_t poll_s; /* default 300, 1s..1d */
};

/* inboxes[].tags: a subject's branch tag and where its series go. */
struct cfg_inbox_tag {
	char *tag;    /* as in the subject, "cgroup/for-7.0-fixes" */
	char *tree;   /* a tree of trees (default: the inbox's) */
	char *branch; /* one of that tree's branches */
};

struct cfg_inbox {
	char *name, *url, *tree, *branch;
	struct strlist subjects;
	int64_t poll_s; /* default 600 */
	struct cfg_inbox_tag *tags;
	size_t ntags;
	/* commands_from_anyone: "#perfwatch" commands in replies to a
	 * report are taken from any sender, not only the series' author
	 * and the maintainers; default false. */
	int commands_from_anyone;
	/* archive: the list's public archive ("https://lore.kernel.org/
	 * linux-mm"), where a report mailed to the list can be read as
	 * ARCHIVE/<Message-ID>/; a report's Closes: tag points there.
	 * NULL: none. */
	char *archive;
	/* Work a sender can cause: series per sender (From: address) per
	 * day, and jobs of this inbox's series waiting in the queue; a
	 * series past either is recorded 'refused', not applied. */
	int64_t series_per_sender_day; /* default 20 */
	int64_t max_queued_jobs;       /* default 200 */
};

struct cfg_runner_ref {
	char *name, *token_file;
	struct cfg_mark token_at; /* where token_file is (messages) */
	struct strlist labels;
	/* runners[].boot (optional): how that runner boots; with boot_set,
	 * a kernel job only such runners could run is a config error. */
	enum cfg_boot boot;
	int boot_set;
	/* runners[].canary (docs/HOST.md): a reference job the daemon has
	 * this runner's host run every canary_every_s on its own kernel, as
	 * an A/A pair; NULL: none.  canary_line/col: where job is, for the
	 * "no job named" error found once the job files are loaded. */
	char *canary_job;
	int64_t canary_every_s;
	int canary_line, canary_col;
};

struct cfg_webhook {
	char *url, *secret_file;
	int slack;         /* add a Slack-compatible "text" field; default 0 */
	int64_t timeout_s; /* one attempt, default 10 */
};

/* alerts.email.lists[]: Cc lists and the quiet switch of a tree or inbox. */
struct cfg_alert_list {
	char *tree, *inbox; /* exactly one is set */
	struct strlist cc;
	int quiet; /* no e-mail for reports of this tree or inbox */
};

struct daemon_config {
	char *file;   /* path it was loaded from */
	char *listen; /* "host:port" */
	char *database, *mirrors, *public_url, *admin_token_file;
	/* maintainers: addresses whose "#perfwatch" replies to any report
	 * are taken (docs/CONFIG.md). */
	struct strlist maintainers;
	struct strlist jobs; /* globs of job files */
	struct cfg_tree *trees;
	size_t ntrees;
	struct cfg_inbox *inboxes;
	size_t ninboxes;
	struct cfg_runner_ref *runners;
	size_t nrunners;
	struct {
		char *smtp, *from;
		struct strlist to;
		int reply_to_series; /* default 1 */
		/* Added (docs/ALERTS.md): */
		int starttls;       /* require STARTTLS on smtp:// */
		char *auth_file;    /* "user:password" first line */
		int insecure_auth;  /* AUTH over smtp:// without STARTTLS */
		char *ca_file;      /* CA bundle for TLS */
		int mail_author;    /* To: the author; default 1 */
		char *test_to;      /* test mode: only this address */
		int64_t rate_limit; /* mails per recipient per hour */
		struct cfg_alert_list *lists;
		size_t nlists;
		struct cfg_webhook *webhooks;
		size_t nwebhooks;
		int64_t max_attempts; /* per delivery, default 8 */
		int64_t backoff_s;    /* first retry delay, default 30 */
		int64_t backoff_max_s;
		int64_t poll_s; /* delivery worker wake-up, default 5 */
	} alerts;
	/* http: (all optional) */
	int64_t http_threads;         /* default 4 */
	int64_t http_max_connections; /* default 256 */
	int64_t http_per_ip;          /* default 64 */
	int64_t http_per_ip_rate;     /* requests a second; 0: none */
	int64_t http_per_ip_burst;    /* 0: the rate */
	int64_t http_timeout_s;       /* default 30 */
	int64_t http_max_body;        /* default 8M */
	int64_t http_max_pack;        /* GET /api/v1/packs reply; 64M */
	/* tls: HTTPS with this PEM certificate (chain) and key; NULL: HTTP */
	char *tls_cert_file, *tls_key_file;
	struct cfg_mark admin_token_at; /* where admin_token_file is */
	/* Plain HTTP on a listen address other than loopback. */
	int insecure_http;
	/* scheduler: (all optional) */
	int64_t claim_wait_s; /* long-poll, default 30 */
	int64_t lease_s;      /* default 60 */
	/* Several daemons on one database: a worker's lease, default 10 */
	int64_t worker_lease_s;
	int64_t max_attempts; /* default 3 */
	/* builds: kernel images built once and shared by the bench hosts
	 * (docs/KERNEL.md, "Shared builds"). */
	struct {
		int shared; /* default 0: each runner builds its kernels */
		char *dir;  /* the artifact store; default "artifacts" beside
		               the SQLite database */
		int64_t max_size; /* the store's cap, default 10G */
		int64_t max_file; /* one artifact's cap, default 512M */
	} builds;
	/* Added: where each jobs: entry is in the file (messages). */
	struct cfg_mark *jobs_at;
};

/* ---- job.yaml ---- */

struct cfg_metric {
	char *name;
	enum cfg_better better;
	double min_effect_pct; /* default 1.0 */
};

/* One axis of the matrix: name and its values (scalars as strings). */
struct cfg_axis {
	char *name;
	struct strlist values;
};

/* One point of the expanded matrix: values[i] belongs to axes[i]. */
struct cfg_point {
	size_t n;
	char **keys;   /* borrowed from the job's axes */
	char **values; /* borrowed */
	char *label;   /* "flows=10000,threads=128" (owned) */
};

struct job_config {
	char *file, *name;
	enum cfg_parser parser;
	struct strlist command;        /* argv template with {param}s */
	struct strlist server_command; /* may be empty */
	struct strlist build;          /* may be empty */
	struct {
		struct strlist trees, branches, paths, inboxes;
		int every_commit; /* trigger.every_commit, default 1 */
		/* trigger.every_patch (default 0): each patch of a series
		 * against its parent too, not only the tip against the
		 * base. */
		int every_patch;
		/* A branch moved again before the jobs of its superseded
		 * tip started: cancel them (default) or keep them. */
		enum cfg_coalesce coalesce;
		int64_t baseline_max_age_s; /* default 7d; 0: no reuse */
	} trigger;
	struct strlist hosts; /* labels */
	enum cfg_baseline baseline;
	char *baseline_ref; /* for branch-base:/ref: */
	struct {
		char *config;
		struct strlist fragment;
		/* The C compiler the kernel is built with, make's CC
		 * ("gcc", "gcc-12", "clang-17"): part of the build key. */
		char *compiler;
		/* A kernel: section is present: the job measures a kernel
		 * built from its commit (docs/KERNEL.md), never the running
		 * one. */
		int build;
		int64_t build_timeout_s; /* default 2h */
		int64_t boot_timeout_s;  /* default 10m */
	} kernel;
	int64_t rounds; /* default: runs, 2 for a kernel job (docs/CONFIG.md) */
	struct {
		/* bisect.auto (default 1): a confirmed regression over more
		 * than one commit is bisected without being asked. */
		int automatic;
		int full_dag;             /* default 0: first parents */
		int64_t max_steps;        /* default 16 */
		int64_t max_inconclusive; /* default 2 */
		int64_t host_timeout_s;   /* default 1h */
	} bisect;
	struct cfg_axis *axes;
	size_t naxes;
	/* exclude: each entry is a partial point (keys/values). */
	struct cfg_point *exclude;
	size_t nexclude;
	int64_t runs, max_runs; /* defaults 5, 12 */
	int profile;
	/* profile: true: runs profiled per side (0, the default: all), and
	 * the min_effect of memcg.charge_path_share_pct unless metrics:
	 * names it (default 10%). */
	int64_t profile_runs;
	double profile_min_effect_pct;
	/* counters: true: perf stat instructions and cycles of each
	 * measured run (docs/MEMCG.md); counters_ops names the run's metric
	 * that counts its operations (a rate is multiplied by the run's
	 * duration), NULL: per-operation values unknown. */
	int counters;
	char *counters_ops;
	/* adjust_other_work: false: judge without the host's other work as
	 * a covariate (docs/ANALYSIS.md, "Other work on the host"). */
	int adjust_other_work;
	struct cfg_metric *metrics;
	size_t nmetrics;
	int64_t timeout_s;               /* default 600 */
	int64_t memory_max, memory_high; /* bytes, 0 = unset */
	/* host: benchmark hygiene per job (docs/CONFIG.md, runners/host.h) */
	struct {
		char *cpus;        /* "0-3,8" or "node:N"; NULL: no pinning */
		char *server_cpus; /* same, for server_command */
		enum cfg_thp thp;  /* THP mode during the job; default keep */
		int drop_caches;   /* before each run; default false */
		int64_t warmup;    /* runs executed, not reported; default 0 */
		int64_t pause_s;   /* between runs; default 0 */
	} host;
};

/* ---- runner.yaml ---- */

struct runner_config {
	char *file;
	char *server, *name, *token_file, *workdir, *kernel_tree;
	/* Every server the runner may talk to, in the order it fails over
	 * between them: `server` first, then `servers`; server is the
	 * first of them. */
	struct strlist servers;
	struct cfg_mark token_at; /* where token_file is (messages) */
	char *guest_dir; /* boot qemu: static guest binaries (docs/KERNEL.md) */
	char *user; /* who runs builds and benchmarks; NULL: nobody as root */
	char *ca_file; /* CA certificates of an https server; NULL: system */
	/* boot: reboot: the GRUB entry grub-reboot is given, "{release}"
	 * replaced by the kernel's release. */
	char *reboot_entry;
	enum cfg_boot boot;
	struct strlist labels;
	int64_t heartbeat_s; /* default 10 */
	int64_t max_output;  /* default 1M */
	int64_t keep_builds; /* job directories kept for a next round (4) */
	/* Claim both jobs of a pair in rounds and measure them in turns
	 * (true), else one job a claim, a round at a time. */
	int pair_claims;
	/* Shared kernel builds (docs/KERNEL.md): this runner may claim
	 * build jobs and compile kernels (true), else it only boots images
	 * built elsewhere; and the bytes of downloaded images kept in
	 * kernel_tree/shared/ (least recently used removed beyond it). */
	int build;
	int64_t image_cache_max;
	/* host: the tuning profile of `perfwatch-runner host tune` and what
	 * `host check` calls benchmark-ready (runners/host.h). */
	struct {
		char *governor;          /* default "performance"; "keep" */
		enum cfg_turbo turbo;    /* default off */
		enum cfg_thp thp;        /* default keep */
		enum cfg_thp thp_defrag; /* default keep */
		int smt_off;             /* smt: off (default) or any */
		int stop_irqbalance;     /* default true */
		char *irq_cpus;          /* IRQ affinity; NULL: leave IRQs */
	} host;
	/* limits: of the commands run as `user` (0: not set). */
	struct {
		int64_t nproc;  /* RLIMIT_NPROC, default 4096 */
		int64_t nofile; /* RLIMIT_NOFILE, default 65536 */
		int64_t pids;   /* pids.max of a job's cgroup, default 8192 */
	} limits;
};

/*
 * Loaders: 0 and *out, or -1 with every problem appended to errs.
 * path is used in messages as given.
 */
int config_load_daemon(
    struct daemon_config **out, const char *path, struct cfg_errors *errs);
int config_load_job(
    struct job_config **out, const char *path, struct cfg_errors *errs);
int config_load_runner(
    struct runner_config **out, const char *path, struct cfg_errors *errs);
/* Same from a memory buffer (API uploads, tests); name is used in messages. */
int config_parse_job(struct job_config **out, const char *name,
    const char *text, size_t len, struct cfg_errors *errs);
void daemon_config_free(struct daemon_config *);
void job_config_free(struct job_config *);
void runner_config_free(struct runner_config *);

/* Tells a file's kind by its keys (job: command, daemon: listen, runner:
 * server); CFG_KIND_UNKNOWN with errs filled when it cannot. */
enum cfg_kind config_sniff_kind(const char *path, struct cfg_errors *errs);

/*
 * Expands the matrix: the Cartesian product of the axes in file order
 * (last axis fastest), minus excluded points.  *out is an array of
 * *n points; free with config_points_free().
 */
void config_expand(
    struct cfg_point **out, size_t *n, const struct job_config *);
void config_points_free(struct cfg_point *, size_t);
/* Value of key in a point, or NULL. */
const char *config_point_get(const struct cfg_point *, const char *key);

/*
 * Renders an argv template against a point plus extra params (extra is a
 * NULL-terminated list of "key", "value" pairs, e.g. "server", "127.0.0.1").
 * A placeholder with no value is an error (-1, message in errbuf).
 * *out is a NULL-terminated malloc'd vector; free with config_argv_free().
 */
int config_render_argv(char ***out, const struct strlist *tmpl,
    const struct cfg_point *, const char *const *extra, char *errbuf,
    size_t errlen);
void config_argv_free(char **);

/* Parsers for the scalar types, shared with the API and the CLI.
 * 0 or -1. */
int config_parse_duration(int64_t *out_s, const char *); /* 90s 5m 1h */
int config_parse_size(int64_t *out, const char *);       /* 64M */
int config_parse_percent(double *out, const char *);     /* 2% */

const char *config_parser_name(enum cfg_parser);
int config_parser_from_name(enum cfg_parser *out, const char *);

/* ---- additions ---- */

/* Names of the other enums ("kexec", "higher", "branch-base", "job"). */
const char *config_boot_name(enum cfg_boot);
const char *config_better_name(enum cfg_better);
const char *config_baseline_name(enum cfg_baseline);
const char *config_kind_name(enum cfg_kind);
int config_parse_bool(int *out, const char *); /* true/false/yes/no/on/off */

/*
 * Built-in placeholders the runner supplies in render_argv's extra list,
 * besides the matrix axes (NULL-terminated): {server} address of the
 * server side (127.0.0.1 when server_command runs on the runner itself),
 * {workdir} the job's scratch directory, {run} the 1-based run index,
 * {host} the runner's name, {cpus} online CPUs on the runner.  An axis may
 * not use one of these names.
 */
extern const char *const config_builtin_params[];

/*
 * Placeholder scanner: a placeholder is '{', a name ([A-Za-z_][A-Za-z0-9_]*)
 * and '}'; any other brace is literal text.  Finds the next one at or after
 * *pos: 0 with the name at s[*name_off], *name_len long and *pos moved past
 * the '}', or -1 when there is none.
 */
int config_next_placeholder(
    const char *s, size_t *pos, size_t *name_off, size_t *name_len);

/*
 * A CPU list as the kernel writes them ("0-3,8,10-11"): sets bit i of
 * mask (nbits bits, zeroed first) for every CPU listed.  0, or -1 when
 * the text is not a list, a range is reversed or a CPU is >= nbits.
 */
int config_parse_cpulist(unsigned char *mask, size_t nbits, const char *);
#define CFG_CPUS_MAX 4096 /* CPUs a cpulist may name */
/* Names of the THP and turbo enums ("defer+madvise", "keep"). */
const char *config_thp_name(enum cfg_thp);
const char *config_turbo_name(enum cfg_turbo);

/* "k=v,k=v" for the point's pairs (malloc'd; "" for an empty point). */
char *config_point_label(const struct cfg_point *);

/*
 * Loads every job file matched by d->jobs (globs already resolved against
 * the daemon file's directory; each glob's matches in sorted order, a file
 * matched twice is loaded once), checking what a job names against d:
 * trigger.trees and trigger.inboxes must exist in d, hosts labels must be
 * carried by some runner of d (a runner's name counts as a label) when d
 * lists runners, and job names must be unique across the files.  A glob
 * without wildcards that matches nothing is an error; one with wildcards
 * may match nothing.  0 and *out (array of *n), or -1 with errors added
 * (*out then holds the jobs that did load; free with config_jobs_free()).
 */
int config_load_jobs(struct job_config ***out, size_t *n,
    const struct daemon_config *d, struct cfg_errors *errs);
void config_jobs_free(struct job_config **, size_t);

/* Same as config_load_job, checking cross-references against d (may be
 * NULL) as config_load_jobs does, except name uniqueness. */
int config_load_job_for(struct job_config **out, const char *path,
    const struct daemon_config *d, struct cfg_errors *errs);
/* Same from memory (API uploads); relative paths stay as written. */
int config_parse_job_for(struct job_config **out, const char *name,
    const char *text, size_t len, const struct daemon_config *d,
    struct cfg_errors *errs);

#endif
