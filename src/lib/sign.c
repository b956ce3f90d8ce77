/*
 * sign.c: delivery signatures (x-treaty-signature: t=<unix>,v1=<hex>...,
 * HMAC-SHA256 over "<t>.<id>.<body>"), token hashing and constant-time
 * comparison, on OpenSSL 3.
 *
 * OpenSSL 3 finds an algorithm by a "fetch" (a search of its providers under
 * a lock), and an implicit fetch inside EVP_Digest or EVP_MAC_init costs
 * more than hashing a token: SHA-256 and an HMAC with SHA-256 set are
 * fetched once per process (sign_init), read-only afterwards, and every
 * call works on a context of its own (a copy), so any thread may call.
 */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "treaty.h"

#define SHA256_LEN	32
#define T_DIGITS_MAX	19	/* INT64_MAX has 19 digits */
#define SW_KEY_MAX	256	/* a whsec_ secret's decoded bytes */

/* One "key=value" element of a signature header. */
struct sig_elem {
	const char	*key;
	size_t		 keylen;
	const char	*val;
	size_t		 vallen;
};

/* Write len bytes of in as lowercase hex into out, NUL-terminated. */
static void
hex_encode(const unsigned char *in, size_t len, char *out)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 0x0F];
	}
	out[2 * len] = '\0';
}

static pthread_once_t	 sign_once = PTHREAD_ONCE_INIT;
static EVP_MAC_CTX	*sign_hmac;	/* HMAC, SHA-256 set, no key: copied */
static EVP_MD		*sign_sha256;
static int		 sign_restart;	/* EVP_MAC_init(ctx, NULL..) works */

/*
 * 1 when EVP_MAC_init with no key starts a new message under the key
 * already set, as prepared keys need.  OpenSSL 3.0.0 to 3.0.2 accept the
 * call and do nothing, so the next message would be hashed onto the end
 * of the last one and every signature after the first would be wrong.
 * Tried once on a known answer; where it fails, prepared keys copy their
 * keyed context for each signature instead (still no key set-up).
 */
static int
restart_works(void)
{
	unsigned char	 a[SHA256_LEN], b[SHA256_LEN];
	size_t		 alen = 0, blen = 0;
	EVP_MAC_CTX	*ctx;
	int		 ok;

	if ((ctx = EVP_MAC_CTX_dup(sign_hmac)) == NULL)
		return 0;
	ok = EVP_MAC_init(ctx, (const unsigned char *)"key", 3, NULL) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)"msg", 3) == 1 &&
	    EVP_MAC_final(ctx, a, &alen, sizeof(a)) == 1 &&
	    EVP_MAC_init(ctx, NULL, 0, NULL) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)"msg", 3) == 1 &&
	    EVP_MAC_final(ctx, b, &blen, sizeof(b)) == 1 &&
	    alen == SHA256_LEN && blen == SHA256_LEN &&
	    memcmp(a, b, SHA256_LEN) == 0;
	EVP_MAC_CTX_free(ctx);
	return ok;
}

/* Fetch once; see the top of the file.  NULL stays NULL: each call fails. */
static void
sign_init(void)
{
	char		 digest[] = "SHA256";
	OSSL_PARAM	 params[2];
	EVP_MAC		*m;

	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    digest, 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((m = EVP_MAC_fetch(NULL, "HMAC", NULL)) != NULL &&
	    (sign_hmac = EVP_MAC_CTX_new(m)) != NULL &&
	    EVP_MAC_CTX_set_params(sign_hmac, params) != 1) {
		EVP_MAC_CTX_free(sign_hmac);
		sign_hmac = NULL;
	}
	EVP_MAC_free(m);	/* the context holds its own reference */
	sign_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	sign_restart = sign_hmac != NULL && restart_works();
}

/* One piece of a message to authenticate. */
struct part {
	const void	*p;
	size_t		 n;
};

/*
 * A prepared secret (treaty_keys): a context per signature kind with its
 * key set.  EVP_MAC_init with no key starts a new message under the key
 * already set, without redoing the key's padding blocks, a context copy
 * and its free.
 */
struct sign_prep {
	EVP_MAC_CTX	*sig;	/* the secret's bytes */
	EVP_MAC_CTX	*sw;	/* Standard Webhooks': whsec_ decoded */
};

