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
 *
 * The hand has a part per source (struct hpart): the inbox's own
 * consumer, and each replay of it (SPEC 15) that replay.c fed in, which
 * only the holder takes up (inbox_takes).  Each part has keys of its own
 * (a replay is ordered among its own events, SPEC 18), its own pull and
 * its own takeover wait (what the old holder had out of a replay comes
 * back on the replay's consumer); GETs take from all parts.
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
#include "source.h"
#include "store-msg.h"
#include "store-sub.h"
#include "takeover.h"
#include "util.h"

#define FILL_WAIT_MS		5000	/* a pull for the hand waits so long */
#define HAND_BYTES_MAX		(64LL * 1024 * 1024)	/* stored, a part */
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
	struct hpart		*p;
	struct store_msg	*m;
	size_t			 size;		/* of m, as counted */
	uint64_t		 shown;		/* its last hand-out's count */
	enum oe_state		 state;
	struct event		 timer;		/* lease end, release delay */
	struct audit_drop	*drop;		/* its record, being stored */
	int			 fetched;	/* TAKING by a GET: its m */
	uint64_t		 dseq;		/* its hand-out's delivery */
	int			 stale;		/* TAKING by an older receipt */
	int			 leftover;	/* of a hand let go */
	TAILQ_ENTRY(oentry)	 entry;		/* in its part */
	TAILQ_ENTRY(oentry)	 rentry;	/* ready */
};
TAILQ_HEAD(oentry_list, oentry);

/* What the hand has of one source: the inbox's own consumer, a replay's. */
struct hpart {
	struct ohand		*h;
	struct isrc		*src;
	struct order		*o;
	struct takeover		 tk;
	struct oentry_list	 all;		/* by arrival */
	size_t			 n;
	long long		 bytes;
	struct store_req	*fill;		/* the pull under way */
	int			 asked, got;	/* ... its batch */
	struct event		 fill_ev;	/* send the next pull */
	TAILQ_ENTRY(hpart)	 entry;
};
TAILQ_HEAD(hpart_list, hpart);

struct ohand {
	struct isub		*s;
	struct hpart_list	 parts;		/* its own first */
	struct oentry_list	 ready;		/* by their turn, all parts */
	size_t			 out;		/* on leases, all parts */
	struct event		 renew;		/* "in progress", all of it */
	struct event		 serve;		/* GETs waiting, something ready */
	struct fetch_list	 waiters;	/* GETs waiting for an event */
	int			 held;		/* this instance holds it */
	int			 wanted;	/* holder_want(1) said */
};

#define ITEM_ENTRY(i) \
	((struct oentry *)(void *)((char *)(i) - offsetof(struct oentry, it)))

static void	part_fill(struct hpart *);

static long long
lease_ms(void)
{
	return ib.cfg->lease_seconds * 1000LL;
}

static void
ms_timer(struct event *ev, long long ms)
{
	struct timeval	 tv = { ms / 1000, ms % 1000 * 1000 };

	evtimer_add(ev, &tv);
}

/* Its key's turn: the next GET may take it. */
static void
entry_ready(struct oentry *e)
{
	struct ohand	*h = e->p->h;

	e->state = OE_READY;
	TAILQ_INSERT_TAIL(&h->ready, e, rentry);
	if (!TAILQ_EMPTY(&h->waiters))
		event_active(&h->serve, EV_TIMEOUT, 0);
}

static void
entry_pass(struct order_item *it, void *arg)
{
	(void)arg;
	entry_ready(ITEM_ENTRY(it));
}

/* 1 while e holds one of the places maxInFlight bounds. */
static int
entry_out(const struct oentry *e)
{
	return e->state == OE_OUT || e->state == OE_TAKING;
}

/* Into state st: off the ready list, the places counted. */
static void
entry_state(struct oentry *e, enum oe_state st)
{
	struct ohand	*h = e->p->h;
	size_t		 was = h->out;

	if (e->state == OE_READY)
		TAILQ_REMOVE(&h->ready, e, rentry);
	h->out -= entry_out(e);
	e->state = st;
	h->out += entry_out(e);
	if (st == OE_READY) {
		e->state = OE_WAITING;
		entry_ready(e);
	} else if (h->out < was && !TAILQ_EMPTY(&h->ready) &&
	    !TAILQ_EMPTY(&h->waiters))
		/* A place freed: a GET waiting takes what was ready. */
		event_active(&h->serve, EV_TIMEOUT, 0);
}

