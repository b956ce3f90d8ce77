/*
 * t-seal.c: subscriber secrets sealed with AES-256-GCM (src/relay/seal.c):
 * round trips, the key id, a value opened with no key, under another name
 * or another kid, every bit of it flipped, malformed values, a value built
 * here by hand from the documented layout, rotation, fresh nonces, and the
 * key file (its syntax, its errors, which never quote a line, and its
 * permissions).  Files are written under one mkdtemp directory, removed at
 * the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <openssl/evp.h>

#include "../../src/relay/seal.h"
#include "util.h"
#include "harness.h"

/* Two keys, and their ids: the first 8 hex of SHA-256 of the 32 bytes. */
#define KEY_A	"000102030405060708090a0b0c0d0e0f" \
		"101112131415161718191a1b1c1d1e1f"
#define KID_A	"630dcd29"
#define KEY_B	"fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0" \
		"efeeedecebeae9e8e7e6e5e4e3e2e1e0"
#define KID_B	"1865c008"
#define AAD_HEAD "treaty-relay/subscriber-secret/v1|TREATY_SUBSCRIBERS|"
#define SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

static char	 dir[64];
static char	 paths[64][96];
static int	 npaths;

/* Write text into dir/name with mode; its path (valid until the end). */
static const char *
file_at(const char *name, const char *text, mode_t mode)
{
	char	*path;
	FILE	*f;

	if (npaths == (int)T_NCASES(paths))
		abort();
	path = paths[npaths];
	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	/* Anew: the last mode written may not let its owner write. */
	unlink(path);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	fputs(text, f);
	fclose(f);
	if (chmod(path, mode) == -1)
		abort();
	/* A name written again is one file to remove. */
	if (npaths == 0 || strcmp(paths[npaths - 1], path) != 0) {
		int	 i;

		for (i = 0; i < npaths; i++)
			if (strcmp(paths[i], path) == 0)
				return path;
		npaths++;
	}
	return path;
}

/* Keys from text (mode 0600); NULL on failure, the case failing. */
static struct seal_keys *
keys_at(int line, const char *text)
{
	struct seal_keys	*k;
	char			 err[256];
	int			 loose, errline;

	k = seal_keys_load(file_at("keys", text, 0600), &loose, &errline, err,
	    sizeof(err));
	if (k == NULL)
		t_fail(__FILE__, line, "keys refused: line %d: %s", errline,
		    err);
	return k;
}
#define KEYS(text)	keys_at(__LINE__, text)

/*
 * Load text, expecting a refusal at errline want_line whose message holds
 * want (unless NULL) and none of the file's own text of at least 8
 * characters on the line at fault (secret).
 */
static void
refused_at(int line, const char *text, int want_line, const char *want,
    const char *secret)
{
	struct seal_keys	*k;
	char			 err[256];
	int			 loose, errline;

	k = seal_keys_load(file_at("bad", text, 0600), &loose, &errline, err,
	    sizeof(err));
	if (!t_check_true(__FILE__, line, "refused", k == NULL)) {
		seal_keys_free(k);
		return;
	}
	t_check_int(__FILE__, line, "errline", "want_line", errline, want_line);
	t_check_true(__FILE__, line, "a reason", err[0] != '\0');
	if (want != NULL && !t_check_true(__FILE__, line, "reason", strstr(err,
	    want) != NULL))
		t_fail(__FILE__, line, "  reason was: %s", err);
	if (secret != NULL && !t_check_true(__FILE__, line, "line not quoted",
	    strstr(err, secret) == NULL))
		t_fail(__FILE__, line, "  reason was: %s", err);
}
#define REFUSED(text, line, want, secret) \
	refused_at(__LINE__, text, line, want, secret)

/* Open sealed for name with k; the result, *plain freed. */
static enum seal_result
open_only(const struct seal_keys *k, const char *name, const char *sealed)
{
	enum seal_result	 r;
	char			*plain;

	r = seal_open(k, name, sealed, &plain, NULL);
	if (r != SEAL_OK && plain != NULL)
		t_fail(__FILE__, __LINE__, "a plaintext with result %d", r);
	secret_free(plain);
	return r;
}

