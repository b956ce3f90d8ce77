/*
 * cloudevent.c: helpers for the CloudEvents 1.0 HTTP binding in binary mode:
 * percent-encoding of header values, extension attribute names, RFC 3339
 * timestamps and UTF-8 validity.
 *
 * Pure functions; no state, callable from any thread.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "treaty.h"

/*
 * Incremental UTF-8 checker (RFC 3629): refuses overlong forms, surrogates,
 * code points above U+10FFFF, stray continuation bytes and truncation.
 */
struct utf8 {
	unsigned	 need;		/* continuation bytes still expected */
	unsigned char	 lo, hi;	/* allowed range of the next one */
};

/* Reset the checker to the start of a sequence. */
static void
utf8_init(struct utf8 *u)
{
	u->need = 0;
	u->lo = 0x80;
	u->hi = 0xBF;
}

/* Feed one byte; 0 when it makes the input invalid. */
static int
utf8_step(struct utf8 *u, unsigned char b)
{
	if (u->need > 0) {
		if (b < u->lo || b > u->hi)
			return (0);
		u->need--;
		u->lo = 0x80;
		u->hi = 0xBF;
		return (1);
	}
	if (b < 0x80)
		return (1);
	if (b >= 0xC2 && b <= 0xDF)
		u->need = 1;
	else if (b == 0xE0) {
		u->need = 2;
		u->lo = 0xA0;		/* no overlong 3-byte forms */
	} else if (b == 0xED) {
		u->need = 2;
		u->hi = 0x9F;		/* no surrogates D800-DFFF */
	} else if (b >= 0xE1 && b <= 0xEF)
		u->need = 2;
	else if (b == 0xF0) {
		u->need = 3;
		u->lo = 0x90;		/* no overlong 4-byte forms */
	} else if (b >= 0xF1 && b <= 0xF3)
		u->need = 3;
	else if (b == 0xF4) {
		u->need = 3;
		u->hi = 0x8F;		/* nothing above U+10FFFF */
	} else
		return (0);		/* 80-C1, F5-FF */
	return (1);
}

/* 1 when the checker is not in the middle of a sequence. */
static int
utf8_done(const struct utf8 *u)
{
	return (u->need == 0);
}

