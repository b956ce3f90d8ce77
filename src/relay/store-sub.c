/*
 * store-sub.c: consumers.  The registry of subscribers' consumers
 * (store_consumers), their subscriptions, and what their messages and
 * the max-deliveries advisory lead to (store_poll, store.c, takes them
 * from nats.c).  Loop thread only (the advisory's message is read on the
 * worker, store-admin.c).
 *
 * The relay does not use js_Subscribe: its message handler would run on a
 * nats.c thread, natsSubscription_Unsubscribe on a library-made durable
 * deletes the consumer, and nats.c 3.4 has no js_QueueSubscribe.  Each
 * push consumer's deliver subject gets a plain synchronous queue
 * subscription instead, with the consumer's name as queue group (the
 * delivery group: every instance joins, JetStream hands each message to
 * one), which the loop polls like the publish acknowledgements.  A pull
 * consumer has two reply subscriptions, one per kind of request
 * (store-req.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store-int.h"
#include "util.h"

/* Every registered consumer, oldest first (store-int.h). */
struct store_consumer_list	 store_consumers =
				    TAILQ_HEAD_INITIALIZER(store_consumers);

static struct {
	int		 next_idx;	/* the next consumer's, see idx */
} cs;

/* Copy a spec's settings into c. */
static void
consumer_set(struct store_consumer *c, const struct store_consumer_spec *spec)
{
	free(c->filter);
	c->filter = xstrdup(spec->filter);
	c->max_deliver = spec->max_deliver;
	c->max_ack_pending = spec->max_ack_pending;
	c->ack_wait_s = spec->ack_wait_s;
	c->from = spec->from;
	c->from_ns = spec->from_ns;
	c->hold_back = spec->hold_back;
}

/* Register a consumer; see store-sub.h. */
struct store_consumer *
store_consumer_add(const struct store_consumer_spec *spec, store_msg_cb cb,
    store_msg_cb exhausted_cb, void *arg)
{
	struct store_consumer	*c = xcalloc(1, sizeof(*c));

	if (spec->replay != NULL) {
		/* Made by store_replay_start, left alone by the checks. */
		c->replay = 1;
		c->name = xjoin(STORE_REPLAY_PREFIX, "", spec->replay);
		if (spec->kind == STORE_PUSH)
			c->deliver = xjoin(STORE_REPLAY_DELIVER, "",
			    spec->replay);
	} else {
		c->name = store_wire_consumer(spec->name);
		if (spec->kind == STORE_PUSH)
			c->deliver = store_wire_deliver(spec->name);
	}
	c->kind = spec->kind;
	consumer_set(c, spec);
	c->cb = cb;
	c->exhausted_cb = exhausted_cb;
	c->arg = arg;
	c->idx = cs.next_idx++;
	TAILQ_INIT(&c->strays);
	TAILQ_INSERT_TAIL(&store_consumers, c, entry);
	/*
	 * Added by a reload: subscribe now, and have JetStream make it.
	 * Subscribe while NATS is away too: nats.c sends the subscription
	 * when it reconnects, and nothing here subscribes again then (the
	 * consumer itself is made by the check that follows a reconnect).
	 */
	if (store_conn.nc != NULL && !store_conn.closing) {
		store_sub_init();
		if (!c->replay)
			store_check_one(c);
	}
	return c;
}

/* New settings for c; see store-sub.h. */
void
store_consumer_update(struct store_consumer *c,
    const struct store_consumer_spec *spec)
{
	/*
	 * JetStream cannot move a consumer it has (nor would moving it be
	 * harmless: events skipped, or delivered again), so deliverFrom is
	 * read only when the consumer is made.  Say so rather than seem to
	 * have applied it.
	 */
	if (c->from != spec->from || c->from_ns != spec->from_ns)
		log_warnx("deliverFrom changed: it is read only when a "
		    "consumer is made, and one JetStream has keeps its "
		    "position", "consumer=%s", c->name);
	if (c->hold_back != spec->hold_back) {
		/* Held back now: leave until told; no longer: join. */
		c->hold_back = spec->hold_back;
		c->joined = 0;
		if (c->hold_back)
			store_consumer_stop(c);
		else if (c->sub == NULL && store_conn.nc != NULL &&
		    !store_conn.closing)
			store_sub_sync(&c->sub, c->deliver, c->name);
	}
	if (strcmp(c->filter, spec->filter) == 0 &&
	    c->max_deliver == spec->max_deliver &&
	    c->max_ack_pending == spec->max_ack_pending &&
	    c->ack_wait_s == spec->ack_wait_s && c->from == spec->from &&
	    c->from_ns == spec->from_ns)
		return;
	consumer_set(c, spec);
	store_check_one(c);
}

