/* crypto_b64_decode: RFC 4648 section 10 vectors, padded and not, with
 * line breaks and junk between groups, and a text longer than one chunk
 * ("foobar" 1,000 times, whose base64 is "Zm9vYmFy" 1,000 times). */
#include <string.h>

#include "common/crypto.h"
#include "test.h"

static const char *
dec(struct buf *b, const char *s)
{
	buf_reset(b);
	if (crypto_b64_decode(b, s, strlen(s)) != 0)
		return "(decode failed)";
	buf_putc(b, '\0');
	return b->data;
}

TEST(test_crypto__b64_rfc4648_vectors)
{
	struct buf b = BUF_INIT(4096);

	ASSERT_STREQ(dec(&b, ""), "");
	ASSERT_STREQ(dec(&b, "Zg=="), "f");
	ASSERT_STREQ(dec(&b, "Zm8="), "fo");
	ASSERT_STREQ(dec(&b, "Zm9v"), "foo");
	ASSERT_STREQ(dec(&b, "Zm9vYg=="), "foob");
	ASSERT_STREQ(dec(&b, "Zm9vYmE="), "fooba");
	ASSERT_STREQ(dec(&b, "Zm9vYmFy"), "foobar");
	/* Unpadded tails, as some mailers write them. */
	ASSERT_STREQ(dec(&b, "Zg"), "f");
	ASSERT_STREQ(dec(&b, "Zm9vYmE"), "fooba");
	/* Line breaks and junk are skipped; '=' ends the text. */
	ASSERT_STREQ(dec(&b, "Zm9v\r\nYm\tFy\n"), "foobar");
	ASSERT_STREQ(dec(&b, "Zm9v*YmFy=Zm9v"), "foobar");
	buf_release(&b);
}

TEST(test_crypto__b64_longer_than_a_chunk)
{
	struct buf in = BUF_INIT(65536), out = BUF_INIT(65536);
	size_t i;

	for (i = 0; i < 1000; i++) {
		buf_puts(&in, "Zm9vYmFy");
		if (i % 9 == 8)
			buf_puts(&in, "\n");
	}
	ASSERT(crypto_b64_decode(&out, in.data, in.len) == 0);
	ASSERT_INTEQ(out.len, 6000);
	for (i = 0; i < 1000; i++)
		ASSERT(memcmp(out.data + 6 * i, "foobar", 6) == 0);
	buf_release(&in);
	buf_release(&out);
}

static const char *
enc(struct buf *b, const char *s, size_t len)
{
	buf_reset(b);
	if (crypto_b64_encode(b, s, len) != 0)
		return "(encode failed)";
	return b->data;
}

/* crypto_b64_encode: the same vectors the other way, and a text past one
 * block (768 bytes) back through the decoder. */
TEST(test_crypto__b64_encode)
{
	struct buf b = BUF_INIT(65536), back = BUF_INIT(65536);
	char raw[2000];
	size_t i;

	ASSERT_STREQ(enc(&b, "", 0), "");
	ASSERT_STREQ(enc(&b, "f", 1), "Zg==");
	ASSERT_STREQ(enc(&b, "fo", 2), "Zm8=");
	ASSERT_STREQ(enc(&b, "foo", 3), "Zm9v");
	ASSERT_STREQ(enc(&b, "foob", 4), "Zm9vYg==");
	ASSERT_STREQ(enc(&b, "fooba", 5), "Zm9vYmE=");
	ASSERT_STREQ(enc(&b, "foobar", 6), "Zm9vYmFy");
	ASSERT_STREQ(enc(&b, "\xff\x00\xfe", 3), "/wD+");
	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (char)(i * 7 + 3);
	enc(&b, raw, sizeof(raw));
	ASSERT_INTEQ(b.len, (sizeof(raw) + 2) / 3 * 4);
	ASSERT(strchr(b.data, '\n') == NULL);
	ASSERT(crypto_b64_decode(&back, b.data, b.len) == 0);
	ASSERT_INTEQ(back.len, sizeof(raw));
	ASSERT(memcmp(back.data, raw, sizeof(raw)) == 0);
	/* A full buffer says so. */
	{
		struct buf small = BUF_INIT(8);

		ASSERT_INTEQ(crypto_b64_encode(&small, "foobarfoo", 9), -1);
		buf_release(&small);
	}
	buf_release(&b);
	buf_release(&back);
}

/* RFC 4231 test cases 1 and 2 (HMAC-SHA256), and a key longer than the
 * block (case 6), which HMAC hashes first. */
TEST(test_crypto__hmac_sha256_rfc4231)
{
	char hex[65], key[131];

	memset(key, 0x0b, 20);
	ASSERT_INTEQ(crypto_hmac_sha256_hex(hex, key, 20, "Hi There", 8), 0);
	ASSERT_STREQ(hex,
	    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	ASSERT_INTEQ(crypto_hmac_sha256_hex(
	                 hex, "Jefe", 4, "what do ya want for nothing?", 28),
	    0);
	ASSERT_STREQ(hex,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key));
	ASSERT_INTEQ(
	    crypto_hmac_sha256_hex(hex, key, sizeof(key),
	        "Test Using Larger Than Block-Size Key - Hash Key First", 54),
	    0);
	ASSERT_STREQ(hex,
	    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(test_crypto__sha256_vectors)
{
	char hex[65];

	/* FIPS 180-2 examples. */
	crypto_sha256_hex(hex, "abc", 3);
	ASSERT_STREQ(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f2"
	    "0015ad");
	crypto_sha256_hex(hex, "", 0);
	ASSERT_STREQ(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b78"
	    "52b855");
}

/* The SHA-256 of data that comes in pieces (an artifact upload) is the
 * one-shot digest, whatever the pieces. */
TEST(test_crypto__sha256_in_pieces)
{
	char whole[65], parts[65];
	unsigned char data[3000];
	struct crypto_sha256 *h;
	size_t i, at, step;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + 7);
	crypto_sha256_hex(whole, data, sizeof(data));
	for (step = 1; step <= 1024; step *= 4) {
		h = crypto_sha256_new();
		for (at = 0; at < sizeof(data); at += step)
			crypto_sha256_update(h, data + at,
			    sizeof(data) - at < step ? sizeof(data) - at
			                             : step);
		crypto_sha256_end(h, parts);
		ASSERT_STREQ(parts, whole);
	}
	/* "abc", FIPS 180-2. */
	h = crypto_sha256_new();
	crypto_sha256_update(h, "ab", 2);
	crypto_sha256_update(h, "c", 1);
	crypto_sha256_end(h, parts);
	ASSERT_STREQ(parts,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	crypto_sha256_free(NULL);
}
