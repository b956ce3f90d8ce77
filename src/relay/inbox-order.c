/*
 * inbox-order.c: an ordered inbox (SPEC 18), the holder's hand.  Loop
 * thread only.
 *
 * A pull subscriber's leases live in JetStream, and JetStream 2.9 hands
 * out whatever is next, so two workers would get two events of one key.
 * An ordered inbox is therefore served by one instance at a time, its
 * holder (holder.h, as an ordered push subscriber): only the holder pulls
 * from the inbox's consumer, and what it pulled stays in its hand until
 * it is acknowledged or dropped, each event held in its key (order.h).
 * The other instances forward their workers' requests to it
 * (inbox-forward.c).
 *
 * A lease handed to a worker is the holder's own timer, not JetStream's
 * ack wait: when it runs out, the event is free again in the hand, at the
 * head of its key (it never went back to JetStream, so a later event of
 * the key cannot pass it).  Extend restarts the timer; release frees it
 * now or after the delay.  DELETE acknowledges it in JetStream and, once
 * confirmed, the next event of its key is free.  A lease that ran out (or
 * was released) maxDeliver times is dropped: recorded, then terminated.
 * JetStream's ack wait for what is in hand is kept going by an "in
 * progress" for each event every third of a lease, and for an event at
 * each hand-out and extension, so that it never hands an event out again
 * while a worker holds its lease.
 *
 * A worker sees a receipt naming the hand's delivery (its JetStream
 * consumer sequence) and the hand-out (deliveryCount): one of another
 * delivery (an older holder's, or a lease taken before the inbox was
 * ordered) is no lease of the hand.  DELETE with it still acknowledges
 * the event when the hand does not have it out (the worker did its
 * work); otherwise it is 404, and extend and release are 404.
 *
 * A new holder waits for what the old one had out (takeover.h): those
 * leases are gone with it, and their events are handed out again when
 * JetStream brings them back (a repeat, which SPEC 18 allows).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "treaty.h"
#include "audit.h"
#include "config.h"
#include "holder.h"
#include "inbox-int.h"
#include "log.h"
#include "metrics.h"
#include "order.h"
#include "store-msg.h"
#include "store-sub.h"
#include "takeover.h"
#include "util.h"

#define FILL_WAIT_MS		5000	/* a pull for the hand waits so long */
#define HAND_BYTES_MAX		(64LL * 1024 * 1024)	/* stored, in hand */
#define FILL_RETRY_MS		500	/* a pull that could not be sent */

enum oe_state {
	OE_WAITING,		/* behind its key, or a hold */
	OE_READY,		/* its key's turn: the next GET takes it */
	OE_OUT,			/* on a worker's lease */
	OE_DELAYED,		/* released with a delay */
	OE_TAKING,		/* acknowledged, JetStream not yet confirmed */
	OE_DROPPING		/* its drop being recorded */
};

struct oentry {
	struct order_item	 it;
	struct ohand		*h;
	struct store_msg	*m;
	uint64_t		 shown;		/* its last hand-out's count */
	enum oe_state		 state;
	struct event		 timer;		/* lease end, release delay */
	struct audit_drop	*drop;		/* its record, being stored */
	int			 fetched;	/* TAKING by a GET: its m */
	TAILQ_ENTRY(oentry)	 entry;		/* in hand */
	TAILQ_ENTRY(oentry)	 rentry;	/* ready */
};
TAILQ_HEAD(oentry_list, oentry);

struct ohand {
	struct isub		*s;
	struct order		*o;
	struct takeover		 tk;
	struct oentry_list	 all;		/* by arrival */
	struct oentry_list	 ready;		/* by their turn */
	size_t			 n, out;	/* in hand; on leases */
	long long		 bytes;
	struct store_req	*fill;		/* the pull under way */
	struct event		 fill_ev;	/* send the next pull */
	struct event		 renew;		/* "in progress", all of it */
	struct event		 serve;		/* GETs waiting, something ready */
	struct fetch_list	 waiters;	/* GETs waiting for an event */
	int			 held;		/* this instance holds it */
};

#define ITEM_ENTRY(i) \
	((struct oentry *)(void *)((char *)(i) - offsetof(struct oentry, it)))

static void	ohand_fill(struct ohand *);