/* The payload of a sealed value: decoded into out (a new buffer). */
static unsigned char *
payload(const char *sealed, size_t *len)
{
	const char	*b = sealed + 12;
	size_t		 n = strlen(b);
	unsigned char	*out = malloc(n);
	int		 r;

	if (out == NULL || (r = EVP_DecodeBlock(out, (const unsigned char *)b,
	    (int)n)) < 0)
		abort();
	*len = (size_t)r - (b[n - 1] == '=') - (b[n - 2] == '=');
	return out;
}

/* "v1:<kid>:" and the base64 of raw[0..len), as a new string. */
static char *
reseal(const char *kid, const unsigned char *raw, size_t len)
{
	char	*s = malloc(12 + (len + 2) / 3 * 4 + 1);

	if (s == NULL)
		abort();
	snprintf(s, 13, "v1:%s:", kid);
	EVP_EncodeBlock((unsigned char *)s + 12, raw, (int)len);
	return s;
}

/* Seal, open, compare; the kid and the form of the value. */
static void
round_trip(void)
{
	struct seal_keys	*k;
	char			*s, *plain = NULL, kid[9];
	char			 big[SEAL_PLAIN_MAX + 2];
	const char		*texts[] = {
		SECRET, "", "x", "caf\xc3\xa9 | v1:"
	};
	size_t			 i;

	if ((k = KEYS(KEY_A "\n")) == NULL)
		return;
	T_EQ_INT(seal_keys_count(k), 1);
	T_EQ_STR(seal_keys_kid(k, 0), KID_A);
	T_ASSERT(seal_keys_kid(k, 1) == NULL);
	T_ASSERT(seal_keys_kid(k, -1) == NULL);
	for (i = 0; i < T_NCASES(texts); i++) {
		if (!T_ASSERT((s = seal_secret(k, "orders", texts[i])) != NULL))
			continue;
		T_ASSERT(seal_is_sealed(s));
		T_ASSERT(strncmp(s, "v1:" KID_A ":", 12) == 0);
		/* nonce 12 + the text + tag 16, in base64. */
		T_EQ_INT(strlen(s), 12 + (12 + strlen(texts[i]) + 16 + 2) / 3 *
		    4);
		if (strlen(texts[i]) > 8)
			T_ASSERT(strstr(s, texts[i]) == NULL);
		strcpy(kid, "junk");
		T_EQ_INT(seal_open(k, "orders", s, &plain, kid), SEAL_OK);
		T_EQ_STR(kid, KID_A);
		if (T_ASSERT(plain != NULL))
			T_EQ_STR(plain, texts[i]);
		secret_free(plain);
		free(s);
	}
	/* SEAL_PLAIN_MAX bytes, and not one more. */
	memset(big, 'q', sizeof(big));
	big[SEAL_PLAIN_MAX] = '\0';
	if (T_ASSERT((s = seal_secret(k, "orders", big)) != NULL)) {
		T_EQ_INT(seal_open(k, "orders", s, &plain, NULL), SEAL_OK);
		if (T_ASSERT(plain != NULL))
			T_EQ_INT(strlen(plain), SEAL_PLAIN_MAX);
		secret_free(plain);
		free(s);
	}
	big[SEAL_PLAIN_MAX] = 'q';
	big[SEAL_PLAIN_MAX + 1] = '\0';
	T_ASSERT(seal_secret(k, "orders", big) == NULL);
	T_ASSERT(seal_secret(k, NULL, SECRET) == NULL);
	T_ASSERT(seal_secret(k, "orders", NULL) == NULL);
	seal_keys_free(k);
	/* No keys: nothing is sealed, and nothing opens. */
	T_ASSERT(seal_secret(NULL, "orders", SECRET) == NULL);
	T_EQ_INT(seal_keys_count(NULL), 0);
	seal_keys_free(NULL);
	secret_free(NULL);
}

