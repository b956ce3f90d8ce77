/*
 * backoff.c: exponential backoff with equal jitter, for redelivery delays
 * and client retries.
 *
 * Pure arithmetic on the caller's random value; no state, callable from
 * any thread.  Attempt 0 counts as attempt 1; a negative base or cap counts
 * as 0.  No input overflows: the nominal delay saturates at the cap.
 */
#include <stdint.h>

#include "treaty.h"

/* Nominal delay min(cap_ms, base_ms * 2^(attempt-1)), without overflow. */
int64_t
treaty_backoff_nominal_ms(unsigned attempt, int64_t base_ms, int64_t cap_ms)
{
	unsigned	 shift;

	if (base_ms < 0)
		base_ms = 0;
	if (cap_ms < 0)
		cap_ms = 0;
	shift = attempt > 0 ? attempt - 1 : 0;
	if (base_ms == 0)
		return (0);
	/* base * 2^shift > cap exactly when base > floor(cap / 2^shift). */
	if (shift >= 63 || base_ms > (cap_ms >> shift))
		return (cap_ms);
	return (base_ms << shift);
}

/* Delay uniform in [d/2, d] for the nominal d of attempt, drawn from rnd. */
int64_t
treaty_backoff_ms(unsigned attempt, int64_t base_ms, int64_t cap_ms,
    uint32_t rnd)
{
	uint64_t	 d, lo, span, pick;

	d = (uint64_t)treaty_backoff_nominal_ms(attempt, base_ms, cap_ms);
	lo = d / 2;
	span = d - lo + 1;		/* values in [lo, d], at most 2^62 */
	/* floor(rnd * span / 2^32) in 64 bits: split span at bit 32. */
	pick = (uint64_t)rnd * (span >> 32) +
	    (((uint64_t)rnd * (span & 0xFFFFFFFFu)) >> 32);
	return ((int64_t)(lo + pick));
}