static long long
lease_ms(void)
{
	return ib.cfg->lease_seconds * 1000LL;
}

/* Its key's turn: the next GET may take it. */
static void
entry_ready(struct oentry *e)
{
	e->state = OE_READY;
	TAILQ_INSERT_TAIL(&e->h->ready, e, rentry);
	if (!TAILQ_EMPTY(&e->h->waiters))
		event_active(&e->h->serve, EV_TIMEOUT, 0);
}

static void
entry_pass(struct order_item *it, void *arg)
{
	(void)arg;
	entry_ready(ITEM_ENTRY(it));
}

/* Out of the ready list, when there. */
static void
entry_unready(struct oentry *e)
{
	if (e->state == OE_READY)
		TAILQ_REMOVE(&e->h->ready, e, rentry);
}

/*
 * e leaves the hand (acknowledged, dropped, given back, forgotten): the
 * next event of its key passes.  Its message is the caller's.
 */
static void
entry_free(struct oentry *e)
{
	struct ohand		*h = e->h;
	struct order_item	*next;

	entry_unready(e);
	if (e->state == OE_OUT || e->state == OE_TAKING)
		h->out--;
	evtimer_del(&e->timer);
	TAILQ_REMOVE(&h->all, e, entry);
	h->n--;
	h->bytes -= e->m != NULL ? (long long)store_msg_size(e->m) : 0;
	if (e->it.k != NULL && (next = order_done(h->o, &e->it)) != NULL)
		entry_ready(ITEM_ENTRY(next));
	free(e);
	ohand_fill(h);
}

/* The drop of e is recorded: terminated in JetStream, out of the hand. */
static void
entry_dropped_cb(void *arg, int stored)
{
	struct oentry	*e = arg;

	e->drop = NULL;
	/* Not recorded (the relay stops): JetStream keeps it. */
	if (stored)
		store_msg_term(e->m);
	else
		store_msg_free(e->m);
	e->m = NULL;
	entry_free(e);
}

/* e's lease ran out or was released, or its delay is over: free again. */
static void
entry_back(struct oentry *e)
{
	struct ohand	*h = e->h;
	int		 max = h->s->cfg->max_deliver;

	if (e->state == OE_OUT || e->state == OE_TAKING)
		h->out--;
	evtimer_del(&e->timer);
	if (max > 0 && e->shown >= (uint64_t)max) {
		e->state = OE_DROPPING;
		e->drop = inbox_drop_record(h->s, e->m, e->shown,
		    entry_dropped_cb, e);
		return;
	}
	entry_ready(e);
}

static void
entry_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct oentry	*e = arg;

	(void)fd;
	(void)ev;
	if (e->state == OE_DELAYED) {
		entry_ready(e);
		return;
	}
	log_debug("ordered lease ran out", "inbox=%s seq=%llu",
	    e->h->s->cfg->name, (unsigned long long)store_msg_seq(e->m));
	entry_back(e);
}

static void
entry_timer(struct oentry *e, long long ms)
{
	struct timeval	 tv = { ms / 1000, ms % 1000 * 1000 };

	evtimer_add(&e->timer, &tv);
}

/* The entry holding stream sequence seq, or NULL. */
static struct oentry *
entry_find(struct ohand *h, uint64_t seq)
{
	struct oentry	*e;

	TAILQ_FOREACH(e, &h->all, entry)
		if (e->m != NULL && store_msg_seq(e->m) == seq)
			return e;
	return NULL;
}

