/*
 * t-siphash.c: SipHash-2-4-128 (src/relay/siphash.c) against the
 * reference implementation's first vectors (key 00..0f, message 00..len-1),
 * and inputs across the 8-byte block edges.
 */
#include <string.h>

#include "../../src/relay/siphash.h"
#include "harness.h"

static const unsigned char	 vectors[3][16] = {
	{ 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6,
	  0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93 },
	{ 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44,
	  0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45 },
	{ 0x81, 0x77, 0x22, 0x8d, 0xa4, 0xa4, 0x5d, 0xc7,
	  0xfc, 0xa3, 0x8b, 0xde, 0xf6, 0x0a, 0xff, 0xe4 },
};

static void
reference(void)
{
	unsigned char	 key[16], msg[64], out[16];
	size_t		 i;

	for (i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	for (i = 0; i < 3; i++) {
		siphash128(key, msg, i, out);
		T_ASSERT(memcmp(out, vectors[i], 16) == 0);
	}
}

/* Every length to 3 blocks differs from its neighbours and the key counts. */
static void
lengths_and_keys(void)
{
	unsigned char	 key[16], msg[24], out[25][16], other[16];
	size_t		 i, j;

	memset(key, 7, sizeof(key));
	memset(msg, 'x', sizeof(msg));
	for (i = 0; i <= 24; i++)
		siphash128(key, msg, i, out[i]);
	for (i = 0; i <= 24; i++)
		for (j = i + 1; j <= 24; j++)
			T_ASSERT(memcmp(out[i], out[j], 16) != 0);
	key[15] ^= 1;
	siphash128(key, msg, 24, other);
	T_ASSERT(memcmp(other, out[24], 16) != 0);
}

static const struct t_case cases[] = {
	{ "reference vectors", reference },
	{ "lengths and keys", lengths_and_keys },
};

int
main(void)
{
	return (t_run("siphash", cases, T_NCASES(cases)) ? 1 : 0);
}
