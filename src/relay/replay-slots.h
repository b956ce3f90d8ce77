/*
 * replay-slots.h: the slots of TREATY_RELAY_MAX_REPLAYS (SPEC 15): which
 * of the replays in JetStream hold them.  Pure (any thread), unit-tested
 * (test/unit/t-replay-slots.c); the store's worker job that starts a
 * replay lists the replays' consumers and asks here.
 *
 * The replays hold the slots in the order of their consumers' creation
 * time in JetStream (ties by name), which every instance reads alike; a
 * replay that has ended (its end record written, its consumer perhaps
 * not deleted yet) holds none.
 */
#ifndef REPLAY_SLOTS_H
#define REPLAY_SLOTS_H

#include <stddef.h>
#include <stdint.h>

struct replay_slot {
	const char	*name;		/* the consumer's, replay-<id> */
	int64_t		 created_ns;	/* its creation time in JetStream */
};

/* Sort s by creation time, then by name. */
void	replay_slots_sort(struct replay_slot *s, size_t n);
/*
 * Whether replay mine (a consumer's name; NULL: one not made yet) has a
 * slot: 1 when it is among the first cap of s (sorted) that have not
 * ended, or, mine NULL or not in s, when fewer than cap have not ended;
 * else 0.  ended(arg, name) says 1 (ended), 0 (not) or -1 (cannot tell:
 * then -1); it is asked only of those before mine, and no further than
 * the cap.
 */
int	replay_slots_held(const struct replay_slot *s, size_t n,
	    const char *mine, int cap,
	    int (*ended)(void *arg, const char *name), void *arg);

#endif
