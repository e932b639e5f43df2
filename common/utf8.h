#ifndef COMMON_UTF8_H
#define COMMON_UTF8_H

/*
 * UTF-8 for untrusted text: cuts that never split a sequence, and one
 * strict decoder, and a repair for text that must be valid.  Pure
 * functions on bytes; only utf8_repair writes, into a buf.
 */
#include <stddef.h>

/* Byte c continues a sequence (10xxxxxx): no character starts there. */
#define UTF8_CONT(c) (((unsigned char)(c)&0xc0) == 0x80)

/*
 * The length of the longest prefix of s[0..len) of at most max bytes that
 * does not end inside a sequence: len when len <= max, else max moved
 * back past the continuation bytes at s[max].  May be 0.  Only the cut is
 * looked at: invalid bytes before it stay as they are.
 */
size_t utf8_cut(const char *s, size_t len, size_t max);

/*
 * The offset in s[0..len) of the longest suffix of at most max bytes that
 * does not start inside a sequence: len - max (or 0) moved forward past
 * continuation bytes, so the tail never starts with one, even when all of
 * s fits.  May be len.
 */
size_t utf8_tail(const char *s, size_t len, size_t max);

/*
 * Decodes the character at s[0..n): its length (1 to 4) with *cp set, or
 * 0 with *cp = -1 when s does not start a valid sequence: n == 0, a
 * continuation or never-used byte (C0, C1, F5-FF), a missing or truncated
 * continuation, an overlong form, a surrogate (U+D800-DFFF) or a value
 * past U+10FFFF.  NUL is valid (length 1, *cp = 0).
 */
size_t utf8_decode(const unsigned char *s, size_t n, long *cp);

struct buf;

/*
 * Appends s[0..len) to b as valid UTF-8 text: each byte that starts no
 * valid character, and each NUL, becomes U+FFFD.  Stops once max bytes
 * were appended (it may pass max by up to 3 bytes).
 */
void utf8_repair(struct buf *b, const char *s, size_t len, size_t max);

#endif
