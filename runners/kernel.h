#ifndef RUNNERS_KERNEL_H
#define RUNNERS_KERNEL_H

/*
 * Building the kernel a job measures (docs/KERNEL.md).
 *
 * Under the runner's kernel_tree directory KDIR:
 *   KDIR/trees/          one clone per kernel tree URL (common/git)
 *   KDIR/build-<key>/    one build tree per configuration key (base
 *                        config + fragment): src/ holds an export of the
 *                        last commit built there (src/.pw-commit), its
 *                        objects in src/pw-obj (make O=pw-obj, so kbuild
 *                        keeps relative paths).  A new commit is written
 *                        over it file by file (gitm_checkout_update), so
 *                        make rebuilds only what the change touches: the
 *                        candidate builds incrementally from the base.
 *   KDIR/images/<commit>-<key>/
 *                        the finished kernel of (commit, key): bzImage,
 *                        config, meta (build id, release, .config hash).
 *                        A base kernel is built once per host and then
 *                        reused, keeping the build id of the job that
 *                        built it.
 *   KDIR/ccache/         ccache's directory, when ccache is installed.
 *
 * Config: the base (a make target such as defconfig or tinyconfig, the
 * word "running" for /proc/config.gz, or a file in the tree) plus the
 * job's kernel.fragment, merged with the tree's own
 * scripts/kconfig/merge_config.sh, then `make olddefconfig`.  A fragment
 * line that olddefconfig dropped fails the build, naming it.  Every build
 * gets KCFLAGS=-falign-functions=64 (alignment shifts are the best-known
 * source of false kernel deltas) and LOCALVERSION=-pw<job>, the build id
 * the booted kernel is checked against.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "config/config.h"
#include "runners/checkout.h"

#define KERNEL_ALIGN_FLAGS "-falign-functions=64"

struct kernel_req {
	const char *kdir;          /* the runner's kernel_tree */
	const char *url;           /* the job's tree */
	const char *commit;        /* 40 hex digits */
	struct checkout_pack pack; /* a series commit's pack, path NULL */
	const char *config;        /* base config */
	const struct strlist *fragment;
	int64_t job; /* for the build id */
	int64_t timeout_ms;
	const atomic_int *cancel;
	/* Step logs (build output tails); may be NULL. */
	void (*log)(void *arg, const char *text);
	void *arg;
};

struct kernel_image {
	char image[1024];       /* bzImage */
	char gen_cpio[1024];    /* the tree's usr/gen_init_cpio, "" if none */
	char system_map[1024];  /* System.map (boot: reboot installs it) */
	char build_id[32];      /* "-pw17" */
	char release[128];      /* "6.1.158-pw17" */
	char config_sha256[65]; /* of the final .config */
	int cached;             /* the image of an earlier job */
	int incremental;        /* built over an earlier commit's objects */
	size_t changed_files;   /* files written by the update */
	double build_s;         /* config + make, 0 when cached */
};

/*
 * Builds (or finds) the kernel of req.  0 with *out, 1 when cancelled,
 * -1 with why ("fragment option dropped by olddefconfig: CONFIG_X=y",
 * "make bzImage: exit 2: <tail>").
 */
int kernel_build(
    struct kernel_image *out, const struct kernel_req *, struct buf *why);

/* ---- pure parts (unit-tested) ---- */

/* "-pw<job>". */
void kernel_build_id(char *out, size_t n, int64_t job);

/*
 * The fragment lines that the final .config does not hold: "CONFIG_X=v"
 * needs that exact line, "CONFIG_X=n" or "# CONFIG_X is not set" needs
 * no "CONFIG_X=" line.  Appends "CONFIG_X=y (now: not set)" per dropped
 * line to out, separated by ", ".  Returns how many were dropped.
 */
size_t kernel_fragment_dropped(
    struct buf *out, const char *dotconfig, const struct strlist *fragment);

/*
 * The key of a configuration: sha256 over the base config's name, its
 * text when it is not a make target (base_text, may be NULL) and the
 * fragment lines, cut to 16 hex digits.
 */
void kernel_config_key(char out[17], const char *config, const char *base_text,
    const struct strlist *fragment);

/*
 * How a build tree moves to the next commit (src/.pw-commit, the mark,
 * names the commit it holds and the clone that commit came from).  A
 * bisection's steps, the base and candidate of a pair and the revert of
 * a verification (a commit only the daemon's mirror has, so a clone of
 * its own) all build in one tree: every move but the first must be an
 * update, never a fresh export, which rewrites every file and so makes
 * make rebuild the whole kernel.
 */
enum kernel_src_plan {
	KERNEL_SRC_EXPORT, /* no (valid) mark: export the commit whole */
	KERNEL_SRC_SAME,   /* the tree holds the commit already */
	KERNEL_SRC_UPDATE, /* write the files that differ, from this clone */
	KERNEL_SRC_BORROW  /* the same, reading the previous commit from the
	                      clone the mark names (gitm_borrow_objects) */
};
/*
 * The plan for a tree whose mark reads MARK (NULL: none) to get COMMIT
 * from the clone at CLONE.  prev gets the mark's commit ("" without one)
 * and prev_clone (size n) its clone ("" when the mark, written by an
 * older runner, does not name one: then the update is tried from CLONE).
 */
enum kernel_src_plan kernel_source_plan(const char *mark, const char *commit,
    const char *clone, char prev[41], char *prev_clone, size_t n);

/* 1 when config names a make target (defconfig, tinyconfig, ...). */
int kernel_config_is_target(const char *config);

/*
 * The release (third word) of the text of /proc/version into out (size
 * n): 0, or -1 when the text is not "Linux version RELEASE ..." or the
 * release does not fit.
 */
int kernel_version_release(char *out, size_t n, const char *proc_version);

/*
 * Checks the text of /proc/version of a booted kernel against the
 * expected build id: its release (third word) must end in build_id.
 * 0, or -1 with why naming both ("booted 6.1.0-13-amd64, expected a
 * kernel ending in -pw17").
 */
int kernel_version_check(
    const char *proc_version, const char *build_id, struct buf *why);

#endif
