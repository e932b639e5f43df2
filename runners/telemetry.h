#ifndef RUNNERS_TELEMETRY_H
#define RUNNERS_TELEMETRY_H

/*
 * memcg telemetry of one run: a snapshot of the benchmark's cgroup before
 * and after, turned into informational metrics (better "info").  Only
 * what the kernel exposes is reported; a field a kernel lacks yields no
 * metric (never a 0 in its place).
 *
 * Metrics (unit; source on v2 | source on v1):
 *   memcg.<f>_delta        after - before of memory.stat field f:
 *     sock (B)        stat sock | memory.kmem.tcp.usage_in_bytes, only when
 *                     v1 socket accounting is on (cgroup.h)
 *     kernel (B)      stat kernel | memory.kmem.usage_in_bytes
 *     kernel_stack, slab, percpu (B)   stat | (not in v1)
 *     anon, file (B)  stat anon, file | stat total_rss, total_cache
 *     pgfault, pgmajfault, workingset_refault_anon, workingset_refault_file
 *                     (events) stat | stat total_<f> (hierarchical)
 *     pgscan, pgsteal (events) stat | (not in v1)
 *     pgpgin, pgpgout (events) (not in v2) | stat total_<f>
 *     usage (B)       memory.current | memory.usage_in_bytes
 *   memcg.events.<k>       delta of every memory.events key (v2: low, high,
 *                          max, oom, oom_kill, ...) | oom_kill from
 *                          memory.oom_control
 *   memcg.failcnt_delta    (v1) memory.failcnt
 *   memcg.peak_bytes       the run's peak: memory.peak reset at begin
 *                          through the same fd (kernel >= 6.12) |
 *                          memory.max_usage_in_bytes reset to 0 at begin.
 *                          When the reset fails the value is the peak
 *                          since the cgroup was made:
 *                          memcg.peak_bytes_since_creation.
 *   memcg.psi.some_us_delta, memcg.psi.full_us_delta
 *                          memory.pressure "total=" (microseconds) of the
 *                          benchmark's cgroup2 directory (on a v1 host the
 *                          companion cgroup2 directory, cgroup.h); when
 *                          there is none, /proc/pressure/memory, and then
 *                          the names say so: system.psi_memory.some_us_delta,
 *                          system.psi_memory.full_us_delta.
 */
#include <stdint.h>

#include "common/err.h"
#include "runners/cgroup.h"

#define TELEMETRY_KEY_MAX 64

struct telemetry_kv {
	char key[TELEMETRY_KEY_MAX];
	int64_t value;
};

/* One snapshot: keys "stat.<f>", "events.<k>", "failcnt", "usage",
 * "kmem", "tcp", "psi.some", "psi.full", "peak". */
struct telemetry_snap {
	struct telemetry_kv *kv;
	size_t n;
};

void telemetry_snap_release(struct telemetry_snap *); /* NULL ok */
/* Sets or adds key. */
void telemetry_snap_put(struct telemetry_snap *, const char *key, int64_t);
/* 0 and *out, or -1 when absent. */
int telemetry_snap_get(
    int64_t *out, const struct telemetry_snap *, const char *key);
/*
 * Parses "name value" lines (memory.stat, memory.events, oom_control)
 * into prefix+name.  Lines that are not "word integer" are skipped.
 * Returns the number of keys added.
 */
int telemetry_parse_flat(
    struct telemetry_snap *, const char *prefix, const char *text);
/* Parses PSI ("some avg10=.. total=N" / "full ..."): psi.some, psi.full. */
int telemetry_parse_psi(struct telemetry_snap *, const char *text);

typedef void (*telemetry_emit_fn)(
    const char *name, double value, const char *unit, void *arg);

/*
 * The metrics of a run from two snapshots (pure).  kind picks the field
 * names; psi_system says the PSI keys came from /proc/pressure/memory;
 * sockacct is 0 for a v1 cgroup without socket accounting (then no
 * sock metric).  Returns the number of metrics emitted.
 */
int telemetry_diff(const struct telemetry_snap *before,
    const struct telemetry_snap *after, enum cgroup_kind kind, int psi_system,
    int sockacct, telemetry_emit_fn, void *arg);

/* Where to read from. */
struct telemetry_src {
	enum cgroup_kind kind;
	const char *memdir;   /* memory hierarchy dir (cgroup_dir()) */
	const char *v2dir;    /* cgroup2 dir for memory.pressure, or NULL */
	int sockacct;         /* cgroup_socket_accounting() */
	const char *psi_proc; /* NULL: "/proc/pressure/memory" */
};

struct telemetry;

struct telemetry *telemetry_new(const struct telemetry_src *); /* never NULL */
void telemetry_free(struct telemetry *);                       /* NULL ok */
/* Snapshot before the run (and peak reset).  0 or -1 (e). */
int telemetry_begin(struct telemetry *, struct err *);
/* Snapshot after the run; emits the metrics.  Count, or -1 (e). */
int telemetry_end(
    struct telemetry *, telemetry_emit_fn, void *arg, struct err *);
/* Where PSI came from: "cgroup", "system" or "none" (after _begin). */
const char *telemetry_psi_scope(const struct telemetry *);

#endif
