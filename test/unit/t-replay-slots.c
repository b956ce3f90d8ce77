/*
 * t-replay-slots.c: the slots of TREATY_RELAY_MAX_REPLAYS
 * (src/relay/replay-slots.c): the order by creation time then name, the
 * first cap that have not ended hold them, an ended replay holds none,
 * and JetStream is asked no more than it must.
 */
#include <string.h>

#include "../../src/relay/replay-slots.h"
#include "harness.h"

/* A fake of JetStream's end records: the names that have one. */
struct ends {
	const char	*ended[8];
	const char	*broken;	/* cannot be told */
	int		 asked;
};

static int
ended_cb(void *arg, const char *name)
{
	struct ends	*e = arg;
	size_t		 i;

	e->asked++;
	if (e->broken != NULL && strcmp(name, e->broken) == 0)
		return -1;
	for (i = 0; i < T_NCASES(e->ended) && e->ended[i] != NULL; i++)
		if (strcmp(e->ended[i], name) == 0)
			return 1;
	return 0;
}

/* Creation time first, then the name for the same time. */
static void
order(void)
{
	struct replay_slot	 s[] = {
		{ "replay-c", 30 }, { "replay-b", 10 }, { "replay-z", 20 },
		{ "replay-a", 20 }, { "replay-y", -5 }
	};

	replay_slots_sort(s, T_NCASES(s));
	T_EQ_STR(s[0].name, "replay-y");
	T_EQ_STR(s[1].name, "replay-b");
	T_EQ_STR(s[2].name, "replay-a");
	T_EQ_STR(s[3].name, "replay-z");
	T_EQ_STR(s[4].name, "replay-c");
	replay_slots_sort(s, 0);
	replay_slots_sort(NULL, 0);
}

/* A new one (mine NULL): a slot while fewer than cap run. */
static void
new_one(void)
{
	struct replay_slot	 s[] = { { "replay-a", 1 }, { "replay-b", 2 } };
	struct ends		 e;

	memset(&e, 0, sizeof(e));
	T_EQ_INT(replay_slots_held(s, 2, NULL, 3, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 2, NULL, 2, ended_cb, &e), 0);
	T_EQ_INT(replay_slots_held(s, 0, NULL, 1, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 2, NULL, 1, ended_cb, &e), 0);
	/* An ended one frees its slot. */
	e.ended[0] = "replay-a";
	T_EQ_INT(replay_slots_held(s, 2, NULL, 2, ended_cb, &e), 1);
}

/* Made already: its place among those that have not ended. */
static void
mine(void)
{
	struct replay_slot	 s[] = {
		{ "replay-a", 1 }, { "replay-b", 2 }, { "replay-c", 3 },
		{ "replay-d", 4 }
	};
	struct ends		 e;

	memset(&e, 0, sizeof(e));
	T_EQ_INT(replay_slots_held(s, 4, "replay-b", 2, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 4, "replay-c", 2, ended_cb, &e), 0);
	T_EQ_INT(replay_slots_held(s, 4, "replay-a", 1, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 4, "replay-d", 4, ended_cb, &e), 1);
	/* Those made after it never take its slot. */
	T_EQ_INT(replay_slots_held(s, 4, "replay-a", 1, ended_cb, &e), 1);
	/* a and b ended: c is the first that runs, d the second. */
	e.ended[0] = "replay-a";
	e.ended[1] = "replay-b";
	T_EQ_INT(replay_slots_held(s, 4, "replay-c", 1, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 4, "replay-d", 1, ended_cb, &e), 0);
	/* Not listed (deleted meanwhile): whether a slot is free. */
	T_EQ_INT(replay_slots_held(s, 4, "replay-x", 3, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 4, "replay-x", 2, ended_cb, &e), 0);
}

/* Two instances, each counting after making its own: one slot left. */
static void
race(void)
{
	struct replay_slot	 s[] = {
		{ "replay-old", 5 }, { "replay-q", 9 }, { "replay-p", 9 }
	};
	struct ends		 e;

	memset(&e, 0, sizeof(e));
	replay_slots_sort(s, T_NCASES(s));
	T_EQ_INT(replay_slots_held(s, 3, "replay-p", 2, ended_cb, &e) +
	    replay_slots_held(s, 3, "replay-q", 2, ended_cb, &e), 1);
	T_EQ_INT(replay_slots_held(s, 3, "replay-p", 2, ended_cb, &e), 1);
}

/* Asked only before mine and up to the cap; a failure is -1. */
static void
asks(void)
{
	struct replay_slot	 s[] = {
		{ "replay-a", 1 }, { "replay-b", 2 }, { "replay-c", 3 },
		{ "replay-d", 4 }, { "replay-e", 5 }
	};
	struct ends		 e;

	memset(&e, 0, sizeof(e));
	T_EQ_INT(replay_slots_held(s, 5, "replay-b", 16, ended_cb, &e), 1);
	T_EQ_INT(e.asked, 1);
	e.asked = 0;
	T_EQ_INT(replay_slots_held(s, 5, NULL, 2, ended_cb, &e), 0);
	T_EQ_INT(e.asked, 2);
	e.asked = 0;
	e.broken = "replay-c";
	T_EQ_INT(replay_slots_held(s, 5, "replay-e", 16, ended_cb, &e), -1);
	T_EQ_INT(e.asked, 3);
	/* Past the cap before the broken one: answered without it. */
	T_EQ_INT(replay_slots_held(s, 5, "replay-e", 2, ended_cb, &e), 0);
}

static const struct t_case cases[] = {
	{ "sorted by creation time, then name", order },
	{ "a new replay: a slot while fewer than the cap run", new_one },
	{ "a made replay: among the first cap that have not ended", mine },
	{ "two made at once with one slot left: one holds it", race },
	{ "end records asked no further than needed", asks },
};

int
main(void)
{
	return t_run("replay-slots", cases, T_NCASES(cases)) ? 1 : 0;
}