struct treaty_keys {
	size_t		 n;
	struct sign_prep p[];
};

/*
 * HMAC-SHA256 of the parts into mac, under prep when it is not NULL, else
 * under key in a context of this call's own.
 */
static int
hmac_parts(EVP_MAC_CTX *prep, const void *key, size_t keylen,
    const struct part *parts, size_t nparts, unsigned char mac[SHA256_LEN])
{
	static const unsigned char	 nokey;
	EVP_MAC_CTX			*ctx = NULL;
	size_t				 maclen = 0, i;
	int				 rc = TREATY_E_CRYPTO;

	if (prep != NULL && sign_restart) {
		if (EVP_MAC_init(prep, NULL, 0, NULL) != 1)
			return (rc);
	} else if (prep != NULL) {
		/* An OpenSSL that cannot restart: a copy, key and all. */
		if ((ctx = EVP_MAC_CTX_dup(prep)) == NULL)
			return (rc);
		prep = ctx;
	} else {
		/* OpenSSL's HMAC refuses a NULL key, but an empty one is fine. */
		if (key == NULL)
			key = &nokey;
		pthread_once(&sign_once, sign_init);
		if (sign_hmac == NULL ||
		    (ctx = EVP_MAC_CTX_dup(sign_hmac)) == NULL ||
		    EVP_MAC_init(ctx, key, keylen, NULL) != 1)
			goto out;
		prep = ctx;
	}
	for (i = 0; i < nparts; i++)
		if (parts[i].n > 0 && EVP_MAC_update(prep, parts[i].p,
		    parts[i].n) != 1)
			goto out;
	if (EVP_MAC_final(prep, mac, &maclen, SHA256_LEN) != 1 ||
	    maclen != SHA256_LEN)
		goto out;
	rc = TREATY_OK;
out:
	EVP_MAC_CTX_free(ctx);
	return (rc);
}

/* HMAC-SHA256 of "<t>.<id>.<body>" under prep or key into mac. */
static int
sig_hmac(EVP_MAC_CTX *prep, const void *key, size_t keylen, int64_t t,
    const char *id, const void *body, size_t bodylen,
    unsigned char mac[SHA256_LEN])
{
	char		 tbuf[T_DIGITS_MAX + 2];
	int		 tlen;
	struct part	 parts[3];

	tlen = snprintf(tbuf, sizeof(tbuf), "%" PRId64 ".", t);
	if (tlen < 0 || (size_t)tlen >= sizeof(tbuf))
		return (TREATY_E_INVALID);
	parts[0] = (struct part){ tbuf, (size_t)tlen };
	parts[1] = (struct part){ id, strlen(id) };
	parts[2] = (struct part){ ".", 1 };
	if (body != NULL && bodylen > 0) {
		struct part all[4] = { parts[0], parts[1], parts[2],
		    { body, bodylen } };

		return (hmac_parts(prep, key, keylen, all, 4, mac));
	}
	return (hmac_parts(prep, key, keylen, parts, 3, mac));
}

/* treaty_sig_hmac_hex under prep, or else key. */
static int
sig_hex(EVP_MAC_CTX *prep, const void *key, size_t keylen, int64_t t,
    const char *id, const void *body, size_t bodylen,
    char out[TREATY_SIG_HEX_LEN + 1])
{
	unsigned char	 mac[SHA256_LEN];
	int		 rc;

	if (out == NULL)
		return (TREATY_E_INVALID);
	out[0] = '\0';
	if ((key == NULL && keylen > 0) || t < 0 || id == NULL ||
	    (body == NULL && bodylen > 0))
		return (TREATY_E_INVALID);
	if ((rc = sig_hmac(prep, key, keylen, t, id, body, bodylen, mac)) != 0)
		return (rc);
	hex_encode(mac, sizeof(mac), out);
	OPENSSL_cleanse(mac, sizeof(mac));
	return (TREATY_OK);
}

/* Lowercase hex HMAC-SHA256 of "<t>.<id>.<body>". */
int
treaty_sig_hmac_hex(const void *key, size_t keylen, int64_t t, const char *id,
    const void *body, size_t bodylen, char out[TREATY_SIG_HEX_LEN + 1])
{
	return (sig_hex(NULL, key, keylen, t, id, body, bodylen, out));
}

