#ifndef RUNNERS_PERFSTAT_H
#define RUNNERS_PERFSTAT_H

/*
 * Hardware counters of a run (job `counters: true`, docs/MEMCG.md,
 * "Hardware counters"): instructions and cycles of the benchmark's
 * cgroup, and from them IPC and, with the benchmark's own operation
 * count, instructions and cycles per operation (LKP's path-length).
 *
 * Around each measured run the runner starts (fork + exec of an argv, no
 * shell)
 *	perf stat -x, -o DIR/perf-stat.csv -a -D -1 --control fd:3,4
 *	    -e instructions,cycles -G CGROUP
 * which opens the counters disabled; "enable" on fd 3 (acknowledged on
 * fd 4) just before the benchmark starts and "disable" just after it
 * ended make the counting window the run itself, and SIGINT makes perf
 * write the counts.  -a -G counts the tasks of that cgroup on every CPU
 * (the benchmark, its children and its server_command), in the kernel
 * too; perf 6.1 applies one -G to every event listed before it.
 *
 * The counters are "unknown" with a reason, never a number, when the
 * host has no PMU (/sys/bus/event_source/devices has no cpu, cpu_core,
 * cpu_atom or armv7_* / armv8_* entry: virtual machines without a
 * virtual PMU), when perf is missing, when a non-root runner meets
 * kernel.perf_event_paranoid > 0, when the benchmark has no cgroup perf
 * can name, when perf says <not supported> or <not counted>, or when a
 * counter ran only part of the time (multiplexed: perf's scaled estimate
 * is not a count and is not judged).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"

#define PERFSTAT_REASON_MAX 512
#define PERFSTAT_EVENTS "instructions,cycles"

/* ---- the `perf stat -x,` output ---- */

enum perfstat_state {
	PERFSTAT_COUNTED,
	PERFSTAT_NOT_COUNTED,  /* "<not counted>": never scheduled */
	PERFSTAT_NOT_SUPPORTED /* "<not supported>": no PMU counts it */
};

/* One counter line: value,unit,event[,cgroup],run time,pct[,metric...]. */
struct perfstat_line {
	char event[128];  /* as printed: "cycles", "cpu_core/cycles/" */
	char unit[32];    /* "msec", or "" */
	char cgroup[256]; /* the -G name, or "" */
	enum perfstat_state state;
	double value;   /* COUNTED only: as perf printed it (scaled) */
	double runtime; /* the counter's running time (ns), -1: not printed */
	double pct;     /* % of its enabled time it ran, -1: not printed */
	size_t lineno;
};

/* A parsed output (embedded: _init / _release). */
struct perfstat_report {
	struct perfstat_line *lines;
	size_t n;
	struct err err;
};

void perfstat_report_init(struct perfstat_report *);
void perfstat_report_release(struct perfstat_report *); /* NULL ok */
/*
 * Parses `perf stat -x,` text.  cgroup_column: the output has the -G
 * column after the event (perf prints one when -G is given).  Skipped:
 * blank lines, '#' lines (perf -o's "# started on" header) and lines
 * with an empty value, which carry only a derived metric ("insn per
 * cycle", a metric group).  0, or -1 with out->err naming the line and
 * column ("perf stat: line 3, column 1: ...").
 */
int perfstat_parse(struct perfstat_report *out, const char *text, size_t len,
    int cgroup_column);

/* The count of one event, summed over PMUs (hybrid: cpu_core, cpu_atom). */
struct perfstat_total {
	int known;    /* 1: value is a count */
	double value; /* the sum of the counted lines */
	double pct;   /* the lowest running % of a counted line */
	size_t counted, not_counted, not_supported;
	char reason[PERFSTAT_REASON_MAX]; /* when !known */
};

/*
 * The total of event ("instructions" also matches "cpu_core/
 * instructions/").  Known when at least one line counted and every
 * counted line ran 100 % of its enabled time; a hybrid PMU that never
 * ran the cgroup prints <not counted> and adds nothing.  Returns known.
 */
int perfstat_total(struct perfstat_total *out, const struct perfstat_report *,
    const char *event);

/* ---- operations of a run ---- */

struct perfstat_ops {
	int known;
	double ops;
	char how[256]; /* "num_transactions = 329605", or why unknown */
};