/* Two seals of one text differ: a fresh nonce each time. */
static void
fresh_nonces(void)
{
	struct seal_keys	*k;
	char			*s[8];
	size_t			 i, j;

	if ((k = KEYS(KEY_A "\n")) == NULL)
		return;
	for (i = 0; i < T_NCASES(s); i++)
		s[i] = seal_secret(k, "orders", SECRET);
	for (i = 0; i < T_NCASES(s); i++)
		for (j = i + 1; j < T_NCASES(s); j++)
			T_ASSERT(s[i] != NULL && s[j] != NULL &&
			    strcmp(s[i], s[j]) != 0);
	for (i = 0; i < T_NCASES(s); i++) {
		T_EQ_INT(open_only(k, "orders", s[i]), SEAL_OK);
		free(s[i]);
	}
	seal_keys_free(k);
}

/*
 * No key with the value's kid: SEAL_NO_KEY, and the kid is said.  A
 * value sealed for another name, or relabelled with another key's kid
 * while both keys are there: SEAL_BAD.
 */
static void
wrong_key_or_name(void)
{
	struct seal_keys	*a, *b, *ab;
	char			*s, *relabelled, kid[9], *plain;

	a = KEYS(KEY_A "\n");
	b = KEYS(KEY_B "\n");
	ab = KEYS(KEY_B "\n" KEY_A "\n");
	if (a == NULL || b == NULL || ab == NULL)
		goto out;
	if (!T_ASSERT((s = seal_secret(a, "orders", SECRET)) != NULL))
		goto out;
	T_EQ_INT(seal_open(b, "orders", s, &plain, kid), SEAL_NO_KEY);
	T_ASSERT(plain == NULL);
	T_EQ_STR(kid, KID_A);
	T_EQ_INT(seal_open(NULL, "orders", s, &plain, kid), SEAL_NO_KEY);
	T_EQ_INT(open_only(a, "orders2", s), SEAL_BAD);
	T_EQ_INT(open_only(a, "Orders", s), SEAL_BAD);
	T_EQ_INT(open_only(a, "", s), SEAL_BAD);
	T_EQ_INT(open_only(a, NULL, s), SEAL_BAD);
	T_EQ_INT(open_only(ab, "orders", s), SEAL_OK);
	relabelled = strdup(s);
	memcpy(relabelled + 3, KID_B, 8);
	T_EQ_INT(seal_open(ab, "orders", relabelled, &plain, kid), SEAL_BAD);
	T_EQ_STR(kid, KID_B);
	T_ASSERT(plain == NULL);
	free(relabelled);
	free(s);
out:
	seal_keys_free(a);
	seal_keys_free(b);
	seal_keys_free(ab);
}

/* Every single bit flipped, in the nonce, the ciphertext or the tag. */
static void
flipped_bits(void)
{
	struct seal_keys	*k;
	unsigned char		*raw;
	char			*s, *t;
	size_t			 len, i;
	int			 bit, bad = 0, n = 0;

	if ((k = KEYS(KEY_A "\n")) == NULL)
		return;
	if (!T_ASSERT((s = seal_secret(k, "orders", SECRET)) != NULL)) {
		seal_keys_free(k);
		return;
	}
	raw = payload(s, &len);
	T_EQ_INT(len, 12 + strlen(SECRET) + 16);
	for (i = 0; i < len; i++)
		for (bit = 0; bit < 8; bit++) {
			raw[i] ^= (unsigned char)(1 << bit);
			t = reseal(KID_A, raw, len);
			n++;
			bad += open_only(k, "orders", t) == SEAL_BAD;
			free(t);
			raw[i] ^= (unsigned char)(1 << bit);
		}
	T_EQ_INT(bad, n);
	/* Unflipped, the same bytes open. */
	t = reseal(KID_A, raw, len);
	T_EQ_INT(open_only(k, "orders", t), SEAL_OK);
	free(t);
	/* A byte short, a byte more, the tag cut off. */
	t = reseal(KID_A, raw, len - 1);
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	free(t);
	t = reseal(KID_A, raw, len - 16);
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	free(t);
	raw = realloc(raw, len + 1);
	raw[len] = 0;
	t = reseal(KID_A, raw, len + 1);
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	free(t);
	free(raw);
	free(s);
	seal_keys_free(k);
}