/* The consumer's name in JetStream. */
const char *
store_consumer_name(const struct store_consumer *c)
{
	return c->name;
}

/* A push consumer's message, taken by store_poll: to its callback. */
void
store_sub_deliver(struct store_consumer *c, natsMsg *m)
{
	/* Status messages (no reply subject) are not events. */
	if (natsMsg_GetReply(m) == NULL)
		store_grave_add(m);
	else
		c->cb(c->arg, store_msg_wrap(m));
}

/* The consumer called name (relay-<subscriber>), or NULL. */
static struct store_consumer *
consumer_find(const char *name)
{
	struct store_consumer	*c;

	TAILQ_FOREACH(c, &store_consumers, entry)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* c's settings into cp, for the worker. */
static void
consumer_copy(const struct store_consumer *c, struct store_consumer_copy *cp)
{
	cp->name = xstrdup(c->name);
	cp->deliver = c->deliver != NULL ? xstrdup(c->deliver) : NULL;
	cp->filter = xstrdup(c->filter);
	cp->max_deliver = c->max_deliver;
	cp->max_ack_pending = c->max_ack_pending;
	cp->ack_wait_s = c->ack_wait_s;
	cp->from = c->from;
	cp->from_ns = c->from_ns;
}

/* Copies of every subscriber's consumer's settings, for the worker; their count. */
int
store_consumer_copies(struct store_consumer_copy **out)
{
	struct store_consumer	*c;
	int			 n = 0;

	TAILQ_FOREACH(c, &store_consumers, entry)
		n++;
	*out = n > 0 ? xcalloc((size_t)n, sizeof(**out)) : NULL;
	n = 0;
	TAILQ_FOREACH(c, &store_consumers, entry)
		if (!c->replay)
			consumer_copy(c, &(*out)[n++]);
	return n;
}

/* See store-int.h. */
int
store_consumer_copy_one(const struct store_consumer *c,
    struct store_consumer_copy **out)
{
	*out = xcalloc(1, sizeof(**out));
	consumer_copy(c, *out);
	return 1;
}

/* See store-int.h. */
void
store_consumers_kinds(const struct store_consumer_copy *copies, int n)
{
	struct store_consumer	*c;
	int			 i;

	for (i = 0; i < n; i++)
		if ((c = consumer_find(copies[i].name)) != NULL)
			c->wrong_kind = copies[i].wrong_kind;
}

/* See store-sub.h. */
int
store_consumer_wrong_kind(const struct store_consumer *c)
{
	return c != NULL && c->wrong_kind;
}

/* Free what store_consumer_copies made. */
void
store_consumer_copies_free(struct store_consumer_copy *c, int n)
{
	int	 i;

	for (i = 0; i < n; i++) {
		free(c[i].name);
		free(c[i].deliver);
		free(c[i].filter);
	}
	free(c);
}

/* Loop thread: the figures to the one who asked. */
static void
figures_done(struct bridge_job *job)
{
	struct store_figures_job *fj = BRIDGE_CONTAINER(job,
	    struct store_figures_job, job);
	int			 i;

	if (!store_conn.closing)
		fj->cb(fj->figures, fj->nconsumers);
	for (i = 0; i < fj->nconsumers; i++)
		free(fj->figures[i].subscriber);
	free(fj->figures);
	store_consumer_copies_free(fj->consumers, fj->nconsumers);
	free(fj);
}

/* Every consumer's figures; see store-sub.h. */
int
store_figures(store_figures_cb cb)
{
	struct store_figures_job *fj;
	const size_t		 plen = strlen(STORE_CONSUMER_PREFIX);
	int			 i;

	if (!store_conn.connected || store_conn.closing)
		return -1;
	fj = xcalloc(1, sizeof(*fj));
	fj->nconsumers = store_consumer_copies(&fj->consumers);
	fj->figures = xcalloc((size_t)fj->nconsumers + 1,
	    sizeof(*fj->figures));
	for (i = 0; i < fj->nconsumers; i++)
		fj->figures[i].subscriber = xstrdup(fj->consumers[i].name +
		    plen);
	fj->cb = cb;
	fj->job.work = store_admin_figures;
	fj->job.done = figures_done;
	bridge_run(&fj->job);
	return 0;
}

/* Loop thread: hand a gave-up message to its consumer's callback. */
static void
exhausted_done(struct bridge_job *job)
{
	struct store_getmsg_job *gj = BRIDGE_CONTAINER(job,
	    struct store_getmsg_job, job);
	struct store_consumer	*c = consumer_find(gj->consumer);
	struct store_msg	*sm;

	if (store_conn.closing || c == NULL || gj->msg == NULL) {
		if (!store_conn.closing && gj->msg == NULL)
			log_warnx("gave-up event not readable", "consumer=%s "
			    "seq=%llu err=%s", gj->consumer,
			    (unsigned long long)gj->seq, log_q(gj->err));
		if (gj->msg != NULL)
			natsMsg_Destroy(gj->msg);
		free(gj);
		return;
	}
	/* Read from the stream: no reply subject, so answering it is a no-op. */
	sm = xcalloc(1, sizeof(*sm));
	sm->m = gj->msg;
	sm->delivered = gj->deliveries != 0 ? gj->deliveries :
	    (uint64_t)c->max_deliver;
	sm->seq = gj->seq;
	c->exhausted_cb(c->arg, sm);
	free(gj);
}

/*
 * JetStream gave up on a message of one of our consumers without our
 * term: its last attempt was given back or lost with a relay.  Read it
 * from WORK (on the worker) so the subscriber's drop is recorded like any
 * other.
 */
static void
exhausted_advisory(natsMsg *m)
{
	struct store_getmsg_job	*gj = xcalloc(1, sizeof(*gj));
	struct store_consumer	*c = NULL;
	int			 parsed;

	parsed = store_wire_advisory(natsMsg_GetData(m),
	    (size_t)natsMsg_GetDataLength(m), gj->consumer,
	    sizeof(gj->consumer), &gj->seq, &gj->deliveries) == 0;
	if (!parsed || (c = consumer_find(gj->consumer)) == NULL ||
	    c->exhausted_cb == NULL) {
		/*
		 * One of ours that this instance does not have (the instances'
		 * subscribers differ, say during a rolling change): the
		 * advisory comes once, to one of them, so say it was lost.
		 */
		if (parsed && c == NULL &&
		    strncmp(gj->consumer, STORE_CONSUMER_PREFIX,
		    strlen(STORE_CONSUMER_PREFIX)) == 0)
			log_warnx("gave-up event of an unknown subscriber, "
			    "not recorded", "consumer=%s seq=%llu",
			    log_q(gj->consumer), (unsigned long long)gj->seq);
		free(gj);
		return;
	}
	gj->job.work = store_admin_getmsg;
	gj->job.done = exhausted_done;
	bridge_run(&gj->job);
}

/* A max-deliveries advisory store_poll took: read, m destroyed (batched). */
void
store_sub_advisory(natsMsg *m)
{
	exhausted_advisory(m);
	store_grave_add(m);
}

/* A pull consumer's reply subscriptions, one per kind of request. */
static void
pull_subscribe(struct store_consumer *c)
{
	char	 subj[STORE_SUBJECT_BUF];
	int	 k;

	for (k = 0; k < STORE_PULL_KINDS; k++) {
		if (c->pull_sub[k] == NULL && store_wire_pull_reply(subj,
		    sizeof(subj), (const char *)store_conn.inbox, c->idx, k,
		    0) == 0)
			store_sub_sync(&c->pull_sub[k], subj, NULL);
	}
}

/* Subscribe the advisory, then every consumer. */
void
store_sub_init(void)
{
	struct store_consumer	*c;

	/*
	 * Before the deliveries: JetStream announces a message it gave up
	 * on only while it delivers, so a relay that comes back hears about
	 * the ones its predecessors left on their last attempt.  One
	 * instance of the group handles each.
	 */
	if (store_polled.exhausted == NULL && !TAILQ_EMPTY(&store_consumers))
		store_sub_sync(&store_polled.exhausted, STORE_EXHAUSTED_SUBJECT,
		    "treaty-relay");
	TAILQ_FOREACH(c, &store_consumers, entry) {
		if (c->kind == STORE_PULL)
			pull_subscribe(c);
		else if (c->sub == NULL && (!c->hold_back || c->joined))
			store_sub_sync(&c->sub, c->deliver, c->name);
	}
}

/*
 * Leave a push consumer's delivery group; see store-sub.h.  Without this a
 * stopping relay that gives messages back gets them back at once (it is
 * still in the group), and each round trip counts as a delivery: a
 * backlog's events reached their last attempt untried, and those the grace
 * period then cut short were dropped.  Nothing can be queued between the
 * poll and the destroy: nats.c reads the socket on this thread only.
 */
void
store_consumer_stop(struct store_consumer *c)
{
	natsMsg	*m;

	if (c->sub == NULL)
		return;
	while (store_next(c->sub, &m))
		store_sub_deliver(c, m);
	natsSubscription_Destroy(c->sub);
	c->sub = NULL;
}

/* Join or leave a held-back group; see store-sub.h. */
void
store_consumer_join(struct store_consumer *c, int join)
{
	if (!c->hold_back || c->kind != STORE_PUSH)
		return;
	c->joined = join;
	if (!join)
		store_consumer_stop(c);
	else if (c->sub == NULL && store_conn.nc != NULL && !store_conn.closing)
		store_sub_sync(&c->sub, c->deliver, c->name);
}

/* Loop thread: the answer. */
static void
pending_done(struct bridge_job *job)
{
	struct store_pending_job *pj = BRIDGE_CONTAINER(job,
	    struct store_pending_job, job);

	if (!pj->closed && !store_conn.closing)
		pj->cb(pj->arg, pj->ok, pj->n);
	free(pj->name);
	free(pj);
}

/* num_ack_pending of c; see store-sub.h. */
struct store_pending_job *
store_consumer_pending(struct store_consumer *c, store_pending_cb cb,
    void *arg)
{
	struct store_pending_job *pj;

	if (!store_conn.connected || store_conn.closing)
		return NULL;
	pj = xcalloc(1, sizeof(*pj));
	pj->name = xstrdup(c->name);
	pj->cb = cb;
	pj->arg = arg;
	pj->job.work = store_admin_pending;
	pj->job.done = pending_done;
	bridge_run(&pj->job);
	return pj;
}

void
store_consumer_pending_close(struct store_pending_job *j)
{
	if (j != NULL)
		j->closed = 1;
}

/* Unsubscribe and free one consumer. */
static void
consumer_free(struct store_consumer *c)
{
	int	 k;

	TAILQ_REMOVE(&store_consumers, c, entry);
	store_req_strays_free(c);
	natsSubscription_Destroy(c->sub);
	for (k = 0; k < STORE_PULL_KINDS; k++)
		natsSubscription_Destroy(c->pull_sub[k]);
	free(c->name);
	free(c->deliver);
	free(c->filter);
	free(c);
}

/*
 * Forget c; see store-sub.h.  Its subscriptions are closed (NATS drops what
 * arrives for them later: a pull's late messages are redelivered after
 * their ack wait), and the stream check no longer looks at it.
 */
void
store_consumer_remove(struct store_consumer *c)
{
	store_consumer_stop(c);
	store_pull_close_all(c, "consumer removed");
	consumer_free(c);
}

/* Shutdown, before the drain (see store_pub_unsubscribe). */
void
store_sub_unsubscribe(void)
{
	struct store_consumer	*c;
	int			 k;

	if (store_polled.exhausted != NULL)
		natsSubscription_Unsubscribe(store_polled.exhausted);
	TAILQ_FOREACH(c, &store_consumers, entry) {
		if (c->sub != NULL)
			natsSubscription_Unsubscribe(c->sub);
		for (k = 0; k < STORE_PULL_KINDS; k++)
			if (c->pull_sub[k] != NULL)
				natsSubscription_Unsubscribe(c->pull_sub[k]);
	}
}

/* After the loop: every consumer and subscription freed. */
void
store_sub_destroy(void)
{
	struct store_consumer	*c;

	natsSubscription_Destroy(store_polled.exhausted);
	store_polled.exhausted = NULL;
	while ((c = TAILQ_FIRST(&store_consumers)) != NULL)
		consumer_free(c);
}