/*
 * e leaves the hand (acknowledged, dropped, given back, forgotten): the
 * next event of its key passes.  Its message is the caller's.
 */
static void
entry_free(struct oentry *e)
{
	struct hpart		*p = e->p;
	struct order_item	*next;

	entry_state(e, OE_WAITING);
	evtimer_del(&e->timer);
	TAILQ_REMOVE(&p->all, e, entry);
	p->n--;
	p->bytes -= (long long)e->size;
	if (e->it.k != NULL && (next = order_done(p->o, &e->it)) != NULL)
		entry_ready(ITEM_ENTRY(next));
	free(e);
	part_fill(p);
}

/* The drop of e is recorded: terminated in JetStream, out of the hand. */
static void
entry_dropped_cb(void *arg, int stored)
{
	struct oentry	*e = arg;

	e->drop = NULL;
	/* Not recorded (the relay stops): JetStream keeps it. */
	if (stored) {
		takeover_answered(&e->p->tk);
		store_msg_term(e->m);
	} else
		store_msg_free(e->m);
	e->m = NULL;
	entry_free(e);
}

/* e's lease ran out or was released, or its delay is over: free again. */
static void
entry_back(struct oentry *e)
{
	struct isub	*s = e->p->h->s;
	int		 max = s->cfg->max_deliver;

	evtimer_del(&e->timer);
	if (max > 0 && e->shown >= (uint64_t)max) {
		entry_state(e, OE_DROPPING);
		e->drop = inbox_drop_record(s, &e->p->src->from, e->m,
		    e->shown, entry_dropped_cb, e);
		return;
	}
	entry_state(e, OE_READY);
}

static void
entry_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct oentry	*e = arg;

	(void)fd;
	(void)ev;
	if (e->state == OE_DELAYED) {
		entry_back(e);		/* maxDeliver counts it too */
		return;
	}
	log_debug("ordered lease ran out", "inbox=%s seq=%llu",
	    e->p->h->s->cfg->name, (unsigned long long)store_msg_seq(e->m));
	entry_back(e);
}

/* The entry of source replay (NULL: the inbox's own) at seq, or NULL. */
static struct oentry *
entry_find(struct ohand *h, const char *replay, uint64_t seq)
{
	struct hpart	*p;
	struct oentry	*e;
	const char	*id;

	TAILQ_FOREACH(p, &h->parts, entry) {
		id = source_id(&p->src->from);
		if ((id == NULL) != (replay == NULL || *replay == '\0') ||
		    (id != NULL && strcmp(id, replay) != 0))
			continue;
		TAILQ_FOREACH(e, &p->all, entry)
			if (e->m != NULL && store_msg_seq(e->m) == seq)
				return e;
	}
	return NULL;
}

/* The entry whose message is m, or NULL. */
static struct oentry *
entry_of(struct ohand *h, const struct store_msg *m)
{
	struct hpart	*p;
	struct oentry	*e;

	TAILQ_FOREACH(p, &h->parts, entry)
		TAILQ_FOREACH(e, &p->all, entry)
			if (e->m == m)
				return e;
	return NULL;
}

/* A message a part's pull got: a new event, or a newer handle. */
static void
part_add(struct hpart *p, struct store_msg *m)
{
	struct oentry	*e;
	char		 buf[ORDER_KEY_STACK], *k;
	size_t		 len;
	int		 heap;

	TAILQ_FOREACH(e, &p->all, entry)
		if (e->m != NULL && store_msg_seq(e->m) == store_msg_seq(m))
			break;
	if (e != NULL) {
		/* Being acknowledged or recorded: the handle in use stays. */
		if (e->state == OE_TAKING || e->state == OE_DROPPING ||
		    e->fetched) {
			store_msg_free(m);
			return;
		}
		/*
		 * JetStream handed it out again (an "in progress" was lost,
		 * or the old holder's lease of it ran out): the newer handle
		 * answers it; its place and state in the hand stay.
		 */
		store_msg_free(e->m);
		e->m = m;
		return;
	}
	e = xcalloc(1, sizeof(*e));
	e->p = p;
	e->m = m;
	e->size = store_msg_size(m);
	e->shown = store_msg_delivered(m) > 0 ? store_msg_delivered(m) - 1 : 0;
	e->state = OE_WAITING;
	evtimer_assign(&e->timer, ib.base, entry_timer_cb, e);
	TAILQ_INSERT_TAIL(&p->all, e, entry);
	p->n++;
	p->bytes += (long long)e->size;
	k = order_key(source_id(&p->src->from),
	    store_msg_header(m, "ce-partitionkey"), store_msg_subject(m), buf,
	    &len, &heap);
	if (order_admit(p->o, &e->it, k, len, store_msg_seq(m)))
		entry_ready(e);
	if (heap)
		free(k);
}