/* What is not a sealed value, and truncated or garbled ones. */
static void
malformed(void)
{
	static const char *const not_sealed[] = {
		"", "v1", "v1:", "v1:" KID_A, "v1:630dcd2:", "v1:630DCD29:",
		"v1:630dcd2g:", "v2:" KID_A ":", "V1:" KID_A ":",
		"v1:" KID_A "x", " v1:" KID_A ":", SECRET,
	};
	struct seal_keys	*k;
	char			*s, *t, kid[9];
	size_t			 i, n;

	for (i = 0; i < T_NCASES(not_sealed); i++) {
		if (!T_ASSERT(!seal_is_sealed(not_sealed[i])))
			t_fail(__FILE__, __LINE__, "  \"%s\"", not_sealed[i]);
	}
	T_ASSERT(!seal_is_sealed(NULL));
	T_ASSERT(seal_is_sealed("v1:" KID_A ":"));
	T_ASSERT(seal_is_sealed("v1:" KID_A ":anything"));
	if ((k = KEYS(KEY_A "\n")) == NULL)
		return;
	for (i = 0; i < T_NCASES(not_sealed); i++) {
		strcpy(kid, "junk");
		T_EQ_INT(seal_open(k, "orders", not_sealed[i], &t, kid),
		    SEAL_BAD);
		T_EQ_STR(kid, "");
	}
	T_EQ_INT(open_only(k, "orders", NULL), SEAL_BAD);
	if (!T_ASSERT((s = seal_secret(k, "orders", SECRET)) != NULL)) {
		seal_keys_free(k);
		return;
	}
	n = strlen(s);
	t = malloc(n + 8);
	/* Cut anywhere after the head. */
	for (i = 12; i < n; i++) {
		memcpy(t, s, i);
		t[i] = '\0';
		if (!T_EQ_INT(open_only(k, "orders", t), SEAL_BAD))
			t_fail(__FILE__, __LINE__, "  cut at %zu", i);
	}
	/* A blank, a '-' or a '=' inside; a newline or more after. */
	strcpy(t, s);
	t[20] = ' ';
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	t[20] = '-';
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	t[20] = '=';
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	snprintf(t, n + 8, "%s\n", s);
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	snprintf(t, n + 8, "%sAAAA", s);
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	T_EQ_INT(open_only(k, "orders", "v1:" KID_A ":!!!!"), SEAL_BAD);
	T_EQ_INT(open_only(k, "orders", "v1:" KID_A ":===="), SEAL_BAD);
	T_EQ_INT(open_only(k, "orders", "v1:" KID_A ":AAAA"), SEAL_BAD);
	/* Malformed wins over an unknown kid. */
	T_EQ_INT(open_only(k, "orders", "v1:" KID_B ":!!!!"), SEAL_BAD);
	T_EQ_INT(open_only(k, "orders", "v1:" KID_B ":"), SEAL_BAD);
	/* Far too long to be a secret of SEAL_PLAIN_MAX bytes. */
	free(t);
	t = malloc(12 + 8000 + 1);
	memcpy(t, "v1:" KID_A ":", 12);
	memset(t + 12, 'A', 8000);
	t[12 + 8000] = '\0';
	T_EQ_INT(open_only(k, "orders", t), SEAL_BAD);
	free(t);
	free(s);
	seal_keys_free(k);
}

/*
 * AES-256-GCM with the documented associated data, written here with
 * OpenSSL directly: the layout seal_open reads is the one SPEC 16 and
 * docs/plans/31-api.md describe, not only whatever seal_secret writes.
 */
static char *
by_hand(const char *kidhex, const unsigned char key[32], const char *name,
    const void *plain, size_t len)
{
	unsigned char	 raw[12 + 64 + 16];
	char		 aad[128];
	EVP_CIPHER_CTX	*c = EVP_CIPHER_CTX_new();
	int		 l;

	if (c == NULL || len > 64)
		abort();
	memset(raw, 0x5a, 12);
	snprintf(aad, sizeof(aad), AAD_HEAD "%s|%s", name, kidhex);
	if (EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, raw) != 1 ||
	    EVP_EncryptUpdate(c, NULL, &l, (unsigned char *)aad,
	    (int)strlen(aad)) != 1 ||
	    EVP_EncryptUpdate(c, raw + 12, &l, plain, (int)len) != 1 ||
	    EVP_EncryptFinal_ex(c, raw + 12 + len, &l) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
	    raw + 12 + len) != 1)
		abort();
	EVP_CIPHER_CTX_free(c);
	return reseal(kidhex, raw, 12 + len + 16);
}

