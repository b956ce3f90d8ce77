/*
 * ratelimit.c: token buckets (ratelimit.h).  Pure.
 */
#include "ratelimit.h"

/* Take n tokens, or say how long until they would be there. */
long long
bucket_take(struct bucket *b, double rate, int burst, int n, long long now_ms)
{
	double	 wait;
	long long s;

	if (!b->started) {
		b->started = 1;
		b->tokens = burst;
		b->last_ms = now_ms;
	} else if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * rate / 1000.0;
		b->last_ms = now_ms;
	}
	if (b->tokens > burst)
		b->tokens = burst;
	if (b->tokens >= n)
		return (b->tokens -= n, 0);
	/* What a client should wait: whole seconds, rounded up, >= 1. */
	wait = ((n > burst ? burst : n) - b->tokens) / rate;
	s = (long long)wait;
	if ((double)s < wait)
		s++;
	return s < 1 ? 1 : s;
}
