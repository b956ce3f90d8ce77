/*
 * gate-window.c: the window, the first gate (gate.h).  Loop thread only.
 *
 * At most maxInFlight of a subscriber's deliveries on this instance, its
 * own and its replays' together, between the start of a POST (its
 * address looked up first) and its answer.  JetStream's MaxAckPending
 * bounds each consumer alone, and a replay's consumer has its own
 * (SPEC 15), so without the window a subscriber could have twice
 * maxInFlight requests at once.  A delivery that finds the window full
 * waits in arrival order; it takes the place of the first that leaves.
 * A new delivery is admitted whenever a place is free, as the window
 * always did, even while earlier ones are about to be resumed.
 */
#include <stdlib.h>

#include "config.h"
#include "gate.h"
#include "util.h"

/* A subscriber's window. */
struct window {
	int	 n;		/* deliveries holding a place */
};

/* An empty window. */
static void *
window_new(void)
{
	return xcalloc(1, sizeof(struct window));
}

/* Free a window. */
static void
window_free(void *st)
{
	free(st);
}

/* A place in the window, or wait for one. */
static enum gate_verdict
window_admit(void *st, const struct subscriber *cfg,
    const struct gate_pass *p)
{
	struct window	*w = st;

	(void)p;
	if (w->n >= cfg->max_in_flight)
		return GATE_WAIT;
	w->n++;
	return GATE_PASS;
}

/* A delivery's POST was answered, or it ended: its place is free. */
static int
window_done(void *st, const struct subscriber *cfg,
    const struct gate_pass *p, int status)
{
	struct window	*w = st;

	(void)cfg;
	(void)p;
	(void)status;
	w->n--;
	return 1;
}

const struct gate gate_window = {
	"window", window_new, window_free, window_admit, window_done
};