/* A reply to a part's pull. */
static int
fill_cb(void *arg, struct store_msg *m, int status)
{
	struct hpart	*p = arg;
	struct isrc	*src = p->src;

	(void)status;
	if (m == NULL) {
		/* Expired, or over: the next one from the loop. */
		p->fill = NULL;
		event_active(&p->fill_ev, EV_TIMEOUT, 0);
		return 0;
	}
	if (!p->h->held)
		/* Let go while it was open: straight to the next holder. */
		store_msg_give_back(m);
	else if (src->want != NULL && !src->want(src->want_arg,
	    store_msg_seq(m)))
		store_msg_ack(m);	/* not the replay's: never seen */
	else
		part_add(p, m);
	if (++p->got < p->asked)
		return 1;
	/* The batch is complete: JetStream says nothing more of it. */
	p->fill = NULL;
	event_active(&p->fill_ev, EV_TIMEOUT, 0);
	return 0;
}

/* Pull for a part, while holding and there is room. */
static void
part_fill(struct hpart *p)
{
	int	 cap = config_max_ack_pending(p->h->s->cfg);

	if (!p->h->held || p->fill != NULL || ib.stopping ||
	    p->n >= (size_t)cap || p->bytes >= HAND_BYTES_MAX)
		return;
	/* A GET's pull from before the inbox was ordered: after it. */
	if (store_pull_pending(p->src->consumer, STORE_PULL_WAIT)) {
		ms_timer(&p->fill_ev, FILL_RETRY_MS);
		return;
	}
	p->asked = cap - (int)p->n;
	p->got = 0;
	if ((p->fill = store_pull(p->src->consumer, STORE_PULL_WAIT,
	    p->asked, FILL_WAIT_MS, HAND_BYTES_MAX - p->bytes, fill_cb,
	    p)) == NULL)
		ms_timer(&p->fill_ev, FILL_RETRY_MS);
}

static void
fill_ev_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	part_fill(arg);
}

/* What the part has in hand, but what is left of a hand let go. */
static uint64_t
part_count(void *arg)
{
	struct hpart	*p = arg;
	struct oentry	*e;
	uint64_t	 n = 0;

	TAILQ_FOREACH(e, &p->all, entry)
		n += !e->leftover;
	return n;
}

static void
part_took_over(void *arg)
{
	struct hpart	*p = arg;

	order_hold(p->o, 0, entry_pass, NULL);
}

/* The holder starts on a part: wait for what is out, and pull. */
static void
part_start(struct hpart *p)
{
	struct isub	*s = p->h->s;
	char		 label[NAME_MAX_LEN + SOURCE_ID_SIZE + 16];

	/* A replay's part: its log lines name the replay too. */
	if (source_id(&p->src->from) != NULL)
		snprintf(label, sizeof(label), "%s replay=%s", s->cfg->name,
		    p->src->from.id);
	else
		snprintf(label, sizeof(label), "%s", s->cfg->name);
	takeover_start(&p->tk, label, p->src->consumer,
	    ib.cfg->lease_seconds);
	part_fill(p);
}

/*
 * This instance no longer serves the part: its keys held, and what it
 * has given back in WORK's order (JetStream hands it to the next holder
 * at once), except what is out on a lease: forgotten, so that JetStream
 * keeps its lease until it runs out and the worker's DELETE still
 * acknowledges it.  What waits for JetStream or a record stays until
 * that answer ends it.
 */
