/* OpenSSL libcrypto behind a small interface (common/crypto.h). */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/crypto.h"

static int
b64_alpha(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int
crypto_b64_decode(struct buf *b, const char *s, size_t len)
{
	unsigned char in[4 * 256], out[3 * 256 + 3];
	size_t i, n = 0;
	int r = 0, k;

	for (i = 0; i <= len; i++) {
		int end = i == len || s[i] == '=';

		if (!end && b64_alpha((unsigned char)s[i]))
			in[n++] = (unsigned char)s[i];
		if (n == sizeof(in) || (end && n >= 4)) {
			size_t full = n / 4 * 4;

			k = EVP_DecodeBlock(out, in, (int)full);
			if (k > 0 && buf_add(b, out, (size_t)k) != 0)
				r = -1;
			memmove(in, in + full, n - full);
			n -= full;
		}
		if (end)
			break;
	}
	if (n >= 2) {
		/* A short last group: pad it, keep its 1 or 2 bytes. */
		size_t keep = n - 1;

		while (n < 4)
			in[n++] = '=';
		k = EVP_DecodeBlock(out, in, 4);
		if (k == 3 && buf_add(b, out, keep) != 0)
			r = -1;
	}
	return r;
}

int
crypto_b64_encode(struct buf *b, const void *data, size_t len)
{
	const unsigned char *p = data;
	unsigned char out[4 * 256 + 1];
	size_t n;
	int k;

	/* 768 input bytes (a multiple of 3) a block: no padding inside. */
	for (; len > 0; p += n, len -= n) {
		n = len > 3 * 256 ? 3 * 256 : len;
		k = EVP_EncodeBlock(out, p, (int)n);
		if (k < 0 || buf_add(b, out, (size_t)k) != 0)
			return -1;
	}
	return 0;
}

int
crypto_hmac_sha256_hex(
    char out[65], const void *key, size_t keylen, const void *msg, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	out[0] = '\0';
	if (HMAC(EVP_sha256(), key, (int)keylen, msg, len, md, &n) == NULL ||
	    n != 32)
		return -1;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * n] = '\0';
	return 0;
}

void
crypto_sha256_hex(char out[65], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	/* EVP_Digest fails only when out of memory: abort like xmalloc. */
	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
		abort();
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

struct crypto_sha256 {
	EVP_MD_CTX *ctx;
};

struct crypto_sha256 *
crypto_sha256_new(void)
{
	struct crypto_sha256 *h = malloc(sizeof(*h));

	if (h == NULL || (h->ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		abort();
	return h;
}

void
crypto_sha256_update(struct crypto_sha256 *h, const void *data, size_t len)
{
	if (EVP_DigestUpdate(h->ctx, data, len) != 1)
		abort();
}

void
crypto_sha256_end(struct crypto_sha256 *h, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32)
		abort();
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	crypto_sha256_free(h);
}

void
crypto_sha256_free(struct crypto_sha256 *h)
{
	if (h == NULL)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}
