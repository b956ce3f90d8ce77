/*
 * gate.c: the chain of gates a push delivery passes before its POST
 * (gate.h).  Loop thread only.
 *
 * The order is fixed here, and is the order of the list below: the
 * window first, so that what is held anywhere after it still holds a
 * place (the window bounds what an instance holds, not only what it
 * sends); then pause, breaker, pace.  An ordered subscriber's key order
 * is before them all (deliver-order.c), not a gate: it holds an event
 * across all its attempts, and what waits behind a key must take no
 * place in the window (docs/DESIGN.md, "The delivery pipeline").  A gate
 * is
 * asked in turn; the first that has a delivery wait keeps it in its
 * queue, and the ones before it keep what they gave it until the
 * delivery leaves (gate_done).  Nothing here ends a delivery or calls
 * back into deliver.c but through the function gate_resume is given.
 */
#include <stddef.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "gate.h"

static const struct gate *const gates[] = {
	&gate_window,
	&gate_pause,
	&gate_breaker,
	&gate_pace
};
#define NGATES	((int)(sizeof(gates) / sizeof(gates[0])))
_Static_assert(sizeof(gates) / sizeof(gates[0]) <= GATE_MAX,
    "more gates than GATE_MAX");

/* Set up a subscriber's gates. */
void
gate_sub_init(struct gate_sub *gs, struct event *wake)
{
	int	 g;

	gs->wake = wake;
	for (g = 0; g < NGATES; g++) {
		gs->st[g] = gates[g]->state_new(gs);
		TAILQ_INIT(&gs->waiting[g]);
	}
}

/* Free a subscriber's gates. */
void
gate_sub_free(struct gate_sub *gs)
{
	int	 g;

	for (g = 0; g < NGATES; g++)
		gates[g]->state_free(gs->st[g]);
}

/* p through the gates from p->at on: GATE_WAIT when one queued it. */
static enum gate_verdict
gate_walk(struct gate_sub *gs, struct gate_pass *p)
{
	for (; p->at < NGATES; p->at++) {
		if (gates[p->at]->admit(gs->st[p->at], gs->cfg, p) ==
		    GATE_WAIT) {
			p->waiting = 1;
			TAILQ_INSERT_TAIL(&gs->waiting[p->at], p, wentry);
			return GATE_WAIT;
		}
		if (gates[p->at]->done != NULL)
			p->holds |= 1u << p->at;
	}
	return GATE_PASS;
}

/* A delivery arrives at the first gate; see gate.h. */
enum gate_verdict
gate_admit(struct gate_sub *gs, struct gate_pass *p)
{
	p->at = 0;
	p->holds = 0;
	p->waiting = 0;
	return gate_walk(gs, p);
}

/* A delivery leaves the gates; see gate.h. */
void
gate_done(struct gate_sub *gs, struct gate_pass *p, int status)
{
	int	 g, opened = 0;

	if (p->waiting) {
		TAILQ_REMOVE(&gs->waiting[p->at], p, wentry);
		p->waiting = 0;
	}
	for (g = 0; p->holds != 0 && g < NGATES; g++) {
		if (!(p->holds & 1u << g))
			continue;
		p->holds &= ~(1u << g);
		if (gates[g]->done(gs->st[g], gs->cfg, p, status) &&
		    !TAILQ_EMPTY(&gs->waiting[g]))
			opened = 1;
	}
	/* From the loop: this may run inside a delivery's teardown. */
	if (opened)
		event_active(gs->wake, 0, 0);
}

/* A gate opened by itself; see gate.h. */
void
gate_open(struct gate_sub *gs)
{
	int	 g;

	for (g = 0; g < NGATES; g++)
		if (!TAILQ_EMPTY(&gs->waiting[g])) {
			event_active(gs->wake, 0, 0);
			return;
		}
}

/* Admit what waits, gate by gate, in arrival order; see gate.h. */
void
gate_resume(struct gate_sub *gs, void (*through)(struct gate_pass *))
{
	struct gate_pass	*p;
	int			 g;

	for (g = 0; g < NGATES; g++)
		while ((p = TAILQ_FIRST(&gs->waiting[g])) != NULL) {
			if (gates[g]->admit(gs->st[g], gs->cfg, p) ==
			    GATE_WAIT)
				break;
			TAILQ_REMOVE(&gs->waiting[g], p, wentry);
			p->waiting = 0;
			if (gates[g]->done != NULL)
				p->holds |= 1u << g;
			p->at = g + 1;
			if (gate_walk(gs, p) == GATE_PASS)
				through(p);
		}
}

/* The first waiting at g; see gate.h. */
struct gate_pass *
gate_first_at(struct gate_sub *gs, const struct gate *g)
{
	int	 i;

	for (i = 0; i < NGATES; i++)
		if (gates[i] == g)
			return TAILQ_FIRST(&gs->waiting[i]);
	return NULL;
}

/* Take the waiting deliveries to give back; see gate.h. */
void
gate_give_back(struct gate_sub *gs, const char *id, struct gate_queue *back)
{
	struct gate_pass	*p, *next;
	int			 g;

	TAILQ_INIT(back);
	for (g = 0; g < NGATES; g++)
		for (p = TAILQ_FIRST(&gs->waiting[g]); p != NULL; p = next) {
			next = TAILQ_NEXT(p, wentry);
			if (p->attempt >= (uint64_t)p->src->max_deliver ||
			    (id != NULL && strcmp(p->src->id, id) != 0))
				continue;
			TAILQ_REMOVE(&gs->waiting[g], p, wentry);
			p->waiting = 0;
			TAILQ_INSERT_TAIL(back, p, wentry);
		}
}