static void
part_let_go(struct hpart *p, const char *why)
{
	struct oentry	*e, *next;

	log_debug("hand part let go", "inbox=%s replay=%s reason=%s",
	    p->h->s->cfg->name, p->src->from.id, why);
	takeover_stop(&p->tk);
	order_hold(p->o, 1, entry_pass, NULL);
	/*
	 * The pull stays open: JetStream may still send for it, and what
	 * comes is given back at once (fill_cb).  Closed, it would be kept
	 * here for a pull that never comes.
	 */
	evtimer_del(&p->fill_ev);
	for (e = TAILQ_FIRST(&p->all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, entry);
		if (e->state == OE_TAKING || e->state == OE_DROPPING ||
		    e->fetched) {
			/* Its answer ends it: counted out of the hand. */
			e->leftover = 1;
			continue;
		}
		if (e->state == OE_OUT)
			store_msg_free(e->m);
		else
			store_msg_give_back(e->m);
		e->m = NULL;
		entry_free(e);
	}
}

/*
 * Free a part: what it has is forgotten, not answered (a GET's
 * acknowledgement under way keeps its message: the GET's).
 */
static void
part_free(struct hpart *p)
{
	struct oentry	*e;

	takeover_stop(&p->tk);
	store_req_close(p->fill, "hand part gone");
	p->fill = NULL;
	evtimer_del(&p->fill_ev);
	/* Held: nothing passes while the keys empty. */
	order_hold(p->o, 1, entry_pass, NULL);
	while ((e = TAILQ_FIRST(&p->all)) != NULL) {
		if (e->drop != NULL)
			audit_drop_close(e->drop, "inbox hand gone");
		if (!e->fetched)
			store_msg_free(e->m);
		e->m = NULL;
		entry_free(e);
	}
	TAILQ_REMOVE(&p->h->parts, p, entry);
	order_free(p->o);
	free(p);
}

/* A part for source src, started when the hand is held. */
static void
part_new(struct ohand *h, struct isrc *src)
{
	struct hpart	*p = xcalloc(1, sizeof(*p));

	p->h = h;
	p->src = src;
	p->o = order_new();
	/* Nothing passes until this instance holds it, and has waited. */
	order_hold(p->o, 1, entry_pass, NULL);
	TAILQ_INIT(&p->all);
	evtimer_assign(&p->fill_ev, ib.base, fill_ev_cb, p);
	takeover_init(&p->tk, ib.base, part_count, part_took_over, p);
	if (src == &h->s->own)
		TAILQ_INSERT_HEAD(&h->parts, p, entry);
	else
		TAILQ_INSERT_TAIL(&h->parts, p, entry);
	if (h->held)
		part_start(p);
}

/* Every third of a lease: what is in hand stays ours in JetStream. */
static void
renew_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ohand	*h = arg;
	struct hpart	*p;
	struct oentry	*e;

	(void)fd;
	(void)ev;
	TAILQ_FOREACH(p, &h->parts, entry)
		TAILQ_FOREACH(e, &p->all, entry)
			store_msg_progress(e->m);
	ms_timer(&h->renew, lease_ms() / 3);
}

/* Give the GETs waiting what became ready. */
static void
serve_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ohand	*h = arg;
	struct fetch	*f;

	(void)fd;
	(void)ev;
	while (!TAILQ_EMPTY(&h->ready) && h->out <
	    (size_t)h->s->cfg->max_in_flight &&
	    (f = TAILQ_FIRST(&h->waiters)) != NULL) {
		inbox_fetch_unqueue(f);
		if (iresp_gone(&f->r)) {
			inbox_fetch_done(f);
			continue;
		}
		ohand_fetch(f);
	}
}

/* See inbox-int.h. */
void
ohand_set(struct isub *s)
{
	struct ohand	*h = s->hand;
	struct isrc	*src;

	if (s->cfg->ordered && h == NULL) {
		inbox_fetch_ordered(s);
		h = s->hand = xcalloc(1, sizeof(*h));
		h->s = s;
		TAILQ_INIT(&h->parts);
		TAILQ_INIT(&h->ready);
		TAILQ_INIT(&h->waiters);
		evtimer_assign(&h->renew, ib.base, renew_cb, h);
		event_assign(&h->serve, ib.base, -1, 0, serve_cb, h);
		part_new(h, &s->own);
		TAILQ_FOREACH(src, &s->replays, entry)
			part_new(h, src);
		/* Last: a key held already calls ohand_held at once. */
		h->wanted = 1;
		holder_want(s->cfg->name, 1);
	} else if (!s->cfg->ordered && h != NULL)
		ohand_free(s);
}

