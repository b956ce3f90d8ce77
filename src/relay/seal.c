/*
 * seal.c: subscriber secrets sealed for JetStream (seal.h, SPEC 16).  Any
 * thread: a struct seal_keys does not change once loaded, and OpenSSL's
 * EVP calls and RAND_bytes are thread-safe.
 *
 * Each value is sealed on its own with AES-256-GCM: a fresh 12-byte nonce
 * from RAND_bytes (GCM's own length; a nonce repeated under one key gives
 * the key stream and the authentication key away, and random 12-byte ones
 * are safe for 2^32 values per key, NIST SP 800-38D, far more than one
 * bucket holds between rotations), a 16-byte tag, and as
 * associated data "treaty-relay/subscriber-secret/v1|TREATY_SUBSCRIBERS|
 * <name>|<kid>": a value copied under another subscriber's name, or
 * relabelled with another key's id, fails to open.  The kid is the first
 * 8 hex digits of SHA-256(key), so every host names a key alike without a
 * registry; it identifies the key, it does not hide it (it is the hash of
 * 256 random bits).
 *
 * The key file's text and the keys are wiped (OPENSSL_cleanse, which the
 * compiler may not drop) before their memory is freed, and no error ever
 * quotes a line of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "seal.h"
#include "util.h"

#define SEAL_NONCE_LEN		12
#define SEAL_TAG_LEN		16
#define SEAL_PREFIX		"v1:"
#define SEAL_PREFIX_LEN		(sizeof(SEAL_PREFIX) - 1)
/* "v1:" kid ":" */
#define SEAL_HEAD_LEN		(SEAL_PREFIX_LEN + SEAL_KID_LEN + 1)
#define SEAL_AAD_HEAD		"treaty-relay/subscriber-secret/v1|" \
				"TREATY_SUBSCRIBERS|"
/* Base64's length for n bytes, padding included. */
#define B64_LEN(n)		(((n) + 2) / 3 * 4)

struct seal_keys {
	int		 n;
	unsigned char	 key[SEAL_KEYS_MAX][SEAL_KEY_LEN];
	char		 kid[SEAL_KEYS_MAX][SEAL_KID_LEN + 1];
};

