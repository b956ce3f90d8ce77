/*
 * replay-slots.c: which replays hold TREATY_RELAY_MAX_REPLAYS's slots
 * (replay-slots.h).  Pure.
 */
#include <stdlib.h>
#include <string.h>

#include "replay-slots.h"

/* Creation time, then name: the order every instance sees. */
static int
slot_cmp(const void *a, const void *b)
{
	const struct replay_slot	*x = a, *y = b;

	if (x->created_ns != y->created_ns)
		return x->created_ns < y->created_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
replay_slots_sort(struct replay_slot *s, size_t n)
{
	if (n > 1)
		qsort(s, n, sizeof(*s), slot_cmp);
}

/* Whether mine holds a slot; see replay-slots.h. */
int
replay_slots_held(const struct replay_slot *s, size_t n, const char *mine,
    int cap, int (*ended)(void *arg, const char *name), void *arg)
{
	size_t	 i;
	int	 held = 0, e;

	for (i = 0; i < n && held < cap; i++) {
		if (mine != NULL && strcmp(s[i].name, mine) == 0)
			return 1;
		if ((e = ended(arg, s[i].name)) == -1)
			return -1;
		if (e == 0)
			held++;
	}
	return held < cap;
}
