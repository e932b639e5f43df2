#ifndef DAEMON_KFACTS_H
#define DAEMON_KFACTS_H

/*
 * Which kernel each side of a pair ran (docs/KERNEL.md).  Every run a
 * runner uploads carries host_state.kernel_build (runners/agent.h:
 * build_id, release, config_sha256, boot, cached); a side's facts are
 * what its measured runs say, "unknown" where no run says (an older
 * runner sends nothing), and the distinct values joined by " | " where
 * its runs differ.  Pure: the runs come from store_pair_run_meta_list().
 * Values come from runners: callers escape them (web/) or clean them
 * (mail) as any untrusted text.
 */
#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"

#define KFACTS_VAL 256 /* one field of a side, cut at a UTF-8 boundary */

struct kfacts {
	char build_id[KFACTS_VAL];      /* "-pw17", "none", "unknown" */
	char release[KFACTS_VAL];       /* uname -r as verified after boot */
	char config_sha256[KFACTS_VAL]; /* 64 hex digits, or "unknown" */
	char boot[KFACTS_VAL];          /* qemu, kexec, reboot, none */
	char cached[KFACTS_VAL];        /* yes, no, unknown */
	int runs;                       /* measured runs that said anything */
};

/*
 * One side from its runs' host states (parsed objects; an element that
 * is not an object, or has no kernel_build, says nothing).
 */
void kfacts_side(struct kfacts *out, const json_t *states);

struct store_run_metas;

/*
 * Both sides from a pair's runs (store_pair_run_meta_list(): the measured
 * ones' host states): out[0] base, out[1] candidate.  rows NULL: both
 * unknown.
 */
void kfacts_sides(struct kfacts out[2], const struct store_run_metas *rows);

/* {"build_id", "release", "config_sha256", "boot", "cached", "runs"}. */
json_t *kfacts_json(const struct kfacts *);

/*
 * One line for people: "6.1.158-pw17 build -pw17 config 93d1b1fde44c
 * (boot qemu, cached)"; the config hash cut to 12 digits; "unknown"
 * when the side's runs said nothing.
 */
void kfacts_line(struct buf *, const struct kfacts *);

/*
 * 1 and why when the kernels make the comparison suspicious: both sides
 * ran the same kernel build although the pair compares two commits
 * (base_sha, cand_sha; NULL unknown, equal: an A/A pair, where one build
 * is right), so the candidate's kernel is not what was measured; or one
 * side's runs ran on two or more builds.  0 otherwise (why untouched).
 */
int kfacts_warning(struct buf *why, const struct kfacts sides[2],
    const char *base_sha, const char *cand_sha);

/* A pair's kernel facts: what GET /api/v1/pairs/{id} shows (its JSON is
 * made in web/rows.c, rows_pair_kernels_json). */
struct kfacts_pair {
	struct kfacts side[2];        /* base, candidate */
	char warning[CAP_ERRMSG + 1]; /* kfacts_warning's text, "" none */
};

/*
 * Both sides from rows (as kfacts_sides; NULL: both unknown) and the
 * warning for the pair's commits (base_sha, cand_sha; NULL unknown, as
 * kfacts_warning).
 */
void kfacts_pair(struct kfacts_pair *out, const struct store_run_metas *rows,
    const char *base_sha, const char *cand_sha);

#endif
