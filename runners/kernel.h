#ifndef RUNNERS_KERNEL_H
#define RUNNERS_KERNEL_H

/*
 * Building the kernel a job measures (docs/KERNEL.md).
 *
 * Under the runner's kernel_tree directory KDIR:
 *   KDIR/trees/          one clone per kernel tree URL (git/git.h)
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
 * the booted kernel is checked against (kernel_build_id).
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
	/* The job's kernel.compiler, make's CC ("clang-17"; through
	 * ccache when it is installed); NULL or "gcc": gcc, as kbuild
	 * picks it without a CC. */
	const char *compiler;
	int64_t job;          /* for the build id */
	const char *instance; /* the daemon's instance id, NULL: none */
	/* A shared build (docs/KERNEL.md, "Shared builds"): the build id
	 * the daemon gave ("-pwb4-0a1b2c3d4e5f"), used instead of job and
	 * instance; its image is kept apart from per-job images (another
	 * build id), in images/<commit>-<key><build_id>.  NULL: a job's. */
	const char *build_id;
	int64_t timeout_ms;
	const atomic_int *cancel;
	/* Who runs the tree's make and merge_config.sh (runners/runas.h):
	 * the object directory and the ccache are given to it; NULL: the
	 * runner itself. */
	const struct exec_user *user;
	/* Step logs (build output tails); may be NULL. */
	void (*log)(void *arg, const char *text);
	void *arg;
};

struct kernel_image {
	char image[1024];       /* bzImage */
	char gen_cpio[1024];    /* the tree's usr/gen_init_cpio, "" if none */
	char system_map[1024];  /* System.map (boot: reboot installs it) */
	char build_id[48];      /* "-pw17-0a1b2c3d4e5f" */
	char release[128];      /* "6.1.158-pw17" */
	char config_sha256[65]; /* of the final .config */
	int cached;             /* the image of an earlier job */
	int incremental;        /* built over an earlier commit's objects */
	size_t changed_files;   /* files written by the update */
	int config_reused;      /* the config steps were skipped */
	double build_s;         /* config + make, 0 when cached */
	int64_t shared_build;   /* downloaded: the daemon's build, else 0 */
};

/*
 * Builds (or finds) the kernel of req.  0 with *out, 1 when cancelled,
 * -1 with why ("fragment option dropped by olddefconfig: CONFIG_X=y",
 * "make bzImage: exit 2: <tail>").
 */
int kernel_build(
    struct kernel_image *out, const struct kernel_req *, struct buf *why);

/* The first line of `<compiler> --version` into out ("" when it does
 * not run); compiler NULL: gcc. */
void kernel_compiler(char *out, size_t n, const char *compiler);

/* ---- pure parts (unit-tested) ---- */

/*
 * 1 when id can be a shared build's id, and so a directory name under
 * kernel_tree/shared/: "-pwb<digits>-<1 to 16 lowercase hex>".
 */
int kernel_shared_build_id_ok(const char *id);

/*
 * The build id: "-pw<job>-<instance>", or "-pw<job>" when instance (the
 * daemon database's instance id) is NULL or "" (an older daemon).  Job
 * ids start again at 1 in a fresh database while a runner's cached
 * images keep their build ids: the instance keeps two databases from
 * naming two builds alike.  0, or -1 when instance is not 1 to 16
 * lowercase hex digits (out is then "-pw<job>").
 */
int kernel_build_id(char *out, size_t n, int64_t job, const char *instance);

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
 * text when it is not a make target (base_text, may be NULL), the
 * fragment lines and the compiler when it is not gcc (NULL or "gcc"
 * add nothing: a gcc build tree is keyed by its config alone), cut to
 * 16 hex digits.
 */
void kernel_config_key(char out[17], const char *config, const char *base_text,
    const struct strlist *fragment, const char *compiler);

/* 1 when cc can be a job's kernel.compiler: a command name, a letter or
 * digit then letters, digits, '.', '_', '+', '-' (at most 63). */
int kernel_compiler_ok(const char *cc);

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

/*
 * The config steps (base config, merge_config.sh, olddefconfig) are
 * skipped when their inputs are those of the build tree's last .config.
 * The inputs: the base config's name and text, the fragment, the
 * alignment flags, the tools' versions (as kbuild's own auto.conf.cmd
 * compares them) and the tree's files the steps read
 * (kernel_config_input_path).  The record, pw-obj/.pw-config-inputs,
 * reads "inputs HEX\nconfig_sha256 HEX\n": the hash of the inputs and of
 * the .config the steps left.
 */
/* 1 when rel, a path inside the kernel tree, is read by the config
 * steps: any Kconfig*, the top Makefile, arch/x/Makefile, the files
 * directly in scripts/ (Kconfig's $(shell) helpers), scripts/kconfig/,
 * kernel/configs/ and arch/x/configs/. */
int kernel_config_input_path(const char *rel);

/*
 * The hash of the config steps' inputs (64 hex digits and a NUL) for
 * the tree at src (its pw-obj and dot files left out): tools is the
 * text of the tools' versions (kernel_tool_versions).  0, or -1 with
 * why (an unreadable file or directory).
 */
int kernel_config_inputs(char out[65], const char *src, const char *tools,
    const char *config, const char *base_text, const struct strlist *fragment,
    struct buf *why);

/* "gcc <first line of --version>\n" and so on for the compiler
 * (compiler, NULL: gcc), linker and the other tools Kconfig asks
 * ("pahole none" when absent). */
void kernel_tool_versions(struct buf *out, const char *compiler);

/*
 * 1 when the config steps can be skipped: record (NULL: none) names
 * inputs, and the tree's .config still hashes to what the steps left
 * (dotconfig_sha256, NULL when there is no .config); 0 when they run.
 */
int kernel_config_reuse(
    const char *record, const char *inputs, const char *dotconfig_sha256);

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
