#ifndef RUNNERS_QEMU_H
#define RUNNERS_QEMU_H

/*
 * boot: qemu (docs/KERNEL.md).  The runner boots the built bzImage in
 * qemu-system-x86_64 (KVM when /dev/kvm can create a VM, TCG otherwise)
 * with an initramfs it makes for the job: the static guest agent
 * perfwatch-guest as /init, busybox-static, the benchmark's static
 * binaries and the rendered argv of each run.  The guest mounts proc,
 * sys and cgroup2, enables +memory, places the benchmark with the same
 * cgroup code the runner uses on a host (runners/cgroup.c: nested /a/b
 * with memory.max), takes the same telemetry (runners/telemetry.c) and
 * prints everything on the serial console in lines
 *
 *	PWG1 version <hex of /proc/version>
 *	PWG1 out <index> <hex>          (stdout, in chunks)
 *	PWG1 err <index> <hex>          (stderr)
 *	PWG1 metric <index> <name> <value> <unit>
 *	PWG1 end <index> <exited> <code> <signo> <timed_out> <seconds>
 *	    <stdout bytes> <stderr bytes>
 *	PWG1 error <hex>                (the guest could not run the job)
 *	PWG1 done
 *
 * Hex keeps the framing safe from the console's line discipline and from
 * kernel messages printed between lines; the byte counts catch a lost
 * chunk.  There is no network between guest and host.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "runners/exec.h"

#define QEMU_MAX_RUNS 1000
#define QEMU_MAX_METRICS 64

struct qemu_metric {
	char name[64], unit[16];
	double value;
};

struct qemu_run {
	int64_t index;
	int ended;             /* an end line was seen */
	struct exec_result r;  /* as if the command ran on the host */
	struct qemu_metric *m; /* guest telemetry (info metrics) */
	size_t nm;
};

/*
 * KVM or TCG, decided once per runner process: /dev/kvm is probed once
 * (it must create a VM), and the first boot under KVM is the test of
 * the rest.  /dev/kvm may create a VM and still not run one (no nested
 * virtualisation: "failed to set MSR ..."): qemu then fails before the
 * guest says anything, that boot runs again under TCG and every later
 * boot of the process goes straight to TCG.
 */
enum qemu_accel_state {
	QEMU_ACCEL_UNKNOWN,     /* not probed yet */
	QEMU_ACCEL_KVM_UNTRIED, /* /dev/kvm creates a VM; no boot yet */
	QEMU_ACCEL_KVM,         /* a boot ran under KVM */
	QEMU_ACCEL_TCG          /* TCG for the rest of the process */
};
struct qemu_accel {
	enum qemu_accel_state state;
	char why[256]; /* TCG: why ("/dev/kvm: ..." or qemu's error) */
};
/* The accelerator of the next boot: 1 KVM, 0 TCG.  Calls probe (1 when
 * /dev/kvm can create a VM; qemu_kvm_usable) only in state UNKNOWN. */
int qemu_accel_pick(struct qemu_accel *, int (*probe)(void));
/*
 * After a boot with KVM: failed_early (qemu failed before the guest
 * printed anything) moves to TCG with qemu_err as why and returns 1 (boot
 * again under TCG); else the state is KVM and 0.
 */
int qemu_accel_after_kvm(
    struct qemu_accel *, int failed_early, const char *qemu_err);
/* "KVM", "TCG: <why>" or "not decided yet" into out (size n). */
void qemu_accel_describe(char *out, size_t n, const struct qemu_accel *);

struct qemu_result {
	int kvm;             /* 1 KVM, 0 TCG */
	char kvm_error[256]; /* why KVM was given up for TCG, \"\" */
	int accel_decided;   /* this boot decided the process's accel */
	char version[512];   /* the guest's /proc/version, "" unknown */
	char error[1024];    /* a PWG1 error line, "" none */
	int done;            /* the guest said done */
	struct qemu_run *runs;
	size_t nruns;
	double boot_s;      /* qemu start to exit */
	struct buf console; /* non-PWG1 console text (tail kept) */
};
void qemu_result_release(struct qemu_result *);

struct qemu_req {
	const char *image;     /* bzImage */
	const char *gen_cpio;  /* usr/gen_init_cpio of the kernel tree */
	const char *dir;       /* scratch directory for the initramfs */
	const char *guest_dir; /* perfwatch-guest and static benchmarks */
	char **server_argv;    /* may be NULL */
	char ***run_argv;      /* nruns vectors */
	const int64_t *run_index;
	size_t nruns;
	const char *cgroup_path; /* "root" or "/a/b" */
	int64_t memory_max, memory_high;
	int64_t run_timeout_ms, boot_timeout_ms;
	size_t out_max; /* per run and stream */
	const atomic_int *cancel;
	struct qemu_accel *accel; /* the runner process's (required) */
};

/*
 * Makes the initramfs, boots, waits for the guest to finish and parses
 * the console.  0 with *out (release it) when qemu ran to the end (look
 * at out->done and out->error), 1 cancelled, -1 with why (qemu missing,
 * a benchmark binary that is not static, boot timeout).
 */
int qemu_boot(
    struct qemu_result *out, const struct qemu_req *, struct buf *why);

/* 1 when /dev/kvm can create a VM here. */
int qemu_kvm_usable(void);

/*
 * Parses console text into out (memset first; release it).  Run entries
 * are created for each index seen.  0, or -1 with why (a bad line, byte
 * counts that do not match what arrived).
 */
int qemu_parse_console(struct qemu_result *out, const char *text, size_t len,
    size_t out_max, struct buf *why);

/* 1 when path is an ELF executable without an interpreter (static),
 * 0 when dynamic, -1 when unreadable or not ELF. */
int qemu_is_static(const char *path);

#endif
