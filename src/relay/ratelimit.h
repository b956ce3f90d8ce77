/*
 * ratelimit.h: token buckets for the per-producer rate limits (SPEC 13)
 * and the subscribers' rateLimit (SPEC 17, gate-pace.c).
 * Pure: the time is passed in; any thread, unit-tested
 * (test/unit/t-ratelimit.c).
 */
#ifndef RATELIMIT_H
#define RATELIMIT_H

/*
 * A bucket of at most burst tokens, refilled at rate tokens a second.  A
 * new one (all zero) starts full.
 */
struct bucket {
	double		 tokens;
	long long	 last_ms;	/* when tokens was last brought up to date */
	int		 started;
};

/*
 * Take n tokens at now_ms: 0 when they were there (and are taken), else
 * the whole seconds, at least 1, until n would be there (nothing taken;
 * n over burst can never pass: then the seconds to a full bucket).
 */
long long	bucket_take(struct bucket *b, double rate, int burst, int n,
		    long long now_ms);
/* The same, the wait in milliseconds (at least 1). */
long long	bucket_take_ms(struct bucket *b, double rate, int burst, int n,
		    long long now_ms);

#endif
