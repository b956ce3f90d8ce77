/*
 * t-backoff.c: unit tests of the equal-jitter backoff (backoff.c): nominal
 * doubling and cap, jitter bounds for every kind of random value, attempt
 * 0, and saturation instead of overflow.
 */
#include <stdint.h>

#include "treaty.h"
#include "harness.h"

#define BASE	1000
#define CAP	300000		/* the relay's redelivery parameters */

/* Random values that probe the edges of the jitter range. */
static const uint32_t	 edge_rnd[] = {
	0, 1, 2, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu,
	UINT32_MAX
};

/* Nominal delays double from the base: 1 s, 2 s, 4 s, ... */
static void
nominal_doubling(void)
{
	T_EQ_INT(treaty_backoff_nominal_ms(1, BASE, CAP), 1000);
	T_EQ_INT(treaty_backoff_nominal_ms(2, BASE, CAP), 2000);
	T_EQ_INT(treaty_backoff_nominal_ms(3, BASE, CAP), 4000);
	T_EQ_INT(treaty_backoff_nominal_ms(4, BASE, CAP), 8000);
	T_EQ_INT(treaty_backoff_nominal_ms(5, BASE, CAP), 16000);
	T_EQ_INT(treaty_backoff_nominal_ms(8, BASE, CAP), 128000);
	T_EQ_INT(treaty_backoff_nominal_ms(9, BASE, CAP), 256000);
	/* The client's parameters: 125 ms doubling, capped at 15 s. */
	T_EQ_INT(treaty_backoff_nominal_ms(1, 125, 15000), 125);
	T_EQ_INT(treaty_backoff_nominal_ms(7, 125, 15000), 8000);
	T_EQ_INT(treaty_backoff_nominal_ms(8, 125, 15000), 15000);
}

