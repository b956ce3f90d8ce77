/*
 * ratelimit.c: token buckets (ratelimit.h).  Pure.
 */
#include "ratelimit.h"

#define WAIT_MAX_MS	(24LL * 3600 * 1000)

/* Take n tokens, or say in milliseconds how long until they are there. */
long long
bucket_take_ms(struct bucket *b, double rate, int burst, int n,
    long long now_ms)
{
	double		 wait;
	long long	 ms;

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
	wait = ((n > burst ? burst : n) - b->tokens) * 1000.0 / rate;
	/* A rate near 0 would wait past what a long long holds: a day. */
	if (!(wait < WAIT_MAX_MS))
		return WAIT_MAX_MS;
	ms = (long long)wait;
	if ((double)ms < wait)
		ms++;
	return ms < 1 ? 1 : ms;
}

/* Take n tokens, or say how long until they would be there. */
long long
bucket_take(struct bucket *b, double rate, int burst, int n, long long now_ms)
{
	long long	 ms = bucket_take_ms(b, rate, burst, n, now_ms);

	/* What a client should wait: whole seconds, rounded up, >= 1. */
	return ms == 0 ? 0 : (ms + 999) / 1000;
}
