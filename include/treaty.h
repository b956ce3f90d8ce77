/*
 * libtreaty: the pure pieces of the treaty protocol, shared by the relay,
 * the treaty client and any C subscriber.
 *
 * No global state, nothing printed, nothing aborts: every call returns a
 * value or an error code.  All functions are safe to call from any thread.
 * Strings are NUL-terminated unless a length is passed beside them.
 */
#ifndef TREATY_H
#define TREATY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TREATY_VERSION		"0.1.0"

/* Limits of the suite grammar. */
#define TREATY_TOKEN_MAX	64	/* bytes in one subject or type token */
#define TREATY_SUBJECT_MAX	(5 * TREATY_TOKEN_MAX + 4)
#define TREATY_EXT_NAME_MAX	20	/* CloudEvents extension attribute name */

/* Error codes (negative) returned by the calls below. */
enum treaty_err {
	TREATY_OK = 0,
	TREATY_E_INVALID = -1,		/* argument or input not valid */
	TREATY_E_SPACE = -2,		/* output buffer too small */
	TREATY_E_SIG_MISSING = -3,	/* no signature header */
	TREATY_E_SIG_MALFORMED = -4,	/* header not t=<unix>,v1=<hex>[,v1=...] */
	TREATY_E_SIG_STALE = -5,	/* timestamp outside the tolerance */
	TREATY_E_SIG_MISMATCH = -6,	/* no v1= matches any secret */
	TREATY_E_CRYPTO = -7		/* OpenSSL failed */
};

/* Short static text for an error code. */
const char	*treaty_strerror(int err);

/*
 * Subjects, patterns and types (subject.c).
 *
 * Suite subject: evt|audit . scope . product . entity . verb, exactly five
 * tokens of 1-64 bytes from A-Za-z0-9_-.
 * Pattern: NATS subject with wildcards, '*' one token, '>' one or more
 * trailing tokens (last token only); other tokens as in a suite subject.
 * Suite type: namespace . product . entity . verb . v<major>, five tokens of
 * 1-64 from A-Za-z0-9_-, major a decimal number.
 */
int	 treaty_subject_valid(const char *subject);		/* 1 or 0 */
int	 treaty_pattern_valid(const char *pattern);		/* 1 or 0 */
int	 treaty_pattern_match(const char *pattern, const char *subject); /* 1 or 0 */
/* 1 when pattern can only match subjects that inner also matches. */
int	 treaty_pattern_within(const char *pattern, const char *inner);
int	 treaty_type_valid(const char *type);			/* 1 or 0 */
/* 1 when type's product, entity and verb equal subject's; both must be valid. */
int	 treaty_type_matches_subject(const char *type, const char *subject);

/*
 * CloudEvents HTTP binding helpers (cloudevent.c).
 */

/*
 * Percent-decode a binary-mode header value into out (outsz bytes, result
 * NUL-terminated, length in *outlen).  Fails with TREATY_E_INVALID on a bad
 * %XX sequence, a decoded NUL, or bytes that are not valid UTF-8, and with
 * TREATY_E_SPACE when the result and its NUL do not fit.
 */
int	 treaty_pct_decode(const char *in, size_t inlen, char *out,
	    size_t outsz, size_t *outlen);
/*
 * Percent-encode value (vlen bytes) as the HTTP binding says: space, '"',
 * '%' and every byte outside 0x21-0x7E become %XX.  Returns the encoded
 * length (excluding NUL) or TREATY_E_SPACE.
 */
int	 treaty_pct_encode(const char *value, size_t vlen, char *out,
	    size_t outsz);
/* 1 when name is a valid extension attribute name (1-20 of a-z0-9). */
int	 treaty_ce_extension_name_valid(const char *name);
/* 1 when s is an RFC 3339 date-time (e.g. 2026-01-02T03:04:05.123Z). */
int	 treaty_rfc3339_valid(const char *s);
/*
 * The same, read: seconds since the Unix epoch into *unix_s and
 * nanoseconds into *nsec (either may be NULL).  TREATY_OK, or
 * TREATY_E_INVALID when s is not one.  A leap second (23:59:60 UTC) reads
 * as 23:59:59.999999999; digits of the fraction past the ninth are dropped.
 */
int	 treaty_rfc3339_parse(const char *s, int64_t *unix_s, long *nsec);
/*
 * The other way: unix_s seconds and nsec nanoseconds since the epoch as
 * an RFC 3339 date-time in UTC with digits (0-9) digits of fraction,
 * truncated, into out (TREATY_RFC3339_MAX bytes is enough).  Returns
 * the length, TREATY_E_INVALID (before 1970, nsec out of range) or
 * TREATY_E_SPACE.
 */
#define TREATY_RFC3339_MAX	40
int	 treaty_rfc3339_format(int64_t unix_s, long nsec, int digits,
	    char *out, size_t outsz);
/* 1 when s (len bytes) is valid UTF-8. */
int	 treaty_utf8_valid(const char *s, size_t len);