/* A message the hand's pull got: a new event, or a newer handle. */
static void
hand_add(struct ohand *h, struct store_msg *m)
{
	struct oentry	*e;
	char		 buf[ORDER_KEY_STACK], *k;
	size_t		 len;
	int		 heap;

	if ((e = entry_find(h, store_msg_seq(m))) != NULL) {
		/* Being acknowledged or recorded: the handle in use stays. */
		if (e->state == OE_TAKING || e->state == OE_DROPPING) {
			store_msg_free(m);
			return;
		}
		/*
		 * JetStream handed it out again (an "in progress" was lost,
		 * or the old holder's lease of it ran out): the newer handle
		 * answers it; its place and state in the hand stay.
		 */
		h->bytes -= (long long)store_msg_size(e->m);
		store_msg_free(e->m);
		e->m = m;
		h->bytes += (long long)store_msg_size(m);
		return;
	}
	e = xcalloc(1, sizeof(*e));
	e->h = h;
	e->m = m;
	e->shown = store_msg_delivered(m) > 0 ? store_msg_delivered(m) - 1 : 0;
	evtimer_assign(&e->timer, ib.base, entry_timer_cb, e);
	TAILQ_INSERT_TAIL(&h->all, e, entry);
	h->n++;
	h->bytes += (long long)store_msg_size(m);
	k = order_key(NULL, store_msg_header(m, "ce-partitionkey"),
	    store_msg_subject(m), buf, &len, &heap);
	e->state = OE_WAITING;
	if (order_admit(h->o, &e->it, k, len, store_msg_seq(m)))
		entry_ready(e);
	if (heap)
		free(k);
}

/* A reply to the hand's pull. */
static int
fill_cb(void *arg, struct store_msg *m, int status)
{
	struct ohand	*h = arg;

	(void)status;
	if (m == NULL) {
		/* Expired, or over: the next one from the loop. */
		h->fill = NULL;
		event_active(&h->fill_ev, EV_TIMEOUT, 0);
		return 0;
	}
	if (!h->held) {
		store_msg_free(m);	/* the holder gets it after its wait */
		return 1;
	}
	hand_add(h, m);
	return 1;
}

/* Pull for the hand, while holding and there is room. */
static void
ohand_fill(struct ohand *h)
{
	int		 cap = config_max_ack_pending(h->s->cfg);
	struct timeval	 tv = { 0, FILL_RETRY_MS * 1000 };

	if (!h->held || h->fill != NULL || ib.stopping ||
	    h->n >= (size_t)cap || h->bytes >= HAND_BYTES_MAX ||
	    store_pull_pending(h->s->own.consumer, STORE_PULL_WAIT))
		return;
	if ((h->fill = store_pull(h->s->own.consumer, STORE_PULL_WAIT,
	    cap - (int)h->n, FILL_WAIT_MS, HAND_BYTES_MAX - h->bytes, fill_cb,
	    h)) == NULL)
		evtimer_add(&h->fill_ev, &tv);
}

static void
fill_ev_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	ohand_fill(arg);
}

/* Every third of a lease: what is in hand stays ours in JetStream. */
static void
renew_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ohand	*h = arg;
	struct oentry	*e;
	struct timeval	 tv = { lease_ms() / 3000, lease_ms() / 3 % 1000 * 1000 };

	(void)fd;
	(void)ev;
	TAILQ_FOREACH(e, &h->all, entry)
		store_msg_progress(e->m);
	evtimer_add(&h->renew, &tv);
}

/* Give the GETs waiting what became ready. */
static void
serve_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ohand	*h = arg;
	struct fetch	*f;

	(void)fd;
	(void)ev;
	while (!TAILQ_EMPTY(&h->ready) && (f = TAILQ_FIRST(&h->waiters)) !=
	    NULL) {
		ohand_fetch_unqueue(f);
		if (iresp_gone(&f->r)) {
			inbox_fetch_done(f);
			continue;
		}
		ohand_fetch(f);
	}
}

static uint64_t
hand_count(void *arg)
{
	return ((struct ohand *)arg)->n;
}

static void
hand_took_over(void *arg)
{
	struct ohand	*h = arg;

	order_hold(h->o, 0, entry_pass, NULL);
}

/* See inbox-int.h. */
void
ohand_set(struct isub *s)
{
	struct ohand	*h = s->hand;

	if (s->cfg->ordered && h == NULL) {
		h = s->hand = xcalloc(1, sizeof(*h));
		h->s = s;
		h->o = order_new();
		/* Nothing passes until this instance holds it. */
		order_hold(h->o, 1, entry_pass, NULL);
		TAILQ_INIT(&h->all);
		TAILQ_INIT(&h->ready);
		TAILQ_INIT(&h->waiters);
		evtimer_assign(&h->fill_ev, ib.base, fill_ev_cb, h);
		evtimer_assign(&h->renew, ib.base, renew_cb, h);
		event_assign(&h->serve, ib.base, -1, 0, serve_cb, h);
		takeover_init(&h->tk, ib.base, hand_count, hand_took_over, h);
		holder_want(s->cfg->name, 1);
	} else if (!s->cfg->ordered && h != NULL) {
		holder_want(s->cfg->name, 0);
		ohand_free(s);
	}
}

