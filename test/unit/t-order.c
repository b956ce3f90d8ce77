/*
 * t-order.c: key order (src/relay/order.c, SPEC 18): one event of a key at
 * a time, keys in parallel, what waits kept in stream order whatever order
 * it came in, a hold that passes nothing and its release, adopted events,
 * many keys (the table grows), and nothing left behind.
 */
#include <stdio.h>
#include <string.h>

#include "../../src/relay/order.h"
#include "harness.h"

#define K(s)	(s), strlen(s)

static struct order_item	*passed[64];
static int			 npassed;

static void
pass_cb(struct order_item *it, void *arg)
{
	(void)arg;
	passed[npassed++] = it;
}

/* One at a time per key; other keys in parallel; next in line on done. */
static void
one_per_key(void)
{
	struct order		*o = order_new();
	struct order_item	 a1, a2, a3, b1;

	T_EQ_INT(order_admit(o, &a1, K("acct-1"), 10), 1);
	T_EQ_INT(order_admit(o, &a2, K("acct-1"), 11), 0);
	T_EQ_INT(order_admit(o, &b1, K("acct-2"), 12), 1);
	T_EQ_INT(order_admit(o, &a3, K("acct-1"), 13), 0);
	T_EQ_INT((int)order_keys(o), 2);
	T_EQ_INT((int)order_waiting(o), 2);
	/* b1 finishing frees nothing of acct-1. */
	T_ASSERT(order_done(o, &b1) == NULL);
	T_EQ_INT((int)order_keys(o), 1);
	T_ASSERT(order_done(o, &a1) == &a2);
	T_ASSERT(a2.passed && !a3.passed);
	T_ASSERT(order_done(o, &a2) == &a3);
	T_ASSERT(order_done(o, &a3) == NULL);
	T_EQ_INT((int)order_keys(o), 0);
	T_EQ_INT((int)order_waiting(o), 0);
	order_free(o);
}

/*
 * Held (a new holder collecting redeliveries): they come 13, 11, 12 and
 * pass 11, 12, 13; a repeat of 12 goes behind the first 12.  A waiting
 * event let go (given back) leaves its key's order as it was.
 */
static void
held_sorted(void)
{
	struct order		*o = order_new();
	struct order_item	 e13, e11, e12, r12, x5, y1;

	order_hold(o, 1, pass_cb, NULL);
	npassed = 0;
	T_EQ_INT(order_admit(o, &e13, K("k"), 13), 0);
	T_EQ_INT(order_admit(o, &e11, K("k"), 11), 0);
	T_EQ_INT(order_admit(o, &e12, K("k"), 12), 0);
	T_EQ_INT(order_admit(o, &r12, K("k"), 12), 0);
	T_EQ_INT(order_admit(o, &x5, K("x"), 5), 0);
	T_EQ_INT(order_admit(o, &y1, K("y"), 1), 0);
	T_ASSERT(order_done(o, &y1) == NULL);	/* let go while held */
	T_EQ_INT((int)order_keys(o), 2);
	order_hold(o, 0, pass_cb, NULL);
	T_EQ_INT(npassed, 2);
	T_ASSERT((passed[0] == &e11 && passed[1] == &x5) ||
	    (passed[0] == &x5 && passed[1] == &e11));
	T_ASSERT(order_done(o, &e11) == &e12);
	T_ASSERT(order_done(o, &e12) == &r12);
	T_ASSERT(order_done(o, &r12) == &e13);
	T_ASSERT(order_done(o, &e13) == NULL);
	T_ASSERT(order_done(o, &x5) == NULL);
	T_EQ_INT((int)order_keys(o), 0);
	order_free(o);
}

/*
 * Made ordered while two events of a key were under way: both adopted,
 * and the next waits until both are done.
 */
static void
adopted(void)
{
	struct order		*o = order_new();
	struct order_item	 u1, u2, n3;

	order_adopt(o, &u1, K("k"), 1);
	order_adopt(o, &u2, K("k"), 2);
	T_EQ_INT(order_admit(o, &n3, K("k"), 3), 0);
	T_ASSERT(order_done(o, &u2) == NULL);
	T_ASSERT(order_done(o, &u1) == &n3);
	T_ASSERT(order_done(o, &n3) == NULL);
	/* Not in the order at all: nothing. */
	T_ASSERT(order_done(o, &n3) == NULL);
	order_free(o);
}

/*
 * 5,000 keys (the table doubles many times), two events each: each key's
 * second waits for its first, and every key is gone at the end.  Keys
 * that differ in one byte, or in length only, are different keys.
 */
static void
many_keys(void)
{
	static struct order_item first[5000], second[5000];
	struct order	*o = order_new();
	char		 key[32];
	int		 i, bad = 0;

	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		bad += order_admit(o, &first[i], K(key), (uint64_t)i) != 1;
	}
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		bad += order_admit(o, &second[i], K(key), 5000 + (uint64_t)i)
		    != 0;
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT((int)order_keys(o), 5000);
	for (i = 4999; i >= 0; i--)
		bad += order_done(o, &first[i]) != &second[i];
	for (i = 0; i < 5000; i++)
		bad += order_done(o, &second[i]) != NULL;
	T_EQ_INT(bad, 0);
	T_EQ_INT((int)order_keys(o), 0);
	T_EQ_INT(order_admit(o, &first[0], "ab", 2, 1), 1);
	T_EQ_INT(order_admit(o, &first[1], "a", 1, 2), 1);
	T_EQ_INT(order_admit(o, &first[2], "ab\0", 3, 3), 1);
	order_done(o, &first[0]);
	order_done(o, &first[1]);
	order_done(o, &first[2]);
	order_free(o);
}

static const struct t_case cases[] = {
	{ "one event per key at a time, keys in parallel", one_per_key },
	{ "held: what waits kept in stream order", held_sorted },
	{ "adopted events hold their key", adopted },
	{ "5,000 keys, each in order, none left", many_keys },
};

int
main(void)
{
	return t_run("order", cases, T_NCASES(cases)) ? 1 : 0;
}
