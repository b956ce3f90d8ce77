/*
 * seal.h: subscriber secrets sealed for storage in JetStream (SPEC 16):
 * AES-256-GCM under the keys of TREATY_RELAY_SECRET_KEY_FILE, bound to the
 * subscriber's name and the key's id.  A struct seal_keys is immutable once
 * loaded, so any thread may seal and open with it; it is loaded and freed
 * by config.c on the main thread, at start and at each reload.
 */
#ifndef SEAL_H
#define SEAL_H

#include <stddef.h>

#define SEAL_KEY_LEN		32	/* bytes: AES-256 */
#define SEAL_KEY_HEX		(2 * SEAL_KEY_LEN)
#define SEAL_KEYS_MAX		16	/* keys in one file */
#define SEAL_KID_LEN		8	/* hex digits of SHA-256(key) */
#define SEAL_PLAIN_MAX		4096	/* bytes a sealed value may hold */
#define SEAL_FILE_MAX		65536	/* bytes a key file may have */

struct seal_keys;

enum seal_result {
	SEAL_OK,
	SEAL_NO_KEY,		/* well formed, but no key has its kid */
	SEAL_BAD		/* malformed, or authentication failed */
};

/*
 * Read a key file: lines of 64 hex digits (32 bytes), newest first, at
 * most SEAL_KEYS_MAX, none twice; blank lines and lines starting with '#'
 * are skipped, and blanks around a line do not count.  NULL on failure,
 * with *errline the line at fault (0: the whole file) and err saying why
 * (never a line's content).  *loose is 1 when others than the relay may
 * read the file: any permission for others, or group permissions for a
 * group that is not the process's own.
 */
struct seal_keys	*seal_keys_load(const char *path, int *loose,
			    int *errline, char *err, size_t errlen);
/* Free k, its keys wiped first; NULL is fine. */
void			 seal_keys_free(struct seal_keys *k);
/* How many keys k holds (0 for NULL). */
int			 seal_keys_count(const struct seal_keys *k);
/*
 * Key i's id, 8 lowercase hex digits (the first of SHA-256(key)); key 0
 * is the newest, the one seal_secret uses.  NULL when i is out of range.
 */
const char		*seal_keys_kid(const struct seal_keys *k, int i);
/*
 * plain sealed for subscriber name with k's newest key, as a new string
 * "v1:<kid>:<base64(nonce[12] | ciphertext | tag[16])>".  NULL when k is
 * NULL or empty, plain is longer than SEAL_PLAIN_MAX, or OpenSSL fails.
 */
char			*seal_secret(const struct seal_keys *k,
			    const char *name, const char *plain);
/*
 * Open a value seal_secret made for name: SEAL_OK with *plain a new
 * string (free it with secret_free, util.h); SEAL_NO_KEY when no key of k
 * (or k NULL) has its kid; SEAL_BAD when it is malformed, was sealed for
 * another name, was changed, or holds a NUL byte.  kid_out, unless NULL,
 * gets the value's kid, or "" when none can be read.
 */
enum seal_result	 seal_open(const struct seal_keys *k, const char *name,
			    const char *sealed, char **plain,
			    char kid_out[SEAL_KID_LEN + 1]);
/* 1 when s starts "v1:<8 lowercase hex>:", the sealed form. */
int			 seal_is_sealed(const char *s);

#endif