/*
 * The run's operation count from the benchmark's metric (job key
 * counters_ops): a count as it is, a rate (unit ending in "/s", or
 * "IOPS") times duration_s, the run's wall time, which is the counting
 * window.  unit NULL: the run has no such metric.
 */
void perfstat_ops_from(struct perfstat_ops *out, const char *metric,
    const char *unit, double value, double duration_s);
/*
 * The same from the run's raw output, parsed again with the job's parser
 * (the uploaded metrics leave out the parser's informational ones, such
 * as neper's num_transactions).  metric NULL: no counters_ops (unknown).
 */
void perfstat_ops_parse(struct perfstat_ops *out, const char *metric,
    const char *parser, const char *raw, size_t len, double duration_s);

/* ---- the metrics of a run ---- */

#define PERFSTAT_MAX_METRICS 5

struct perfstat_metric {
	const char *name, *unit, *better;
	double value;
};

/*
 * perf.instructions and perf.cycles (totals, better: info), perf.ipc
 * (insn/cycle, higher) and, when ops is known, perf.instructions_per_op
 * and perf.cycles_per_op (lower).  Only what is known: returns how many.
 */
size_t perfstat_derive(struct perfstat_metric out[PERFSTAT_MAX_METRICS],
    const struct perfstat_total *ins, const struct perfstat_total *cyc,
    const struct perfstat_ops *ops);

/* ---- the PMU and perf stat around a run ---- */

/*
 * Does the host have a core PMU?  devices: NULL for
 * /sys/bus/event_source/devices (tests pass a fake one).  1 with its
 * names in out ("cpu", "cpu_atom+cpu_core"), or 0 with the reason in out.
 */
int perfstat_pmu(char *out, size_t len, const char *devices);

struct perfstat_opts {
	const char *perf;    /* NULL: "perf" from PATH */
	const char *dir;     /* where perf-stat.csv and perf-stat.err go */
	const char *cgroup;  /* perf -G name (cgroup_perf_name()), NULL */
	const char *devices; /* NULL: /sys/bus/event_source/devices */
	/* NULL: PERFSTAT_EVENTS.  The tests count software events: this
	 * machine has no PMU, and the path is the same. */
	const char *events;
	int no_pmu_check; /* with software events */
};

struct perfstat_result {
	int counted;                      /* 1: perf counted; see ins and cyc */
	char reason[PERFSTAT_REASON_MAX]; /* when !counted */
	char pmu[64];                     /* "cpu", "" when none */
	struct perfstat_report report;    /* what perf printed */
	struct perfstat_total ins, cyc;
};

void perfstat_result_release(struct perfstat_result *); /* NULL ok */

struct perfstat;

/*
 * Checks the PMU, perf and the cgroup, starts perf stat and enables its
 * counters (waiting for perf's acknowledgement), so the caller starts the
 * benchmark right after.  Always returns a handle (perfstat_free());
 * when counting is impossible it is inert and perfstat_stop() yields the
 * reason as unknown.
 */
struct perfstat *perfstat_start(const struct perfstat_opts *);
/* Disables the counters, stops perf and reads its output into out.
 * Never fails: an error is an unknown result with its reason. */
void perfstat_stop(struct perfstat *, struct perfstat_result *out);
void perfstat_free(struct perfstat *); /* kills a running perf; NULL ok */

/*
 * The runner's calls.  perfstat_begin(): perfstat_start() for measured
 * run index, its files in scratch/counters-N; cgroup as in
 * perfstat_opts.  perfstat_finish(), after the run's body is built: the
 * operations from the run's output (out, parsed again with parser; only
 * for a run with status "ok"), then perfstat_apply(); res is released.
 */
struct perfstat *perfstat_begin(
    const char *scratch, int64_t index, const char *cgroup);
void perfstat_finish(json_t *body, struct perfstat_result *res,
    const char *counters_ops, const char *parser, const struct buf *out,
    double duration_s, struct buf *log);

/*
 * Adds a run's counters to its upload body: the known metrics to
 * "metrics" (a run with status "ok" only) and host_state.counters =
 * {"state": "counted"|"unknown", "pmu", "reason"}; appends the job log's
 * line for the run to log ("counters: unknown: ...").
 */
void perfstat_apply(json_t *body, const struct perfstat_result *,
    const struct perfstat_ops *, struct buf *log);

#endif
