/*
 * siphash.c: SipHash-2-4-128 (siphash.h), after the specification
 * ("SipHash: a fast short-input PRF", 2012) and its 128-bit variant:
 * v1 ^= 0xee at the start and v2 ^= 0xee, then v1 ^= 0xdd, before the two
 * finalisations.  Checked against the reference vectors in t-siphash.
 */
#include <string.h>

#include "siphash.h"

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* Little-endian 64-bit word at p. */
static uint64_t
le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	    (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	    (uint64_t)p[7] << 56;
}

static void
put_le64(unsigned char *p, uint64_t v)
{
	int	 i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void
siphash128(const unsigned char key[16], const void *in, size_t len,
    unsigned char out[16])
{
	const unsigned char	*p = in;
	uint64_t		 k0 = le64(key), k1 = le64(key + 8), m, b;
	uint64_t		 v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t		 v1 = k1 ^ 0x646f72616e646f6dULL ^ 0xee;
	uint64_t		 v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t		 v3 = k1 ^ 0x7465646279746573ULL;
	unsigned char		 last[8];
	size_t			 i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		m = le64(p + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	/* The last 0-7 bytes, and the length's low byte on top. */
	memset(last, 0, sizeof(last));
	if (left > 0)
		memcpy(last, p + i, left);
	b = le64(last) | (uint64_t)len << 56;
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;

	v2 ^= 0xee;
	for (i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	put_le64(out, v0 ^ v1 ^ v2 ^ v3);
	v1 ^= 0xdd;
	for (i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	put_le64(out + 8, v0 ^ v1 ^ v2 ^ v3);
}
