/*
 * deliver-order.c: push delivery to an ordered subscriber (SPEC 18), the
 * glue between deliver.c's deliveries and order.c's keys.  Loop thread
 * only.
 *
 * An ordered delivery enters its key before the gates (dorder_enter), so
 * that what waits behind a key holds no place in the window and the
 * other keys go on.  It holds the key across all its attempts: deliver.c
 * retries it in hand, on a timer, instead of giving it back to JetStream
 * with a delay, so that it never leaves this instance while a later
 * event of its key is held here.  It leaves the key when it ends
 * (dorder_leave): acknowledged, dropped and recorded, or let go.  The
 * next event of the key goes on from the loop (s->ready, then the pump),
 * never inside a delivery's teardown.
 *
 * The key is the event's partitionkey, as its stored ce-partitionkey
 * header spells it (ingest stores the canonical percent-encoded form, so
 * a key has one spelling), else its subject; the two never share a key.
 * Each source has keys of its own: a replay is ordered among its own
 * events (SPEC 18), beside the subscriber's own consumer.
 *
 * Across instances (holder.h):  only the holder joins the subscriber's
 * delivery group; another lets go of whatever reaches it (JetStream hands
 * it to the holder after its ack wait).  A new holder holds every key
 * until what JetStream has out for the subscriber is all in its hand
 * (takeover.h); a redelivery of an event in hand then replaces its
 * handle (dorder_msg), so that each event counts once.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "deliver.h"
#include "deliver-int.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "order.h"
#include "source.h"
#include "store-msg.h"
#include "store-sub.h"
#include "takeover.h"
#include "util.h"

/*
 * A replay of an ordered subscriber, taken up here (the holder): its own
 * takeover wait, since what an old holder had out of the replay comes
 * back on the replay's consumer, not the subscriber's.  While it waits,
 * the replay's deliveries are parked, out of the keys; then they enter
 * them in WORK's order.
 */
struct dsrc {
	struct dsub		*s;
	char			 id[SOURCE_ID_SIZE];
	struct takeover		 tk;
	struct delivery_list	 parked;
	TAILQ_ENTRY(dsrc)	 entry;
};

#define ITEM_DELIVERY(it) \
	((struct delivery *)(void *)((char *)(it) - \
	    offsetof(struct delivery, oi)))

static struct dsrc *
dsrc_find(struct dsub *s, const char *id)
{
	struct dsrc	*ds;

	TAILQ_FOREACH(ds, &s->srcs, entry)
		if (strcmp(ds->id, id) == 0)
			return ds;
	return NULL;
}

/* A replay's delivery while its source waits: parked (1), or not (0). */
static int
dorder_park(struct delivery *d)
{
	const char	*id = source_id(&d->src);
	struct dsrc	*ds;

	if (id == NULL || (ds = dsrc_find(d->s, id)) == NULL ||
	    !takeover_on(&ds->tk))
		return 0;
	d->parked = ds;
	TAILQ_INSERT_TAIL(&ds->parked, d, pentry);
	d->order_ms = now_ms();
	delivery_set_state(d, DS_ORDERED);
	return 1;
}

/* See deliver-int.h. */
void
dorder_sources_free(struct dsub *s)
{
	struct dsrc	*ds;
	struct delivery	*d;

	while ((ds = TAILQ_FIRST(&s->srcs)) != NULL) {
		while ((d = TAILQ_FIRST(&ds->parked)) != NULL) {
			TAILQ_REMOVE(&ds->parked, d, pentry);
			d->parked = NULL;
		}
		takeover_stop(&ds->tk);
		TAILQ_REMOVE(&s->srcs, ds, entry);
		free(ds);
	}
}

/* d's key (order_key). */
static char *
dorder_key(const struct delivery *d, char buf[ORDER_KEY_STACK], size_t *len,
    int *heap)
{
	return order_key(source_id(&d->src), d->m != NULL ?
	    store_msg_header(d->m, "ce-partitionkey") : NULL, d->subject, buf,
	    len, heap);
}

static uint64_t
dorder_seq(const struct delivery *d)
{
	return d->m != NULL ? store_msg_seq(d->m) : 0;
}

