#ifndef RUNNERS_AGENT_H
#define RUNNERS_AGENT_H

/*
 * The runner's main loop: register with the host's inventory, long-poll
 * for a job, run it (boot "none": the running kernel), upload each run as
 * soon as it ends (through the spool, so nothing is lost when the daemon
 * is away), finish, repeat.  A second thread heartbeats every heartbeat_s
 * with "run i/N" and turns a "cancel" reply, or *stop, into killing the
 * running benchmark's process group.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "common/json.h"
#include "runners/exec.h"

struct runner_config;

/*
 * Runs until *stop becomes non-zero (SIGTERM), or, with once, after at
 * most one claimed job.  token is the runner's bearer token.  Returns the
 * exit status: 0, or 1 when registration was refused, or (once) the job
 * was not finished with success.
 */
int agent_run(const struct runner_config *, const char *token, int once,
    atomic_int *stop);

/*
 * The upload body for run `index` (docs/API.md, POST /jobs/{id}/runs) from
 * how its command ended: status "ok" with the parser's metrics when it
 * exited 0 and its stdout parsed, else "failed" with the reason in
 * "error" and the output in "raw" (never zeros for unparsable output).
 * directions is the job's "metrics" object ({"name": {"better": ...}},
 * may be NULL): it sets a metric's direction, and is the only source for
 * metrics whose parser cannot tell (keyvalue, json).  A metric with no
 * direction is not uploaded (the API needs higher or lower); a run left
 * with no metric at all fails, naming them.
 * spawn_error, when not NULL, means the command could not be started
 * (r is then ignored).  Text is capped at raw_max bytes and made valid
 * UTF-8.  Never NULL.
 */
json_t *agent_run_body(int64_t index, const char *parser,
    const json_t *directions, const struct exec_result *r,
    const char *spawn_error, size_t raw_max);

/*
 * The kernel facts a run uploads as host_state.kernel_build (docs/API.md,
 * docs/KERNEL.md): build_id ("-pw17"; "none": the job built no kernel),
 * release (uname -r of the kernel the run ran on, as verified after the
 * boot), config_sha256 (of the image's .config), boot (qemu, kexec,
 * reboot, none), cached (1: the image came from the cache, 0: built
 * or downloaded for this job, -1: unknown, sent as null) and
 * shared_build (the daemon's shared build the image came from, 0: none,
 * sent as null).  A NULL or empty string is sent as "unknown": nothing
 * is made up.  Never NULL.
 */
json_t *agent_kernel_facts(const char *build_id, const char *release,
    const char *config_sha256, const char *boot, int cached,
    int64_t shared_build);

#endif
