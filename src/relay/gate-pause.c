/*
 * gate-pause.c: the pause, the second gate (gate.h).  Loop thread only.
 *
 * While a subscriber is paused or tripped (substate.h), its deliveries
 * wait here, unanswered: what JetStream already handed this instance is
 * held, telling it every progress_seconds that the delivery is under
 * way, so that it is neither redelivered nor counted against maxDeliver
 * however long the state lasts (SPEC 17), and the window before this
 * gate keeps JetStream from handing over more than maxInFlight.  A
 * tripped subscriber's probe (gate_pass.probe, set by the prober on the
 * first delivery waiting here) passes.  What waits is resumed in arrival
 * order when the state comes back to active (substate wakes deliver.c,
 * which resumes every subscriber's gates).  Until the states' first
 * reading is in (a start), every delivery waits: a subscriber paused
 * before the start must not get the first maxInFlight.
 */
#include <stdlib.h>

#include "config.h"
#include "gate.h"
#include "substate.h"
#include "util.h"

/* A subscriber's pause: its state's entry, found once. */
struct pause {
	struct substate_entry	*e;
};

static void *
pause_new(struct gate_sub *gs)
{
	(void)gs;
	return xcalloc(1, sizeof(struct pause));
}

static void
pause_free(void *st)
{
	free(st);
}

/* Pass while active; a probe passes anyway. */
static enum gate_verdict
pause_admit(void *st, const struct subscriber *cfg, struct gate_pass *p)
{
	struct pause	*ps = st;

	if (ps->e == NULL)
		ps->e = substate_ref(cfg->name);
	/* Not yet read (a start): it may be paused; wait to know. */
	if (!substate_read())
		return GATE_WAIT;
	if (p->probe || substate_of(ps->e) == SUBSTATE_ACTIVE)
		return GATE_PASS;
	return GATE_WAIT;
}

const struct gate gate_pause = {
	"pause", pause_new, pause_free, pause_admit, NULL
};