/* d's key is free: admit it from the loop. */
static void
dorder_ready(struct delivery *d)
{
	metrics_ordered_wait(d->s->idx, now_ms() - d->order_ms);
	d->ready = 1;
	TAILQ_INSERT_TAIL(&d->s->ready, d, rentry);
	event_active(&dl.pump, 0, 0);
}

int
dorder_enter(struct delivery *d)
{
	char	 buf[ORDER_KEY_STACK], *k;
	size_t	 len;
	int	 heap, pass;

	if (d->s->order == NULL)
		return 1;
	if (dorder_park(d))
		return 0;
	k = dorder_key(d, buf, &len, &heap);
	pass = order_admit(d->s->order, &d->oi, k, len, dorder_seq(d));
	if (heap)
		free(k);
	if (!pass) {
		d->order_ms = now_ms();
		delivery_set_state(d, DS_ORDERED);
	} else
		metrics_ordered_wait(d->s->idx, 0);
	return pass;
}

void
dorder_leave(struct delivery *d)
{
	struct order_item	*next;

	if (d->ready) {
		TAILQ_REMOVE(&d->s->ready, d, rentry);
		d->ready = 0;
	}
	if (d->parked != NULL) {
		TAILQ_REMOVE(&d->parked->parked, d, pentry);
		d->parked = NULL;
	}
	if (d->s->order == NULL || d->oi.k == NULL)
		return;
	if ((next = order_done(d->s->order, &d->oi)) != NULL)
		dorder_ready(ITEM_DELIVERY(next));
}

void
dorder_pump(struct dsub *s)
{
	struct delivery	*d;

	while ((d = TAILQ_FIRST(&s->ready)) != NULL) {
		TAILQ_REMOVE(&s->ready, d, rentry);
		d->ready = 0;
		delivery_admit(d);
	}
}

static void
dorder_pass(struct order_item *it, void *arg)
{
	(void)arg;
	dorder_ready(ITEM_DELIVERY(it));
}

/*
 * Made ordered: what is under way keeps going and holds its key, so the
 * order starts behind it.  No longer ordered: what waits behind a key
 * goes on.
 */
void
dorder_set(struct dsub *s)
{
	struct delivery	*d;
	char		 buf[ORDER_KEY_STACK], *k;
	size_t		 len;
	int		 heap;

	if (s->cfg->ordered && s->order == NULL) {
		s->order = order_new();
		/* Nothing passes until this instance holds it (deliver_held). */
		order_hold(s->order, 1, dorder_pass, NULL);
		TAILQ_FOREACH(d, &s->live, entry) {
			k = dorder_key(d, buf, &len, &heap);
			order_adopt(s->order, &d->oi, k, len, dorder_seq(d));
			if (heap)
				free(k);
		}
		/* Last: a key held already calls deliver_held at once. */
		holder_want(s->cfg->name, 1);
	} else if (!s->cfg->ordered && s->order != NULL) {
		holder_want(s->cfg->name, 0);
		dorder_gone(s);
		dorder_sources_free(s);
		/* Held, nothing passes as the keys are emptied. */
		order_hold(s->order, 1, dorder_pass, NULL);
		TAILQ_FOREACH(d, &s->live, entry) {
			if (d->oi.k == NULL)
				continue;
			order_done(s->order, &d->oi);
			if (d->state == DS_ORDERED && !d->ready)
				dorder_ready(d);
		}
		order_free(s->order);
		s->order = NULL;
	}
}

uint64_t
dorder_in_hand(void *arg)
{
	struct dsub	*s = arg;
	struct delivery	*d;
	uint64_t	 n = 0;

	TAILQ_FOREACH(d, &s->live, entry)
		if (d->m != NULL && source_id(&d->src) == NULL)
			n++;
	return n;
}

/* The new holder may start: every key goes on. */
void
dorder_took_over(void *arg)
{
	struct dsub	*s = arg;

	order_hold(s->order, 0, dorder_pass, NULL);
}

void
deliver_held(const char *name, int held)
{
	struct dsub	*s = dsub_find(name);

	if (s == NULL || s->order == NULL)
		return;
	if (held) {
		/* Stopping: it left the group for good (deliver_stop). */
		if (dl.stopping)
			return;
		store_consumer_join(s->consumer, 1);
		takeover_start(&s->tk, s->cfg->name, s->consumer,
		    dl.cfg->ack_wait_seconds);
		return;
	}
	dorder_let_go(s);
}

