/*
 * t-sign.c: unit tests of signatures (sign.c): HMAC known answers from
 * test/unit/sig-vectors.txt (made with the openssl command line by
 * gen-sig-vectors.sh), header building, every verification outcome, SHA-256
 * known answers and constant-time comparison.  Run from the repository root.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treaty.h"
#include "harness.h"

#define VECTORS		"test/unit/sig-vectors.txt"
#define T0		1700000000
#define KEY1		"secret-0123456789abcdef"
#define KEY2		"newer-secret-fedcba9876543210"

/* One known-answer vector. */
struct vector {
	char		*key;
	int64_t		 t;
	char		*id;
	unsigned char	*body;
	size_t		 bodylen;
	char		*hex;
};

/* Value of the hex digit c, or -1. */
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

/* Decode hex text of len bytes into out; 0 when it is not hex. */
static int
unhex(const char *s, size_t len, unsigned char *out)
{
	size_t	 i;
	int	 hi, lo;

	if (len % 2 != 0)
		return (0);
	for (i = 0; i < len; i += 2) {
		if ((hi = hexval(s[i])) < 0 || (lo = hexval(s[i + 1])) < 0)
			return (0);
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (1);
}

/* Split a vector line in place into v; 0 when it is not five fields. */
static int
parse_vector(char *line, struct vector *v, unsigned char *bodybuf)
{
	char	*f[5], *p = line, *tab, *end;
	size_t	 i, blen;

	for (i = 0; i < 5; i++) {
		f[i] = p;
		tab = strchr(p, '\t');
		if (i < 4) {
			if (tab == NULL)
				return (0);
			*tab = '\0';
			p = tab + 1;
		} else if (tab != NULL)
			return (0);
	}
	v->key = f[0];
	v->t = strtoll(f[1], &end, 10);
	if (*f[1] == '\0' || *end != '\0')
		return (0);
	v->id = f[2];
	blen = strlen(f[3]);
	if (!unhex(f[3], blen, bodybuf))
		return (0);
	v->body = bodybuf;
	v->bodylen = blen / 2;
	v->hex = f[4];
	return (strlen(v->hex) == TREATY_SIG_HEX_LEN);
}

/* Every vector of sig-vectors.txt matches hmac_hex, sign and verify. */
static void
known_answers(void)
{
	struct vector		 v;
	struct treaty_secret	 sec;
	unsigned char		 body[4096];
	char			*line = NULL, hex[TREATY_SIG_HEX_LEN + 1];
	char			 hdr[256], want[256];
	size_t			 cap = 0, len;
	ssize_t			 n;
	FILE			*fp;
	int			 count = 0, lineno = 0;

	if ((fp = fopen(VECTORS, "r")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot open %s (run from the "
		    "repository root)", VECTORS);
		return;
	}
	while ((n = getline(&line, &cap, fp)) != -1) {
		lineno++;
		len = (size_t)n;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (len / 2 > sizeof(body) || !parse_vector(line, &v, body)) {
			t_fail(__FILE__, __LINE__, "%s:%d: bad vector line",
			    VECTORS, lineno);
			continue;
		}
		count++;
		T_EQ_INT(treaty_sig_hmac_hex(v.key, strlen(v.key), v.t, v.id,
		    v.body, v.bodylen, hex), TREATY_OK);
		if (!T_EQ_STR(hex, v.hex))
			t_fail(__FILE__, __LINE__, "vector at %s:%d", VECTORS,
			    lineno);
		sec.key = v.key;
		sec.len = strlen(v.key);
		snprintf(want, sizeof(want), "t=%lld,v1=%s", (long long)v.t,
		    v.hex);
		T_EQ_INT(treaty_sig_sign(&sec, 1, v.t, v.id, v.body, v.bodylen,
		    hdr, sizeof(hdr)), strlen(want));
		T_EQ_STR(hdr, want);
		T_EQ_INT(treaty_sig_verify(&sec, 1, want, v.id, v.body,
		    v.bodylen, v.t, 0), TREATY_OK);
	}
	free(line);
	fclose(fp);
	T_ASSERT(count >= 15);
}

/* Bad arguments to hmac_hex are refused, leaving an empty string. */
static void
hmac_args(void)
{
	char	 hex[TREATY_SIG_HEX_LEN + 1], hex2[TREATY_SIG_HEX_LEN + 1];

	memset(hex, 'x', sizeof(hex));
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, NULL, "", 0, hex),
	    TREATY_E_INVALID);
	T_EQ_STR(hex, "");
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), -1, "id", "", 0, hex),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_hmac_hex(NULL, 3, T0, "id", "", 0, hex),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", NULL, 1,
	    hex), TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", "", 0,
	    NULL), TREATY_E_INVALID);
	/* NULL body of length 0 is the empty body; NULL key is the empty key. */
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", NULL, 0,
	    hex), TREATY_OK);
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", "", 0,
	    hex2), TREATY_OK);
	T_EQ_STR(hex, hex2);
	T_EQ_INT(treaty_sig_hmac_hex(NULL, 0, T0, "id", "b", 1, hex),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_hmac_hex("", 0, T0, "id", "b", 1, hex2),
	    TREATY_OK);
	T_EQ_STR(hex, hex2);
	/* A body with NUL bytes is hashed whole. */
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", "a\0b", 3,
	    hex), TREATY_OK);
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "id", "a\0c", 3,
	    hex2), TREATY_OK);
	T_ASSERT(strcmp(hex, hex2) != 0);
}

