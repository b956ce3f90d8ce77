/*
 * gate-pace.c: the pace, the fourth gate (gate.h).  Loop thread only.
 *
 * Two holds on a subscriber's new POSTs (SPEC 17):
 *   - a Retry-After (on a 429 or a 503) holds every new POST to the
 *     subscriber on this instance for its duration, capped at 5 min, not
 *     only the event that got it (whose own redelivery waits as
 *     deliver.c says);
 *   - rateLimit, events a second that all instances together may send:
 *     this instance takes its share (presence_share: the instances that
 *     pace the subscriber divide it) from a token bucket whose burst is a
 *     fifth of a second's worth, so that any 10 s window is within 2 % of
 *     the rate once the set of instances is stable.  A change of the
 *     share changes the rate, not the tokens, so that an instance
 *     joining or leaving makes no burst.
 * What waits is resumed by a timer when the hold ends or the next token
 * is due.  A probe passes: it is the breaker's, one at a time.
 */
#include <stdlib.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "config.h"
#include "gate.h"
#include "log.h"
#include "presence.h"
#include "ratelimit.h"
#include "util.h"

#define RETRY_AFTER_MAX_MS	(5 * 60 * 1000)

struct pace {
	struct gate_sub	*gs;
	struct event	 timer;		/* resumes what waits */
	long long	 hold_until;	/* now_ms(): a Retry-After's end */
	struct bucket	 tokens;
	int		 share;		/* presence_share, counted ... */
	long long	 share_ms;	/* ... at this now_ms() */
};

/*
 * The instances sharing the rate, counted at most once a second: the
 * count changes when a peer's key does (every 5 s) or lapses (15 s), so a
 * second's delay is nothing, and a busy subscriber does not walk the
 * peers for every event.
 */
static int
pace_share(struct pace *pc, const struct subscriber *cfg, long long now)
{
	if (pc->share == 0 || now - pc->share_ms >= 1000) {
		pc->share = presence_share(cfg->name);
		pc->share_ms = now;
	}
	return pc->share;
}

static void
pace_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pace	*pc = arg;

	(void)fd;
	(void)ev;
	gate_open(pc->gs);
}

static void *
pace_new(struct gate_sub *gs)
{
	struct pace	*pc = xcalloc(1, sizeof(*pc));

	pc->gs = gs;
	evtimer_assign(&pc->timer, event_get_base(gs->wake), pace_timer_cb, pc);
	return pc;
}

static void
pace_free(void *st)
{
	struct pace	*pc = st;

	evtimer_del(&pc->timer);
	free(pc);
}

/* Resume in ms (unless the timer is due sooner). */
static void
pace_arm(struct pace *pc, long long ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	if (!evtimer_pending(&pc->timer, NULL))
		evtimer_add(&pc->timer, &tv);
}

static enum gate_verdict
pace_admit(void *st, const struct subscriber *cfg, struct gate_pass *p)
{
	struct pace	*pc = st;
	long long	 now, wait;
	double		 rate;
	int		 burst;

	if (p->probe)
		return GATE_PASS;
	if (pc->hold_until == 0 && cfg->rate_limit <= 0)
		return GATE_PASS;
	now = now_ms();
	if (now < pc->hold_until) {
		pace_arm(pc, pc->hold_until - now);
		return GATE_WAIT;
	}
	if (cfg->rate_limit <= 0)
		return GATE_PASS;
	rate = cfg->rate_limit / pace_share(pc, cfg, now);
	burst = rate >= 5 ? (int)(rate / 5) : 1;
	if ((wait = bucket_take_ms(&pc->tokens, rate, burst, 1, now)) > 0) {
		pace_arm(pc, wait);
		return GATE_WAIT;
	}
	return GATE_PASS;
}

/* An answer with a Retry-After holds what comes next. */
static int
pace_done(void *st, const struct subscriber *cfg, const struct gate_pass *p,
    int status)
{
	struct pace	*pc = st;
	long long	 ra = p->retry_after_ms, until;

	if ((status != 429 && status != 503) || ra < 0 || p->probe)
		return 0;
	if (ra > RETRY_AFTER_MAX_MS)
		ra = RETRY_AFTER_MAX_MS;
	until = now_ms() + ra;
	if (until > pc->hold_until) {
		pc->hold_until = until;
		log_info("delivery held", "sub=%s status=%d held_ms=%lld",
		    cfg->name, status, ra);
	}
	return 0;
}

const struct gate gate_pace = {
	"pace", pace_new, pace_free, pace_admit, pace_done
};