/*
 * This instance no longer delivers s: every key held, out of the group,
 * and what is not under way given back (JetStream hands it to the holder
 * at once; a NATS that cannot be reached hands it over after its ack
 * wait); what is under way finishes, and one that fails is given back
 * then (dorder_keeps).
 */
void
dorder_let_go(struct dsub *s)
{
	struct delivery	*d, *next;

	dorder_gone(s);
	order_hold(s->order, 1, dorder_pass, NULL);
	/* What nats.c queued comes to dorder_msg first, and is let go. */
	if (s->consumer != NULL)
		store_consumer_join(s->consumer, 0);
	for (d = TAILQ_FIRST(&s->live); d != NULL; d = next) {
		next = TAILQ_NEXT(d, entry);
		if (source_id(&d->src) == NULL && d->m != NULL &&
		    (d->state == DS_ORDERED || d->state == DS_RETRYING ||
		    d->state == DS_WAITING)) {
			dorder_answered(d);
			store_msg_give_back(d->m);
			d->m = NULL;
			delivery_close(d, "given back: another instance "
			    "delivers it");
		}
	}
}

/*
 * 1 when d, an ordered delivery that failed, is this instance's to try
 * again; 0 when it must be given back: the instance no longer holds its
 * subscriber (or is stopping, or the subscriber left), and another
 * instance's recovery waits for it to come back.
 */
int
dorder_keeps(const struct delivery *d)
{
	const struct dsub	*s = d->s;

	if (s->order == NULL || source_id(&d->src) != NULL)
		return 1;
	return !dl.stopping && s->consumer != NULL &&
	    holder_held(s->cfg->name);
}

/* An own-source event of s was answered to JetStream (ack, term, nak). */
void
dorder_answered(const struct delivery *d)
{
	struct dsrc	*ds;

	if (d->s->order == NULL)
		return;
	if (source_id(&d->src) == NULL)
		takeover_answered(&d->s->tk);
	else if ((ds = dsrc_find(d->s, source_id(&d->src))) != NULL)
		takeover_answered(&ds->tk);
}

void
dorder_gone(struct dsub *s)
{
	takeover_stop(&s->tk);
}

/*
 * A redelivery, during a takeover, of an event of source id (NULL: the
 * subscriber's own) already in hand: 0 when it was one (the newer handle
 * answers it from now on, unless it is under way), 1 when it is new.
 */
static int
dorder_swap(struct dsub *s, const char *id, struct store_msg *m)
{
	struct delivery	*d;
	const char	*did;
	uint64_t	 seq = store_msg_seq(m);

	TAILQ_FOREACH(d, &s->live, entry) {
		did = source_id(&d->src);
		if (d->m == NULL || store_msg_seq(d->m) != seq ||
		    (did == NULL) != (id == NULL) ||
		    (did != NULL && strcmp(did, id) != 0))
			continue;
		if (d->state == DS_ORDERED || d->state == DS_RETRYING ||
		    d->state == DS_WAITING) {
			/* The newer handle answers it; the old is let go. */
			store_msg_free(d->m);
			d->m = m;
			if (store_msg_delivered(m) > d->attempt)
				d->attempt = d->gp.attempt =
				    store_msg_delivered(m);
		} else
			store_msg_free(m);	/* under way: its answer acks */
		return 0;
	}
	return 1;
}

int
dorder_msg(struct dsub *s, struct store_msg *m)
{
	if (!holder_held(s->cfg->name)) {
		/* Not ours: JetStream gives it to the holder later. */
		store_msg_free(m);
		return 0;
	}
	if (!takeover_on(&s->tk))
		return 1;
	return dorder_swap(s, NULL, m);
}

/*
 * What waits behind its key or for its next attempt, to be given back,
 * all of it, the last attempts too (unlike the gates' give-back): order
 * comes first.  An array, not a list: as
 * the caller closes them, one that held its key passes the next, which
 * goes to s->ready (and comes out of it when closed in turn).
 */
