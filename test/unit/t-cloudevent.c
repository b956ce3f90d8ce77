/*
 * t-cloudevent.c: unit tests of the CloudEvents HTTP binding helpers
 * (cloudevent.c): percent-decoding and encoding of header values,
 * extension names, RFC 3339 timestamps and UTF-8 validity.
 */
#include <stdio.h>
#include <string.h>

#include "treaty.h"
#include "harness.h"

/* Decode the C string in with a roomy buffer; returns the error code. */
static int
dec(const char *in, char *out, size_t outsz, size_t *outlen)
{
	return (treaty_pct_decode(in, strlen(in), out, outsz, outlen));
}

/* Plain values and simple escapes decode. */
static void
decode_basic(void)
{
	char	 out[64];
	size_t	 n = 99;

	T_EQ_INT(dec("hello", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "hello");
	T_EQ_INT(n, 5);
	T_EQ_INT(dec("a%20b", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "a b");
	T_EQ_INT(n, 3);
	T_EQ_INT(dec("100%25", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "100%");
	T_EQ_INT(dec("%22q%22", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\"q\"");
	T_EQ_INT(dec("%2525", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "%25");
	/* '+' is not a space in this binding. */
	T_EQ_INT(dec("a+b", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "a+b");
	T_EQ_INT(dec("", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "");
	T_EQ_INT(n, 0);
	/* outlen may be NULL. */
	T_EQ_INT(dec("x%41", out, sizeof(out), NULL), TREATY_OK);
	T_EQ_STR(out, "xA");
}

/* Hex digits are accepted in either case. */
static void
decode_hex_case(void)
{
	char	 out[64];
	size_t	 n;

	T_EQ_INT(dec("%2a%2A%7e%7E", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "**~~");
	T_EQ_INT(dec("%c3%a9", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\xc3\xa9");
	T_EQ_INT(n, 2);
	T_EQ_INT(dec("%C3%A9", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\xc3\xa9");
}

/* Bad or truncated escapes are refused. */
static void
decode_bad_escape(void)
{
	char	 out[64];
	size_t	 n;

	T_EQ_INT(dec("%zz", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_STR(out, "");
	T_EQ_INT(dec("a%2", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("a%", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%g0", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%0g", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("% 20", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%-1", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("ok%2", out, sizeof(out), &n), TREATY_E_INVALID);
	/* The length bounds the input: "%41" cut to "%4" is truncated. */
	T_EQ_INT(treaty_pct_decode("%41", 2, out, sizeof(out), &n),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_pct_decode("%41", 3, out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "A");
}

/* A decoded or raw NUL is refused. */
static void
decode_nul(void)
{
	char	 out[64];
	size_t	 n;

	T_EQ_INT(dec("%00", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("abc%00def", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(treaty_pct_decode("ab\0cd", 5, out, sizeof(out), &n),
	    TREATY_E_INVALID);
}

/* Decoded bytes must be UTF-8; multi-byte characters are fine. */
static void
decode_utf8(void)
{
	char	 out[64];
	size_t	 n;

	T_EQ_INT(dec("%E2%82%AC", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\xe2\x82\xac");
	T_EQ_INT(n, 3);
	T_EQ_INT(dec("%F0%9F%98%80!", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\xf0\x9f\x98\x80!");
	T_EQ_INT(n, 5);
	/* Raw (unescaped) UTF-8 passes through. */
	T_EQ_INT(dec("caf\xc3\xa9", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "caf\xc3\xa9");
	/* Mixed: first byte escaped, continuation raw. */
	T_EQ_INT(dec("%C3\xa9", out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "\xc3\xa9");
	T_EQ_INT(dec("%FF", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%C3", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%C3x", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%80", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%C0%AF", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%ED%A0%80", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%F4%90%80%80", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("\xff", out, sizeof(out), &n), TREATY_E_INVALID);
	T_EQ_INT(dec("%E2%82", out, sizeof(out), &n), TREATY_E_INVALID);
}

/* A short output buffer gives TREATY_E_SPACE; an exact fit works. */
static void
decode_space(void)
{
	char	 out[8];
	size_t	 n = 99;

	memset(out, 'X', sizeof(out));
	T_EQ_INT(dec("abcd", out, 4, &n), TREATY_E_SPACE);
	T_EQ_STR(out, "");
	T_EQ_INT(out[4], 'X');		/* nothing written past outsz */
	T_EQ_INT(dec("abcd", out, 5, &n), TREATY_OK);
	T_EQ_STR(out, "abcd");
	T_EQ_INT(n, 4);
	/* Size counts decoded bytes, not encoded ones. */
	T_EQ_INT(dec("%41%42%43%44", out, 5, &n), TREATY_OK);
	T_EQ_STR(out, "ABCD");
	T_EQ_INT(dec("", out, 1, &n), TREATY_OK);
	T_EQ_STR(out, "");
	T_EQ_INT(dec("", out, 0, &n), TREATY_E_SPACE);
	T_EQ_INT(dec("a", NULL, 0, &n), TREATY_E_SPACE);
	/* Invalid input wins over lack of space. */
	T_EQ_INT(dec("abcdefgh%zz", out, 2, &n), TREATY_E_INVALID);
	T_EQ_INT(treaty_pct_decode(NULL, 1, out, sizeof(out), &n),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_pct_decode(NULL, 0, out, sizeof(out), &n), TREATY_OK);
	T_EQ_STR(out, "");
}

/* Encode with an ample buffer and return the result (static buffer). */
static const char *
enc(const char *v, size_t vlen, int *rc)
{
	static char	 out[256];

	*rc = treaty_pct_encode(v, vlen, out, sizeof(out));
	return (out);
}

/* Space, quote, percent, controls, DEL and non-ASCII are escaped. */
static void
encode(void)
{
	static const char	 safe[] =
	    "plain-Text_1.~!#$&'()*+,/:;<=>?@[\\]^`{|}";
	const char		*s;
	int			 rc;

	s = enc(safe, strlen(safe), &rc);
	T_EQ_STR(s, safe);
	T_EQ_INT(rc, strlen(safe));
	s = enc("a b", 3, &rc);
	T_EQ_STR(s, "a%20b");
	T_EQ_INT(rc, 5);
	s = enc("say \"hi\"", 8, &rc);
	T_EQ_STR(s, "say%20%22hi%22");
	s = enc("100%", 4, &rc);
	T_EQ_STR(s, "100%25");
	s = enc("caf\xc3\xa9", 5, &rc);
	T_EQ_STR(s, "caf%C3%A9");
	T_EQ_INT(rc, 9);
	s = enc("\x7f", 1, &rc);
	T_EQ_STR(s, "%7F");
	s = enc("\t\r\n\x01\x1f", 5, &rc);
	T_EQ_STR(s, "%09%0D%0A%01%1F");
	s = enc("a\0b", 3, &rc);
	T_EQ_STR(s, "a%00b");
	T_EQ_INT(rc, 5);
	s = enc("\xff\x80", 2, &rc);
	T_EQ_STR(s, "%FF%80");
	s = enc("", 0, &rc);
	T_EQ_STR(s, "");
	T_EQ_INT(rc, 0);
	s = enc(NULL, 0, &rc);
	T_EQ_INT(rc, 0);
	s = enc(NULL, 1, &rc);
	T_EQ_INT(rc, TREATY_E_INVALID);
}

/* Every byte value round-trips through encode then decode, except NUL. */
static void
encode_roundtrip(void)
{
	char	 in[256], mid[1024], out[512];
	size_t	 n, i;
	int	 rc;

	/* Bytes 1-127: all ASCII. */
	for (i = 1; i < 128; i++)
		in[i - 1] = (char)i;
	rc = treaty_pct_encode(in, 127, mid, sizeof(mid));
	T_ASSERT(rc > 127);
	T_EQ_INT(strlen(mid), rc);
	T_EQ_INT(treaty_pct_decode(mid, (size_t)rc, out, sizeof(out), &n),
	    TREATY_OK);
	T_EQ_INT(n, 127);
	T_ASSERT(memcmp(in, out, 127) == 0);
	/* Encoded output contains only 0x21-0x7E, no '"'. */
	for (i = 0; i < (size_t)rc; i++)
		T_ASSERT(mid[i] > 0x20 && mid[i] < 0x7f && mid[i] != '"');
}

/* A short output buffer gives TREATY_E_SPACE; an exact fit works. */
static void
encode_space(void)
{
	char	 out[8];

	memset(out, 'X', sizeof(out));
	T_EQ_INT(treaty_pct_encode("a b", 3, out, 5), TREATY_E_SPACE);
	T_EQ_INT(out[5], 'X');
	T_EQ_INT(treaty_pct_encode("a b", 3, out, 6), 5);
	T_EQ_STR(out, "a%20b");
	T_EQ_INT(treaty_pct_encode("abc", 3, out, 3), TREATY_E_SPACE);
	T_EQ_INT(treaty_pct_encode("abc", 3, out, 4), 3);
	T_EQ_INT(treaty_pct_encode("", 0, out, 1), 0);
	T_EQ_INT(treaty_pct_encode("", 0, NULL, 0), TREATY_E_SPACE);
	T_EQ_INT(treaty_pct_encode("\xff", 1, out, 3), TREATY_E_SPACE);
	T_EQ_INT(treaty_pct_encode("\xff", 1, out, 4), 3);
}

/* Extension names: 1-20 of a-z0-9. */
static void
extension_name(void)
{
	T_EQ_INT(treaty_ce_extension_name_valid("traceparent"), 1);
	T_EQ_INT(treaty_ce_extension_name_valid("a"), 1);
	T_EQ_INT(treaty_ce_extension_name_valid("0"), 1);
	T_EQ_INT(treaty_ce_extension_name_valid("abcdefghij0123456789"), 1);
	T_EQ_INT(treaty_ce_extension_name_valid("abcdefghij0123456789x"), 0);
	T_EQ_INT(treaty_ce_extension_name_valid(""), 0);
	T_EQ_INT(treaty_ce_extension_name_valid(NULL), 0);
	T_EQ_INT(treaty_ce_extension_name_valid("Trace"), 0);
	T_EQ_INT(treaty_ce_extension_name_valid("trace-id"), 0);
	T_EQ_INT(treaty_ce_extension_name_valid("trace_id"), 0);
	T_EQ_INT(treaty_ce_extension_name_valid("trace id"), 0);
	T_EQ_INT(treaty_ce_extension_name_valid("caf\xc3\xa9"), 0);
}

/* RFC 3339 date-times that are valid. */
static void
rfc3339_valid(void)
{
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05.123Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05.1Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05.123456789Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1985-04-12T23:20:50.52Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1996-12-19T16:39:57-08:00"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1937-01-01T12:00:27.87+00:20"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+23:59"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05-00:00"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02t03:04:05z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02t03:04:05.5+01:00"), 1);
	T_EQ_INT(treaty_rfc3339_valid("0000-01-01T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("9999-12-31T23:59:59Z"), 1);
}

/* Calendar checks: months, day counts, leap years. */
static void
rfc3339_calendar(void)
{
	T_EQ_INT(treaty_rfc3339_valid("2026-00-01T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-13-01T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-00T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-31T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-32T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-04-30T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-04-31T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-02-28T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-02-29T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-02-30T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2024-02-29T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2024-02-30T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2000-02-29T00:00:00Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1900-02-29T00:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-12-31T00:00:00Z"), 1);
}

/* Clock and offset ranges; leap seconds only at 23:59:60 UTC. */
static void
rfc3339_clock(void)
{
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T24:00:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T23:60:00Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T23:59:61Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+24:00"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+01:60"), 0);
	T_EQ_INT(treaty_rfc3339_valid("1990-12-31T23:59:60Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1990-12-31T15:59:60-08:00"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1991-01-01T05:29:60+05:30"), 1);
	T_EQ_INT(treaty_rfc3339_valid("1990-12-31T23:59:60.5Z"), 1);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T12:00:60Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("1990-12-31T23:59:60+01:00"), 0);
}

/* Syntax: separators, digit counts, offsets, trailing bytes. */
static void
rfc3339_syntax(void)
{
	T_EQ_INT(treaty_rfc3339_valid(""), 0);
	T_EQ_INT(treaty_rfc3339_valid(NULL), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02 03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02_03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-1-02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("26-01-02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("20260-01-02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T3:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05.Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05,5Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+0100"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+01"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+1:00"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05ZZ"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05Z "), 0);
	T_EQ_INT(treaty_rfc3339_valid(" 2026-01-02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05UTC"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026/01/02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05+01:00:00"), 0);
	T_EQ_INT(treaty_rfc3339_valid("+2026-01-02T03:04:05Z"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:05.123"), 0);
	T_EQ_INT(treaty_rfc3339_valid("2026-01-02T03:04:0\xc3\xa9Z"), 0);
}

/* Valid UTF-8 of every length is accepted. */
static void
utf8_valid(void)
{
	T_EQ_INT(treaty_utf8_valid("", 0), 1);
	T_EQ_INT(treaty_utf8_valid(NULL, 0), 1);
	T_EQ_INT(treaty_utf8_valid(NULL, 1), 0);
	T_EQ_INT(treaty_utf8_valid("ascii", 5), 1);
	T_EQ_INT(treaty_utf8_valid("a\0b", 3), 1);	/* U+0000 is UTF-8 */
	T_EQ_INT(treaty_utf8_valid("\x7f", 1), 1);
	T_EQ_INT(treaty_utf8_valid("\xc2\x80", 2), 1);	/* U+0080 */
	T_EQ_INT(treaty_utf8_valid("\xdf\xbf", 2), 1);	/* U+07FF */
	T_EQ_INT(treaty_utf8_valid("\xe0\xa0\x80", 3), 1); /* U+0800 */
	T_EQ_INT(treaty_utf8_valid("\xed\x9f\xbf", 3), 1); /* U+D7FF */
	T_EQ_INT(treaty_utf8_valid("\xee\x80\x80", 3), 1); /* U+E000 */
	T_EQ_INT(treaty_utf8_valid("\xef\xbf\xbf", 3), 1); /* U+FFFF */
	T_EQ_INT(treaty_utf8_valid("\xf0\x90\x80\x80", 4), 1); /* U+10000 */
	T_EQ_INT(treaty_utf8_valid("\xf4\x8f\xbf\xbf", 4), 1); /* U+10FFFF */
	T_EQ_INT(treaty_utf8_valid("\xe2\x82\xac\xf0\x9f\x98\x80", 7), 1);
}

/* Overlongs, surrogates, out-of-range and broken sequences are refused. */
static void
utf8_invalid(void)
{
	/* Overlong forms. */
	T_EQ_INT(treaty_utf8_valid("\xc0\x80", 2), 0);
	T_EQ_INT(treaty_utf8_valid("\xc1\xbf", 2), 0);
	T_EQ_INT(treaty_utf8_valid("\xe0\x80\x80", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xe0\x9f\xbf", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xf0\x80\x80\x80", 4), 0);
	T_EQ_INT(treaty_utf8_valid("\xf0\x8f\xbf\xbf", 4), 0);
	/* Surrogates U+D800-DFFF. */
	T_EQ_INT(treaty_utf8_valid("\xed\xa0\x80", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xed\xbf\xbf", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xed\xa0\xbd\xed\xb8\x80", 6), 0);
	/* Above U+10FFFF. */
	T_EQ_INT(treaty_utf8_valid("\xf4\x90\x80\x80", 4), 0);
	T_EQ_INT(treaty_utf8_valid("\xf5\x80\x80\x80", 4), 0);
	T_EQ_INT(treaty_utf8_valid("\xf8\x88\x80\x80\x80", 5), 0);
	T_EQ_INT(treaty_utf8_valid("\xff", 1), 0);
	T_EQ_INT(treaty_utf8_valid("\xfe", 1), 0);
	/* Stray continuations and truncation. */
	T_EQ_INT(treaty_utf8_valid("\x80", 1), 0);
	T_EQ_INT(treaty_utf8_valid("a\xbf", 2), 0);
	T_EQ_INT(treaty_utf8_valid("\xc3", 1), 0);
	T_EQ_INT(treaty_utf8_valid("\xe2\x82", 2), 0);
	T_EQ_INT(treaty_utf8_valid("\xf0\x9f\x98", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xc3" "a", 2), 0);
	T_EQ_INT(treaty_utf8_valid("\xe2\x82" "a", 3), 0);
	T_EQ_INT(treaty_utf8_valid("\xc3\xa9\xa9", 3), 0);
	/* The length is honoured: a valid prefix cut mid-sequence. */
	T_EQ_INT(treaty_utf8_valid("\xc3\xa9", 1), 0);
}

/*
 * treaty_utf8_valid passes over ASCII eight bytes at a time between
 * sequences: the same answers with every sequence above at every place
 * in a longer text (0 to 17 ASCII bytes before it and after it), so
 * that each one starts, straddles and ends at every offset of a word.
 */
static void
utf8_aligned(void)
{
	static const struct {
		const char	*s;
		int		 valid;
	} seq[] = {
		{ "\xc2\x80", 1 }, { "\xe0\xa0\x80", 1 },
		{ "\xf0\x90\x80\x80", 1 }, { "\xf4\x8f\xbf\xbf", 1 },
		{ "\xe2\x82\xac\xf0\x9f\x98\x80", 1 },
		{ "\xc0\x80", 0 }, { "\xed\xa0\x80", 0 },
		{ "\xf4\x90\x80\x80", 0 }, { "\xff", 0 }, { "\x80", 0 },
		{ "\xc3", 0 }, { "\xe2\x82", 0 }, { "\xf0\x9f\x98", 0 },
	};
	char	 buf[64];
	size_t	 i, before, after, n, len;
	int	 bad = 0;

	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		n = strlen(seq[i].s);
		for (before = 0; before < 18; before++)
			for (after = 0; after < 18; after++) {
				memset(buf, 'a', sizeof(buf));
				memcpy(buf + before, seq[i].s, n);
				len = before + n + after;
				if (treaty_utf8_valid(buf, len) !=
				    seq[i].valid && bad++ == 0)
					t_fail(__FILE__, __LINE__, "  case %zu "
					    "with %zu before, %zu after", i,
					    before, after);
			}
	}
	T_EQ_INT(bad, 0);
	/*
	 * A lead byte then eight ASCII bytes: not skipped as a word (the
	 * continuation after them would complete the sequence).
	 */
	T_EQ_INT(treaty_utf8_valid("\xc3" "abcdefgh", 9), 0);
	T_EQ_INT(treaty_utf8_valid("\xc3" "abcdefgh" "\xa9", 10), 0);
	T_EQ_INT(treaty_utf8_valid("\xe2" "abcdefgh" "\x82\xac", 11), 0);
	T_EQ_INT(treaty_utf8_valid("abcdefgh" "\xe2\x82" "abcdefgh", 18), 0);
	/* ASCII of every length up to three words, DEL and NUL in it. */
	memset(buf, 'a', sizeof(buf));
	buf[5] = '\x7f';
	buf[13] = '\0';
	for (len = 0; len <= 24; len++)
		T_EQ_INT(treaty_utf8_valid(buf, len), 1);
}

/* One date-time read: "seconds.nanoseconds", or "invalid". */
static const char *
parsed(const char *s)
{
	static char	 buf[64];
	int64_t		 t;
	long		 ns;

	if (treaty_rfc3339_parse(s, &t, &ns) != TREATY_OK)
		return "invalid";
	snprintf(buf, sizeof(buf), "%lld.%09ld", (long long)t, ns);
	return buf;
}

/*
 * Reading a date-time: the Unix time (against values from date(1) -u +%s),
 * offsets, fractions, the leap second, days before 1970, what is refused.
 */
static void
rfc3339_parse(void)
{
	T_EQ_STR(parsed("1970-01-01T00:00:00Z"), "0.000000000");
	T_EQ_STR(parsed("2026-12-02T00:31:12Z"), "1796171472.000000000");
	T_EQ_STR(parsed("2026-12-02T00:31:12.5Z"), "1796171472.500000000");
	T_EQ_STR(parsed("2026-12-02T00:31:12.123456789123z"),
	    "1796171472.123456789");
	T_EQ_STR(parsed("2026-12-02T01:31:12+01:00"), "1796171472.000000000");
	T_EQ_STR(parsed("2026-12-01T19:01:12-05:30"), "1796171472.000000000");
	T_EQ_STR(parsed("2024-02-29T12:00:00Z"), "1709208000.000000000");
	T_EQ_STR(parsed("2000-03-01T00:00:00Z"), "951868800.000000000");
	T_EQ_STR(parsed("1969-12-31T23:59:59Z"), "-1.000000000");
	T_EQ_STR(parsed("2016-12-31T23:59:60Z"), "1483228799.999999999");
	T_EQ_STR(parsed("2017-01-01T00:59:60+01:00"), "1483228799.999999999");
	T_EQ_STR(parsed("2023-02-29T00:00:00Z"), "invalid");
	T_EQ_STR(parsed("2026-12-02T00:31:60Z"), "invalid");
	T_EQ_STR(parsed("2026-12-02 00:31:12Z"), "invalid");
	T_EQ_STR(parsed("2026-12-02T00:31:12"), "invalid");
	T_EQ_STR(parsed(""), "invalid");
	T_EQ_INT(treaty_rfc3339_parse(NULL, NULL, NULL), TREATY_E_INVALID);
	T_EQ_INT(treaty_rfc3339_parse("2026-12-02T00:31:12Z", NULL, NULL),
	    TREATY_OK);
}

/* Writing one: what the reader reads back, fraction digits, refusals. */
static void
rfc3339_format(void)
{
	char	 b[TREATY_RFC3339_MAX];

	T_EQ_INT(treaty_rfc3339_format(0, 0, 0, b, sizeof(b)), 20);
	T_EQ_STR(b, "1970-01-01T00:00:00Z");
	T_EQ_INT(treaty_rfc3339_format(1796171472, 5000, 9, b, sizeof(b)),
	    30);
	T_EQ_STR(b, "2026-12-02T00:31:12.000005000Z");
	T_EQ_STR(parsed(b), "1796171472.000005000");
	treaty_rfc3339_format(1796171472, 123999999, 3, b, sizeof(b));
	T_EQ_STR(b, "2026-12-02T00:31:12.123Z");
	treaty_rfc3339_format(1709208000, 999999999, 9, b, sizeof(b));
	T_EQ_STR(b, "2024-02-29T12:00:00.999999999Z");
	treaty_rfc3339_format(951868800, 1, 1, b, sizeof(b));
	T_EQ_STR(b, "2000-03-01T00:00:00.0Z");
	/* Too small: an error and "", never a truncated time. */
	T_EQ_INT(treaty_rfc3339_format(1700000000, 0, 0, b, 10),
	    TREATY_E_SPACE);
	T_EQ_STR(b, "");
	/* Past year 9999: not a time treaty_rfc3339_valid would take. */
	T_EQ_INT(treaty_rfc3339_format(253402300799LL, 0, 0, b, sizeof(b)),
	    20);
	T_EQ_STR(b, "9999-12-31T23:59:59Z");
	T_EQ_INT(treaty_rfc3339_format(253402300800LL, 0, 0, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_STR(b, "");
	T_EQ_INT(treaty_rfc3339_format(-1, 0, 3, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_rfc3339_format(0, 1000000000L, 3, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_rfc3339_format(0, 0, 10, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_rfc3339_format(0, 0, 0, b, 20), TREATY_E_SPACE);
}

static const struct t_case cases[] = {
	{ "decode basic", decode_basic },
	{ "decode hex either case", decode_hex_case },
	{ "decode bad escapes", decode_bad_escape },
	{ "decode refuses NUL", decode_nul },
	{ "decode utf-8", decode_utf8 },
	{ "decode output space", decode_space },
	{ "encode", encode },
	{ "encode decode round trip", encode_roundtrip },
	{ "encode output space", encode_space },
	{ "extension names", extension_name },
	{ "rfc3339 valid", rfc3339_valid },
	{ "rfc3339 calendar", rfc3339_calendar },
	{ "rfc3339 clock and leap second", rfc3339_clock },
	{ "rfc3339 syntax", rfc3339_syntax },
	{ "rfc3339 read as Unix time", rfc3339_parse },
	{ "rfc3339 written from Unix time", rfc3339_format },
	{ "utf8 valid", utf8_valid },
	{ "utf8 invalid", utf8_invalid },
	{ "utf8 at every alignment", utf8_aligned },
};

/* Run the suite; exit 1 when a case failed. */
int
main(void)
{
	return (t_run("cloudevent", cases, T_NCASES(cases)) ? 1 : 0);
}