/*
 * treaty_sig_sign with n secrets, or with n prepared secrets when prep is
 * not NULL (secrets is not used then).
 */
static int
sig_sign(const struct treaty_secret *secrets, const struct sign_prep *prep,
    size_t nsecrets, int64_t t, const char *id, const void *body,
    size_t bodylen, char *out, size_t outsz)
{
	char	 hex[TREATY_SIG_HEX_LEN + 1];
	size_t	 i, len, per = 4 + TREATY_SIG_HEX_LEN;	/* ",v1=" + hex */
	int	 n, rc;

	if (out == NULL && outsz > 0)
		return (TREATY_E_INVALID);
	if (outsz > 0)
		out[0] = '\0';
	if ((secrets == NULL && prep == NULL) || nsecrets == 0 || t < 0 ||
	    id == NULL || (body == NULL && bodylen > 0))
		return (TREATY_E_INVALID);
	n = snprintf(NULL, 0, "t=%" PRId64, t);
	if (n < 0)
		return (TREATY_E_INVALID);
	if (nsecrets > (INT_MAX - (size_t)n) / per)
		return (TREATY_E_SPACE);
	len = (size_t)n + nsecrets * per;
	if (len + 1 > outsz)
		return (TREATY_E_SPACE);
	(void)snprintf(out, outsz, "t=%" PRId64, t);
	len = (size_t)n;
	for (i = 0; i < nsecrets; i++) {
		rc = prep != NULL ? sig_hex(prep[i].sig, NULL, 0, t, id, body,
		    bodylen, hex) : sig_hex(NULL, secrets[i].key,
		    secrets[i].len, t, id, body, bodylen, hex);
		if (rc != TREATY_OK) {
			out[0] = '\0';
			return (rc);
		}
		memcpy(out + len, ",v1=", 4);
		memcpy(out + len + 4, hex, TREATY_SIG_HEX_LEN);
		len += per;
	}
	out[len] = '\0';
	return ((int)len);
}

/* Build "t=<t>,v1=<hex>[,v1=<hex>...]" with one v1= per secret. */
int
treaty_sig_sign(const struct treaty_secret *secrets, size_t nsecrets,
    int64_t t, const char *id, const void *body, size_t bodylen, char *out,
    size_t outsz)
{
	return (sig_sign(secrets, NULL, nsecrets, t, id, body, bodylen, out,
	    outsz));
}

/* The same with prepared secrets. */
int
treaty_keys_sig_sign(struct treaty_keys *k, int64_t t, const char *id,
    const void *body, size_t bodylen, char *out, size_t outsz)
{
	if (k == NULL)
		return (TREATY_E_INVALID);
	return (sig_sign(NULL, k->p, k->n, t, id, body, bodylen, out, outsz));
}

/* 1 when c is optional white space around a header element. */
static int
ows(char c)
{
	return (c == ' ' || c == '\t');
}

/*
 * Take the next comma-separated element from *sp into e and advance *sp
 * past it (to NULL after the last); 0 when none is left.
 */
static int
sig_next(const char **sp, struct sig_elem *e)
{
	const char	*s = *sp, *end, *eq;

	if (s == NULL)
		return (0);
	if ((end = strchr(s, ',')) != NULL)
		*sp = end + 1;
	else {
		end = s + strlen(s);
		*sp = NULL;
	}
	while (s < end && ows(*s))
		s++;
	while (end > s && ows(end[-1]))
		end--;
	e->key = s;
	if ((eq = memchr(s, '=', (size_t)(end - s))) == NULL) {
		e->keylen = (size_t)(end - s);
		e->val = NULL;
		e->vallen = 0;
	} else {
		e->keylen = (size_t)(eq - s);
		e->val = eq + 1;
		e->vallen = (size_t)(end - eq - 1);
	}
	return (1);
}

/* 1 when element e has the key k. */
static int
sig_key_is(const struct sig_elem *e, const char *k)
{
	return (e->keylen == strlen(k) && memcmp(e->key, k, e->keylen) == 0);
}

