#ifndef DAEMON_ARTIFACTS_H
#define DAEMON_ARTIFACTS_H

/*
 * The artifact store of shared kernel builds (builds.dir): files named
 * by their sha256 at <dir>/<aa>/<sha256>, written to a temporary file
 * under <dir>/tmp/, fsynced and renamed, so a file under its name is
 * always whole, and the same content is stored once.  What is stored
 * and used when is the store's (store/builds.h); this module holds the
 * bytes.  Another kind of store (S3-compatible, large objects) would
 * implement these prototypes.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* 1 when s is 64 lowercase hex digits. */
int artifacts_sha_ok(const char *s);

/* An upload in progress. */
struct artifact_put;
/* A temporary file under dir for one upload: 0, or -1 with e set. */
int artifacts_put_begin(
    struct artifact_put **out, const char *dir, struct err *e);
/* Appends and hashes: 0, or -1 (a write failed; the upload is lost). */
int artifacts_put_write(struct artifact_put *, const void *data, size_t len);
/* The bytes and sha256 written so far (the sha256 only once the upload
 * was ended by artifacts_put_commit). */
uint64_t artifacts_put_size(const struct artifact_put *);
/*
 * Ends the upload: the body's sha256 into sha (65 bytes) and, when it
 * is want, the file fsynced and renamed to its name (0).  Otherwise
 * nothing is stored: ERR_INVALID naming both hashes, or -1 with e set
 * for an I/O error.  The temporary file is gone either way.
 */
int artifacts_put_commit(
    struct artifact_put *, char sha[65], const char *want, struct err *e);
/* Frees it, removing its temporary file when it was not committed.
 * NULL ok. */
void artifacts_put_free(struct artifact_put *);

/* Opens the artifact sha for reading: the fd and its size, or -1 with
 * errno (ENOENT: not stored). */
int artifacts_open(const char *dir, const char *sha, uint64_t *size);
/* Removes the artifact sha: 0, or -1 with errno (ENOENT is 0). */
int artifacts_remove(const char *dir, const char *sha);

#endif