/*
 * Signatures (sign.c): x-treaty-signature = t=<unix>,v1=<hex>[,v1=<hex>...]
 * where hex = lowercase HMAC-SHA256(secret, "<t>.<id>.<body>").
 */
#define TREATY_SIG_HEX_LEN	64
#define TREATY_SIG_HEADER	"x-treaty-signature"
#define TREATY_SIG_TOLERANCE	300	/* seconds, the default */
/* Secrets one subscriber may have at once (rotation); the relay's limit. */
#define TREATY_MAX_SECRETS	8
/* Room for treaty_sig_sign's value with n secrets, NUL included. */
#define TREATY_SIG_HEADER_SIZE(n)	(24 + (4 + TREATY_SIG_HEX_LEN) * (n))
/* Room for treaty_sw_sign's value with n secrets, NUL included. */
#define TREATY_SW_HEADER_SIZE(n)	(4 + 48 * (n))

struct treaty_secret {
	const void	*key;
	size_t		 len;
};

/* HMAC-SHA256 over "<t>.<id>.<body>" as 64 lowercase hex digits + NUL. */
int	 treaty_sig_hmac_hex(const void *key, size_t keylen, int64_t t,
	    const char *id, const void *body, size_t bodylen,
	    char out[TREATY_SIG_HEX_LEN + 1]);
/*
 * Build the header value for t with one v1= per secret (newest first).
 * Returns its length or a negative error.
 */
int	 treaty_sig_sign(const struct treaty_secret *secrets, size_t nsecrets,
	    int64_t t, const char *id, const void *body, size_t bodylen,
	    char *out, size_t outsz);
/*
 * Verify a header value against any of the secrets, in constant time per
 * comparison.  now is the current unix time, tolerance in seconds (0 means
 * TREATY_SIG_TOLERANCE).  Returns TREATY_OK or TREATY_E_SIG_*
 * (TREATY_E_INVALID for bad arguments, TREATY_E_CRYPTO if OpenSSL fails).
 */
int	 treaty_sig_verify(const struct treaty_secret *secrets,
	    size_t nsecrets, const char *header, const char *id,
	    const void *body, size_t bodylen, int64_t now, int64_t tolerance);

/*
 * Standard Webhooks (standardwebhooks.com) webhook-signature value for id
 * and t: "v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>" per secret,
 * space-separated.  A secret "whsec_<base64>" is used as its decoded bytes,
 * any other as its own bytes.  Returns the length or a negative error.
 */
int	 treaty_sw_sign(const struct treaty_secret *secrets, size_t nsecrets,
	    const char *id, int64_t t, const void *body, size_t bodylen,
	    char *out, size_t outsz);

/*
 * Secrets prepared for many signatures: each one's HMAC key set-up (its
 * bytes for x-treaty-signature, the decoded "whsec_" bytes for
 * webhook-signature) is done once, not in every call; about a third of
 * signing a small event.  The caller's key bytes may go once it returns
 * (OpenSSL keeps its own copy in the object until treaty_keys_free).  It
 * is used by one thread at a time.  treaty_keys_new returns NULL when
 * OpenSSL fails or a key is NULL with a length; the signing calls answer
 * as treaty_sig_sign and treaty_sw_sign would with the same secrets (a
 * malformed whsec_ secret: TREATY_E_INVALID from treaty_keys_sw_sign).
 */
struct treaty_keys;
struct treaty_keys	*treaty_keys_new(const struct treaty_secret *secrets,
			    size_t nsecrets);
void	 treaty_keys_free(struct treaty_keys *k);
int	 treaty_keys_sig_sign(struct treaty_keys *k, int64_t t,
	    const char *id, const void *body, size_t bodylen, char *out,
	    size_t outsz);
int	 treaty_keys_sw_sign(struct treaty_keys *k, const char *id, int64_t t,
	    const void *body, size_t bodylen, char *out, size_t outsz);

/* SHA-256 of data as 64 lowercase hex digits + NUL (token hashing). */
int	 treaty_sha256_hex(const void *data, size_t len, char out[65]);
/* Constant-time equality of two equal-length buffers: 1 equal, 0 not. */
int	 treaty_memeq(const void *a, const void *b, size_t len);

/*
 * Backoff (backoff.c): equal jitter.  For attempt n >= 1 the nominal delay is
 * d = min(cap_ms, base_ms * 2^(n-1)); the result is uniform in [d/2, d],
 * drawn from rnd (any 32-bit random value supplied by the caller).
 * Attempt 0 counts as 1; the result saturates at the cap, never overflows.
 */
int64_t	 treaty_backoff_nominal_ms(unsigned attempt, int64_t base_ms,
	    int64_t cap_ms);
int64_t	 treaty_backoff_ms(unsigned attempt, int64_t base_ms, int64_t cap_ms,
	    uint32_t rnd);

#ifdef __cplusplus
}
#endif

#endif /* TREATY_H */
