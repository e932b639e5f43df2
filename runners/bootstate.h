#ifndef RUNNERS_BOOTSTATE_H
#define RUNNERS_BOOTSTATE_H

/*
 * boot: kexec and boot: reboot restart the host, and with it the runner
 * (its systemd unit starts it again after boot; docs/KERNEL.md).  Before
 * the boot the runner writes WORKDIR/boot.state atomically (temp file,
 * fsync, rename):
 *
 *	perfwatch-boot-state 1
 *	job 17
 *	attempt 1
 *	lease_expires 1733000060
 *	step boot
 *	method kexec
 *	round 1
 *	boot 1
 *	runs_done 0,1
 *	build_id -pw17
 *	release 6.1.158-pw17
 *	image /var/lib/perfwatch-runner/kernel/images/<commit>-<key>/bzImage
 *	deadline 1733000660
 *	config_sha256 93d1b1fd...
 *	cached yes
 *	shared_build 4
 *
 * (config_sha256 and cached, what the resumed runs report of the kernel,
 * may be missing from a state an older runner wrote: they are then
 * unknown; shared_build, the daemon's build a downloaded image came
 * from, is there only for such an image.)
 * and, started again, reads it to decide what to do with the job the
 * daemon hands back (bootstate_decide).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define BOOTSTATE_RUNS_MAX 1000

struct bootstate {
	int64_t job, attempt, lease_expires;
	char step[16];   /* "boot" */
	char method[16]; /* "kexec" | "reboot" */
	int64_t round, boot;
	unsigned char done[BOOTSTATE_RUNS_MAX]; /* done[i]: run i stored */
	char build_id[48], release[128], image[1024];
	int64_t deadline;       /* epoch s: the boot must have ended by then */
	char config_sha256[65]; /* of the image's .config, "" unknown */
	int cached;             /* the image came from the cache: 1, 0, -1 */
	int64_t shared_build;   /* a downloaded image's build, else 0 */
};

/* Writes path atomically.  0, or -1 with why. */
int bootstate_write(
    const char *path, const struct bootstate *, struct buf *why);
/*
 * Reads path.  0, ERR_NOTFOUND (no file: nothing to resume), or -1 with
 * why naming the file and line (a corrupt state is not resumed).
 */
int bootstate_read(struct bootstate *out, const char *path, struct buf *why);

enum bootstate_decision {
	BOOT_RESUME,       /* the right kernel runs: continue the job */
	BOOT_WRONG_KERNEL, /* another kernel came up: fail the job */
	BOOT_OTHER_JOB,    /* the daemon gave another job: state is stale */
	BOOT_TOO_LATE      /* came back after the deadline: the daemon has
	                      requeued the job; drop the state */
};

/*
 * What to do with a claimed job after a restart: job is its id,
 * proc_version the running kernel's /proc/version, now the epoch time.
 * why explains every answer but BOOT_RESUME (the wrong kernel names
 * both builds).
 */
enum bootstate_decision bootstate_decide(const struct bootstate *, int64_t job,
    const char *proc_version, int64_t now, struct buf *why);

#endif
