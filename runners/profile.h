#ifndef RUNNERS_PROFILE_H
#define RUNNERS_PROFILE_H

/*
 * Charge-path share from a perf profile (job `profile: true`).
 *
 * During one extra run the runner starts
 *	perf record -e EVENT -F 999 -a [-G CGROUP] -o DIR/perf.data
 * (fork + exec of an argv, no shell), stops it with SIGINT after the
 * benchmark, and reads
 *	perf report -i DIR/perf.data --stdio --no-children --sort symbol
 * The metric `memcg.charge_path_share_pct` (unit %, better lower) is the
 * sum of the report's percentages of the kernel ([k]) symbols matching a
 * glob list (default profile_default_symbols()); with the top 30 symbols
 * it goes into a JSON blob stored with the run.
 *
 * EVENT is `cycles` when `perf stat -e cycles true` counts it, else
 * `cpu-clock` (a timer: virtual machines such as this development machine
 * have no hardware counters).  The scope is the benchmark's cgroup
 * (-G, its cgroup2 directory: perf finds the cgroup2 mount when there is
 * no perf_event v1 hierarchy) when the placement has one, else the whole
 * system, and the blob says which and why.  System-wide percentages
 * include idle time and every other process.
 *
 * The share is "unknown" with a reason (never 0) when perf is missing,
 * perf cannot record (perf_event_paranoid for a non-root runner), kernel
 * symbols are hidden (kptr_restrict, zero addresses in /proc/kallsyms),
 * the kernel has none of the symbols, or the report holds no kernel
 * sample.  The runner changes no sysctl: it reports which one is in the
 * way.  A 0 is reported only when the kernel has the symbols, kernel
 * samples were resolved, and none fell in the charge path.
 */
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

#define PROFILE_TOP 30
#define PROFILE_REASON_MAX 512

struct profile_sym {
	char name[256];
	char space; /* 'k' kernel, '.' user, 'g' guest, ... as perf prints */
	double pct;
};

/* A parsed `perf report --stdio` (embedded: _init / _release). */
struct profile_report {
	struct profile_sym *syms; /* sorted by pct, descending */
	size_t n;
	char event[64];   /* "cpu-clock", from "of event '...'" */
	char samples[32]; /* "11K", as perf prints it */
	struct err err;
};

void profile_report_init(struct profile_report *);
void profile_report_release(struct profile_report *); /* NULL ok */
/*
 * Parses the text of `perf report --stdio --no-children --sort symbol`
 * (with or without -F overhead,sym and trailing IPC columns).  0, or -1
 * with out->err naming the line ("perf report: line 12: ...").
 */
int profile_parse_report(
    struct profile_report *out, const char *text, size_t len);

/* The default charge-path globs, NULL-terminated. */
const char *const *profile_default_symbols(void);
/* fnmatch(3) of name against each glob; 1 on a match. */
int profile_symbol_matches(const char *name, const char *const *globs);

/*
 * Sum of the percentages of kernel symbols matching globs.  Returns the
 * number of matching symbols (0 is a real 0%), or ERR_NOTFOUND when the
 * report has no kernel sample at all (symbols unresolved: unknown).
 */
int profile_charge_share(
    double *out, const struct profile_report *, const char *const *globs);

/*
 * Does a kallsyms file name any symbol matching globs, with real
 * addresses?  1 yes, 0 none (reason set), -1 unreadable or addresses
 * hidden (reason set).
 */
int profile_kallsyms_check(
    const char *path, const char *const *globs, char *reason, size_t len);

/* Appends the blob: {"event","samples","scope","share_pct"|null,
 * "reason","matched":[{symbol,pct}],"top":[{symbol,space,pct}]}. */
int profile_blob(struct buf *, const struct profile_report *, const char *scope,
    const double *share, const char *reason, const char *const *globs);

struct profile_opts {
	const char *perf;   /* NULL: "perf" from PATH */
	const char *dir;    /* where perf.data and the report go */
	const char *cgroup; /* perf -G name (cgroup_perf_name()), NULL */
	const char *const *symbols; /* NULL: the defaults */
	const char *kallsyms;       /* NULL: /proc/kallsyms */
};

struct profile_result {
	int known; /* 1: share_pct is a measurement */
	double share_pct;
	char reason[PROFILE_REASON_MAX]; /* when !known, or notes */
	char event[32];
	char scope[256];
	char *blob; /* JSON (malloc'd) or NULL; profile_result_release() */
	/* perf record's own CPU time (user + system, from wait4) and how
	 * long it ran: the profiler's overhead on the run. */
	int perf_cpu_known;
	double perf_cpu_s, perf_wall_s;
};

void profile_result_release(struct profile_result *);

struct profile;

/*
 * Checks perf, the event and the kernel symbols, and starts perf record.
 * Always returns a handle (profile_free()); when profiling is impossible
 * the handle is inert and profile_stop() yields the reason as unknown.
 */
struct profile *profile_start(const struct profile_opts *);
/* Stops perf record, reports and fills out.  Never fails: an error is
 * an unknown share with its reason. */
void profile_stop(struct profile *, struct profile_result *out);
void profile_free(struct profile *); /* kills a running perf; NULL ok */

#endif
