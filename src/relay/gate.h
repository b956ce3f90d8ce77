/*
 * gate.h: the gates a push delivery passes between its source and its
 * POST, in a fixed order, and the contract of one gate.  Loop thread
 * only.
 *
 * A gate holds a subscriber's deliveries back: it admits one (GATE_PASS)
 * or has it wait (GATE_WAIT), and hears when one it admitted leaves (its
 * POST answered, or the delivery ended before that).  The chain
 * (gate.c) walks a delivery through every gate in order; one that waits
 * is queued at that gate, in arrival order, and resumed from the loop
 * (the subscriber's wake event) once the gate opens, never inside a
 * delivery's teardown.  The gates are the window (gate-window.c), the
 * pause (gate-pause.c), the breaker (gate-breaker.c) and the pace
 * (gate-pace.c); an ordered subscriber's key order comes before them
 * (deliver-order.c; docs/DESIGN.md, "The delivery pipeline").  A gate is
 * one file and one line in gate.c's list.  It decides from what it is given: it never
 * calls up into deliver.c or replay.c, nor ends a delivery.
 */
#ifndef GATE_H
#define GATE_H

#include <stdint.h>
#include <sys/queue.h>

#include "source.h"

struct event;
struct subscriber;

#define GATE_MAX	8	/* gates in the chain, at most */

enum gate_verdict {
	GATE_PASS,		/* on to the next gate, or the POST */
	GATE_WAIT		/* queued at this gate until it opens */
};

/*
 * How a delivery left the gates (gate_done's status): its answer's HTTP
 * status; GATE_NO_ANSWER when its POST got none (network failure,
 * timeout); GATE_NOT_SENT when it could not be sent (no address, a
 * refused one); GATE_ENDED when it ended without one (given back,
 * shutdown).
 */
#define GATE_ENDED	(-1)
#define GATE_NO_ANSWER	0
#define GATE_NOT_SENT	(-2)	/* no address, a refused one, no sign */

/* A delivery as the gates see it; deliver.c embeds one in each. */
struct gate_pass {
	void			*owner;		/* the delivery */
	const struct source	*src;		/* where its event came from */
	uint64_t		 attempt;	/* JetStream's delivery count */
	int			 at;		/* the gate it is at */
	int			 waiting;	/* queued at gate at */
	int			 probe;		/* a tripped subscriber's probe */
	uint64_t		 serial;	/* the window's, at its admit */
	/* Its answer, for gate_done: */
	int			 timed_out;	/* no answer within the deadline */
	long long		 retry_after_ms;	/* Retry-After; -1: none */
	unsigned		 holds;		/* a bit per gate it holds */
	TAILQ_ENTRY(gate_pass)	 wentry;
};
TAILQ_HEAD(gate_queue, gate_pass);

struct gate_sub;

/*
 * One gate; its state per subscriber is its own (new and free; new gets
 * the subscriber's place, for a gate that opens by itself: gate_open).
 */
struct gate {
	const char	*name;
	void		*(*state_new)(struct gate_sub *gs);
	void		 (*state_free)(void *st);
	/* Admit p (and take what it holds of this gate), or have it wait. */
	enum gate_verdict (*admit)(void *st, const struct subscriber *cfg,
			    struct gate_pass *p);
	/*
	 * p, which this gate admitted, left with status (an HTTP status,
	 * GATE_NO_ANSWER or GATE_ENDED): 1 when that opened the gate.
	 * NULL when the gate holds nothing of what it admits.
	 */
	int		 (*done)(void *st, const struct subscriber *cfg,
			    const struct gate_pass *p, int status);
};

/* A subscriber's place at every gate: each one's state and queue. */
struct gate_sub {
	const struct subscriber	*cfg;		/* its settings, now */
	struct event		*wake;		/* resumes what waits */
	void			*st[GATE_MAX];
	struct gate_queue	 waiting[GATE_MAX];
};

/* The gates, in order (gate.c). */
extern const struct gate gate_window;
extern const struct gate gate_pause;
extern const struct gate gate_breaker;
extern const struct gate gate_pace;

/* Set up gs for a subscriber: wake is made active when a gate opens. */
void	gate_sub_init(struct gate_sub *gs, struct event *wake);
/* Free gs's states (nothing waits there any more). */
void	gate_sub_free(struct gate_sub *gs);
/* p arrives: GATE_PASS when every gate admitted it, else it waits. */
enum gate_verdict gate_admit(struct gate_sub *gs, struct gate_pass *p);
/*
 * p leaves with status (see above): out of the queue it waits in, and
 * what it holds given back; a gate that opens wakes gs.  Nothing when p
 * neither waits nor holds anything.
 */
void	gate_done(struct gate_sub *gs, struct gate_pass *p, int status);
/*
 * A gate opened by itself (a timer, a setting): wake gs when something
 * waits there.
 */
void	gate_open(struct gate_sub *gs);
/*
 * From the wake event: every gate in order admits what waits at it, in
 * arrival order, until it has one wait again; each that passes the last
 * gate goes to through.  through must not end a delivery.
 */
void	gate_resume(struct gate_sub *gs, void (*through)(struct gate_pass *));
/* The first delivery waiting at gate g, or NULL. */
struct gate_pass *gate_first_at(struct gate_sub *gs, const struct gate *g);
/*
 * Take out of the queues every waiting delivery of replay id (NULL: all)
 * into back, in order, but not a last attempt: JetStream would count its
 * give-back as that attempt, and the event would be dropped untried.
 * The caller gives them back (they no longer wait anywhere).
 */
void	gate_give_back(struct gate_sub *gs, const char *id,
	    struct gate_queue *back);

#endif