/* The cap holds from the first attempt that would pass it. */
static void
nominal_cap(void)
{
	unsigned	 n;

	T_EQ_INT(treaty_backoff_nominal_ms(10, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(11, BASE, CAP), CAP);
	for (n = 10; n < 200; n++)
		T_EQ_INT(treaty_backoff_nominal_ms(n, BASE, CAP), CAP);
	/* Exactly at the cap. */
	T_EQ_INT(treaty_backoff_nominal_ms(3, 1000, 4000), 4000);
	T_EQ_INT(treaty_backoff_nominal_ms(4, 1000, 4000), 4000);
	/* A base above the cap is capped from attempt 1. */
	T_EQ_INT(treaty_backoff_nominal_ms(1, 5000, 4000), 4000);
}

/* Attempt 0 is treated as attempt 1. */
static void
attempt_zero(void)
{
	unsigned	 i;

	T_EQ_INT(treaty_backoff_nominal_ms(0, BASE, CAP), 1000);
	for (i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++)
		T_EQ_INT(treaty_backoff_ms(0, BASE, CAP, edge_rnd[i]),
		    treaty_backoff_ms(1, BASE, CAP, edge_rnd[i]));
}

/* Huge attempts and huge parameters saturate at the cap, never overflow. */
static void
no_overflow(void)
{
	T_EQ_INT(treaty_backoff_nominal_ms(63, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(64, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(65, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(1000, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(UINT32_MAX, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms((unsigned)-1, BASE, CAP), CAP);
	T_EQ_INT(treaty_backoff_nominal_ms(62, 1, INT64_MAX),
	    (int64_t)1 << 61);
	T_EQ_INT(treaty_backoff_nominal_ms(63, 1, INT64_MAX),
	    (int64_t)1 << 62);
	T_EQ_INT(treaty_backoff_nominal_ms(64, 1, INT64_MAX), INT64_MAX);
	T_EQ_INT(treaty_backoff_nominal_ms(2, INT64_MAX, INT64_MAX),
	    INT64_MAX);
	T_EQ_INT(treaty_backoff_nominal_ms(UINT32_MAX, INT64_MAX, INT64_MAX),
	    INT64_MAX);
	T_EQ_INT(treaty_backoff_ms(UINT32_MAX, BASE, CAP, UINT32_MAX), CAP);
	T_EQ_INT(treaty_backoff_ms(UINT32_MAX, BASE, CAP, 0), CAP / 2);
	/* Beyond 2^32 values, 32 random bits reach within d/2^32 of d. */
	T_ASSERT(treaty_backoff_ms(UINT32_MAX, INT64_MAX, INT64_MAX,
	    UINT32_MAX) >= INT64_MAX - (INT64_MAX >> 32) - 1);
	T_EQ_INT(treaty_backoff_ms(UINT32_MAX, INT64_MAX, INT64_MAX, 0),
	    INT64_MAX / 2);
	T_ASSERT(treaty_backoff_ms(100, INT64_MAX, INT64_MAX, 0x80000000u) >=
	    INT64_MAX / 2);
}

/* Zero and negative parameters give 0, not garbage or a hang. */
static void
degenerate(void)
{
	T_EQ_INT(treaty_backoff_nominal_ms(1, 0, CAP), 0);
	T_EQ_INT(treaty_backoff_nominal_ms(UINT32_MAX, 0, CAP), 0);
	T_EQ_INT(treaty_backoff_nominal_ms(5, BASE, 0), 0);
	T_EQ_INT(treaty_backoff_nominal_ms(5, -1000, CAP), 0);
	T_EQ_INT(treaty_backoff_nominal_ms(5, BASE, -1), 0);
	T_EQ_INT(treaty_backoff_ms(5, 0, CAP, UINT32_MAX), 0);
	T_EQ_INT(treaty_backoff_ms(5, BASE, -7, UINT32_MAX), 0);
	T_EQ_INT(treaty_backoff_nominal_ms(1, 1, CAP), 1);
	T_EQ_INT(treaty_backoff_ms(1, 1, CAP, 0), 0);
	T_EQ_INT(treaty_backoff_ms(1, 1, CAP, UINT32_MAX), 1);
}

/* The jittered delay stays in [d/2, d] and reaches both ends. */
static void
jitter_bounds(void)
{
	uint32_t	 r = 0x12345678u;
	unsigned	 n, i;
	int64_t		 d, v;
	int		 bad = 0;

	for (n = 0; n <= 70; n++) {
		d = treaty_backoff_nominal_ms(n, BASE, CAP);
		T_EQ_INT(treaty_backoff_ms(n, BASE, CAP, 0), d / 2);
		T_EQ_INT(treaty_backoff_ms(n, BASE, CAP, UINT32_MAX), d);
		for (i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
			v = treaty_backoff_ms(n, BASE, CAP, edge_rnd[i]);
			if ((v < d / 2 || v > d) && bad++ < 5)
				t_fail(__FILE__, __LINE__, "attempt %u rnd %u:"
				    " %lld not in [%lld, %lld]", n,
				    (unsigned)edge_rnd[i], (long long)v,
				    (long long)(d / 2), (long long)d);
		}
		for (i = 0; i < 5000; i++) {
			/* xorshift32: deterministic, covers the range. */
			r ^= r << 13;
			r ^= r >> 17;
			r ^= r << 5;
			v = treaty_backoff_ms(n, BASE, CAP, r);
			if ((v < d / 2 || v > d) && bad++ < 5)
				t_fail(__FILE__, __LINE__, "attempt %u rnd %u:"
				    " %lld not in [%lld, %lld]", n,
				    (unsigned)r, (long long)v,
				    (long long)(d / 2), (long long)d);
		}
	}
	T_EQ_INT(bad, 0);
	/* Odd nominal delays: [floor(d/2), d]. */
	T_EQ_INT(treaty_backoff_ms(1, 3, 100, 0), 1);
	T_EQ_INT(treaty_backoff_ms(1, 3, 100, UINT32_MAX), 3);
}

/* rnd spreads evenly: it is monotonic and the middle lands mid-range. */
static void
jitter_uniform(void)
{
	int64_t		 prev = -1, v;
	uint64_t	 r;
	int		 mono = 1;
	unsigned	 hist[4] = { 0, 0, 0, 0 }, i;

	for (r = 0; r <= UINT32_MAX; r += 65537) {
		v = treaty_backoff_ms(10, BASE, CAP, (uint32_t)r);
		if (v < prev)
			mono = 0;
		prev = v;
		hist[(v - CAP / 2) * 4 / (CAP / 2 + 1)]++;
	}
	T_ASSERT(mono);
	T_EQ_INT(treaty_backoff_ms(10, BASE, CAP, 0x80000000u),
	    CAP / 2 + (CAP / 2 + 1) / 2);
	/* Each quarter of [d/2, d] gets about a quarter of the draws. */
	for (i = 0; i < 4; i++)
		T_ASSERT(hist[i] > 16300 && hist[i] < 16470);
	/* Every value of a small range is reachable. */
	{
		int	 seen[5] = { 0, 0, 0, 0, 0 }, k;

		for (r = 0; r <= UINT32_MAX; r += 4099)
			seen[treaty_backoff_ms(1, 8, 100, (uint32_t)r) - 4]++;
		for (k = 0; k < 5; k++)
			T_ASSERT(seen[k] > 0);
	}
}

static const struct t_case cases[] = {
	{ "nominal doubling", nominal_doubling },
	{ "nominal cap", nominal_cap },
	{ "attempt 0 is attempt 1", attempt_zero },
	{ "huge values do not overflow", no_overflow },
	{ "zero and negative parameters", degenerate },
	{ "jitter within [d/2, d]", jitter_bounds },
	{ "jitter uniform", jitter_uniform },
};

/* Run the suite; exit 1 when a case failed. */
int
main(void)
{
	return (t_run("backoff", cases, T_NCASES(cases)) ? 1 : 0);
}
