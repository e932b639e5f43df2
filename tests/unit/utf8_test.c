#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "tests/unit/test.h"

/* "aé€😀": 1, 2, 3 and 4 bytes, starting at 0, 1, 3 and 6 (10 in all). */
static const char MIX[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

/* utf8_decode of the bytes s (n of them): the length, and *cp. */
static size_t
dec(const char *s, size_t n, long *cp)
{
	return utf8_decode((const unsigned char *)s, n, cp);
}

/* The first max (0 to 10) for which f(MIX, 10, max) is not want[max],
 * or -1. */
static int
first_wrong(size_t (*f)(const char *, size_t, size_t), const size_t *want)
{
	int max;

	for (max = 0; max <= 10; max++)
		if (f(MIX, 10, (size_t)max) != want[max])
			return max;
	return -1;
}

/* One call of utf8_cut or utf8_tail and what it must give. */
struct cut_case {
	const char *s;
	size_t len, max, want;
};

/* The first case (as its index) f gets wrong, or -1. */
static int
first_bad_case(size_t (*f)(const char *, size_t, size_t),
    const struct cut_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f(c[i].s, c[i].len, c[i].max) != c[i].want)
			return (int)i;
	return -1;
}

TEST(test_utf8__cut_never_splits_a_character)
{
	/* Each cut on a boundary stays; each inside a character moves
	 * back to where that character starts. */
	static const size_t want[11] = { 0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10 };

	ASSERT_INTEQ(first_wrong(utf8_cut, want), -1);
}

TEST(test_utf8__cut_cases)
{
	static const struct cut_case c[] = {
		{ "abc", 3, 3, 3 },    /* fits exactly */
		{ "abc", 3, 10, 3 },   /* fits */
		{ MIX, 10, 10, 10 },   /* fits, multibyte */
		{ "abcdef", 6, 4, 4 }, /* ASCII is cut at max itself */
		{ "abc", 3, 0, 0 },    /* max 0 */
		{ MIX + 1, 9, 0, 0 },  /* max 0 before a 2-byte character */
		{ "", 0, 0, 0 },
		/* len <= max: the byte at max is not there to look at. */
		{ "\xc3\xa9", 2, 5, 2 },
		/* All of s fits: what follows it in memory does not count. */
		{ MIX, 2, 2, 2 },
		/* A truncated sequence at the end is not the cut's business. */
		{ "a\xe2\x82", 3, 3, 3 },
		/* The cut moves back to a byte that starts a character, so
		 * the byte the stray continuations follow goes too. */
		{ "ab\x80\x80\x80z", 6, 4, 1 },
		{ "ab\x80\x80\x80z", 6, 5, 5 },
		/* Nothing but continuation bytes: nothing fits. */
		{ "\x80\x80\x80", 3, 2, 0 },
	};

	ASSERT_INTEQ(first_bad_case(utf8_cut, c, sizeof(c) / sizeof(c[0])), -1);
}

TEST(test_utf8__tail_starts_on_a_character)
{
	/* The last max bytes, moved forward to the next start. */
	static const size_t want[11] = { 10, 10, 10, 10, 6, 6, 6, 3, 3, 1, 0 };

	ASSERT_INTEQ(first_wrong(utf8_tail, want), -1);
}

TEST(test_utf8__tail_cases)
{
	static const struct cut_case c[] = {
		{ "abcdef", 6, 2, 4 },
		{ "abcdef", 6, 60, 0 },
		{ "abcdef", 6, 0, 6 }, /* max 0: an empty tail */
		/* Continuation bytes are skipped even when all of s fits
		 * (as the job log's tail wants). */
		{ "\x80\xbfz", 3, 10, 2 },
		{ "\x80\x80", 2, 10, 2 },
		{ "", 0, 10, 0 },
	};

	ASSERT_INTEQ(
	    first_bad_case(utf8_tail, c, sizeof(c) / sizeof(c[0])), -1);
}

TEST(test_utf8__cont)
{
	ASSERT(UTF8_CONT(0x80));
	ASSERT(UTF8_CONT(0xbf));
	ASSERT(UTF8_CONT('\xa9'));
	ASSERT(!UTF8_CONT(0x7f));
	ASSERT(!UTF8_CONT(0xc0));
	ASSERT(!UTF8_CONT('a'));
	ASSERT(!UTF8_CONT('\xe2'));
}

TEST(test_utf8__decode_ascii)
{
	long cp = 99;

	ASSERT_INTEQ(dec("A", 1, &cp), 1);
	ASSERT_INTEQ(cp, 'A');
	ASSERT_INTEQ(dec("\x7f", 1, &cp), 1);
	ASSERT_INTEQ(cp, 0x7f);
	/* NUL is a character: refusing it is the caller's choice. */
	ASSERT_INTEQ(dec("\0x", 2, &cp), 1);
	ASSERT_INTEQ(cp, 0);
	/* Only the first character is read. */
	ASSERT_INTEQ(dec("ab", 2, &cp), 1);
	ASSERT_INTEQ(cp, 'a');
}

