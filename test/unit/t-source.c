/*
 * t-source: sources and the ledger (src/relay/source.c): an outcome of
 * the subscriber's own source counts nowhere, a replay's in its tally; a
 * count for a replay nobody took makes a tally that replay.c takes once;
 * a tally taken by id keeps what was counted before; the watch event is
 * made active by each count; an end frees the tally and is remembered
 * among the last SOURCE_ENDED_KEEP.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "harness.h"
#include "../../src/relay/source.h"

#define RID	"0123456789abcdef01234567"
#define RID2	"0123456789abcdef01234568"

/* The own source and a replay's; outcomes counted for the replay only. */
static void
outcomes(void)
{
	struct source	 own, rp;
	uint64_t	 d, x;

	source_set(&own, NULL, 10);
	source_set(&rp, RID, 4);
	T_ASSERT(source_id(&own) == NULL);
	T_EQ_STR(source_id(&rp), RID);
	T_EQ_INT(rp.max_deliver, 4);
	source_outcome(&own, 1);
	source_outcome(&rp, 1);
	source_outcome(&rp, 1);
	source_outcome(&rp, 0);
	source_counts(RID, &d, &x);
	T_EQ_INT((int)d, 2);
	T_EQ_INT((int)x, 1);
	source_counts(RID2, &d, &x);
	T_EQ_INT((int)d, 0);
	T_EQ_INT((int)x, 0);
	source_free();
}

/* A count first: a new tally, taken once; one taken by id keeps counts. */
static void
tallies(void)
{
	struct source_tally	*t, *u;

	source_counted(RID, 1);
	source_counted("short", 1);		/* not an id: nothing */
	T_ASSERT((t = source_tally_new()) != NULL);
	T_EQ_STR(t->id, RID);
	T_ASSERT(t->made_ms > 0);
	T_EQ_INT((int)t->delivered, 1);
	T_ASSERT(source_tally_new() == NULL);
	source_counted(RID, 0);
	T_EQ_INT((int)t->dropped, 1);
	T_ASSERT(source_tally_new() == NULL);
	/* Counted before replay.c found it: found with its counts. */
	source_counted(RID2, 1);
	u = source_tally_take(RID2);
	T_EQ_INT((int)u->delivered, 1);
	T_ASSERT(source_tally_new() == NULL);
	T_ASSERT(source_tally_take(RID) == t);
	source_free();
	/* Found by replay.c first: made, not new. */
	t = source_tally_take(RID);
	T_EQ_INT((int)t->made_ms, 0);
	T_ASSERT(source_tally_new() == NULL);
	source_free();
}

/* The watch event's callback (it never runs). */
static void
noop_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

/* Each count makes the watch event active. */
static void
watch(void)
{
	struct event_base	*base = event_base_new();
	struct event		 ev;

	event_assign(&ev, base, -1, 0, noop_cb, NULL);
	source_watch(&ev);
	T_ASSERT(!event_pending(&ev, EV_TIMEOUT, NULL));
	source_counted(RID, 1);
	T_ASSERT(event_pending(&ev, EV_TIMEOUT, NULL));
	event_del(&ev);
	source_free();
	T_ASSERT(!event_pending(&ev, EV_TIMEOUT, NULL));
	source_counted(RID, 1);		/* no watch any more */
	T_ASSERT(!event_pending(&ev, EV_TIMEOUT, NULL));
	source_free();
	event_base_free(base);
}

/* An end frees the tally and is remembered, the last 64 of them. */
static void
ended(void)
{
	char		 id[SOURCE_ID_SIZE];
	uint64_t	 d, x;
	int		 i;

	source_counted(RID, 1);
	T_ASSERT(!source_ended(RID));
	source_end(RID);
	T_ASSERT(source_ended(RID));
	T_ASSERT(!source_ended(RID2));
	source_counts(RID, &d, &x);
	T_EQ_INT((int)d, 0);
	T_ASSERT(source_tally_new() == NULL);
	/* A count after the end starts again (replay.c records it). */
	source_counted(RID, 1);
	T_ASSERT(source_tally_new() != NULL);
	for (i = 0; i < SOURCE_ENDED_KEEP; i++) {
		snprintf(id, sizeof(id), "%024d", i);
		source_end(id);
	}
	T_ASSERT(!source_ended(RID));
	T_ASSERT(source_ended(id));
	source_free();
}

static const struct t_case cases[] = {
	{ "outcomes: a replay's counted, the own source's not", outcomes },
	{ "tallies: made by a count, taken once; taken by id", tallies },
	{ "a count wakes replay.c's event", watch },
	{ "ends: tally freed, the last 64 remembered", ended },
};

int
main(void)
{
	return t_run("source", cases, T_NCASES(cases)) ? 1 : 0;
}
