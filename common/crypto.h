#ifndef COMMON_CRYPTO_H
#define COMMON_CRYPTO_H

/*
 * OpenSSL libcrypto: the one module that includes it.
 */
#include <stddef.h>

#include "common/buf.h"

/*
 * Base64 (RFC 4648) of len bytes appended to b, as mail needs it: bytes
 * outside the alphabet (line breaks, spaces, junk) are skipped, the text
 * ends at the first '=', and a last group of 2 or 3 characters gives its
 * 1 or 2 bytes.  0, or -1 when b is full.
 */
int crypto_b64_decode(struct buf *b, const char *s, size_t len);
/* Base64 of len bytes appended to b, padded, no line breaks.  0, or -1
 * when b is full. */
int crypto_b64_encode(struct buf *b, const void *data, size_t len);

/*
 * HMAC-SHA256 of len bytes under key, as 64 lowercase hex digits and a
 * NUL in out (webhook signatures).  0, or -1 when OpenSSL fails.
 */
int crypto_hmac_sha256_hex(
    char out[65], const void *key, size_t keylen, const void *msg, size_t len);
/* SHA-256 of len bytes as 64 lowercase hex digits and a NUL. */
void crypto_sha256_hex(char out[65], const void *data, size_t len);
/*
 * The same over data that comes in pieces (an upload): new, update any
 * number of times, then end (which frees it) or free.  Out of memory
 * aborts, as xmalloc does.
 */
struct crypto_sha256;
struct crypto_sha256 *crypto_sha256_new(void);
void crypto_sha256_update(struct crypto_sha256 *, const void *data, size_t len);
void crypto_sha256_end(struct crypto_sha256 *, char out[65]);
void crypto_sha256_free(struct crypto_sha256 *); /* NULL ok */

#endif
