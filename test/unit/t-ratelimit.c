/*
 * t-ratelimit.c: the token buckets of src/relay/ratelimit.c: a new bucket
 * is full, refills at the rate up to the burst, and says how long to wait
 * in whole seconds (at least 1) when it cannot cover a request.
 */
#include <string.h>

#include "../../src/relay/ratelimit.h"
#include "harness.h"

static void
fresh_full(void)
{
	struct bucket	 b;
	int		 i;

	memset(&b, 0, sizeof(b));
	for (i = 0; i < 5; i++)
		T_EQ_INT((int)bucket_take(&b, 2, 5, 1, 1000), 0);
	/* Empty: the next token comes in 0.5 s, said as 1 s. */
	T_EQ_INT((int)bucket_take(&b, 2, 5, 1, 1000), 1);
}

static void
refill(void)
{
	struct bucket	 b;

	memset(&b, 0, sizeof(b));
	T_EQ_INT((int)bucket_take(&b, 2, 2, 2, 0), 0);
	T_EQ_INT((int)bucket_take(&b, 2, 2, 1, 400), 1);	/* 0.8 */
	T_EQ_INT((int)bucket_take(&b, 2, 2, 1, 500), 0);	/* 1.0 */
	/* Never above the burst, however long it waited. */
	T_EQ_INT((int)bucket_take(&b, 2, 2, 3, 100000), 1);
	T_EQ_INT((int)bucket_take(&b, 2, 2, 2, 100000), 0);
}

static void
waits(void)
{
	struct bucket	 b;

	memset(&b, 0, sizeof(b));
	T_EQ_INT((int)bucket_take(&b, 0.1, 1, 1, 0), 0);
	/* 0.1 events/s: 10 s to the next one. */
	T_EQ_INT((int)bucket_take(&b, 0.1, 1, 1, 0), 10);
	T_EQ_INT((int)bucket_take(&b, 0.1, 1, 1, 2500), 8);
	/* A batch of 4 against a bucket of 3 at 1/s: never; a full bucket
	 * is 3 s away, and nothing was taken meanwhile. */
	memset(&b, 0, sizeof(b));
	T_EQ_INT((int)bucket_take(&b, 1, 3, 3, 0), 0);
	T_EQ_INT((int)bucket_take(&b, 1, 3, 4, 0), 3);
	T_EQ_INT((int)bucket_take(&b, 1, 3, 1, 1000), 0);
}

/* A rate near 0 (rateLimit 1e-300 is > 0) waits a day, not garbage. */
static void
tiny_rate(void)
{
	struct bucket	 b;

	memset(&b, 0, sizeof(b));
	T_EQ_INT((int)(bucket_take_ms(&b, 1e-300, 1, 1, 0) == 0), 1);
	T_EQ_INT((int)(bucket_take_ms(&b, 1e-300, 1, 1, 1) ==
	    24LL * 3600 * 1000), 1);
}

static const struct t_case cases[] = {
	{ "a new bucket is full", fresh_full },
	{ "refill at the rate, up to the burst", refill },
	{ "waits in whole seconds", waits },
	{ "a rate near 0 waits a day", tiny_rate },
};

int
main(void)
{
	return t_run("ratelimit", cases, T_NCASES(cases)) ? 1 : 0;
}