/* 1 when e's key is a scheme name: 1+ of A-Za-z0-9_-. */
static int
sig_key_ok(const struct sig_elem *e)
{
	size_t	 i;
	char	 c;

	if (e->keylen == 0)
		return (0);
	for (i = 0; i < e->keylen; i++) {
		c = e->key[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return (0);
	}
	return (1);
}

/* Parse a canonical unsigned decimal (no sign, no leading 0) into *t. */
static int
sig_parse_t(const struct sig_elem *e, int64_t *t)
{
	int64_t	 v = 0;
	size_t	 i;
	int	 d;

	if (e->vallen == 0 || e->vallen > T_DIGITS_MAX ||
	    (e->vallen > 1 && e->val[0] == '0'))
		return (0);
	for (i = 0; i < e->vallen; i++) {
		if (e->val[i] < '0' || e->val[i] > '9')
			return (0);
		d = e->val[i] - '0';
		if (v > (INT64_MAX - d) / 10)
			return (0);
		v = v * 10 + d;
	}
	*t = v;
	return (1);
}

/* 1 when e's value is 64 lowercase hex digits. */
static int
sig_v1_ok(const struct sig_elem *e)
{
	size_t	 i;
	char	 c;

	if (e->vallen != TREATY_SIG_HEX_LEN)
		return (0);
	for (i = 0; i < e->vallen; i++) {
		c = e->val[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return (0);
	}
	return (1);
}

/*
 * Check the syntax of a whole header: exactly one t=, at least one v1=,
 * every v1= 64 lowercase hex, every element key=value; other schemes are
 * ignored.  Stores the timestamp in *t.
 */
static int
sig_parse(const char *header, int64_t *t)
{
	struct sig_elem	 e;
	const char	*s = header;
	int		 have_t = 0, have_v1 = 0;

	while (sig_next(&s, &e)) {
		if (e.val == NULL || !sig_key_ok(&e))
			return (TREATY_E_SIG_MALFORMED);
		if (sig_key_is(&e, "t")) {
			if (have_t++ || !sig_parse_t(&e, t))
				return (TREATY_E_SIG_MALFORMED);
		} else if (sig_key_is(&e, "v1")) {
			if (!sig_v1_ok(&e))
				return (TREATY_E_SIG_MALFORMED);
			have_v1 = 1;
		}
	}
	if (!have_t || !have_v1)
		return (TREATY_E_SIG_MALFORMED);
	return (TREATY_OK);
}

/* 1 when some v1= of the (already parsed) header equals hex. */
static int
sig_any_v1(const char *header, const char *hex)
{
	struct sig_elem	 e;
	const char	*s = header;
	int		 found = 0;

	while (sig_next(&s, &e))
		if (sig_key_is(&e, "v1") &&
		    CRYPTO_memcmp(e.val, hex, TREATY_SIG_HEX_LEN) == 0)
			found = 1;
	return (found);
}

/* Verify a signature header against any secret, within tolerance of now. */
int
treaty_sig_verify(const struct treaty_secret *secrets, size_t nsecrets,
    const char *header, const char *id, const void *body, size_t bodylen,
    int64_t now, int64_t tolerance)
{
	char		 hex[TREATY_SIG_HEX_LEN + 1];
	int64_t		 t = 0;
	uint64_t	 skew;
	size_t		 i;
	int		 rc, ok = 0;

	if (secrets == NULL || nsecrets == 0 || id == NULL ||
	    (body == NULL && bodylen > 0) || tolerance < 0)
		return (TREATY_E_INVALID);
	if (tolerance == 0)
		tolerance = TREATY_SIG_TOLERANCE;
	if (header == NULL || header[0] == '\0')
		return (TREATY_E_SIG_MISSING);
	if ((rc = sig_parse(header, &t)) != TREATY_OK)
		return (rc);
	/* Unsigned difference: exact for any pair of int64 values. */
	skew = now >= t ? (uint64_t)now - (uint64_t)t :
	    (uint64_t)t - (uint64_t)now;
	if (skew > (uint64_t)tolerance)
		return (TREATY_E_SIG_STALE);
	for (i = 0; i < nsecrets; i++) {
		rc = sig_hex(NULL, secrets[i].key, secrets[i].len, t, id,
		    body, bodylen, hex);
		if (rc != TREATY_OK)
			return (rc);
		if (sig_any_v1(header, hex))
			ok = 1;
	}
	OPENSSL_cleanse(hex, sizeof(hex));
	return (ok ? TREATY_OK : TREATY_E_SIG_MISMATCH);
}

/* Lowercase hex SHA-256 of data. */
int
treaty_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char	 md[SHA256_LEN];
	unsigned int	 mdlen = 0;

	if (out == NULL)
		return (TREATY_E_INVALID);
	out[0] = '\0';
	if (data == NULL && len > 0)
		return (TREATY_E_INVALID);
	if (data == NULL)
		data = "";
	pthread_once(&sign_once, sign_init);
	if (sign_sha256 == NULL ||
	    EVP_Digest(data, len, md, &mdlen, sign_sha256, NULL) != 1 ||
	    mdlen != SHA256_LEN)
		return (TREATY_E_CRYPTO);
	hex_encode(md, sizeof(md), out);
	return (TREATY_OK);
}

/* Constant-time equality of two len-byte buffers: 1 equal, 0 not. */
int
treaty_memeq(const void *a, const void *b, size_t len)
{
	if (len == 0)
		return (1);
	if (a == NULL || b == NULL)
		return (0);
	return (CRYPTO_memcmp(a, b, len) == 0);
}

/*
 * The key Standard Webhooks signs with: a secret written "whsec_<base64>"
 * (that specification's form) is the decoded bytes, any other its own.
 */
static int
sw_key(const struct treaty_secret *s, unsigned char keybuf[SW_KEY_MAX],
    const void **key, size_t *keylen)
{
	const char	*k;
	size_t		 klen, pad = 0;
	int		 n;

	*key = s->key;
	*keylen = s->len;
	if (s->key == NULL || s->len <= 6 || memcmp(s->key, "whsec_", 6) != 0)
		return (TREATY_OK);
	k = (const char *)s->key + 6;
	klen = s->len - 6;
	if (klen % 4 != 0 || klen / 4 * 3 > SW_KEY_MAX)
		return (TREATY_E_INVALID);
	if (klen > 0 && k[klen - 1] == '=')
		pad++;
	if (klen > 1 && k[klen - 2] == '=')
		pad++;
	n = EVP_DecodeBlock(keybuf, (const unsigned char *)k, (int)klen);
	if (n < 0 || (size_t)n < pad)
		return (TREATY_E_INVALID);
	*key = keybuf;
	*keylen = (size_t)n - pad;
	return (TREATY_OK);
}

/*
 * Standard Webhooks' webhook-signature: "v1,<base64 HMAC-SHA256 of
 * "<id>.<t>.<body>">" for each secret, space-separated; with prepared
 * secrets when prep is not NULL (secrets is not used then).
 */
static int
sw_sign_into(const struct treaty_secret *secrets, const struct sign_prep *prep,
    size_t nsecrets, const char *id, int64_t t, const void *body,
    size_t bodylen, char *out, size_t outsz)
{
	unsigned char	 mac[SHA256_LEN], keybuf[SW_KEY_MAX];
	char		 tbuf[T_DIGITS_MAX + 3];
	size_t		 i, used = 0;
	int		 tlen, rc;

	if ((secrets == NULL && prep == NULL) || nsecrets == 0 || id == NULL ||
	    out == NULL || t < 0 || (body == NULL && bodylen > 0))
		return (TREATY_E_INVALID);
	tlen = snprintf(tbuf, sizeof(tbuf), ".%" PRId64 ".", t);
	if (tlen < 0 || (size_t)tlen >= sizeof(tbuf))
		return (TREATY_E_INVALID);
	for (i = 0; i < nsecrets; i++) {
		const void	*key = NULL;
		size_t		 keylen = 0;
		struct part	 parts[3] = { { id, strlen(id) },
				    { tbuf, (size_t)tlen }, { body, bodylen } };
		char		 b64[4 * ((SHA256_LEN + 2) / 3) + 1];

		/* A prepared whsec_ secret that did not decode has no sw. */
		if (prep != NULL && prep[i].sw == NULL)
			return (TREATY_E_INVALID);
		if (prep == NULL && (rc = sw_key(&secrets[i], keybuf, &key,
		    &keylen)) != TREATY_OK)
			return (rc);
		rc = hmac_parts(prep != NULL ? prep[i].sw : NULL, key, keylen,
		    parts, 3, mac);
		OPENSSL_cleanse(keybuf, sizeof(keybuf));
		if (rc != TREATY_OK)
			return (rc);
		EVP_EncodeBlock((unsigned char *)b64, mac, SHA256_LEN);
		rc = snprintf(out + used, outsz - used, "%sv1,%s",
		    i > 0 ? " " : "", b64);
		if (rc < 0 || (size_t)rc >= outsz - used)
			return (TREATY_E_SPACE);
		used += (size_t)rc;
	}
	return ((int)used);
}

/* The same, never a part of a header: out is "" after an error. */
static int
sw_sign(const struct treaty_secret *secrets, const struct sign_prep *prep,
    size_t nsecrets, const char *id, int64_t t, const void *body,
    size_t bodylen, char *out, size_t outsz)
{
	int	 rc = sw_sign_into(secrets, prep, nsecrets, id, t, body,
		    bodylen, out, outsz);

	if (rc < 0 && out != NULL && outsz > 0)
		out[0] = '\0';
	return (rc);
}

/* webhook-signature for id and t with one v1, per secret. */
int
treaty_sw_sign(const struct treaty_secret *secrets, size_t nsecrets,
    const char *id, int64_t t, const void *body, size_t bodylen, char *out,
    size_t outsz)
{
	return (sw_sign(secrets, NULL, nsecrets, id, t, body, bodylen, out,
	    outsz));
}

/* The same with prepared secrets. */
int
treaty_keys_sw_sign(struct treaty_keys *k, const char *id, int64_t t,
    const void *body, size_t bodylen, char *out, size_t outsz)
{
	if (k == NULL)
		return (TREATY_E_INVALID);
	return (sw_sign(NULL, k->p, k->n, id, t, body, bodylen, out, outsz));
}

/* A keyed context: a copy of sign_hmac with key set; NULL on failure. */
static EVP_MAC_CTX *
prep_ctx(const void *key, size_t keylen)
{
	static const unsigned char	 nokey;
	EVP_MAC_CTX			*ctx;

	pthread_once(&sign_once, sign_init);
	if (sign_hmac == NULL || (ctx = EVP_MAC_CTX_dup(sign_hmac)) == NULL)
		return (NULL);
	if (EVP_MAC_init(ctx, key != NULL ? key : &nokey, keylen, NULL) != 1) {
		EVP_MAC_CTX_free(ctx);
		return (NULL);
	}
	return (ctx);
}

/* Set up each secret's keys once; see treaty.h. */
struct treaty_keys *
treaty_keys_new(const struct treaty_secret *secrets, size_t n)
{
	unsigned char		 keybuf[SW_KEY_MAX];
	struct treaty_keys	*k;
	const void		*key;
	size_t			 i, keylen;
	int			 ok = 1;

	if ((secrets == NULL && n > 0) || n > TREATY_MAX_SECRETS ||
	    (k = calloc(1, sizeof(*k) + n * sizeof(k->p[0]))) == NULL)
		return (NULL);
	k->n = n;
	for (i = 0; i < n && ok; i++) {
		ok = !(secrets[i].key == NULL && secrets[i].len > 0) &&
		    (k->p[i].sig = prep_ctx(secrets[i].key,
		    secrets[i].len)) != NULL;
		/*
		 * A "whsec_" secret that does not decode still signs
		 * x-treaty-signature; only its webhook-signature fails, as
		 * treaty_sw_sign's would.
		 */
		if (ok && sw_key(&secrets[i], keybuf, &key, &keylen) ==
		    TREATY_OK)
			ok = (k->p[i].sw = prep_ctx(key, keylen)) != NULL;
		OPENSSL_cleanse(keybuf, sizeof(keybuf));
	}
	if (!ok) {
		treaty_keys_free(k);
		return (NULL);
	}
	return (k);
}

void
treaty_keys_free(struct treaty_keys *k)
{
	size_t	 i;

	if (k == NULL)
		return;
	for (i = 0; i < k->n; i++) {
		EVP_MAC_CTX_free(k->p[i].sig);
		EVP_MAC_CTX_free(k->p[i].sw);
	}
	free(k);
}