/* Value of hex digit c, or -1. */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* Percent-decode a header value, refusing bad escapes, NUL and bad UTF-8. */
int
treaty_pct_decode(const char *in, size_t inlen, char *out, size_t outsz,
    size_t *outlen)
{
	struct utf8	 u;
	size_t		 i, n = 0;
	int		 hi, lo;
	unsigned char	 b;

	if (out != NULL && outsz > 0)
		out[0] = '\0';
	if (outlen != NULL)
		*outlen = 0;
	if ((in == NULL && inlen > 0) || (out == NULL && outsz > 0))
		return (TREATY_E_INVALID);
	/* The usual value has nothing encoded: check it and copy it. */
	if (inlen > 0 && inlen < outsz && memchr(in, '%', inlen) == NULL) {
		if (memchr(in, '\0', inlen) != NULL ||
		    !treaty_utf8_valid(in, inlen))
			goto invalid;
		memcpy(out, in, inlen);
		out[inlen] = '\0';
		if (outlen != NULL)
			*outlen = inlen;
		return (TREATY_OK);
	}
	utf8_init(&u);
	for (i = 0; i < inlen; i++) {
		b = (unsigned char)in[i];
		if (b == '%') {
			if (inlen - i < 3)
				goto invalid;
			if ((hi = hexval(in[i + 1])) < 0 ||
			    (lo = hexval(in[i + 2])) < 0)
				goto invalid;
			b = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		/* ASCII outside a sequence needs no state machine. */
		if (b == 0 || ((b >= 0x80 || u.need > 0) && !utf8_step(&u, b)))
			goto invalid;
		if (n + 1 < outsz)
			out[n] = (char)b;
		n++;
	}
	if (!utf8_done(&u))
		goto invalid;
	if (n + 1 > outsz) {
		if (outsz > 0)
			out[0] = '\0';
		return (TREATY_E_SPACE);
	}
	out[n] = '\0';
	if (outlen != NULL)
		*outlen = n;
	return (TREATY_OK);

invalid:
	if (outsz > 0)
		out[0] = '\0';
	return (TREATY_E_INVALID);
}

/* 1 when byte b must be percent-encoded in a binary-mode header value. */
static int
pct_needed(unsigned char b)
{
	return (b < 0x21 || b > 0x7E || b == '"' || b == '%');
}

/* Percent-encode value into out; the encoded length or TREATY_E_SPACE. */
int
treaty_pct_encode(const char *value, size_t vlen, char *out, size_t outsz)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*v = (const unsigned char *)value;
	size_t			 i, n = 0, extra = 0;

	if ((value == NULL && vlen > 0) || (out == NULL && outsz > 0))
		return (TREATY_E_INVALID);
	for (i = 0; i < vlen; i++)
		extra += pct_needed(v[i]);
	/* Each byte to encode adds two; vlen itself fits in memory. */
	if (vlen > INT_MAX || extra > (INT_MAX - vlen) / 2) {
		if (outsz > 0)
			out[0] = '\0';
		return (TREATY_E_SPACE);
	}
	n = vlen + 2 * extra;
	if (n + 1 > outsz) {
		if (outsz > 0)
			out[0] = '\0';
		return (TREATY_E_SPACE);
	}
	if (extra == 0) {
		/* The usual value: nothing to encode. */
		if (vlen > 0)
			memcpy(out, value, vlen);
		out[vlen] = '\0';
		return ((int)vlen);
	}
	n = 0;
	for (i = 0; i < vlen; i++) {
		if (pct_needed(v[i])) {
			out[n++] = '%';
			out[n++] = hex[v[i] >> 4];
			out[n++] = hex[v[i] & 0x0F];
		} else
			out[n++] = (char)v[i];
	}
	out[n] = '\0';
	return ((int)n);
}

/* 1 when name is 1-20 of a-z0-9. */
int
treaty_ce_extension_name_valid(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return (0);
	for (i = 0; name[i] != '\0'; i++) {
		if (i >= TREATY_EXT_NAME_MAX)
			return (0);
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return (0);
	}
	return (i > 0);
}

/* Read n decimal digits at *sp into *v and advance; 0 when not digits. */
static int
digits(const char **sp, int n, int *v)
{
	const char	*s = *sp;
	int		 i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (0);
		*v = *v * 10 + (s[i] - '0');
	}
	*sp = s + n;
	return (1);
}

/* Consume the byte c at *sp; 0 when it is something else. */
static int
expect(const char **sp, char c)
{
	if (**sp != c)
		return (0);
	(*sp)++;
	return (1);
}

