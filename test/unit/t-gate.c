/*
 * t-gate: the chain of gates (src/relay/gate.c) with its one gate, the
 * window (gate-window.c): at most maxInFlight admitted, the rest waiting
 * in arrival order; a place freed wakes the subscriber from the loop and
 * the next in order is resumed; a new arrival takes a free place at
 * once; a wider window admits more; give-back takes what waits (of one
 * replay, or all) but never a last attempt.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "harness.h"
#include "../../src/relay/config.h"
#include "../../src/relay/gate.h"
#include "../../src/relay/substate.h"

#define RID	"0123456789abcdef01234567"
#define N	10

static struct gate_pass	*through[N];
static int		 nthrough, woken;

/* A delivery that passed the last gate. */
static void
through_cb(struct gate_pass *p)
{
	through[nthrough++] = p;
}

/* The subscriber's wake event. */
static void
wake_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	woken++;
}

/*
 * A gate_sub with a window of max, its wake event on base; the states
 * read unless unread (the pause gate holds everything until they are).
 */
static void
setup_read(struct event_base **base, struct event *wake, struct gate_sub *gs,
    struct subscriber *cfg, int max, int unread)
{
	*base = event_base_new();
	event_assign(wake, *base, -1, 0, wake_cb, NULL);
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_in_flight = max;
	memset(gs, 0, sizeof(*gs));
	gate_sub_init(gs, wake);
	gs->cfg = cfg;
	nthrough = woken = 0;
	if (!unread)
		substate_mark_read();
}

static void
setup(struct event_base **base, struct event *wake, struct gate_sub *gs,
    struct subscriber *cfg, int max)
{
	setup_read(base, wake, gs, cfg, max, 0);
}

/* Passes of n deliveries from src, each on attempt 1. */
static void
passes(struct gate_pass *p, int n, const struct source *src)
{
	int	 i;

	memset(p, 0, sizeof(*p) * (size_t)n);
	for (i = 0; i < n; i++) {
		p[i].src = src;
		p[i].attempt = 1;
	}
}

/* maxInFlight pass, the next wait; a place freed wakes, in order. */
static void
window_order(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own;
	struct gate_pass	 p[N];
	int			 i;

	setup(&base, &wake, &gs, &cfg, 2);
	source_set(&own, NULL, 10);
	passes(p, N, &own);
	for (i = 0; i < 5; i++)
		T_EQ_INT(gate_admit(&gs, &p[i]), i < 2 ? GATE_PASS : GATE_WAIT);
	T_ASSERT(p[2].waiting && p[4].waiting && !p[0].waiting);
	/* Resuming with the window full admits nobody. */
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 0);
	/* A place freed: woken from the loop, not at once. */
	gate_done(&gs, &p[0], 200);
	T_EQ_INT(woken, 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	T_EQ_INT(woken, 1);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 1);
	T_ASSERT(through[0] == &p[2]);
	/* Leaving twice gives back nothing twice. */
	gate_done(&gs, &p[0], GATE_ENDED);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 1);
	/* A waiting one that ends leaves the queue, and frees no place. */
	gate_done(&gs, &p[3], GATE_ENDED);
	T_ASSERT(!p[3].waiting);
	gate_done(&gs, &p[1], 500);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 2);
	T_ASSERT(through[1] == &p[4]);
	gate_sub_free(&gs);
	event_base_free(base);
}

/* A new arrival takes a free place even while others wait to resume. */
static void
window_new_arrival(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own;
	struct gate_pass	 p[N];

	setup(&base, &wake, &gs, &cfg, 1);
	source_set(&own, NULL, 10);
	passes(p, N, &own);
	T_EQ_INT(gate_admit(&gs, &p[0]), GATE_PASS);
	T_EQ_INT(gate_admit(&gs, &p[1]), GATE_WAIT);
	gate_done(&gs, &p[0], 200);
	T_EQ_INT(gate_admit(&gs, &p[2]), GATE_PASS);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 0);
	T_ASSERT(p[1].waiting);
	gate_done(&gs, &p[2], 200);
	gate_done(&gs, &p[1], GATE_ENDED);
	gate_sub_free(&gs);
	event_base_free(base);
}

/* A reload that widens the window: the next resume admits more. */
static void
window_widened(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own;
	struct gate_pass	 p[N];
	int			 i;

	setup(&base, &wake, &gs, &cfg, 1);
	source_set(&own, NULL, 10);
	passes(p, N, &own);
	for (i = 0; i < 4; i++)
		gate_admit(&gs, &p[i]);
	cfg.max_in_flight = 3;
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 2);
	T_ASSERT(through[0] == &p[1] && through[1] == &p[2]);
	T_ASSERT(p[3].waiting);
	for (i = 0; i < 4; i++)
		gate_done(&gs, &p[i], GATE_ENDED);
	gate_sub_free(&gs);
	event_base_free(base);
}

/* Admit p[0..] until one waits: how many passed (that one ends). */
static int
admitted(struct gate_sub *gs, struct gate_pass *p, int max)
{
	int	 n;

	for (n = 0; n < max && gate_admit(gs, &p[n]) == GATE_PASS; n++)
		;
	if (n < max)
		gate_done(gs, &p[n], GATE_ENDED);
	return n;
}