/*
 * This instance no longer serves the hand: every key held, and what is
 * in hand given back in WORK's order (JetStream hands it to the next
 * holder at once), except what is out on a lease: forgotten, so that
 * JetStream keeps its lease until it runs out and the worker's DELETE
 * still acknowledges it.
 */
static void
hand_let_go(struct ohand *h, const char *why)
{
	struct oentry	*e, *next;
	struct fetch	*f;

	h->held = 0;
	takeover_stop(&h->tk);
	order_hold(h->o, 1, entry_pass, NULL);
	store_req_close(h->fill, why);
	h->fill = NULL;
	evtimer_del(&h->fill_ev);
	evtimer_del(&h->renew);
	while ((f = TAILQ_FIRST(&h->waiters)) != NULL) {
		ohand_fetch_unqueue(f);
		inbox_fetch_done(f);
	}
	for (e = TAILQ_FIRST(&h->all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, entry);
		/* Their own answers end them (ohand_acked, the record's). */
		if (e->state == OE_TAKING || e->state == OE_DROPPING)
			continue;
		if (e->state == OE_OUT)
			store_msg_free(e->m);
		else
			store_msg_give_back(e->m);
		e->m = NULL;
		entry_free(e);
	}
	log_info("ordered inbox let go", "inbox=%s reason=%s",
	    h->s->cfg->name, why);
}

/* See inbox-int.h. */
void
ohand_held(struct isub *s, int held)
{
	struct ohand	*h = s->hand;
	struct timeval	 tv = { lease_ms() / 3000, lease_ms() / 3 % 1000 * 1000 };

	if (h == NULL || held == h->held)
		return;
	if (!held) {
		hand_let_go(h, "lease lost");
		return;
	}
	if (ib.stopping)
		return;
	h->held = 1;
	evtimer_add(&h->renew, &tv);
	takeover_start(&h->tk, s->cfg->name, s->own.consumer,
	    ib.cfg->lease_seconds);
	ohand_fill(h);
}

/* See inbox-int.h. */
void
ohand_free(struct isub *s)
{
	struct ohand	*h = s->hand;
	struct oentry	*e;

	if (h == NULL)
		return;
	if (h->held)
		hand_let_go(h, "no longer ordered");
	/* What waits for JetStream or a record: forgotten, not answered. */
	while ((e = TAILQ_FIRST(&h->all)) != NULL) {
		if (e->drop != NULL)
			audit_drop_close(e->drop, "inbox no longer ordered");
		/* A GET's acknowledgement: its message is the GET's. */
		if (!e->fetched)
			store_msg_free(e->m);
		e->m = NULL;
		entry_free(e);
	}
	takeover_stop(&h->tk);
	event_del(&h->serve);
	order_free(h->o);
	free(h);
	s->hand = NULL;
}

/*
 * Hand out what is ready to f (a GET of this hand's inbox; see
 * inbox-int.h): each event at most once out, at most maxInFlight leases
 * at once, at most FETCH_BYTES_MAX of events.  A GET that got nothing
 * and may wait waits here for the next event that becomes ready.
 */
void
ohand_fetch(struct fetch *f)
{
	struct ohand		*h = f->s->hand;
	struct oentry		*e, *next;
	struct store_lease	 l;
	size_t			 max_out = (size_t)f->s->cfg->max_in_flight;

	if (h == NULL || !h->held) {
		inbox_fetch_done(f);
		return;
	}
	if (f->peeking) {
		TAILQ_FOREACH(e, &h->all, entry) {
			if (inbox_fetch_full(f))
				break;
			if (e->state == OE_OUT || e->state == OE_TAKING ||
			    e->state == OE_DROPPING)
				continue;
			store_msg_lease(e->m, &l);
			l.delivered = 0;
			inbox_fetch_lend(f, e->m, &l);
		}
		inbox_fetch_done(f);
		return;
	}
	for (e = TAILQ_FIRST(&h->ready); e != NULL && !inbox_fetch_full(f) &&
	    h->out < max_out; e = next) {
		next = TAILQ_NEXT(e, rentry);
		TAILQ_REMOVE(&h->ready, e, rentry);
		e->shown++;
		e->state = f->lease ? OE_OUT : OE_TAKING;
		e->fetched = !f->lease;
		h->out++;
		/* JetStream's ack wait starts again with the lease. */
		store_msg_progress(e->m);
		if (f->lease)
			entry_timer(e, lease_ms());
		store_msg_lease(e->m, &l);
		l.delivered = e->shown;
		inbox_fetch_lend(f, e->m, &l);
	}
	if (f->n > 0 || f->wait_end <= now_ms() || ib.stopping ||
	    !TAILQ_EMPTY(&f->s->replays)) {
		inbox_fetch_replays(f);
		return;
	}
	inbox_fetch_wait(f, &h->waiters);
}