TEST(test_utf8__decode_multibyte)
{
	long cp = 0;

	ASSERT_INTEQ(dec("\xc3\xa9", 2, &cp), 2);
	ASSERT_INTEQ(cp, 0xe9);
	ASSERT_INTEQ(dec("\xc2\x80", 2, &cp), 2); /* first 2-byte */
	ASSERT_INTEQ(cp, 0x80);
	ASSERT_INTEQ(dec("\xdf\xbf", 2, &cp), 2); /* last 2-byte */
	ASSERT_INTEQ(cp, 0x7ff);
	ASSERT_INTEQ(dec("\xe2\x82\xac", 3, &cp), 3);
	ASSERT_INTEQ(cp, 0x20ac);
	ASSERT_INTEQ(dec("\xe0\xa0\x80", 3, &cp), 3); /* first 3-byte */
	ASSERT_INTEQ(cp, 0x800);
	ASSERT_INTEQ(dec("\xed\x9f\xbf", 3, &cp), 3); /* below surrogates */
	ASSERT_INTEQ(cp, 0xd7ff);
	ASSERT_INTEQ(dec("\xee\x80\x80", 3, &cp), 3); /* above them */
	ASSERT_INTEQ(cp, 0xe000);
	ASSERT_INTEQ(dec("\xef\xbf\xbf", 3, &cp), 3);
	ASSERT_INTEQ(cp, 0xffff);
	ASSERT_INTEQ(dec("\xf0\x9f\x98\x80", 4, &cp), 4);
	ASSERT_INTEQ(cp, 0x1f600);
	ASSERT_INTEQ(dec("\xf0\x90\x80\x80", 4, &cp), 4); /* first 4-byte */
	ASSERT_INTEQ(cp, 0x10000);
	ASSERT_INTEQ(dec("\xf4\x8f\xbf\xbf", 4, &cp), 4); /* U+10FFFF */
	ASSERT_INTEQ(cp, 0x10ffff);
	/* Followed by more text: still one character. */
	ASSERT_INTEQ(dec(MIX + 1, 9, &cp), 2);
	ASSERT_INTEQ(cp, 0xe9);
}

/* The first of the n strings (as its index) that utf8_decode takes for
 * a character, read to its NUL, or -1. */
static int
first_decoded(const char *const *bad, size_t n)
{
	size_t i;
	long cp;

	for (i = 0; i < n; i++)
		if (dec(bad[i], strlen(bad[i]), &cp) != 0 || cp != -1)
			return (int)i;
	return -1;
}

TEST(test_utf8__decode_refuses_overlongs_surrogates_and_past_max)
{
	/* Overlong forms first. */
	static const char *const bad[] = { "\xc0\x80", "\xc1\xbf",
		"\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80",
		"\xf0\x8f\xbf\xbf",
		/* U+D800, U+DFFF, U+110000, and leads past it. */
		"\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80", "\xff" };

	ASSERT_INTEQ(first_decoded(bad, sizeof(bad) / sizeof(bad[0])), -1);
}

TEST(test_utf8__decode_refuses_lone_and_missing_continuations)
{
	/* Lone continuation bytes first. */
	static const char *const bad[] = { "\x80", "\xbf\x61", "\xa9\xa9\xa9",
		/* Truncated at the end of the text. */
		"\xc3", "\xe2\x82", "\xf0\x9f\x98",
		/* Broken by a byte that does not continue it. */
		"\xe2\x82z", "\xc3\xc3\xa9", "\xe2\x82\xe2",
		"\xf0\x9f\x98\xc0" };
	long cp = 0;

	ASSERT_INTEQ(first_decoded(bad, sizeof(bad) / sizeof(bad[0])), -1);
	/* n says where the text ends, whatever follows in memory. */
	ASSERT_INTEQ(dec("\xf0\x9f\x98\x80", 3, &cp), 0);
	ASSERT_INTEQ(cp, -1);
	ASSERT_INTEQ(dec("\xc3\xa9", 1, &cp), 0);
	ASSERT_INTEQ(dec("", 0, &cp), 0);
	ASSERT_INTEQ(cp, -1);
}

/* utf8_repair: valid characters kept, each invalid byte and each NUL one
 * U+FFFD, and it stops once max bytes are out. */
TEST(test_utf8__repair)
{
	static const char in[] = "a\xc3\xa9\x80\x80\0z\xf0\x9f\x98\x80\xc3";
	struct buf b = BUF_INIT(256);

	utf8_repair(&b, in, sizeof(in) - 1, 256);
	ASSERT_STREQ(b.data,
	    "a\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz"
	    "\xf0\x9f\x98\x80\xef\xbf\xbd");
	buf_reset(&b);
	utf8_repair(&b, in, sizeof(in) - 1, 3);
	ASSERT_STREQ(b.data, "a\xc3\xa9");
	buf_reset(&b);
	utf8_repair(&b, "\x80\x80", 2, 1);
	ASSERT_STREQ(b.data, "\xef\xbf\xbd");
	buf_release(&b);
}