/* A value made by hand opens; one holding a NUL byte does not. */
static void
layout(void)
{
	struct seal_keys	*k;
	unsigned char		 key[32];
	char			*s, *plain;
	int			 i;

	for (i = 0; i < 32; i++)
		key[i] = (unsigned char)i;	/* KEY_A */
	if ((k = KEYS(KEY_A "\n")) == NULL)
		return;
	s = by_hand(KID_A, key, "orders", SECRET, strlen(SECRET));
	T_EQ_INT(seal_open(k, "orders", s, &plain, NULL), SEAL_OK);
	if (T_ASSERT(plain != NULL))
		T_EQ_STR(plain, SECRET);
	secret_free(plain);
	free(s);
	s = by_hand(KID_A, key, "orders", "abc\0def", 7);
	T_EQ_INT(open_only(k, "orders", s), SEAL_BAD);
	free(s);
	seal_keys_free(k);
}

/*
 * Rotation: with B first and A second, new values are sealed with B and
 * values sealed with A alone still open.
 */
static void
rotation(void)
{
	struct seal_keys	*a, *ba;
	char			*old, *new, kid[9], *plain;

	a = KEYS("# the old key\n" KEY_A "\n");
	ba = KEYS("# newest first\n" KEY_B "\n\n# the old one, until every "
	    "value is sealed again\n" KEY_A "\n");
	if (a == NULL || ba == NULL)
		goto out;
	T_EQ_INT(seal_keys_count(ba), 2);
	T_EQ_STR(seal_keys_kid(ba, 0), KID_B);
	T_EQ_STR(seal_keys_kid(ba, 1), KID_A);
	old = seal_secret(a, "orders", SECRET);
	new = seal_secret(ba, "orders", SECRET);
	if (T_ASSERT(old != NULL && new != NULL)) {
		T_ASSERT(strncmp(new, "v1:" KID_B ":", 12) == 0);
		T_EQ_INT(seal_open(ba, "orders", old, &plain, kid), SEAL_OK);
		T_EQ_STR(kid, KID_A);
		if (T_ASSERT(plain != NULL))
			T_EQ_STR(plain, SECRET);
		secret_free(plain);
		T_EQ_INT(open_only(ba, "orders", new), SEAL_OK);
		/* An instance still on the old file cannot open the new. */
		T_EQ_INT(open_only(a, "orders", new), SEAL_NO_KEY);
	}
	free(old);
	free(new);
out:
	seal_keys_free(a);
	seal_keys_free(ba);
}