/* p's answer was a timeout. */
static void
timed_out(struct gate_sub *gs, struct gate_pass *p)
{
	p->timed_out = 1;
	gate_done(gs, p, GATE_NO_ANSWER);
	p->timed_out = 0;
}

/*
 * The window adapts (SPEC 17): a burst's 429s halve it once; a later 503
 * or timeout halves it again, never below 1; a window's worth of 2xx
 * grows it by one, back to maxInFlight.
 */
static void
window_adapts(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own;
	struct gate_pass	 p[N];
	int			 i;

	setup(&base, &wake, &gs, &cfg, 8);
	source_set(&own, NULL, 10);
	passes(p, N, &own);
	for (i = 0; i < 8; i++)
		T_EQ_INT(gate_admit(&gs, &p[i]), GATE_PASS);
	/* The whole burst answers 429: halved once, to 4. */
	for (i = 0; i < 8; i++)
		gate_done(&gs, &p[i], 429);
	T_EQ_INT(admitted(&gs, p, 8), 4);
	/* Sent under the new window: a 503 halves it to 2. */
	gate_done(&gs, &p[0], 503);
	/* The same burst's timeout: nothing more. */
	timed_out(&gs, &p[1]);
	gate_done(&gs, &p[2], GATE_ENDED);
	gate_done(&gs, &p[3], GATE_ENDED);
	T_EQ_INT(admitted(&gs, p, 8), 2);
	/* A later one's timeout: to 1. */
	timed_out(&gs, &p[0]);
	gate_done(&gs, &p[1], GATE_ENDED);
	T_EQ_INT(admitted(&gs, p, 8), 1);
	/* A timeout at 1 keeps 1. */
	timed_out(&gs, &p[0]);
	/* Each window's worth of 2xx: one more place, up to 8. */
	for (i = 0; i < 100; i++) {
		gate_admit(&gs, &p[0]);
		gate_done(&gs, &p[0], 204);
	}
	T_EQ_INT(admitted(&gs, p, N), 8);
	for (i = 0; i < N; i++)
		gate_done(&gs, &p[i], GATE_ENDED);
	gate_sub_free(&gs);
	event_base_free(base);
}

/* Give-back: one replay's or all, in order, never a last attempt. */
static void
give_back(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own, rp;
	struct gate_pass	 p[N], *q;
	struct gate_queue	 back;
	int			 i, n;

	setup(&base, &wake, &gs, &cfg, 1);
	source_set(&own, NULL, 3);
	source_set(&rp, RID, 3);
	passes(p, N, &own);
	p[1].src = p[3].src = p[4].src = &rp;
	p[4].attempt = 3;		/* its last */
	for (i = 0; i < 6; i++)
		gate_admit(&gs, &p[i]);
	gate_give_back(&gs, RID, &back);
	n = 0;
	TAILQ_FOREACH(q, &back, wentry) {
		T_ASSERT(!q->waiting);
		T_ASSERT(q == (n == 0 ? &p[1] : &p[3]));
		n++;
	}
	T_EQ_INT(n, 2);
	T_ASSERT(p[4].waiting && p[2].waiting);
	gate_give_back(&gs, NULL, &back);
	n = 0;
	TAILQ_FOREACH(q, &back, wentry)
		T_ASSERT(q == (n++ == 0 ? &p[2] : &p[5]));
	T_EQ_INT(n, 2);
	/* The last attempt still waits for its turn. */
	gate_done(&gs, &p[0], 200);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 1);
	T_ASSERT(through[0] == &p[4]);
	gate_done(&gs, &p[4], 200);
	gate_sub_free(&gs);
	event_base_free(base);
}

/*
 * Before the states' first reading (a start) nothing passes the pause
 * gate: a subscriber paused before the start gets nothing.  Runs first:
 * the reading, once in, stays.
 */
static void
pause_unread(void)
{
	struct event_base	*base;
	struct event		 wake;
	struct gate_sub		 gs;
	struct subscriber	 cfg;
	struct source		 own;
	struct gate_pass	 p[2];

	setup_read(&base, &wake, &gs, &cfg, 2, 1);
	snprintf(cfg.name, sizeof(cfg.name), "unread");
	source_set(&own, NULL, 10);
	passes(p, 2, &own);
	T_EQ_INT(gate_admit(&gs, &p[0]), GATE_WAIT);
	T_ASSERT(p[0].waiting && gate_first_at(&gs, &gate_pause) == &p[0]);
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 0);
	substate_mark_read();
	gate_resume(&gs, through_cb);
	T_EQ_INT(nthrough, 1);
	T_ASSERT(through[0] == &p[0]);
	T_EQ_INT(gate_admit(&gs, &p[1]), GATE_PASS);
	gate_done(&gs, &p[0], 200);
	gate_done(&gs, &p[1], 200);
	gate_sub_free(&gs);
	event_base_free(base);
}

static const struct t_case cases[] = {
	{ "pause: nothing passes before the states are read", pause_unread },
	{ "window: maxInFlight pass, the rest resumed in order", window_order },
	{ "window: a new arrival takes a free place", window_new_arrival },
	{ "window: widened by a reload", window_widened },
	{ "window: halved once a burst, grown back by 2xx", window_adapts },
	{ "give-back: a replay's or all, never a last attempt", give_back },
};

int
main(void)
{
	return t_run("gate", cases, T_NCASES(cases)) ? 1 : 0;
}