/* The value of hex digit c, or -1. */
static int
seal_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 64 hex digits into out; -1 when one is not hex. */
static int
seal_unhex(const char *s, unsigned char out[SEAL_KEY_LEN])
{
	int	 i, hi, lo;

	for (i = 0; i < SEAL_KEY_LEN; i++) {
		if ((hi = seal_hexval(s[2 * i])) == -1 ||
		    (lo = seal_hexval(s[2 * i + 1])) == -1)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* A key's id: the first SEAL_KID_LEN hex digits of SHA-256(key). */
static int
seal_kid(const unsigned char key[SEAL_KEY_LEN], char kid[SEAL_KID_LEN + 1])
{
	static const char	 digits[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	int			 i;

	if (EVP_Digest(key, SEAL_KEY_LEN, md, NULL, EVP_sha256(), NULL) != 1) {
		ERR_clear_error();
		return -1;
	}
	for (i = 0; i < SEAL_KID_LEN; i++)
		kid[i] = digits[i % 2 ? md[i / 2] & 0x0f : md[i / 2] >> 4];
	kid[SEAL_KID_LEN] = '\0';
	return 0;
}

/*
 * The file's whole text into a new buffer (SEAL_FILE_MAX + 1 bytes) read
 * straight from the descriptor, so that no stdio buffer keeps a copy of
 * the keys; *len its length.  fstat on the same descriptor gives the
 * permissions of the very file read.  NULL with err set on failure.
 */
static char *
seal_file_read(const char *path, size_t *len, int *loose, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 r = 0;
	int		 fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		snprintf(err, errlen, "cannot read: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		saved = errno;
		close(fd);
		snprintf(err, errlen, "cannot read: %s", strerror(saved));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "cannot read: not a regular file");
		return NULL;
	}
	/*
	 * Its own group is how the relay reads a root-owned file (mode 640,
	 * group treaty-relay, as the configuration file); any other group,
	 * or anyone at all, could read the keys too.
	 */
	*loose = (st.st_mode & S_IRWXO) != 0 ||
	    ((st.st_mode & S_IRWXG) != 0 && st.st_gid != getegid());
	buf = xmalloc(SEAL_FILE_MAX + 1);
	*len = 0;
	while (*len <= SEAL_FILE_MAX) {
		r = read(fd, buf + *len, SEAL_FILE_MAX + 1 - *len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	saved = errno;
	close(fd);
	if (r == -1 || *len > SEAL_FILE_MAX) {
		if (r == -1)
			snprintf(err, errlen, "cannot read: %s",
			    strerror(saved));
		else
			snprintf(err, errlen, "larger than %d bytes",
			    SEAL_FILE_MAX);
		OPENSSL_cleanse(buf, *len);
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Parse the key file's text into k: 0, or -1 with *errline and err.  A
 * line is trimmed of blanks (and a CR); the messages say what is wrong
 * with it, never what it holds.
 */
static int
seal_keys_parse(struct seal_keys *k, const char *text, size_t len,
    int *errline, char *err, size_t errlen)
{
	const char	*p = text, *end = text + len, *v, *ve;
	unsigned char	 key[SEAL_KEY_LEN];
	int		 line = 0, keyline[SEAL_KEYS_MAX], i, rc = -1;

	while (text_line(&p, end, &v, &ve)) {
		*errline = ++line;
		if (v == ve || *v == '#')
			continue;
		if (ve - v != SEAL_KEY_HEX) {
			snprintf(err, errlen, "a key is %d hex digits (%d "
			    "random bytes); this line has %zu characters",
			    SEAL_KEY_HEX, SEAL_KEY_LEN, (size_t)(ve - v));
			goto out;
		}
		if (seal_unhex(v, key) == -1) {
			snprintf(err, errlen, "a key is %d hex digits (0-9, "
			    "a-f); this line has other characters",
			    SEAL_KEY_HEX);
			goto out;
		}
		if (k->n == SEAL_KEYS_MAX) {
			snprintf(err, errlen, "more than %d keys",
			    SEAL_KEYS_MAX);
			goto out;
		}
		for (i = 0; i < k->n; i++)
			if (CRYPTO_memcmp(key, k->key[i], SEAL_KEY_LEN) == 0) {
				snprintf(err, errlen, "the same key as line %d",
				    keyline[i]);
				goto out;
			}
		memcpy(k->key[k->n], key, SEAL_KEY_LEN);
		if (seal_kid(key, k->kid[k->n]) == -1) {
			snprintf(err, errlen, "cannot hash the key (OpenSSL)");
			goto out;
		}
		/* An id must name one key: make another, as for a repeat. */
		for (i = 0; i < k->n; i++)
			if (strcmp(k->kid[i], k->kid[k->n]) == 0) {
				snprintf(err, errlen, "the same key id (%s) as "
				    "line %d: make a new key", k->kid[i],
				    keyline[i]);
				goto out;
			}
		keyline[k->n++] = line;
	}
	if (k->n == 0) {
		*errline = 0;
		snprintf(err, errlen, "no key (a line of %d hex digits)",
		    SEAL_KEY_HEX);
		goto out;
	}
	*errline = 0;
	rc = 0;
out:
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

/* Read a key file; see seal.h. */
struct seal_keys *
seal_keys_load(const char *path, int *loose, int *errline, char *err,
    size_t errlen)
{
	struct seal_keys	*k;
	char			*text;
	size_t			 len;
	int			 rc;

	*loose = 0;
	*errline = 0;
	if ((text = seal_file_read(path, &len, loose, err, errlen)) == NULL)
		return NULL;
	k = xcalloc(1, sizeof(*k));
	rc = seal_keys_parse(k, text, len, errline, err, errlen);
	OPENSSL_cleanse(text, len);
	free(text);
	if (rc == -1) {
		seal_keys_free(k);
		return NULL;
	}
	return k;
}

/* Wipe and free k; see seal.h. */
void
seal_keys_free(struct seal_keys *k)
{
	if (k == NULL)
		return;
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

int
seal_keys_count(const struct seal_keys *k)
{
	return k == NULL ? 0 : k->n;
}

const char *
seal_keys_kid(const struct seal_keys *k, int i)
{
	if (k == NULL || i < 0 || i >= k->n)
		return NULL;
	return k->kid[i];
}

/* The associated data for name and kid, as a new string; *len its length. */
static char *
seal_aad(const char *name, const char *kid, size_t *len)
{
	size_t	 n = sizeof(SEAL_AAD_HEAD) - 1 + strlen(name) + 1 +
		    SEAL_KID_LEN + 1;
	char	*aad = xmalloc(n);

	snprintf(aad, n, "%s%s|%s", SEAL_AAD_HEAD, name, kid);
	*len = n - 1;
	return aad;
}

/* Seal plain for name with the newest key; see seal.h. */
char *
seal_secret(const struct seal_keys *k, const char *name, const char *plain)
{
	EVP_CIPHER_CTX	*c = NULL;
	unsigned char	*buf;
	char		*aad, *out = NULL;
	size_t		 plen, aadlen, total;
	int		 l, ok;

	if (k == NULL || k->n == 0 || name == NULL || plain == NULL ||
	    (plen = strnlen(plain, SEAL_PLAIN_MAX + 1)) > SEAL_PLAIN_MAX)
		return NULL;
	total = SEAL_NONCE_LEN + plen + SEAL_TAG_LEN;
	buf = xmalloc(total);
	aad = seal_aad(name, k->kid[0], &aadlen);
	/*
	 * GCM's IV defaults to 12 bytes, the nonce's length; the tag is read
	 * after Final, which is what computes it.
	 */
	ok = RAND_bytes(buf, SEAL_NONCE_LEN) == 1 &&
	    (c = EVP_CIPHER_CTX_new()) != NULL &&
	    EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, k->key[0],
	    buf) == 1 &&
	    EVP_EncryptUpdate(c, NULL, &l, (const unsigned char *)aad,
	    (int)aadlen) == 1 &&
	    (plen == 0 || EVP_EncryptUpdate(c, buf + SEAL_NONCE_LEN, &l,
	    (const unsigned char *)plain, (int)plen) == 1) &&
	    EVP_EncryptFinal_ex(c, buf + SEAL_NONCE_LEN + plen, &l) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, SEAL_TAG_LEN,
	    buf + SEAL_NONCE_LEN + plen) == 1;
	if (ok) {
		out = xmalloc(SEAL_HEAD_LEN + B64_LEN(total) + 1);
		snprintf(out, SEAL_HEAD_LEN + 1, SEAL_PREFIX "%s:", k->kid[0]);
		EVP_EncodeBlock((unsigned char *)out + SEAL_HEAD_LEN, buf,
		    (int)total);
	} else
		ERR_clear_error();
	EVP_CIPHER_CTX_free(c);
	free(aad);
	free(buf);
	return out;
}

/*
 * Strict base64 (the standard alphabet, padded, no blanks) into a new
 * buffer; NULL when s is not.  EVP_DecodeBlock counts the bytes the
 * padding stands for, so they are taken off here.
 */
static unsigned char *
seal_unbase64(const char *s, size_t n, size_t *outlen)
{
	unsigned char	*out;
	size_t		 i, pad = 0;
	int		 r;

	if (n == 0 || n % 4 != 0)
		return NULL;
	if (s[n - 1] == '=')
		pad++;
	if (s[n - 2] == '=')
		pad++;
	for (i = 0; i < n - pad; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '+' || s[i] == '/'))
			return NULL;
	out = xmalloc(n / 4 * 3);
	if ((r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n)) < 0 ||
	    (size_t)r < pad) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)r - pad;
	return out;
}

/* Open a sealed value; see seal.h. */
enum seal_result
seal_open(const struct seal_keys *k, const char *name, const char *sealed,
    char **plain, char kid_out[SEAL_KID_LEN + 1])
{
	EVP_CIPHER_CTX	*c = NULL;
	unsigned char	*raw = NULL, *pt = NULL;
	char		 kid[SEAL_KID_LEN + 1], *aad = NULL;
	const char	*b64;
	size_t		 b64len, rawlen, ctlen, aadlen;
	int		 i, l, ok;
	enum seal_result res = SEAL_BAD;

	*plain = NULL;
	if (kid_out != NULL)
		kid_out[0] = '\0';
	if (sealed == NULL || name == NULL || !seal_is_sealed(sealed))
		return SEAL_BAD;
	memcpy(kid, sealed + SEAL_PREFIX_LEN, SEAL_KID_LEN);
	kid[SEAL_KID_LEN] = '\0';
	if (kid_out != NULL)
		memcpy(kid_out, kid, sizeof(kid));
	b64 = sealed + SEAL_HEAD_LEN;
	b64len = strnlen(b64, B64_LEN(SEAL_NONCE_LEN + SEAL_PLAIN_MAX +
	    SEAL_TAG_LEN) + 1);
	if (b64len > B64_LEN(SEAL_NONCE_LEN + SEAL_PLAIN_MAX + SEAL_TAG_LEN) ||
	    (raw = seal_unbase64(b64, b64len, &rawlen)) == NULL ||
	    rawlen < SEAL_NONCE_LEN + SEAL_TAG_LEN)
		goto out;
	ctlen = rawlen - SEAL_NONCE_LEN - SEAL_TAG_LEN;
	if (ctlen > SEAL_PLAIN_MAX)
		goto out;
	for (i = 0; i < seal_keys_count(k); i++)
		if (strcmp(k->kid[i], kid) == 0)
			break;
	if (i == seal_keys_count(k)) {
		res = SEAL_NO_KEY;
		goto out;
	}
	aad = seal_aad(name, kid, &aadlen);
	pt = xmalloc(ctlen + 1);
	/*
	 * The expected tag goes in before Final, which compares it (in
	 * constant time): Final failing is the authentication failure, and
	 * what Update wrote until then must not be used.
	 */
	ok = (c = EVP_CIPHER_CTX_new()) != NULL &&
	    EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, k->key[i],
	    raw) == 1 &&
	    EVP_DecryptUpdate(c, NULL, &l, (const unsigned char *)aad,
	    (int)aadlen) == 1 &&
	    (ctlen == 0 || EVP_DecryptUpdate(c, pt, &l, raw + SEAL_NONCE_LEN,
	    (int)ctlen) == 1) &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, SEAL_TAG_LEN,
	    raw + SEAL_NONCE_LEN + ctlen) == 1 &&
	    EVP_DecryptFinal_ex(c, pt + ctlen, &l) == 1;
	if (!ok || memchr(pt, '\0', ctlen) != NULL) {
		ERR_clear_error();
		OPENSSL_cleanse(pt, ctlen + 1);
		free(pt);
		goto out;
	}
	pt[ctlen] = '\0';
	*plain = (char *)pt;
	res = SEAL_OK;
out:
	EVP_CIPHER_CTX_free(c);
	free(aad);
	free(raw);
	return res;
}

/* The sealed form's head, "v1:<8 lowercase hex>:"; see seal.h. */
int
seal_is_sealed(const char *s)
{
	int	 i;

	if (s == NULL || strncmp(s, SEAL_PREFIX, SEAL_PREFIX_LEN) != 0)
		return 0;
	for (i = 0; i < SEAL_KID_LEN; i++) {
		char	 c = s[SEAL_PREFIX_LEN + i];

		if ((c < '0' || c > '9') && (c < 'a' || c > 'f'))
			return 0;
	}
	return s[SEAL_HEAD_LEN - 1] == ':';
}
