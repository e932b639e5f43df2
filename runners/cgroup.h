#ifndef RUNNERS_CGROUP_H
#define RUNNERS_CGROUP_H

/*
 * cgroup placement of a benchmark: the job's `cgroup:` axis.
 *
 * Which hierarchy (cgroup_detect()):
 *   v2    a cgroup2 mount whose runner cgroup offers the `memory`
 *         controller (cgroup.controllers).
 *   v1    else a cgroup v1 hierarchy with the `memory` controller
 *         (/sys/fs/cgroup/memory).  When a cgroup2 mount exists next to
 *         it (the "hybrid" layout, /sys/fs/cgroup/unified), that mount
 *         is used as a companion: the benchmark is placed in the same
 *         path there too.  It has no controllers, so it changes nothing
 *         about accounting, but it gives per-cgroup PSI (memory.pressure)
 *         and lets `perf record -G` select the benchmark's cgroup.
 *   none  neither, or not writable; sys->reason says why.
 *
 * Where a placement goes:
 *   "root"     the runner's own cgroup, left as it is.  That is the real
 *              root only when the runner runs there; a runner started
 *              inside a container or service gets its own cgroup.
 *   "/a/b/c"   created BELOW the runner's own (base) cgroup: on this
 *              development machine /bench becomes
 *              /sys/fs/cgroup/memory/process_api/<id>/bench.  Every level
 *              is created as needed; only levels this placement created
 *              are removed again.  Names are [A-Za-z0-9._-], no "..".
 *
 * Limits (0 = unset):
 *   v2: memory_max -> memory.max, memory_high -> memory.high and
 *       pids_max -> pids.max (when the pids controller is offered), set
 *       on the leaf; `+memory` (and `+pids`) is written to
 *       cgroup.subtree_control of the base cgroup and of every level
 *       above the leaf.  A base cgroup that holds processes cannot
 *       enable controllers for its children (the no-internal-process
 *       rule), so the runner first moves the processes of its base
 *       cgroup into <base>/runner, once.
 *   v1: pids_max -> pids.max of a companion leaf perfwatch-root-PID (one
 *       per runner process: runners often share their cgroup there) in
 *       the pids hierarchy, when the runner's cgroup there is writable;
 *       memory_max -> memory.limit_in_bytes (the hard limit, the same
 *       meaning as memory.max); memory_high -> memory.soft_limit_in_bytes.
 *       The soft limit is NOT memory.high: v1 has no throttling limit; the
 *       soft limit is only a reclaim target under global memory pressure.
 *       v1 also charges socket memory to a memcg only once its
 *       memory.kmem.tcp.limit_in_bytes was written; nested v1 cgroups get
 *       it set to "max" so that socket accounting (the path memcg patches
 *       change) is active as it always is on v2.  cgroup_socket_accounting()
 *       says whether that worked.
 *
 * Before exec: the parent opens the cgroup.procs files (cgroup_procs_fds(),
 * O_CLOEXEC) and the child calls cgroup_attach_fds() between fork and exec;
 * it only write(2)s "0" (= "the writing process") to each fd, which is
 * async-signal-safe.  So a benchmark's server and client start inside the
 * cgroup, and their children too.
 *
 * Teardown kills what is left in the created leaf (v2 cgroup.kill when
 * present, else SIGKILL to each pid in cgroup.procs, repeated until empty,
 * bounded) and removes the created directories from the leaf up.  A "root"
 * placement kills nothing: the runner lives there (leftovers there are the
 * process group's business, runners/exec.c).
 */
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

enum cgroup_kind { CGROUP_NONE, CGROUP_V1, CGROUP_V2 };

#define CGROUP_REASON_MAX 256
#define CGROUP_MAX_FDS 3

/* What the host offers.  Embedded: cgroup_detect() / cgroup_sys_release(). */
struct cgroup_sys {
	enum cgroup_kind kind;
	char *mount; /* memory hierarchy mount (v1 memory or v2), or NULL */
	char *base;  /* runner's own cgroup there at detection, "/..." */
	/* A cgroup2 mount used for PSI and perf -G (== mount on v2). */
	char *v2_mount, *v2_base;
	int v2_pids; /* v2: the base cgroup offers the pids controller */
	/* v1: the pids hierarchy's mount and the runner's cgroup in it, when
	 * that cgroup is writable (limits.pids as pids.max), else NULL. */
	char *pids_mount, *pids_base;
	/* none: the runner's cgroup exists in a memory hierarchy but is not
	 * writable (reason names it). */
	int denied;
	char reason[CGROUP_REASON_MAX]; /* set when kind == CGROUP_NONE */
};

/* Reads /proc/self/mountinfo and /proc/self/cgroup.  Always 0: a host
 * without usable cgroups gets kind CGROUP_NONE and a reason. */
int cgroup_detect(struct cgroup_sys *);
/*
 * Same from given files and a fixed answer (tests: a fake tree, or the
 * cgroup2 mount without a memory controller).  Any path may be NULL.
 */
