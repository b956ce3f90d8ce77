/*
 * t-auth.c: bearer tokens (src/relay/auth.c): the header's forms, and the
 * token cache giving each token its own SHA-256 whether remembered or
 * not: again and again, for more tokens than slots (so slots are shared
 * and replaced), after auth_clear, and never another token's hash.
 */
#include <stdio.h>
#include <string.h>

#include "treaty.h"
#include "../../src/relay/auth.h"
#include "harness.h"

#define NTOKENS	300	/* several times the cache's slots */

static void
header_forms(void)
{
	char	 hex[AUTH_HASH_HEX], want[AUTH_HASH_HEX];

	T_EQ_INT(treaty_sha256_hex("tok-1", 5, want), TREATY_OK);
	T_EQ_INT(auth_bearer("Bearer tok-1", hex), 0);
	T_EQ_STR(hex, want);
	T_EQ_INT(auth_bearer("bearer   tok-1", hex), 0);
	T_EQ_STR(hex, want);
	T_EQ_INT(auth_bearer(NULL, hex), -1);
	T_EQ_INT(auth_bearer("Bearer ", hex), -1);
	T_EQ_INT(auth_bearer("Bearer    ", hex), -1);
	T_EQ_INT(auth_bearer("Basic dG9rLTE=", hex), -1);
	T_EQ_INT(auth_bearer("Bearertok-1", hex), -1);
}

/* Every token's own hash, over rounds that fill and refill the slots. */
static void
cache_answers(void)
{
	char	 hdr[64], hex[AUTH_HASH_HEX], want[AUTH_HASH_HEX];
	int	 round, i, n;

	for (round = 0; round < 3; round++) {
		if (round == 2)
			auth_clear();
		for (i = 0; i < NTOKENS; i++) {
			n = snprintf(hdr, sizeof(hdr), "Bearer token-%d", i);
			T_EQ_INT(treaty_sha256_hex(hdr + 7, (size_t)n - 7,
			    want), TREATY_OK);
			T_EQ_INT(auth_bearer(hdr, hex), 0);
			if (!T_EQ_STR(hex, want))
				return;
			/* At once again: from the cache this time. */
			T_EQ_INT(auth_bearer(hdr, hex), 0);
			if (!T_EQ_STR(hex, want))
				return;
		}
	}
	/* A token one byte longer or shorter is not its neighbour. */
	T_EQ_INT(auth_bearer("Bearer token-1", hex), 0);
	T_EQ_INT(auth_bearer("Bearer token-10", want), 0);
	T_ASSERT(strcmp(hex, want) != 0);
}

static const struct t_case cases[] = {
	{ "header forms", header_forms },
	{ "the cache answers each token's own hash", cache_answers },
};

int
main(void)
{
	auth_init();
	return (t_run("auth", cases, T_NCASES(cases)) ? 1 : 0);
}