/* This instance no longer serves the hand (see part_let_go). */
static void
hand_let_go(struct ohand *h, const char *why)
{
	struct hpart	*p;
	struct fetch	*f;

	h->held = 0;
	evtimer_del(&h->renew);
	while ((f = TAILQ_FIRST(&h->waiters)) != NULL) {
		inbox_fetch_unqueue(f);
		inbox_fetch_done(f);
	}
	TAILQ_FOREACH(p, &h->parts, entry)
		part_let_go(p, why);
	log_info("ordered inbox let go", "inbox=%s reason=%s",
	    h->s->cfg->name, why);
}

/* See inbox-int.h. */
void
ohand_held(struct isub *s, int held)
{
	struct ohand	*h = s->hand;
	struct hpart	*p;

	if (h == NULL || held == h->held)
		return;
	if (!held) {
		hand_let_go(h, "lease lost");
		return;
	}
	if (ib.stopping)
		return;
	h->held = 1;
	ms_timer(&h->renew, lease_ms() / 3);
	TAILQ_FOREACH(p, &h->parts, entry)
		part_start(p);
}

/* See inbox-int.h. */
void
ohand_unwant(struct isub *s)
{
	if (s->hand != NULL && s->hand->wanted) {
		s->hand->wanted = 0;
		holder_want(s->cfg->name, 0);
	}
}

/* See inbox-int.h. */
void
ohand_close_pulls(struct isub *s)
{
	struct hpart	*p;

	if (s->hand == NULL)
		return;
	TAILQ_FOREACH(p, &s->hand->parts, entry) {
		store_req_close(p->fill, "shutting down");
		p->fill = NULL;
		evtimer_del(&p->fill_ev);
	}
}

/* See inbox-int.h. */
void
ohand_free(struct isub *s)
{
	struct ohand	*h = s->hand;

	if (h == NULL)
		return;
	if (h->held)
		hand_let_go(h, "no longer ordered");
	ohand_unwant(s);
	while (!TAILQ_EMPTY(&h->parts))
		part_free(TAILQ_FIRST(&h->parts));
	event_del(&h->serve);
	free(h);
	s->hand = NULL;
}

/* See inbox-int.h. */
void
ohand_source_add(struct isub *s, struct isrc *src)
{
	if (s->hand != NULL)
		part_new(s->hand, src);
}

/* See inbox-int.h. */
void
ohand_source_remove(struct isub *s, struct isrc *src)
{
	struct hpart	*p;

	if (s->hand == NULL)
		return;
	TAILQ_FOREACH(p, &s->hand->parts, entry)
		if (p->src == src) {
			part_free(p);
			return;
		}
}

/* Lend e to f, shown as its next hand-out. */
static void
entry_lend(struct fetch *f, struct oentry *e, int lease)
{
	struct store_lease	 l;

	e->shown++;
	entry_state(e, lease ? OE_OUT : OE_TAKING);
	e->fetched = !lease;
	/* JetStream's ack wait starts again with the lease. */
	store_msg_progress(e->m);
	if (lease)
		ms_timer(&e->timer, lease_ms());
	store_msg_lease(e->m, &l);
	e->dseq = l.dseq;
	l.delivered = e->shown;
	inbox_fetch_lend(f, &e->p->src->from, e->m, &l);
}

/*
 * Hand out what is ready to f (a GET of this hand's inbox; see
 * inbox-int.h): each event at most once out, at most maxInFlight leases
 * at once, at most the fetch's bytes.  A GET that got nothing and may
 * wait waits here for the next event that becomes ready.
 */