void cgroup_sys_set(struct cgroup_sys *, enum cgroup_kind, const char *mount,
    const char *base, const char *v2_mount, const char *v2_base);
void cgroup_sys_release(struct cgroup_sys *);   /* NULL ok */
const char *cgroup_kind_name(enum cgroup_kind); /* "v1" "v2" "none" */

/*
 * At start: that the runner can manage the subtree below its cgroup in
 * each hierarchy it found (a directory made, a control file in it
 * written, the directory removed), and, run as root, that its cgroup is
 * writable where one exists (denied).  0 (also for CGROUP_NONE without
 * denied, or not root), or -1 with e naming the path that refused.
 */
int cgroup_check_subtree(const struct cgroup_sys *, struct err *);

/* Checks a path from a job: "root" or "/name[/name...]".  0 or -1 (e). */
int cgroup_path_check(const char *path, struct err *);

struct cgroup_spec {
	const char *path;                /* "root" or "/a/b" */
	int64_t memory_max, memory_high; /* bytes, 0 = unset */
	/* pids.max of the leaf (0 = unset): on v2 with the pids controller,
	 * on v1 in a companion leaf of the pids hierarchy. */
	int64_t pids_max;
};

struct cgroup;

/*
 * Creates (or reuses) the cgroup of spec and sets its limits.  0 and *out
 * (cgroup_free()), or -1 with e set naming the file.  On a host without
 * cgroups this fails with sys->reason, also for "root".
 */
int cgroup_place(struct cgroup **out, const struct cgroup_sys *,
    const struct cgroup_spec *, struct err *);

/*
 * Opens the cgroup.procs file of each hierarchy the benchmark goes into
 * (O_WRONLY|O_CLOEXEC) into fds[0..n-1]; returns n (0..CGROUP_MAX_FDS) or
 * -1.  The caller closes them after fork.
 */
int cgroup_procs_fds(
    const struct cgroup *, int fds[CGROUP_MAX_FDS], struct err *);
/* In the child between fork and exec: async-signal-safe.  0 or -1. */
int cgroup_attach_self_fd(int procs_fd);
int cgroup_attach_fds(const int *fds, int n);

/* Directory of the memory hierarchy cgroup ("/sys/fs/cgroup/.../bench"). */
const char *cgroup_dir(const struct cgroup *);
/* cgroup2 directory of the benchmark (for memory.pressure), or NULL. */
const char *cgroup_v2_dir(const struct cgroup *);
/* Name of the benchmark's cgroup relative to the cgroup2 mount, for
 * `perf record -G`, or NULL when there is none. */
const char *cgroup_perf_name(const struct cgroup *);
enum cgroup_kind cgroup_kind(const struct cgroup *);
int cgroup_is_root(const struct cgroup *);
/* v1: 1 when socket accounting was switched on, 0 when not; v2: 1. */
int cgroup_socket_accounting(const struct cgroup *);
/* Human-readable notes about what the placement did ("moved runner..."). */
const char *cgroup_notes(const struct cgroup *);

/*
 * After a command in the cgroup failed: when its pids.max refused forks
 * since the last call, appends "pids.max N (M forks refused)" to the
 * string dst (n bytes; ", " after what is there).  Nothing otherwise.
 */
void cgroup_pids_refusals(struct cgroup *, char *dst, size_t n);

/* Kills leftovers and removes created directories; 0 or -1 (e). */
int cgroup_teardown(struct cgroup *, struct err *);
void cgroup_free(struct cgroup *); /* tears down if not done; NULL ok */

/*
 * Crash cleanup.  A runner killed mid-job leaves its cgroups behind:
 *  - cgroup_created_*(): the directories a placement made, in creation
 *    order, for the runner to journal in its workdir while a job runs;
 *  - cgroup_remove_stale(): at the next start, kills what is left in
 *    the journalled directories and removes them, deepest first.  Only
 *    directories below the runner's cgroup in one of sys's mounts are
 *    touched; others are refused (e set);
 *  - cgroup_sweep_stale(): removes the "perfwatch-root-PID" companions
 *    (cgroup2, and v1 pids) of runners that no longer run (PID dead).
 * Each returns the number of directories removed, or -1 (e).
 */
size_t cgroup_created_count(const struct cgroup *);
const char *cgroup_created_dir(const struct cgroup *, size_t);
int cgroup_remove_stale(
    const struct cgroup_sys *, char *const *dirs, size_t n, struct err *);
int cgroup_sweep_stale(const struct cgroup_sys *, struct err *);

/* Number of pids in a cgroup.procs file, or -1. */
int cgroup_count_procs(const char *dir);

/* Writes a string to a file (shared with telemetry.c; reading one is
 * files_read, common/files.h).  0/-1. */
int cgroup_write_file(const char *path, const char *text);

#endif
