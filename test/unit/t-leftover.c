/*
 * t-leftover.c: who owns a consumer of WORK, by its name
 * (store_leftover_owner, src/relay/store-leftover.c): what the operations
 * API lists as left behind and may delete, and what it refuses.
 */
#include <string.h>

#include "../../src/relay/store-leftover.h"
#include "harness.h"

static const char *const subs[] = { "hook", "box", "hook-2" };

static enum store_leftover_owner
owner(const char *consumer, const char **tail)
{
	return store_leftover_owner(consumer, subs, 3, tail);
}

/* A subscriber's of this instance; one left behind. */
static void
subscribers(void)
{
	const char	*tail = NULL;

	T_EQ_INT(owner("relay-hook", &tail), STORE_OWNER_SUBSCRIBER);
	T_EQ_STR(tail, "hook");
	T_EQ_INT(owner("relay-hook-2", &tail), STORE_OWNER_SUBSCRIBER);
	T_EQ_INT(owner("relay-box", &tail), STORE_OWNER_SUBSCRIBER);
	/* Whole names only: neither a prefix nor a longer name. */
	T_EQ_INT(owner("relay-hoo", &tail), STORE_OWNER_NONE);
	T_EQ_STR(tail, "hoo");
	T_EQ_INT(owner("relay-hook-3", &tail), STORE_OWNER_NONE);
	T_EQ_INT(owner("relay-gone", &tail), STORE_OWNER_NONE);
	T_EQ_STR(tail, "gone");
	/* No subscribers at all: every relay- consumer is left behind. */
	T_EQ_INT(store_leftover_owner("relay-hook", NULL, 0, &tail),
	    STORE_OWNER_NONE);
}

/* A replay's; another program's. */
static void
others(void)
{
	const char	*tail = NULL;

	T_EQ_INT(owner("replay-0123456789abcdef01234567", &tail),
	    STORE_OWNER_REPLAY);
	T_EQ_STR(tail, "0123456789abcdef01234567");
	T_EQ_INT(owner("other-app", &tail), STORE_OWNER_OTHER);
	T_EQ_INT(owner("relay-", &tail), STORE_OWNER_OTHER);
	T_EQ_INT(owner("relay", &tail), STORE_OWNER_OTHER);
	T_EQ_INT(owner("hook", &tail), STORE_OWNER_OTHER);
	T_EQ_INT(owner("", &tail), STORE_OWNER_OTHER);
}

static const struct t_case cases[] = {
	{ "relay-<name>: a subscriber's here, or left behind", subscribers },
	{ "replay-<id> a replay's; any other name another program's", others },
};

int
main(void)
{
	return t_run("leftover", cases, T_NCASES(cases)) ? 1 : 0;
}
