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

TEST(test_crypto__sha256_vectors)
{
	char hex[65];

	/* FIPS 180-2 examples. */
	crypto_sha256_hex(hex, "abc", 3);
	ASSERT_STREQ(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	crypto_sha256_hex(hex, "", 0);
	ASSERT_STREQ(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