/* The key file: what it may hold, and what is refused where. */
static void
key_file(void)
{
	struct seal_keys	*k;
	char			 text[4096], err[256], line[80];
	size_t			 n;
	int			 i, j, loose, errline;

	k = KEYS("\n# keys, newest first\n  \t\n" KEY_B "\r\n  " KEY_A
	    " \t\r\n#" KEY_A "x\n");
	T_EQ_INT(seal_keys_count(k), 2);
	seal_keys_free(k);
	/* Upper case is hex too: the same bytes, the same kid. */
	k = KEYS("000102030405060708090A0B0C0D0E0F"
	    "101112131415161718191A1B1C1D1E1F");
	T_EQ_STR(seal_keys_kid(k, 0), KID_A);
	seal_keys_free(k);
	/* 63 and 65 characters, not hex, inner blanks, a key with junk. */
	REFUSED(KEY_A "\n000102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1\n", 2, "63 characters",
	    "0001020304050607");
	REFUSED("# x\n\n" KEY_A "0\n", 3, "65 characters", "0001020304050607");
	REFUSED("zz0102030405060708090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f\n", 1, "other characters",
	    "zz01020304");
	REFUSED("0001020304050607 8090a0b0c0d0e0f"
	    "101112131415161718191a1b1c1d1e1f\n", 1, "other characters",
	    "0001020304050607");
	REFUSED("key=" KEY_A "\n", 1, "68 characters", "0001020304050607");
	REFUSED("; a comment is '#'\n" KEY_A "\n", 1, NULL, "a comment");
	/* The same key twice, in either case. */
	REFUSED(KEY_A "\n" KEY_B "\n" KEY_A "\n", 3, "line 1", "0001020304");
	REFUSED(KEY_A "\n000102030405060708090A0B0C0D0E0F"
	    "101112131415161718191A1B1C1D1E1F\n", 2, "line 1", NULL);
	/* No key at all. */
	REFUSED("", 0, "no key", NULL);
	REFUSED("\n\n# only comments\n", 0, "no key", NULL);
	/* SEAL_KEYS_MAX keys, then one more. */
	text[0] = '\0';
	for (i = 0, n = 0; i < SEAL_KEYS_MAX + 1; i++) {
		for (j = 0; j < 64; j++)
			line[j] = "0123456789abcdef"[(i * 7 + j) % 16 ^
			    (j == i)];
		line[64] = '\0';
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\n", line);
		if (i == SEAL_KEYS_MAX - 1) {
			k = KEYS(text);
			T_EQ_INT(seal_keys_count(k), SEAL_KEYS_MAX);
			seal_keys_free(k);
		}
	}
	REFUSED(text, SEAL_KEYS_MAX + 1, "more than 16 keys", line);
	/* Missing, a directory, too large: the whole file. */
	snprintf(line, sizeof(line), "%s/none", dir);
	T_ASSERT(seal_keys_load(line, &loose, &errline, err,
	    sizeof(err)) == NULL);
	T_EQ_INT(errline, 0);
	T_ASSERT(strstr(err, "cannot read") != NULL);
	T_ASSERT(seal_keys_load(dir, &loose, &errline, err,
	    sizeof(err)) == NULL);
	T_EQ_INT(errline, 0);
	T_ASSERT(strstr(err, "regular file") != NULL);
	{
		char	*huge = malloc(SEAL_FILE_MAX + 2);

		memset(huge, '\n', SEAL_FILE_MAX + 1);
		huge[SEAL_FILE_MAX + 1] = '\0';
		REFUSED(huge, 0, "larger than", NULL);
		memcpy(huge, KEY_A, 64);
		huge[SEAL_FILE_MAX] = '\0';
		k = KEYS(huge);
		T_EQ_INT(seal_keys_count(k), 1);
		seal_keys_free(k);
		free(huge);
	}
}

/* Who else may read the file: others, or a group not the relay's own. */
static void
permissions(void)
{
	static const struct {
		mode_t	 mode;
		int	 loose;
	} modes[] = {
		{ 0600, 0 }, { 0400, 0 }, { 0640, 0 }, { 0660, 0 },
		{ 0644, 1 }, { 0604, 1 }, { 0602, 1 }, { 0666, 1 },
	};
	struct seal_keys	*k;
	char			 err[256];
	size_t			 i;
	int			 loose, errline;

	for (i = 0; i < T_NCASES(modes); i++) {
		loose = -1;
		/* Written at 0600, then given its mode. */
		k = seal_keys_load(file_at("perm", KEY_A "\n", modes[i].mode),
		    &loose, &errline, err, sizeof(err));
		if (!T_ASSERT(k != NULL))
			continue;
		if (!T_EQ_INT(loose, modes[i].loose))
			t_fail(__FILE__, __LINE__, "  mode %04o",
			    (unsigned)modes[i].mode);
		seal_keys_free(k);
	}
}

static const struct t_case cases[] = {
	{ "seal and open, the kid, the form, the size limit", round_trip },
	{ "two seals of one text differ", fresh_nonces },
	{ "no key with its kid, another name, another kid", wrong_key_or_name },
	{ "any flipped bit, a cut or a longer payload is refused",
	  flipped_bits },
	{ "malformed values", malformed },
	{ "the documented layout, and NUL bytes", layout },
	{ "rotation: seal with the first key, open with any", rotation },
	{ "key file syntax and errors, never quoting a line", key_file },
	{ "key file permissions", permissions },
};

int
main(void)
{
	int	 failed, i;

	umask(077);
	snprintf(dir, sizeof(dir), "/tmp/t-seal.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	failed = t_run("seal", cases, T_NCASES(cases));
	for (i = 0; i < npaths; i++)
		unlink(paths[i]);
	rmdir(dir);
	return (failed ? 1 : 0);
}