void
ohand_fetch(struct fetch *f)
{
	struct ohand		*h = f->s->hand;
	struct hpart		*p;
	struct oentry		*e, *next;
	struct store_lease	 l;
	size_t			 max_out = (size_t)f->s->cfg->max_in_flight;

	if (h == NULL || !h->held) {
		inbox_fetch_done(f);
		return;
	}
	if (f->peeking) {
		/* What is in hand and not out, without a lease. */
		TAILQ_FOREACH(p, &h->parts, entry)
			TAILQ_FOREACH(e, &p->all, entry) {
				if (inbox_fetch_full(f))
					break;
				if (entry_out(e) || e->state == OE_DROPPING)
					continue;
				store_msg_lease(e->m, &l);
				l.delivered = 0;
				inbox_fetch_lend(f, &p->src->from, e->m, &l);
			}
		inbox_fetch_done(f);
		return;
	}
	for (e = TAILQ_FIRST(&h->ready); e != NULL && !inbox_fetch_full(f) &&
	    h->out < max_out; e = next) {
		next = TAILQ_NEXT(e, rentry);
		entry_lend(f, e, f->lease);
	}
	if (f->n > 0 || f->wait_end <= now_ms() || ib.stopping) {
		inbox_fetch_done(f);
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

	if (h == NULL || (e = entry_of(h, m)) == NULL)
		return -1;
	e->fetched = 0;
	if (!taken && (e->leftover || !h->held)) {
		/* Of a hand let go: JetStream hands it to the holder. */
		store_msg_free(e->m);
		e->m = NULL;
		entry_free(e);
		return 0;
	}
	if (!taken) {
		/* Not handed out after all: not counted as a delivery. */
		e->shown--;
		entry_back(e);
		return 0;
	}
	/* Acknowledged: the message is the fetch's from now on. */
	takeover_answered(&e->p->tk);
	e->m = NULL;
	entry_free(e);
	return 0;
}

/* See inbox-int.h. */
enum ohand_answer
ohand_op(struct isub *s, enum inbox_verb v, const char *replay,
    const struct store_lease *l, long long delay_ms, struct store_lease *out)
{
	struct ohand		*h = s->hand;
	struct oentry		*e;
	struct store_lease	 jl;
	int			 stale;

	/* Let go (stopping, lost): JetStream keeps what was out. */
	if (h == NULL || !h->held)
		return v == INBOX_ACK ? OHAND_JETSTREAM : OHAND_GONE;
	if ((e = entry_find(h, replay, l->seq)) == NULL)
		/* Not in hand: a lease of JetStream's own, for DELETE. */
		return v == INBOX_ACK ? OHAND_JETSTREAM : OHAND_GONE;
	store_msg_lease(e->m, &jl);
	stale = 0;
	if (e->dseq != l->dseq || e->shown != l->delivered) {
		/*
		 * Another delivery's or hand-out's receipt: DELETE may still
		 * acknowledge the event when it is its key's turn and no
		 * worker has it.
		 */
		if (v != INBOX_ACK || (e->state != OE_READY &&
		    e->state != OE_DELAYED))
			return OHAND_GONE;
		stale = 1;
	} else if (e->state != OE_OUT)
		return OHAND_GONE;
	switch (v) {
	case INBOX_EXTEND:
		store_msg_progress(e->m);
		ms_timer(&e->timer, lease_ms());
		return OHAND_DONE;
	case INBOX_RELEASE:
		if (delay_ms > 0) {
			entry_state(e, OE_DELAYED);
			ms_timer(&e->timer, delay_ms);
		} else
			entry_back(e);
		return OHAND_DONE;
	default:
		evtimer_del(&e->timer);
		entry_state(e, OE_TAKING);
		e->stale = stale;
		*out = jl;
		return OHAND_ACK;
	}
}

/* See inbox-int.h. */
void
ohand_acked(struct isub *s, const char *replay, uint64_t seq, int ok)
{
	struct ohand	*h = s->hand;
	struct oentry	*e;

	if (h == NULL || (e = entry_find(h, replay, seq)) == NULL ||
	    e->state != OE_TAKING || e->fetched)
		return;
	if (!ok && (e->leftover || !h->held)) {
		/* Of a hand let go: JetStream hands it to the holder. */
		store_msg_free(e->m);
		e->m = NULL;
		entry_free(e);
		return;
	}
	if (!ok && e->stale) {
		/* Unconfirmed: its key's turn again. */
		entry_state(e, OE_READY);
		return;
	}
	if (!ok) {
		/* Unconfirmed: its lease goes on (the worker may try again). */
		entry_state(e, OE_OUT);
		ms_timer(&e->timer, lease_ms());
		return;
	}
	takeover_answered(&e->p->tk);
	store_msg_free(e->m);
	e->m = NULL;
	entry_free(e);
}

/* See inbox-int.h. */
void
ohand_stop(void)
{
	struct isub	*s;

	/*
	 * Released at once: what was in hand went back to JetStream, so the
	 * next holder need not wait for this one's grace period.
	 */
	TAILQ_FOREACH(s, &ib.subs, entry)
		if (s->hand != NULL && s->hand->held) {
			hand_let_go(s->hand, "shutting down");
			ohand_unwant(s);
		}
}
