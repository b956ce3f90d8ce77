/*
 * gate-window.c: the window, the first gate (gate.h).  Loop thread only.
 *
 * At most a window of a subscriber's deliveries on this instance, its
 * own and its replays' together, between the start of a POST (its
 * address looked up first) and its answer.  JetStream's MaxAckPending
 * bounds each consumer alone, and a replay's consumer has its own
 * (SPEC 15), so without the window a subscriber could have twice
 * maxInFlight requests at once.  A delivery that finds the window full
 * waits in arrival order; it takes the place of the first that leaves.
 * A new delivery is admitted whenever a place is free, as the window
 * always did, even while earlier ones are about to be resumed.
 *
 * The window adapts (SPEC 17): it starts at maxInFlight, halves (to 1 at
 * least) on a 429, a 503 or a timeout, and grows by one for each window's
 * worth of 2xx answers, back to maxInFlight.  One burst halves it once,
 * as TCP's congestion window is cut once per round trip: a failure of a
 * delivery admitted before the last cut (its serial below the cut) was
 * sent under the old window and says nothing new, so 60 answers of 429
 * from a first burst of 64 take it to 32, not to 1.  Held deliveries
 * (paused, tripped, waiting out a Retry-After) keep their places, since
 * those gates come after this one: the window bounds what an instance
 * holds, not only what it sends.
 */
#include <stdlib.h>

#include "config.h"
#include "gate.h"
#include "log.h"
#include "util.h"

/* A subscriber's window. */
struct window {
	int		 n;		/* deliveries holding a place */
	int		 limit;		/* places now; 0: maxInFlight */
	int		 max;		/* the maxInFlight it follows */
	int		 oks;		/* 2xx since it last grew */
	uint64_t	 serial;	/* admits so far */
	uint64_t	 cut;		/* serial at the last halving */
};

static void *
window_new(struct gate_sub *gs)
{
	(void)gs;
	return xcalloc(1, sizeof(struct window));
}

static void
window_free(void *st)
{
	free(st);
}

/*
 * The places now.  A reload that changes maxInFlight: a window that was
 * whole becomes the new one; a halved one stays, but never above it.
 */
static int
window_limit(struct window *w, const struct subscriber *cfg)
{
	if (w->max != cfg->max_in_flight) {
		if (w->limit == 0 || w->limit >= w->max ||
		    w->limit > cfg->max_in_flight)
			w->limit = cfg->max_in_flight;
		w->max = cfg->max_in_flight;
	}
	return w->limit;
}

/* A place in the window, or wait for one. */
static enum gate_verdict
window_admit(void *st, const struct subscriber *cfg, struct gate_pass *p)
{
	struct window	*w = st;

	if (w->n >= window_limit(w, cfg))
		return GATE_WAIT;
	w->n++;
	p->serial = ++w->serial;
	return GATE_PASS;
}

/* A delivery's POST was answered, or it ended: its place is free. */
static int
window_done(void *st, const struct subscriber *cfg,
    const struct gate_pass *p, int status)
{
	struct window	*w = st;
	int		 limit = window_limit(w, cfg);

	w->n--;
	if (status == 429 || status == 503 || p->timed_out) {
		if (p->serial > w->cut && limit > 1) {
			w->limit = limit / 2;
			w->cut = w->serial;
			w->oks = 0;
			log_debug("delivery window halved", "sub=%s window=%d "
			    "status=%d", cfg->name, w->limit, status);
		}
	} else if (status >= 200 && status < 300 && limit < cfg->max_in_flight &&
	    ++w->oks >= limit) {
		w->limit = limit + 1;
		w->oks = 0;
	}
	return 1;
}

const struct gate gate_window = {
	"window", window_new, window_free, window_admit, window_done
};