/* Days in month m (1-12) of year y, proleptic Gregorian. */
static int
month_days(int y, int m)
{
	static const int	 days[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return (29);
	return (days[m - 1]);
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/*
 * An RFC 3339 section 5.6 date-time: full-date "T" full-time,
 * time-secfrac optional, offset "Z" or +hh:mm/-hh:mm; "t" and "z" in either
 * case (section 5.6 NOTE).  Second 60 is accepted only where a leap second
 * can fall, at 23:59:60 UTC (section 5.7), and read as the last nanosecond
 * of second 59 (Unix time has no leap seconds).  Digits of the fraction
 * past the ninth are dropped.
 */
int
treaty_rfc3339_parse(const char *s, int64_t *unix_s, long *nsec)
{
	int	 y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0, utc, i;
	long	 ns = 0;
	int64_t	 t;

	if (s == NULL)
		return (TREATY_E_INVALID);
	if (!digits(&s, 4, &y) || !expect(&s, '-') ||
	    !digits(&s, 2, &mo) || !expect(&s, '-') || !digits(&s, 2, &d))
		return (TREATY_E_INVALID);
	if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo))
		return (TREATY_E_INVALID);
	if (!expect(&s, 'T') && !expect(&s, 't'))
		return (TREATY_E_INVALID);
	if (!digits(&s, 2, &h) || !expect(&s, ':') ||
	    !digits(&s, 2, &mi) || !expect(&s, ':') || !digits(&s, 2, &sec))
		return (TREATY_E_INVALID);
	if (h > 23 || mi > 59 || sec > 60)
		return (TREATY_E_INVALID);
	if (expect(&s, '.')) {
		if (*s < '0' || *s > '9')
			return (TREATY_E_INVALID);
		for (i = 0; *s >= '0' && *s <= '9'; s++, i++)
			if (i < 9)
				ns = ns * 10 + (*s - '0');
		for (; i < 9; i++)
			ns *= 10;
	}
	if (!expect(&s, 'Z') && !expect(&s, 'z')) {
		if (!expect(&s, '+') && !(sign = expect(&s, '-')))
			return (TREATY_E_INVALID);
		if (!digits(&s, 2, &oh) || !expect(&s, ':') ||
		    !digits(&s, 2, &om) || oh > 23 || om > 59)
			return (TREATY_E_INVALID);
	}
	if (*s != '\0')
		return (TREATY_E_INVALID);
	if (sec == 60) {
		/* local = UTC + offset, so UTC = local - offset. */
		utc = h * 60 + mi + (sign ? 1 : -1) * (oh * 60 + om);
		utc = ((utc % 1440) + 1440) % 1440;
		if (utc != 23 * 60 + 59)
			return (TREATY_E_INVALID);
		sec = 59;
		ns = 999999999;
	}
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= (sign ? -1 : 1) * (int64_t)(oh * 3600 + om * 60);
	if (unix_s != NULL)
		*unix_s = t;
	if (nsec != NULL)
		*nsec = ns;
	return (TREATY_OK);
}

/*
 * Unix time as an RFC 3339 date-time in UTC with digits (0-9) digits of
 * fraction, e.g. 2026-12-01T10:00:00.123Z; see treaty.h.
 */
int
treaty_rfc3339_format(int64_t unix_s, long nsec, int digits, char *out,
    size_t outsz)
{
	struct tm	 tm;
	time_t		 t = (time_t)unix_s;
	char		 frac[11] = "";
	long		 f = nsec;
	int		 i, n;

	if (out != NULL && outsz > 0)
		out[0] = '\0';		/* nothing half written on an error */
	/* Four digits of year: what treaty_rfc3339_valid reads back. */
	if (digits < 0 || digits > 9 || nsec < 0 || nsec > 999999999L ||
	    unix_s < 0 || gmtime_r(&t, &tm) == NULL ||
	    tm.tm_year + 1900 > 9999)
		return (TREATY_E_INVALID);
	for (i = digits; i < 9; i++)
		f /= 10;
	if (digits > 0)
		snprintf(frac, sizeof(frac), ".%0*ld", digits, f);
	n = snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02d%sZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac);
	if (n < 0 || (size_t)n >= outsz) {
		if (outsz > 0)
			out[0] = '\0';
		return (TREATY_E_SPACE);
	}
	return (n);
}

/* 1 when s is an RFC 3339 date-time (treaty_rfc3339_parse). */
int
treaty_rfc3339_valid(const char *s)
{
	return (treaty_rfc3339_parse(s, NULL, NULL) == TREATY_OK);
}

/*
 * 1 when s (len bytes) is well-formed UTF-8.  Between sequences, ASCII is
 * passed over eight bytes at a time: every structured event and batch is
 * checked whole, and most of it is ASCII.
 */
int
treaty_utf8_valid(const char *s, size_t len)
{
	struct utf8	 u;
	uint64_t	 w;
	size_t		 i = 0;

	if (s == NULL)
		return (len == 0);
	utf8_init(&u);
	while (i < len) {
		if (u.need == 0 && len - i >= 8) {
			memcpy(&w, s + i, 8);
			if ((w & 0x8080808080808080ULL) == 0) {
				i += 8;
				continue;
			}
		}
		if (((unsigned char)s[i] >= 0x80 || u.need > 0) &&
		    !utf8_step(&u, (unsigned char)s[i]))
			return (0);
		i++;
	}
	return (utf8_done(&u));
}
