/*
 * takeover.c: a new holder's wait for what the old one had out; see
 * takeover.h.  Loop thread only.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "store-sub.h"
#include "takeover.h"
#include "util.h"

static void	takeover_ask_cb(evutil_socket_t, short, void *);

void
takeover_init(struct takeover *t, struct event_base *base,
    uint64_t (*in_hand)(void *), void (*done)(void *), void *arg)
{
	t->in_hand = in_hand;
	t->done = done;
	t->arg = arg;
	evtimer_assign(&t->ev, base, takeover_ask_cb, t);
}

static void
takeover_end(struct takeover *t, const char *how)
{
	log_info("ordered delivery starts", "sub=%s in_hand=%llu "
	    "waited_ms=%lld how=%s", t->name, (unsigned long long)t->hand,
	    now_ms() - t->since, how);
	takeover_stop(t);
	t->done(t->arg);
}

static void
takeover_arm(struct takeover *t)
{
	struct timeval	 tv = { 0, TAKEOVER_ASK_MS * 1000 };

	evtimer_add(&t->ev, &tv);
}

/* JetStream's count of what is out, against what was in hand. */
static void
takeover_answer(void *arg, int ok, uint64_t n)
{
	struct takeover	*t = arg;

	t->job = NULL;
	if (!t->on)
		return;
	/*
	 * What JetStream counted is what was in hand when asked, less what
	 * was answered since (some of it before JetStream counted), plus
	 * what arrived and what is out elsewhere: at most what was in hand
	 * less what was answered only when nothing is out elsewhere.
	 */
	if (ok && n + (t->answered - t->job_answered) <= t->hand) {
		takeover_end(t, "all in hand");
		return;
	}
	if (now_ms() - t->since > t->max_ms) {
		log_warnx("ordered delivery starts without all that is out",
		    "sub=%s out=%llu in_hand=%llu", t->name,
		    (unsigned long long)n, (unsigned long long)t->hand);
		takeover_end(t, "timeout");
		return;
	}
	takeover_arm(t);
}

static void
takeover_ask_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct takeover	*t = arg;

	(void)fd;
	(void)ev;
	if (!t->on || t->job != NULL)
		return;
	t->hand = t->in_hand(t->arg);
	t->job_answered = t->answered;
	if ((t->job = store_consumer_pending(t->c, takeover_answer, t)) == NULL)
		takeover_arm(t);
}

void
takeover_start(struct takeover *t, const char *name, struct store_consumer *c,
    int ack_wait_s)
{
	takeover_stop(t);
	/* A copy: a reload frees the settings the name came from. */
	t->name = xstrdup(name);
	t->c = c;
	t->on = 1;
	t->since = now_ms();
	t->max_ms = 2000LL * ack_wait_s + 10000;
	t->answered = 0;
	takeover_ask_cb(-1, 0, t);
}

void
takeover_stop(struct takeover *t)
{
	evtimer_del(&t->ev);
	t->on = 0;
	free(t->name);
	t->name = NULL;
	store_consumer_pending_close(t->job);
	t->job = NULL;
}

int
takeover_on(const struct takeover *t)
{
	return t->on;
}

void
takeover_answered(struct takeover *t)
{
	t->answered++;
}