/* See inbox-int.h. */
void
ohand_fetch_unqueue(struct fetch *f)
{
	TAILQ_REMOVE(&f->s->hand->waiters, f, qentry);
}

/* See inbox-int.h. */
int
ohand_lent_back(struct isub *s, struct store_msg *m, int taken)
{
	struct ohand	*h = s->hand;
	struct oentry	*e;

	if (h == NULL || (e = entry_find(h, store_msg_seq(m))) == NULL ||
	    e->m != m)
		return -1;
	e->fetched = 0;
	if (!taken) {
		/* Not handed out after all: not counted as a delivery. */
		e->shown--;
		entry_back(e);
		return 0;
	}
	/* Acknowledged: the message is the fetch's from now on. */
	takeover_answered(&h->tk);
	e->m = NULL;
	entry_free(e);
	return 0;
}

/* See inbox-int.h. */
enum ohand_answer
ohand_op(struct isub *s, enum inbox_verb v, const struct store_lease *l,
    long long delay_ms, struct store_lease *out)
{
	struct ohand	*h = s->hand;
	struct oentry	*e = h != NULL ? entry_find(h, l->seq) : NULL;
	struct store_lease jl;

	if (h == NULL || !h->held)
		return OHAND_GONE;
	if (e == NULL)
		/* Not in hand: a lease of JetStream's own, for DELETE. */
		return v == INBOX_ACK ? OHAND_JETSTREAM : OHAND_GONE;
	store_msg_lease(e->m, &jl);
	if (jl.dseq != l->dseq || e->shown != l->delivered) {
		/*
		 * Another delivery's or hand-out's receipt: DELETE may still
		 * acknowledge the event, unless a worker has it now.
		 */
		if (v != INBOX_ACK || e->state == OE_OUT ||
		    e->state == OE_TAKING || e->state == OE_DROPPING)
			return OHAND_GONE;
	} else if (e->state != OE_OUT)
		return OHAND_GONE;
	switch (v) {
	case INBOX_EXTEND:
		store_msg_progress(e->m);
		entry_timer(e, lease_ms());
		return OHAND_DONE;
	case INBOX_RELEASE:
		if (delay_ms > 0) {
			h->out--;
			e->state = OE_DELAYED;
			entry_timer(e, delay_ms);
			return OHAND_DONE;
		}
		entry_back(e);
		return OHAND_DONE;
	default:
		entry_unready(e);
		if (e->state != OE_OUT)
			h->out++;
		evtimer_del(&e->timer);
		e->state = OE_TAKING;
		*out = jl;
		return OHAND_ACK;
	}
}

/* See inbox-int.h. */
void
ohand_acked(struct isub *s, uint64_t seq, int ok)
{
	struct ohand	*h = s->hand;
	struct oentry	*e;

	if (h == NULL || (e = entry_find(h, seq)) == NULL ||
	    e->state != OE_TAKING)
		return;
	if (!ok) {
		/* Unconfirmed: its lease goes on (the worker may try again). */
		e->state = OE_OUT;
		entry_timer(e, lease_ms());
		return;
	}
	takeover_answered(&h->tk);
	store_msg_free(e->m);
	e->m = NULL;
	entry_free(e);
}

/* See inbox-int.h. */
void
ohand_stop(void)
{
	struct isub	*s;

	TAILQ_FOREACH(s, &ib.subs, entry)
		if (s->hand != NULL && s->hand->held)
			hand_let_go(s->hand, "shutting down");
}
