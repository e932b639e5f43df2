#ifndef RUNNERS_IMAGE_H
#define RUNNERS_IMAGE_H

/*
 * Kernel images built by another runner (docs/KERNEL.md, "Shared
 * builds"): a bench job's kernel.image names a build and the sha256 and
 * size of each of its files in the daemon's artifact store.  Under
 * kernel_tree:
 *
 *   shared/<build_id>/<name>.part   a download in progress, resumed with
 *                                   a Range request when it exists
 *   shared/<build_id>/<name>        verified against the claim's sha256,
 *                                   only then renamed from the part
 *   shared/<build_id>/.used         touched on every use: the age the
 *                                   cache's least-recently-used order
 *                                   goes by
 *
 * A file already there is hashed again before each use: what boots is
 * always what the daemon named.  After a download the directories are
 * trimmed to image_cache_max bytes, least recently used first, never the
 * image in use.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "runners/client.h"
#include "runners/kernel.h"

#define IMAGE_FILES_MAX 8

struct image_file {
	char name[32];   /* bzImage, System.map, config, meta, gen_init_cpio */
	char sha256[65]; /* 64 lowercase hex digits */
	int64_t size;
};

/* A bench job's kernel.image (docs/API.md). */
struct image_spec {
	int64_t build;
	char build_id[48]; /* "-pwb4-0a1b2c3d4e5f" */
	char release[128];
	char config_sha256[65];
	struct image_file files[IMAGE_FILES_MAX];
	size_t nfiles;
};

/*
 * The claim's kernel.image into out: 0, or -1 with e naming the field
 * (a bad build id, a file name that is not one of the five, a sha256
 * that is not 64 hex digits, bzImage, config, System.map or meta
 * missing).
 */
int image_spec_parse(struct image_spec *out, json_t *image, struct err *e);

struct image_req {
	const char *kdir;  /* the runner's kernel_tree */
	struct client *cl; /* GET /api/v1/artifacts/{sha256} */
	const atomic_int *cancel;
	int64_t cache_max; /* image_cache_max; 0: keep none but this */
	/* Progress for the job log (may be NULL). */
	void (*log)(void *arg, const char *text);
	void *arg;
};

/* What a fetch did (the job log's "image:" line). */
struct image_got {
	int cached;         /* every file was there already */
	int64_t bytes;      /* downloaded by this fetch */
	int64_t resumed_at; /* the first resumed part's offset, -1: none */
	size_t evicted;     /* image directories removed after it */
};

/*
 * The image of spec, downloaded (or found) in KDIR/shared/<build_id>/
 * and verified, as a kernel_image (cached when nothing was downloaded;
 * shared_build set).  0, 1 cancelled (*cancel), or -1 with why, which
 * starts "image: <name>: " ("image: bzImage: sha256 X, expected Y (GET
 * /api/v1/artifacts/Y)" for a corrupted or truncated file, whose part is
 * deleted).
 */
int image_fetch(struct kernel_image *out, struct image_got *got,
    const struct image_req *rq, const struct image_spec *spec, struct buf *why);

/*
 * Removes the least recently used image directories of dir (by their
 * .used stamp, else the directory's own time) until the others hold at
 * most max bytes, never the one named keep (NULL: none).  Returns how
 * many it removed; *left (may be NULL) the bytes that stay.
 */
size_t image_cache_trim(
    const char *dir, int64_t max, const char *keep, int64_t *left);

/* The sha256 (64 hex digits) and size of a file: 0, or -1 (errno). */
int image_file_sha256(char out[65], int64_t *size, const char *path);

#endif
