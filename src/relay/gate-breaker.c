/*
 * gate-breaker.c: the breaker, the third gate (gate.h).  Loop thread only.
 *
 * It admits everything and counts what comes back (SPEC 17): a failed
 * attempt (408, 429, 3xx, 5xx, no answer, not sent: no address or a
 * refused one) adds one, a 2xx starts again from none, anything else
 * (another 4xx, a delivery given back) leaves the count as it is.  At
 * breaker.failures in a row on this instance, while the subscriber is
 * active, it trips the subscriber (substate_trip: this instance holds
 * at once, the others when the state reaches them).  Failures while it
 * is not active are not counted: they are the outage the state already
 * says.  A probe is not counted either: its answer is the prober's.
 */
#include <stdlib.h>

#include "config.h"
#include "gate.h"
#include "substate.h"
#include "util.h"

struct breaker {
	struct substate_entry	*e;
	int			 failures;	/* in a row, here */
};

static void *
breaker_new(struct gate_sub *gs)
{
	(void)gs;
	return xcalloc(1, sizeof(struct breaker));
}

static void
breaker_free(void *st)
{
	free(st);
}

static enum gate_verdict
breaker_admit(void *st, const struct subscriber *cfg,
    struct gate_pass *p)
{
	struct breaker	*b = st;

	(void)p;
	if (b->e == NULL)
		b->e = substate_ref(cfg->name);
	return GATE_PASS;
}

/* 1 for what SPEC 17 counts as a failed attempt. */
static int
failed(int status)
{
	return status == GATE_NO_ANSWER || status == GATE_NOT_SENT ||
	    status == 408 || status == 429 || (status >= 300 &&
	    status < 400) || status >= 500 || (status > 0 && status < 200);
}

static int
breaker_done(void *st, const struct subscriber *cfg,
    const struct gate_pass *p, int status)
{
	struct breaker	*b = st;

	if (p->probe)
		return 0;
	if (status >= 200 && status < 300)
		b->failures = 0;
	else if (failed(status)) {
		if (substate_of(b->e) != SUBSTATE_ACTIVE) {
			b->failures = 0;
			return 0;
		}
		/* Counted on while a write under way keeps the trip out. */
		if (++b->failures >= cfg->breaker_failures &&
		    cfg->breaker_failures > 0 &&
		    substate_trip(b->e, b->failures))
			b->failures = 0;
	}
	return 0;
}

const struct gate gate_breaker = {
	"breaker", breaker_new, breaker_free, breaker_admit, breaker_done
};