struct delivery **
dorder_give_back(struct dsub *s, const char *id, size_t *n)
{
	struct delivery	*d, **back = NULL;
	const char	*sid;
	size_t		 max = 0;

	*n = 0;
	TAILQ_FOREACH(d, &s->live, entry) {
		/*
		 * A last attempt too: kept, it would pass its key once the
		 * one before it was given back, and come before it.  Given
		 * back, JetStream drops it (recorded, as any drop).
		 */
		if ((d->state != DS_ORDERED && d->state != DS_RETRYING) ||
		    d->m == NULL)
			continue;
		sid = source_id(&d->src);
		if (id != NULL && (sid == NULL || strcmp(sid, id) != 0))
			continue;
		if (*n == max) {
			max = max == 0 ? 16 : max * 2;
			back = xrealloc(back, max * sizeof(*back));
		}
		back[(*n)++] = d;
	}
	return back;
}

/* What of a replay is in hand here (its takeover counts it). */
static uint64_t
dsrc_in_hand(void *arg)
{
	struct dsrc	*ds = arg;
	struct delivery	*d;
	const char	*id;
	uint64_t	 n = 0;

	TAILQ_FOREACH(d, &ds->s->live, entry)
		if (d->m != NULL && (id = source_id(&d->src)) != NULL &&
		    strcmp(id, ds->id) == 0)
			n++;
	return n;
}

static int
seq_cmp(const void *a, const void *b)
{
	uint64_t	 x = dorder_seq(*(struct delivery *const *)a);
	uint64_t	 y = dorder_seq(*(struct delivery *const *)b);

	return x < y ? -1 : x > y;
}

/* A replay's wait is over: what was parked enters its keys in order. */
static void
dsrc_took_over(void *arg)
{
	struct dsrc	*ds = arg;
	struct delivery	*d, **all = NULL;
	size_t		 n = 0, max = 0, i;

	while ((d = TAILQ_FIRST(&ds->parked)) != NULL) {
		TAILQ_REMOVE(&ds->parked, d, pentry);
		d->parked = NULL;
		if (n == max) {
			max = max == 0 ? 16 : max * 2;
			all = xrealloc(all, max * sizeof(*all));
		}
		all[n++] = d;
	}
	if (n > 0)
		qsort(all, n, sizeof(*all), seq_cmp);
	/* Into their keys; those that pass go on from the loop. */
	for (i = 0; i < n; i++)
		if (dorder_enter(all[i]))
			dorder_ready(all[i]);
	free(all);
}

void
dorder_source_joined(struct dsub *s, const struct source *src,
    struct store_consumer *c)
{
	const char	*id = source_id(src);
	struct dsrc	*ds;
	char		 label[NAME_MAX_LEN + SOURCE_ID_SIZE + 16];

	if (s->order == NULL || id == NULL)
		return;
	if ((ds = dsrc_find(s, id)) == NULL) {
		ds = xcalloc(1, sizeof(*ds));
		ds->s = s;
		snprintf(ds->id, sizeof(ds->id), "%s", id);
		TAILQ_INIT(&ds->parked);
		takeover_init(&ds->tk, dl.base, dsrc_in_hand, dsrc_took_over,
		    ds);
		TAILQ_INSERT_TAIL(&s->srcs, ds, entry);
	}
	/* Its log lines name the replay too. */
	snprintf(label, sizeof(label), "%s replay=%s", s->cfg->name, id);
	takeover_start(&ds->tk, label, c, dl.cfg->ack_wait_seconds);
}

void
dorder_source_left(struct dsub *s, const char *id)
{
	struct dsrc	*ds;
	struct delivery	*d;

	if (id == NULL || (ds = dsrc_find(s, id)) == NULL)
		return;
	TAILQ_REMOVE(&s->srcs, ds, entry);
	takeover_stop(&ds->tk);
	/* Given back already (dsub_give_back_waiting); any left go on. */
	while ((d = TAILQ_FIRST(&ds->parked)) != NULL) {
		TAILQ_REMOVE(&ds->parked, d, pentry);
		d->parked = NULL;
		if (dorder_enter(d))
			dorder_ready(d);
	}
	free(ds);
}

int
dorder_source_msg(struct dsub *s, const struct source *src,
    struct store_msg *m)
{
	const char	*id = source_id(src);
	struct dsrc	*ds;

	if (s->order == NULL || id == NULL ||
	    (ds = dsrc_find(s, id)) == NULL || !takeover_on(&ds->tk))
		return 1;
	return dorder_swap(s, id, m);
}