/* Two secrets give t=..,v1=<newest>,v1=<older>, and both verify. */
static void
sign_two_secrets(void)
{
	struct treaty_secret	 s[2] = {
		{ KEY2, sizeof(KEY2) - 1 }, { KEY1, sizeof(KEY1) - 1 }
	};
	char			 h1[TREATY_SIG_HEX_LEN + 1];
	char			 h2[TREATY_SIG_HEX_LEN + 1];
	char			 hdr[256], want[256];
	int			 n;

	T_EQ_INT(treaty_sig_hmac_hex(KEY2, strlen(KEY2), T0, "evt-1", "hello",
	    5, h2), TREATY_OK);
	T_EQ_INT(treaty_sig_hmac_hex(KEY1, strlen(KEY1), T0, "evt-1", "hello",
	    5, h1), TREATY_OK);
	snprintf(want, sizeof(want), "t=%d,v1=%s,v1=%s", T0, h2, h1);
	n = treaty_sig_sign(s, 2, T0, "evt-1", "hello", 5, hdr, sizeof(hdr));
	T_EQ_INT(n, strlen(want));
	T_EQ_STR(hdr, want);
	T_EQ_INT(strlen(hdr), 2 + 10 + 2 * (4 + 64));
	T_EQ_INT(treaty_sig_verify(&s[0], 1, hdr, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_verify(&s[1], 1, hdr, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_verify(s, 2, hdr, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	/* The brief's example, for the record (also in sig-vectors.txt). */
	T_EQ_STR(h1, "cdb0d40a3fcbd9d3155a1d17481bfd153dcca9262ce432461336c22310982243");
}

/* sign needs room for the header and its NUL; refuses bad arguments. */
static void
sign_space_and_args(void)
{
	struct treaty_secret	 s = { KEY1, sizeof(KEY1) - 1 };
	char			 hdr[256];
	size_t			 need = 2 + 10 + 4 + 64;

	memset(hdr, 'x', sizeof(hdr));
	T_EQ_INT(treaty_sig_sign(&s, 1, T0, "i", "", 0, hdr, need),
	    TREATY_E_SPACE);
	T_EQ_STR(hdr, "");
	T_EQ_INT(hdr[need], 'x');
	T_EQ_INT(treaty_sig_sign(&s, 1, T0, "i", "", 0, hdr, need + 1), need);
	T_EQ_INT(strlen(hdr), need);
	T_EQ_INT(treaty_sig_sign(&s, 1, T0, "i", "", 0, NULL, 0),
	    TREATY_E_SPACE);
	T_EQ_INT(treaty_sig_sign(&s, 0, T0, "i", "", 0, hdr, sizeof(hdr)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_sign(NULL, 1, T0, "i", "", 0, hdr, sizeof(hdr)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_sign(&s, 1, T0, NULL, "", 0, hdr, sizeof(hdr)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_sign(&s, 1, -5, "i", "", 0, hdr, sizeof(hdr)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_sign(&s, 1, T0, "i", NULL, 2, hdr, sizeof(hdr)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_sign(&s, 1, 0, "i", "", 0, hdr, sizeof(hdr)),
	    2 + 1 + 4 + 64);
	T_ASSERT(strncmp(hdr, "t=0,v1=", 7) == 0);
	T_EQ_INT(treaty_sig_sign(&s, SIZE_MAX / 2, T0, "i", "", 0, hdr,
	    sizeof(hdr)), TREATY_E_SPACE);
}

/* Sign body with KEY1 at t into hdr. */
static void
sign1(int64_t t, const char *id, const char *body, char *hdr, size_t sz)
{
	struct treaty_secret	 s = { KEY1, sizeof(KEY1) - 1 };

	T_ASSERT(treaty_sig_sign(&s, 1, t, id, body, strlen(body), hdr,
	    sz) > 0);
}

/* Verify hdr for ("evt-1", "hello") with KEY1 at now, default tolerance. */
static int
verify1(const char *hdr, int64_t now)
{
	struct treaty_secret	 s = { KEY1, sizeof(KEY1) - 1 };

	return (treaty_sig_verify(&s, 1, hdr, "evt-1", "hello", 5, now, 0));
}

/* No header, or an empty one, is SIG_MISSING. */
static void
verify_missing(void)
{
	T_EQ_INT(verify1(NULL, T0), TREATY_E_SIG_MISSING);
	T_EQ_INT(verify1("", T0), TREATY_E_SIG_MISSING);
}

/* Every malformed shape is SIG_MALFORMED, never a crash or a match. */
static void
verify_malformed(void)
{
	char	 good[256], v1[80], h[512], *big;
	size_t	 i;

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	T_EQ_INT(verify1(good, T0), TREATY_OK);
	snprintf(v1, sizeof(v1), "%s", strstr(good, "v1=") + 3);
	T_EQ_INT(strlen(v1), 64);

	T_EQ_INT(verify1("garbage", T0), TREATY_E_SIG_MALFORMED);
	T_EQ_INT(verify1(",", T0), TREATY_E_SIG_MALFORMED);
	T_EQ_INT(verify1("=", T0), TREATY_E_SIG_MALFORMED);
	T_EQ_INT(verify1(" ", T0), TREATY_E_SIG_MALFORMED);
	T_EQ_INT(verify1("t=", T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "v1=%s", v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* no t= */
	snprintf(h, sizeof(h), "t=%d", T0);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* no v1= */
	snprintf(h, sizeof(h), "t=%d,v0=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* no v1= */
	snprintf(h, sizeof(h), "t=abc,v1=%s", v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=,v1=%s", v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=-%d,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=+%d,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d.5,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=0%d,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* leading 0 */
	snprintf(h, sizeof(h), "t=%dx,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=99999999999999999999,v1=%s", v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* > int64 */
	snprintf(h, sizeof(h), "t=9223372036854775808,v1=%s", v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* INT64_MAX+1 */
	snprintf(h, sizeof(h), "t=%d,t=%d,v1=%s", T0, T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* two t= */
	/* v1 not 64 lowercase hex. */
	snprintf(h, sizeof(h), "t=%d,v1=%.63s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d,v1=%s0", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d,v1=", T0);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d,v1=%.63sg", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d,v1=%s", T0, v1);
	for (i = 0; h[i] != '\0'; i++)
		if (i > 14 && h[i] >= 'a' && h[i] <= 'f') {
			h[i] = (char)(h[i] - 'a' + 'A');
			break;
		}
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);	/* uppercase */
	/* Empty elements, trailing comma, element without '='. */
	snprintf(h, sizeof(h), "t=%d,,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "%s,", good);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), ",%s", good);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "%s,v1", good);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "%s,=x", good);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t %d,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d;v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	snprintf(h, sizeof(h), "t=%d v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	/* Malformed wins over stale. */
	T_EQ_INT(verify1("t=1,v1=zz", T0), TREATY_E_SIG_MALFORMED);

	/* Very long headers: no commas at all, only commas, many v1=. */
	if ((big = malloc(200001)) == NULL) {
		t_fail(__FILE__, __LINE__, "out of memory");
		return;
	}
	memset(big, 'a', 200000);
	big[200000] = '\0';
	T_EQ_INT(verify1(big, T0), TREATY_E_SIG_MALFORMED);
	memset(big, ',', 200000);
	T_EQ_INT(verify1(big, T0), TREATY_E_SIG_MALFORMED);
	memset(big, '=', 200000);
	T_EQ_INT(verify1(big, T0), TREATY_E_SIG_MALFORMED);
	memset(big, '9', 200000);
	memcpy(big, "t=", 2);
	T_EQ_INT(verify1(big, T0), TREATY_E_SIG_MALFORMED);
	free(big);
}

/* Spaces around elements are tolerated. */
static void
verify_whitespace(void)
{
	char	 good[256], h[512];

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	snprintf(h, sizeof(h), " t=%d ,\tv1=%s ", T0, strstr(good, "v1=") + 3);
	T_EQ_INT(verify1(h, T0), TREATY_OK);
}

/* Timestamps beyond the tolerance either way are SIG_STALE. */
static void
verify_stale(void)
{
	struct treaty_secret	 s = { KEY1, sizeof(KEY1) - 1 };
	char			 good[256], h[512];

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	T_EQ_INT(verify1(good, T0 + 300), TREATY_OK);
	T_EQ_INT(verify1(good, T0 - 300), TREATY_OK);
	T_EQ_INT(verify1(good, T0 + 301), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(good, T0 - 301), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(good, T0 + 86400), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(good, 0), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(good, INT64_MAX), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(good, INT64_MIN), TREATY_E_SIG_STALE);
	/* An explicit tolerance. */
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0 + 10,
	    10), TREATY_OK);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0 + 11,
	    10), TREATY_E_SIG_STALE);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0 - 11,
	    10), TREATY_E_SIG_STALE);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0 + 3600,
	    7200), TREATY_OK);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0,
	    INT64_MAX), TREATY_OK);
	/* Stale wins over mismatch. */
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-2", "hello", 5, T0 + 301,
	    0), TREATY_E_SIG_STALE);
	/* The largest timestamp, far from now. */
	snprintf(h, sizeof(h), "t=9223372036854775807,v1=%s",
	    strstr(good, "v1=") + 3);
	T_EQ_INT(verify1(h, INT64_MIN), TREATY_E_SIG_STALE);
	T_EQ_INT(verify1(h, INT64_MAX), TREATY_E_SIG_MISMATCH);
}

/* Wrong secret, body, id or timestamp are SIG_MISMATCH. */
static void
verify_mismatch(void)
{
	struct treaty_secret	 s1 = { KEY1, sizeof(KEY1) - 1 };
	struct treaty_secret	 s2 = { KEY2, sizeof(KEY2) - 1 };
	struct treaty_secret	 shorter = { KEY1, sizeof(KEY1) - 2 };
	char			 good[256], h[512];

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	T_EQ_INT(treaty_sig_verify(&s2, 1, good, "evt-1", "hello", 5, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&shorter, 1, good, "evt-1", "hello", 5, T0,
	    0), TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "evt-1", "hellO", 5, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "evt-1", "hello!", 6, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "evt-1", "hell", 4, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "evt-1", NULL, 0, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "evt-2", "hello", 5, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&s1, 1, good, "", "hello", 5, T0, 0),
	    TREATY_E_SIG_MISMATCH);
	/* The timestamp is covered: change t, keep v1. */
	snprintf(h, sizeof(h), "t=%d,v1=%s", T0 + 1, strstr(good, "v1=") + 3);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MISMATCH);
	/* Moving a byte between id and body changes the signed text. */
	sign1(T0, "evt-1h", "ello", good, sizeof(good));
	T_EQ_INT(verify1(good, T0), TREATY_E_SIG_MISMATCH);
	/* An all-zero v1. */
	snprintf(h, sizeof(h), "t=%d,v1=%064d", T0, 0);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MISMATCH);
}

/* Secret rotation: a match with any secret or any v1= is enough. */
static void
verify_rotation(void)
{
	struct treaty_secret	 oldonly = { KEY1, sizeof(KEY1) - 1 };
	struct treaty_secret	 newonly = { KEY2, sizeof(KEY2) - 1 };
	struct treaty_secret	 both[2] = {
		{ KEY2, sizeof(KEY2) - 1 }, { KEY1, sizeof(KEY1) - 1 }
	};
	struct treaty_secret	 three[3] = {
		{ "x-unrelated-0000000", 19 }, { KEY2, sizeof(KEY2) - 1 },
		{ KEY1, sizeof(KEY1) - 1 }
	};
	char			 hold[256], hnew[256], h[512];

	T_ASSERT(treaty_sig_sign(&oldonly, 1, T0, "evt-1", "hello", 5, hold,
	    sizeof(hold)) > 0);
	T_ASSERT(treaty_sig_sign(&newonly, 1, T0, "evt-1", "hello", 5, hnew,
	    sizeof(hnew)) > 0);
	/* The verifier rotated first: its second secret matches. */
	T_EQ_INT(treaty_sig_verify(both, 2, hold, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_verify(three, 3, hold, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_verify(both, 2, hnew, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	/* The signer rotated first: its second v1= matches. */
	T_EQ_INT(treaty_sig_sign(both, 2, T0, "evt-1", "hello", 5, h,
	    sizeof(h)) > 0, 1);
	T_EQ_INT(treaty_sig_verify(&oldonly, 1, h, "evt-1", "hello", 5, T0, 0),
	    TREATY_OK);
	T_EQ_INT(treaty_sig_verify(&newonly, 1, hold, "evt-1", "hello", 5, T0,
	    0), TREATY_E_SIG_MISMATCH);
	T_EQ_INT(treaty_sig_verify(&three[0], 1, h, "evt-1", "hello", 5, T0,
	    0), TREATY_E_SIG_MISMATCH);
}

/* Unknown schemes (v0=, v2=, ...) are ignored, whatever their value. */
static void
verify_unknown_schemes(void)
{
	char	 good[256], h[512];
	char	*v1;

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	v1 = strstr(good, "v1=") + 3;
	snprintf(h, sizeof(h), "t=%d,v0=deadbeef,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_OK);
	snprintf(h, sizeof(h), "v0=x,v1=%s,t=%d,v2=a=b=c,scheme_x-9=", v1, T0);
	T_EQ_INT(verify1(h, T0), TREATY_OK);
	snprintf(h, sizeof(h), "t=%d,v0=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
	/* A wrong v1 beside the right one does not matter. */
	snprintf(h, sizeof(h), "t=%d,v1=%064d,v1=%s", T0, 0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_OK);
	/* A key that is not a scheme name is garbage. */
	snprintf(h, sizeof(h), "t=%d,v 1=x,v1=%s", T0, v1);
	T_EQ_INT(verify1(h, T0), TREATY_E_SIG_MALFORMED);
}

/* Bad arguments to verify are TREATY_E_INVALID. */
static void
verify_args(void)
{
	struct treaty_secret	 s = { KEY1, sizeof(KEY1) - 1 };
	char			 good[256];

	sign1(T0, "evt-1", "hello", good, sizeof(good));
	T_EQ_INT(treaty_sig_verify(NULL, 1, good, "evt-1", "hello", 5, T0, 0),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_verify(&s, 0, good, "evt-1", "hello", 5, T0, 0),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, NULL, "hello", 5, T0, 0),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", NULL, 5, T0, 0),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_sig_verify(&s, 1, good, "evt-1", "hello", 5, T0, -1),
	    TREATY_E_INVALID);
}

/* SHA-256 known answers (FIPS 180-2 examples). */
static void
sha256_known(void)
{
	char	 out[65], *m;

	T_EQ_INT(treaty_sha256_hex("", 0, out), TREATY_OK);
	T_EQ_STR(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	T_EQ_INT(treaty_sha256_hex(NULL, 0, out), TREATY_OK);
	T_EQ_STR(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	T_EQ_INT(treaty_sha256_hex("abc", 3, out), TREATY_OK);
	T_EQ_STR(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	T_EQ_INT(treaty_sha256_hex(
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	    out), TREATY_OK);
	T_EQ_STR(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	if ((m = malloc(1000000)) != NULL) {
		memset(m, 'a', 1000000);
		T_EQ_INT(treaty_sha256_hex(m, 1000000, out), TREATY_OK);
		T_EQ_STR(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
		free(m);
	}
	T_EQ_INT(treaty_sha256_hex(NULL, 1, out), TREATY_E_INVALID);
	T_EQ_INT(treaty_sha256_hex("abc", 3, NULL), TREATY_E_INVALID);
}

/* Constant-time equality. */
static void
memeq(void)
{
	T_EQ_INT(treaty_memeq("abc", "abc", 3), 1);
	T_EQ_INT(treaty_memeq("abc", "abd", 3), 0);
	T_EQ_INT(treaty_memeq("xbc", "abc", 3), 0);
	T_EQ_INT(treaty_memeq("abc", "abd", 2), 1);
	T_EQ_INT(treaty_memeq("a\0c", "a\0d", 3), 0);
	T_EQ_INT(treaty_memeq("", "", 0), 1);
	T_EQ_INT(treaty_memeq(NULL, NULL, 0), 1);
	T_EQ_INT(treaty_memeq(NULL, "a", 1), 0);
	T_EQ_INT(treaty_memeq("a", NULL, 1), 0);
}

/*
 * Standard Webhooks: the specification's published test vector (secret,
 * id, timestamp, body, signature), and two secrets space-separated.
 */
static void
standard_webhooks(void)
{
	static const char	 body[] = "{\"test\": 2432232314}";
	struct treaty_secret	 sec[2] = {
		{ "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 38 },
		{ "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 38 },
	};
	char			 out[256];
	int			 n;

	n = treaty_sw_sign(sec, 1, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
	    body, strlen(body), out, sizeof(out));
	T_EQ_STR(out, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	T_EQ_INT(n, (int)strlen(out));
	n = treaty_sw_sign(sec, 2, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
	    body, strlen(body), out, sizeof(out));
	T_EQ_STR(out, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= "
	    "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	T_EQ_INT(treaty_sw_sign(sec, 1, "id", 1, body, strlen(body), out, 10),
	    TREATY_E_SPACE);
	T_EQ_STR(out, "");	/* never a truncated header */
	sec[0].key = "whsec_not!base64";
	sec[0].len = 16;
	T_EQ_INT(treaty_sw_sign(sec, 1, "id", 1, "", 0, out, sizeof(out)),
	    TREATY_E_INVALID);
}

/*
 * Prepared secrets (treaty_keys) sign exactly as the secrets themselves,
 * message after message (each call starts afresh under the same key),
 * for both kinds; a whsec_ secret that does not decode still signs
 * x-treaty-signature and refuses webhook-signature, as unprepared.
 */
static void
prepared_keys(void)
{
	static const char	 body[] = "{\"test\": 2432232314}";
	struct treaty_secret	 sec[2] = {
		{ KEY2, sizeof(KEY2) - 1 },
		{ "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 38 },
	};
	struct treaty_keys	*k;
	char			 a[512], b[512];
	int			 i;

	T_ASSERT((k = treaty_keys_new(sec, 2)) != NULL);
	for (i = 0; i < 3; i++) {
		const char	*id = i == 1 ? "evt-2" : "evt-1";
		size_t		 len = i == 2 ? 0 : strlen(body);

		T_ASSERT(treaty_sig_sign(sec, 2, T0 + i, id, body, len, a,
		    sizeof(a)) > 0);
		T_EQ_INT(treaty_keys_sig_sign(k, T0 + i, id, body, len, b,
		    sizeof(b)), (int)strlen(a));
		T_EQ_STR(b, a);
		T_ASSERT(treaty_sw_sign(sec, 2, id, T0 + i, body, len, a,
		    sizeof(a)) > 0);
		T_EQ_INT(treaty_keys_sw_sign(k, id, T0 + i, body, len, b,
		    sizeof(b)), (int)strlen(a));
		T_EQ_STR(b, a);
	}
	T_EQ_INT(treaty_keys_sig_sign(k, T0, "i", "", 0, b, 10),
	    TREATY_E_SPACE);
	T_EQ_INT(treaty_keys_sig_sign(k, T0, NULL, "", 0, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_keys_sig_sign(NULL, T0, "i", "", 0, b, sizeof(b)),
	    TREATY_E_INVALID);
	T_EQ_INT(treaty_keys_sw_sign(NULL, "i", T0, "", 0, b, sizeof(b)),
	    TREATY_E_INVALID);
	treaty_keys_free(k);
	treaty_keys_free(NULL);

	/* The published vector, from a prepared whsec_ secret. */
	T_ASSERT((k = treaty_keys_new(&sec[1], 1)) != NULL);
	T_ASSERT(treaty_keys_sw_sign(k, "msg_p5jXN8AQM9LWM0D4loKWxJek",
	    1614265330, body, strlen(body), b, sizeof(b)) > 0);
	T_EQ_STR(b, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	treaty_keys_free(k);

	sec[1].key = "whsec_not!base64";
	sec[1].len = 16;
	T_ASSERT((k = treaty_keys_new(sec, 2)) != NULL);
	T_ASSERT(treaty_sig_sign(sec, 2, T0, "i", "x", 1, a, sizeof(a)) > 0);
	T_ASSERT(treaty_keys_sig_sign(k, T0, "i", "x", 1, b, sizeof(b)) > 0);
	T_EQ_STR(b, a);
	T_EQ_INT(treaty_keys_sw_sign(k, "i", T0, "x", 1, b, sizeof(b)),
	    TREATY_E_INVALID);
	treaty_keys_free(k);
	T_ASSERT(treaty_keys_new(NULL, 1) == NULL);
}

static const struct t_case cases[] = {
	{ "Standard Webhooks signature (published vector)", standard_webhooks },
	{ "prepared keys sign the same", prepared_keys },
	{ "hmac known answers (openssl vectors)", known_answers },
	{ "hmac arguments", hmac_args },
	{ "sign with two secrets", sign_two_secrets },
	{ "sign space and arguments", sign_space_and_args },
	{ "verify missing", verify_missing },
	{ "verify malformed", verify_malformed },
	{ "verify tolerates spaces", verify_whitespace },
	{ "verify stale", verify_stale },
	{ "verify mismatch", verify_mismatch },
	{ "verify rotation", verify_rotation },
	{ "verify ignores unknown schemes", verify_unknown_schemes },
	{ "verify arguments", verify_args },
	{ "sha256 known answers", sha256_known },
	{ "memeq", memeq },
};

/* Run the suite; exit 1 when a case failed. */
int
main(void)
{
	return (t_run("sign", cases, T_NCASES(cases)) ? 1 : 0);
}
