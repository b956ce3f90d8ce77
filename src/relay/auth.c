/*
 * auth.c: bearer tokens (auth.h), for ingest and the inboxes alike.  Loop
 * thread only.
 *
 * The token cache.  Hashing a token with SHA-256 was about 3,400
 * instructions of every request, for the same few tokens again and again.
 * A small table remembers each recent token's SHA-256 under a tag, the
 * token's SipHash-2-4-128 under a key drawn at start: the token itself is
 * not kept, the tag's slot says nothing of the token's bytes to whoever
 * does not know the key, and a hit is found by comparing all 16 bytes of
 * the tag in constant time.  A wrong token that hit another token's slot
 * would need its tag, 2^-128 a try.  What the hash then matches is still
 * decided by config_find_producer and config_find_inbox, every hash
 * compared, so the cache changes no answer; it is emptied on reload, so
 * a token removed from the configuration leaves nothing of it behind.
 */
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "treaty.h"
#include "auth.h"
#include "log.h"
#include "siphash.h"

#define AUTH_CACHE_SLOTS	64	/* tokens in use at once, by hash */

struct auth_slot {
	unsigned char	 tag[16];
	char		 hex[AUTH_HASH_HEX];
	int		 used;
};

static struct auth_slot	 auth_cache[AUTH_CACHE_SLOTS];
static unsigned char	 auth_key[16];

/* Draw the cache's key; the cache starts empty. */
void
auth_init(void)
{
	if (RAND_bytes(auth_key, sizeof(auth_key)) != 1)
		fatalx("cannot draw the token cache's key", NULL);
	auth_clear();
}

/* Forget every token (a reload). */
void
auth_clear(void)
{
	OPENSSL_cleanse(auth_cache, sizeof(auth_cache));
}

/* The hash of a bearer token from its header's value; see auth.h. */
int
auth_bearer(const char *h, char hex[AUTH_HASH_HEX])
{
	struct auth_slot	*s;
	unsigned char		 tag[16];
	size_t			 len;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return -1;
	for (h += 7; *h == ' '; h++)
		;
	if (*h == '\0')
		return -1;
	len = strlen(h);
	siphash128(auth_key, h, len, tag);
	s = &auth_cache[tag[0] % AUTH_CACHE_SLOTS];
	if (s->used && CRYPTO_memcmp(s->tag, tag, sizeof(tag)) == 0) {
		memcpy(hex, s->hex, AUTH_HASH_HEX);
		return 0;
	}
	/* Only the hash is compared: the token itself is never kept. */
	if (treaty_sha256_hex(h, len, hex) != TREATY_OK)
		return -1;
	memcpy(s->tag, tag, sizeof(tag));
	memcpy(s->hex, hex, AUTH_HASH_HEX);
	s->used = 1;
	return 0;
}
