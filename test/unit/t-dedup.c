/*
 * t-dedup: the worker's memory of completed deliveries (src/cli/dedup.c)
 * and the string set under it (strset.c): ttl, the cap that fails closed,
 * scoping by inbox, and the set's growth and deletion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "../../src/cli/cli.h"

/* Entries live for the ttl, then go; the oldest leaves first. */
static void
t_ttl(void)
{
	struct dedup	*d = dedup_new(10, 1000);

	T_EQ_INT(dedup_add(d, "inbox", "a", 0), 0);
	T_EQ_INT(dedup_add(d, "inbox", "b", 500), 0);
	T_EQ_INT(dedup_has(d, "inbox", "a", 999), 1);
	T_EQ_INT(dedup_next_expiry(d), 1000);
	T_EQ_INT(dedup_has(d, "inbox", "a", 1000), 0);
	T_EQ_INT(dedup_has(d, "inbox", "b", 1000), 1);
	T_EQ_INT(dedup_next_expiry(d), 1500);
	T_EQ_INT(dedup_has(d, "inbox", "b", 1500), 0);
	T_EQ_INT(dedup_next_expiry(d), -1);
	dedup_free(d);
}

/* Full: adding fails (closed) until entries age out; room says so. */
static void
t_cap(void)
{
	struct dedup	*d = dedup_new(3, 1000);

	T_EQ_INT(dedup_room(d, 0), 3);
	T_EQ_INT(dedup_add(d, "i", "1", 0), 0);
	T_EQ_INT(dedup_add(d, "i", "2", 10), 0);
	T_EQ_INT(dedup_add(d, "i", "3", 20), 0);
	T_EQ_INT(dedup_room(d, 30), 0);
	T_EQ_INT(dedup_add(d, "i", "4", 30), -1);
	T_EQ_INT(dedup_has(d, "i", "4", 30), 0);
	/* Adding what is there needs no room. */
	T_EQ_INT(dedup_add(d, "i", "2", 30), 0);
	T_EQ_INT(dedup_room(d, 1000), 1);
	T_EQ_INT(dedup_add(d, "i", "4", 1000), 0);
	T_EQ_INT(dedup_has(d, "i", "2", 1000), 1);
	dedup_free(d);
}

/* (inbox, id): the same id in another inbox is another delivery. */
static void
t_scope(void)
{
	struct dedup	*d = dedup_new(10, 1000);
	char		 k1[KEY_MAX], k2[KEY_MAX];
	size_t		 n1, n2;

	T_EQ_INT(dedup_add(d, "a", "x", 0), 0);
	T_EQ_INT(dedup_has(d, "a", "x", 1), 1);
	T_EQ_INT(dedup_has(d, "b", "x", 1), 0);
	/* "a:b" + "c" and "a" + "b:c" must not meet. */
	n1 = strset_key2(k1, sizeof(k1), "a:b", "c");
	n2 = strset_key2(k2, sizeof(k2), "a", "b:c");
	T_ASSERT(n1 > 0 && n2 > 0);
	T_ASSERT(n1 != n2 || memcmp(k1, k2, n1) != 0);
	T_EQ_INT(dedup_add(d, "a:b", "c", 0), 0);
	T_EQ_INT(dedup_has(d, "a", "b:c", 1), 0);
	dedup_free(d);
	/* The allocated key is the same key, whole, also for long parts. */
	{
		char	*kn = strset_key2_new("a:b", "c"), *big, *kb;

		T_EQ_STR(kn, k1);
		free(kn);
		if ((big = malloc(4001)) == NULL)
			return;
		memset(big, 's', 4000);
		big[4000] = '\0';
		kb = strset_key2_new(big, big);
		T_EQ_INT((long long)strlen(kb), 4 + 1 + 4000 + 1 + 4000);
		free(kb);
		free(big);
	}
	/*
	 * The longest there is: a source and an id of 4,096 bytes each, in
	 * an inbox of 64 (treaty work's key of an event in its inbox).
	 */
	{
		char	*big, *kb, inbox[65];

		if ((big = malloc(4097)) == NULL)
			return;
		memset(big, 's', 4096);
		big[4096] = '\0';
		memset(inbox, 'i', 64);
		inbox[64] = '\0';
		kb = strset_key2_new(big, big);
		d = dedup_new(4, 1000);
		T_EQ_INT(dedup_add(d, inbox, kb, 0), 0);
		T_EQ_INT(dedup_has(d, inbox, kb, 1), 1);
		dedup_free(d);
		free(kb);
		free(big);
	}
}

/* The set grows past its first table and deletes what it should. */
static void
t_strset(void)
{
	struct strset	*s = strset_new();
	char		 k[32];
	int		 i, bad = 0;

	for (i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "key-%d", i);
		bad += strset_add(s, k, strlen(k)) != 1;
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(strset_count(s), 5000);
	T_EQ_INT(strset_add(s, "key-42", 6), 0);
	for (i = 0; i < 5000; i += 2) {
		snprintf(k, sizeof(k), "key-%d", i);
		bad += strset_del(s, k, strlen(k)) != 1;
	}
	T_EQ_INT(bad, 0);
	for (i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "key-%d", i);
		bad += strset_has(s, k, strlen(k)) != (i % 2);
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(strset_count(s), 2500);
	/* Keys are bytes: an embedded NUL is part of the key. */
	T_EQ_INT(strset_add(s, "a\0b", 3), 1);
	T_EQ_INT(strset_has(s, "a", 1), 0);
	T_EQ_INT(strset_has(s, "a\0b", 3), 1);
	strset_free(s);
}

int
main(void)
{
	static const struct t_case cases[] = {
		{ "entries expire after the ttl, oldest first", t_ttl },
		{ "full: refuses new entries until some age out", t_cap },
		{ "ids are scoped by inbox, keys cannot collide", t_scope },
		{ "the string set grows, finds and deletes", t_strset },
	};

	return t_run("dedup", cases, T_NCASES(cases)) ? 1 : 0;
}
