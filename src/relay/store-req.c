/*
 * store-req.c: requests whose replies come back to the loop: pulls from a
 * pull consumer, the confirmed answers to a lease, and peeks.  Loop thread
 * only (a peek's direct gets run on the worker, store-admin.c).
 *
 * nats.c 3.4's request calls and its fetch wait on the calling thread, so
 * the relay sends requests as core publishes with a reply subject of its
 * own and polls the replies like the publish acknowledgements: a plain
 * request's replies come to <inbox>.r.<id> (one polled subscription for
 * all), a pull's to its consumer's subscription of that kind
 * (<inbox>.p.<consumer>.<kind>.<id>).  Each request has a deadline of its
 * own, and all of them end when the connection drops: a new connection
 * does not carry the old requests' interest, so no answer could come.
 *
 * JetStream may keep a pull past our deadline: nats-server 2.9 never
 * answers a no_wait pull that came while the only pending messages were
 * ones it then gave up on (maxDeliver), and keeps it waiting, with no
 * expiry, for the next messages.  Those then come on the consumer's pull
 * subscription when no pull of ours is pending there.  And nats-server
 * 2.9 leaves every pull unanswered while the consumer has MaxAckPending
 * messages out, answering it once a lease is let go, often after our
 * deadline.  Given back, such a message would have used one of its
 * deliveries unseen (with maxDeliver 1, its only one); so this stray is
 * kept and handed to the consumer's next pull, before what JetStream
 * sends that pull.  It is given back after half a lease, using that
 * delivery, unless it was its last: then giving it back would drop it, so
 * it is kept, its lease renewed every half lease, until a pull takes it.
 * So is a message on its last delivery that a pull got but nobody can
 * take now, its worker gone (store_pull_return).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store-ask.h"
#include "store-int.h"
#include "util.h"

/*
 * A pull's deadline: the server's expiry, plus this much.  Short, because
 * nats-server 2.9 leaves a pull unanswered, expiry or not, while its
 * consumer has MaxAckPending events out (an inbox whose maxInFlight
 * leases are all held): the GET then waits this long for nothing.  What
 * JetStream sends for a pull after its deadline is not lost: it is kept
 * for the next pull (see store_req_close).
 */
#define PULL_SLACK_MS		1000
/*
 * Strays kept per consumer at most; the rest are given back, except one
 * on its last delivery.  Those are bounded anyway: each is a lease held,
 * and JetStream hands out at most MaxAckPending (maxInFlight) at once.
 */
#define STRAYS_MAX		256
/*
 * How soon to try again a renewal that could not be sent (disconnected):
 * this, or a quarter of the lease if sooner, so that a retry still falls
 * within the lease.
 */
#define STRAY_RETRY_MS		1000

/* A request waiting for its replies. */
struct store_req {
	uint64_t		 id;		/* the last token of its reply */
	store_reply_cb		 cb;
	void			*arg;
	struct event		 timeout;
	struct store_consumer	*pull;		/* a pull's consumer */
	enum store_pull_kind	 kind;
	struct store_stray_list	 strays;	/* to hand it first */
	struct event		 strays_ev;
	TAILQ_ENTRY(store_req)	 entry;
};
TAILQ_HEAD(req_list, store_req);

static struct {
	struct req_list		 live;
	uint64_t		 next_id;
	int			 peeks;		/* on the worker, even closed */
} rq = { .live = TAILQ_HEAD_INITIALIZER(rq.live) };

/*
 * Free a stray, given back to JetStream first unless quiet (or JetStream
 * cannot be told).
 */
static void
stray_free(struct store_stray *st, int quiet)
{
	if (!quiet && store_conn.connected && !store_conn.closing)
		store_msg_answer(st->m, STORE_NAK, 0);
	natsMsg_Destroy(st->m);
	free(st);
}

/* Whether a message of c's so delivered is on its last delivery. */
static int
last_delivery(const struct store_consumer *c, uint64_t delivered)
{
	return c->max_deliver > 0 && delivered >= (uint64_t)c->max_deliver;
}

/*
 * Whether giving st back would end it: it is on its last delivery.  Once
 * seen so, always so: a reload that raises maxDeliver changes ours before
 * JetStream's (store_check_consumers), and keeping a stray too long costs
 * a lease, where giving it back too early drops it.
 */
static int
stray_last(const struct store_consumer *c, struct store_stray *st)
{
	if (last_delivery(c, st->delivered))
		st->last = 1;
	return st->last;
}

static void	 strays_tick_cb(evutil_socket_t, short, void *);

/*
 * Renew or give back c's strays that waited half a lease since it last
 * started: the in-progress acknowledgement that starts a stray's lease
 * again (when renewed, or when handed out) must reach JetStream well
 * before that lease ends.  A stray that waited a whole lease is only
 * forgotten: JetStream hands it out again by itself, and a late answer
 * could reach that newer delivery.  Then wait for the next one due.
 */
static void
strays_tick(struct store_consumer *c)
{
	struct store_stray	*st, *next;
	long long		 lease = c->ack_wait_s * 1000LL, now = now_ms();
	long long		 age, due, first = -1;
	struct timeval		 tv;

	if (!event_initialized(&c->strays_ev))
		evtimer_assign(&c->strays_ev, store_conn.base, strays_tick_cb,
		    c);
	for (st = TAILQ_FIRST(&c->strays); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		age = now - st->renewed;
		if (age >= lease / 2 && age < lease && stray_last(c, st)) {
			if (store_conn.connected && !store_conn.closing) {
				store_msg_answer(st->m, STORE_PROGRESS, 0);
				st->renewed = now;
				log_debug("pull message kept on its last "
				    "delivery, lease renewed", "consumer=%s",
				    c->name);
			}
		} else if (age >= lease / 2) {
			TAILQ_REMOVE(&c->strays, st, entry);
			c->nstrays--;
			stray_free(st, age >= lease);
			continue;
		}
		due = st->renewed + lease / 2;
		if (due <= now)		/* could not be renewed yet */
			due = now + (lease / 4 < STRAY_RETRY_MS ? lease / 4 :
			    STRAY_RETRY_MS);
		if (first == -1 || due < first)
			first = due;
	}
	if (first == -1) {
		event_del(&c->strays_ev);
		return;
	}
	tv.tv_sec = (first - now) / 1000;
	tv.tv_usec = (first - now) % 1000 * 1000;
	evtimer_add(&c->strays_ev, &tv);
}

/* A stray of the consumer is due: renew it or give it back. */
static void
strays_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	strays_tick(arg);
}

/*
 * Keep a message of c's that came for no pending pull, for its next one;
 * over STRAYS_MAX, give it back unless that would drop it.
 */
static void
stray_keep(struct store_consumer *c, natsMsg *m)
{
	struct store_stray	*st = xcalloc(1, sizeof(*st));
	struct store_lease	 l;

	st->m = m;
	st->renewed = now_ms();
	store_wire_ack_parse(natsMsg_GetReply(m), &l);
	st->delivered = l.delivered;
	if (!stray_last(c, st) && c->nstrays >= STRAYS_MAX) {
		stray_free(st, 0);
		return;
	}
	TAILQ_INSERT_TAIL(&c->strays, st, entry);
	c->nstrays++;
	log_debug("pull message kept for the next pull", "consumer=%s kept=%d",
	    c->name, c->nstrays);
	if (!event_initialized(&c->strays_ev) ||
	    !evtimer_pending(&c->strays_ev, NULL))
		strays_tick(c);
}

/* See store-req.h. */
void
store_pull_return(struct store_consumer *c, struct store_msg *m)
{
	natsMsg	*nm;

	if (c == NULL || !last_delivery(c, m->delivered)) {
		store_msg_give_back(m);
		return;
	}
	nm = m->m;
	free(m);
	/* Its lease started a while ago: again now, as stray_keep counts. */
	store_msg_answer(nm, STORE_PROGRESS, 0);
	stray_keep(c, nm);
}

/* Give back every stray of c (it is going, or the relay stops). */
void
store_req_strays_free(struct store_consumer *c)
{
	struct store_stray	*st;

	while ((st = TAILQ_FIRST(&c->strays)) != NULL) {
		TAILQ_REMOVE(&c->strays, st, entry);
		stray_free(st, now_ms() - st->renewed >=
		    c->ack_wait_s * 1000LL);
	}
	c->nstrays = 0;
	if (event_initialized(&c->strays_ev))
		event_del(&c->strays_ev);
}

/*
 * End a request: off the list, timer off, freed.  Its callback is not
 * called here; late replies to a pull are kept for the next one (see the
 * top of the file), to any other request given back.  Strays it had not
 * handed out yet go back to its consumer, first in line.
 */
void
store_req_close(struct store_req *r, const char *reason)
{
	struct store_stray	*st;

	if (r == NULL)
		return;
	log_debug("request closed", "id=%llu reason=%s",
	    (unsigned long long)r->id, log_q(reason));
	if (r->pull != NULL && r->pull->pull_req[r->kind] == r)
		r->pull->pull_req[r->kind] = NULL;
	while ((st = TAILQ_LAST(&r->strays, store_stray_list)) != NULL) {
		TAILQ_REMOVE(&r->strays, st, entry);
		if (r->pull != NULL) {
			TAILQ_INSERT_HEAD(&r->pull->strays, st, entry);
			r->pull->nstrays++;
		} else
			stray_free(st, 0);
	}
	if (r->pull != NULL && r->pull->nstrays > 0)
		strays_tick(r->pull);
	event_del(&r->strays_ev);
	event_del(&r->timeout);
	TAILQ_REMOVE(&rq.live, r, entry);
	free(r);
}

/* End a request with a status: closed first, then its owner told. */
static void
req_end(struct store_req *r, int status, const char *reason)
{
	store_reply_cb	 cb = r->cb;
	void		*cbarg = r->arg;

	store_req_close(r, reason);
	cb(cbarg, NULL, status);
}

/* A request's time is up. */
static void
req_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	req_end(arg, STORE_REPLY_TIMEOUT, "timed out");
}

/* 1 when requests can be sent now. */
static int
req_possible(void)
{
	return store_conn.nc != NULL && store_conn.connected &&
	    !store_conn.closing && store_polled.replies != NULL;
}

/* Hand a pull its strays, one at a time, until it is done. */
static void
req_strays_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct store_req	*r = arg;
	struct store_stray	*st;
	natsMsg			*m;

	(void)fd;
	(void)ev;
	while ((st = TAILQ_FIRST(&r->strays)) != NULL) {
		TAILQ_REMOVE(&r->strays, st, entry);
		m = st->m;
		free(st);
		/*
		 * Its ack wait ran while it waited: started again, so that
		 * the worker it goes to has the whole lease it is told of.
		 */
		store_msg_answer(m, STORE_PROGRESS, 0);
		if (r->cb(r->arg, store_msg_wrap(m), 0) == 0) {
			store_req_close(r, "answered");
			return;
		}
	}
}

/* A request waiting for its replies to cb, for at most timeout_ms. */
static struct store_req *
req_new(uint64_t id, long long timeout_ms, store_reply_cb cb, void *arg)
{
	struct store_req	*r = xcalloc(1, sizeof(*r));
	struct timeval		 tv;

	r->id = id;
	r->cb = cb;
	r->arg = arg;
	TAILQ_INIT(&r->strays);
	TAILQ_INSERT_TAIL(&rq.live, r, entry);
	evtimer_assign(&r->timeout, store_conn.base, req_timeout_cb, r);
	event_assign(&r->strays_ev, store_conn.base, -1, 0, req_strays_cb, r);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = timeout_ms % 1000 * 1000;
	evtimer_add(&r->timeout, &tv);
	return r;
}

/* Send a request with reply subject reply; replies go to cb. */
static struct store_req *
req_send(const char *subject, const char *reply, uint64_t id,
    const char *data, long long timeout_ms, store_reply_cb cb, void *arg)
{
	natsStatus		 s;

	/* A core publish: it only fills nats.c's buffer, never waits. */
	s = natsConnection_PublishRequestString(store_conn.nc, subject, reply,
	    data);
	if (s != NATS_OK) {
		log_warnx("cannot send JetStream request", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return NULL;
	}
	return req_new(id, timeout_ms, cb, arg);
}

/* The NATS status of a status message (404, 408, ...), or 0. */
static int
msg_status(natsMsg *m)
{
	const char	*status = NULL;

	if (natsMsgHeader_Get(m, "Status", &status) == NATS_OK &&
	    status != NULL)
		return atoi(status);
	return 0;
}

/* The request whose reply subject ends in .<id>, or NULL. */
static struct store_req *
req_by_subject(const char *subj)
{
	const char		*dot = subj != NULL ? strrchr(subj, '.') : NULL;
	struct store_req	*r;
	char			*end;
	uint64_t		 id;

	if (dot == NULL)
		return NULL;
	id = strtoull(dot + 1, &end, 10);
	if (*end != '\0')
		return NULL;
	TAILQ_FOREACH(r, &rq.live, entry)
		if (r->id == id)
			return r;
	return NULL;
}

/* Hand a reply message to its request; it is done when cb says so. */
static void
req_deliver(struct store_req *r, natsMsg *m)
{
	if (r->cb(r->arg, store_msg_wrap(m), 0) == 0)
		store_req_close(r, "answered");
}

/* One reply to a plain request, taken by store_poll: to its callback. */
void
store_req_reply(natsMsg *m)
{
	struct store_req	*r = req_by_subject(natsMsg_GetSubject(m));
	int			 code = msg_status(m);

	if (r == NULL) {
		store_grave_add(m);
		return;
	}
	if (code != 0) {
		store_grave_add(m);
		req_end(r, code, "status");
		return;
	}
	req_deliver(r, m);
}

/*
 * One reply on a pull consumer's subscription of one kind.  A status
 * message (404 no messages, 408 expired, 409 ...) carries the request's
 * own reply subject and ends that request; a message belongs to the
 * request of that kind pending now or, when there is none (it timed out
 * or was closed, and JetStream kept it), is kept for the next pull.
 */
void
store_req_pull_reply(struct store_consumer *c, enum store_pull_kind kind,
    natsMsg *m)
{
	struct store_req	*r;
	int			 code = msg_status(m);

	if (code != 0) {
		r = req_by_subject(natsMsg_GetSubject(m));
		store_grave_add(m);
		if (r != NULL && r->pull == c)
			req_end(r, code, "status");
		return;
	}
	if ((r = c->pull_req[kind]) == NULL) {
		stray_keep(c, m);
		return;
	}
	req_deliver(r, m);
}

/*
 * Fetch from a pull consumer; see store-req.h.  Its strays come first;
 * only what they leave of the batch is asked of JetStream.
 */
struct store_req *
store_pull(struct store_consumer *c, enum store_pull_kind kind, int batch,
    long long wait_ms, long long max_bytes, store_reply_cb cb, void *arg)
{
	struct store_req	*r;
	struct store_stray	*st;
	char			 subj[STORE_SUBJECT_BUF];
	char			 reply[STORE_SUBJECT_BUF], data[128];
	long long		 deadline, left = max_bytes, sz;
	uint64_t		 id;
	int			 k = 0;

	/*
	 * The strays first, as many as the bytes allow (one at least); their
	 * sizes are read only when bytes are counted.
	 */
	if (max_bytes <= 0)
		k = c->nstrays < batch ? c->nstrays : batch;
	else {
		TAILQ_FOREACH(st, &c->strays, entry) {
			if (k == batch)
				break;
			sz = (long long)store_natsmsg_size(st->m);
			if (k > 0 && sz > left)
				break;
			left -= sz;
			k++;
		}
		if (left <= 0)
			batch = k;	/* nothing more of JetStream */
	}
	id = rq.next_id + 1;
	if (c->pull_req[kind] != NULL || !req_possible() ||
	    store_wire_pull_subject(subj, sizeof(subj), c->name) == -1 ||
	    store_wire_pull_body(data, sizeof(data), batch - k,
	    kind == STORE_PULL_WAIT ? wait_ms : 0,
	    max_bytes > 0 ? left : 0) == -1 ||
	    store_wire_pull_reply(reply, sizeof(reply),
	    (const char *)store_conn.inbox, c->idx, (int)kind, id) == -1)
		return NULL;
	rq.next_id = id;
	/* Our own deadline a little after the server's. */
	deadline = (kind == STORE_PULL_WAIT ? wait_ms : 0) + PULL_SLACK_MS;
	if (k < batch)
		r = req_send(subj, reply, id, data, deadline, cb, arg);
	else
		r = req_new(id, deadline, cb, arg);	/* the strays alone */
	if (r == NULL)
		return NULL;
	r->pull = c;
	r->kind = kind;
	c->pull_req[kind] = r;
	for (; k > 0; k--) {
		st = TAILQ_FIRST(&c->strays);
		TAILQ_REMOVE(&c->strays, st, entry);
		c->nstrays--;
		TAILQ_INSERT_TAIL(&r->strays, st, entry);
	}
	/* After this call: its callback never runs inside store_pull. */
	if (!TAILQ_EMPTY(&r->strays))
		event_active(&r->strays_ev, EV_TIMEOUT, 0);
	return r;
}

/* Whether a pull of that kind is pending. */
int
store_pull_pending(const struct store_consumer *c, enum store_pull_kind kind)
{
	return c->pull_req[kind] != NULL;
}

/* Close the consumer's pending pulls; its strays go back to JetStream. */
void
store_pull_close_all(struct store_consumer *c, const char *reason)
{
	int	 k;

	for (k = 0; k < STORE_PULL_KINDS; k++)
		store_req_close(c->pull_req[k], reason);
	store_req_strays_free(c);
}

/* A core request to another instance; see store-ask.h. */
struct store_req *
store_ask(const char *subject, const struct store_header *h, size_t nh,
    const void *data, size_t len, long long timeout_ms, store_reply_cb cb,
    void *arg)
{
	char		 reply[STORE_SUBJECT_BUF];
	natsStatus	 s;
	uint64_t	 id;

	id = rq.next_id + 1;
	if (!req_possible() || store_wire_req_reply(reply, sizeof(reply),
	    (const char *)store_conn.inbox, id) == -1)
		return NULL;
	if ((s = store_core_publish(subject, reply, h, nh, data, len)) !=
	    NATS_OK) {
		log_warnx("cannot send a request to another instance", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return NULL;
	}
	rq.next_id = id;
	return req_new(id, timeout_ms, cb, arg);
}

/* Answer a lease of the consumer called name by its numbers. */
static struct store_req *
lease_answer(const char *name, const struct store_lease *l,
    enum store_verb verb, long long delay_ms, store_reply_cb cb, void *arg)
{
	char		 subj[STORE_SUBJECT_BUF], reply[STORE_SUBJECT_BUF];
	char		 text[STORE_VERB_MAX];
	uint64_t	 id;

	id = rq.next_id + 1;
	if (!req_possible() ||
	    store_wire_ack_subject(subj, sizeof(subj), name, l) == -1 ||
	    store_wire_req_reply(reply, sizeof(reply),
	    (const char *)store_conn.inbox, id) == -1)
		return NULL;
	rq.next_id = id;
	return req_send(subj, reply, id, store_wire_verb(verb, delay_ms, text),
	    STORE_API_WAIT_MS, cb, arg);
}

/* Answer a lease of pull consumer c; see store-req.h. */
struct store_req *
store_lease_answer(struct store_consumer *c, const struct store_lease *l,
    enum store_verb verb, long long delay_ms, store_reply_cb cb, void *arg)
{
	return lease_answer(c->name, l, verb, delay_ms, cb, arg);
}

/* Answer a lease of replay id's consumer; see store-req.h. */
struct store_req *
store_replay_lease_answer(const char *id, const struct store_lease *l,
    enum store_verb verb, long long delay_ms, store_reply_cb cb, void *arg)
{
	char	 name[sizeof(STORE_REPLAY_PREFIX) + STORE_REPLAY_ID_LEN];

	if (strlen(id) != STORE_REPLAY_ID_LEN)
		return NULL;
	snprintf(name, sizeof(name), "%s%s", STORE_REPLAY_PREFIX, id);
	return lease_answer(name, l, verb, delay_ms, cb, arg);
}

/* Ask JetStream about replay id's consumer; see store-req.h. */
struct store_req *
store_replay_info(const char *id, store_reply_cb cb, void *arg)
{
	char		 subj[STORE_SUBJECT_BUF], reply[STORE_SUBJECT_BUF];
	uint64_t	 rid;

	rid = rq.next_id + 1;
	if (strlen(id) != STORE_REPLAY_ID_LEN || !req_possible() ||
	    store_wire_req_reply(reply, sizeof(reply),
	    (const char *)store_conn.inbox, rid) == -1)
		return NULL;
	snprintf(subj, sizeof(subj), "$JS.API.CONSUMER.INFO.%s.%s%s",
	    STORE_WORK, STORE_REPLAY_PREFIX, id);
	rq.next_id = rid;
	return req_send(subj, reply, rid, "", STORE_API_WAIT_MS, cb, arg);
}

/* What the answer to store_replay_info says; see store-req.h. */
int
store_replay_info_found(const struct store_msg *m)
{
	const char	*data;
	size_t		 len;

	data = store_msg_data(m, &len);
	return store_wire_consumer_found(data, len);
}

/* Loop thread: a peek's messages to its owner, unless it was closed. */
static void
peek_done(struct bridge_job *job)
{
	struct store_peek	*p = BRIDGE_CONTAINER(job, struct store_peek,
				    job);
	struct store_msg	*sm[STORE_PEEK_MAX];
	const char		*v;
	int			 i;

	if (p->closed || store_conn.closing) {
		for (i = 0; i < p->n; i++)
			natsMsg_Destroy(p->msgs[i]);
		if (!p->closed)
			p->cb(p->arg, NULL, 0, -1);
	} else {
		for (i = 0; i < p->n; i++) {
			sm[i] = xcalloc(1, sizeof(*sm[i]));
			sm[i]->m = p->msgs[i];
			if (natsMsgHeader_Get(p->msgs[i], "Nats-Sequence",
			    &v) == NATS_OK)
				sm[i]->seq = strtoull(v, NULL, 10);
		}
		p->cb(p->arg, sm, p->n, p->failed ? -1 : 0);
	}
	rq.peeks--;
	free(p->consumer);
	free(p->filter);
	free(p);
}

/* Look at what a pull consumer would hand out next; see store-req.h. */
struct store_peek *
store_peek(struct store_consumer *c, int max, store_peek_cb cb, void *arg)
{
	struct store_peek	*p;

	if (!req_possible() || store_peeks_full())
		return NULL;
	rq.peeks++;
	p = xcalloc(1, sizeof(*p));
	p->consumer = xstrdup(c->name);
	p->filter = xstrdup(c->filter);
	p->max = max < STORE_PEEK_MAX ? max : STORE_PEEK_MAX;
	p->cb = cb;
	p->arg = arg;
	p->job.work = store_admin_peek;
	p->job.done = peek_done;
	bridge_run(&p->job);
	return p;
}

/* See store-req.h. */
int
store_peeks_full(void)
{
	return rq.peeks >= STORE_PEEKS_MAX;
}

/*
 * Forget a peek: the job cannot be stopped on the worker, so it is only
 * marked, and its done function frees what it found.
 */
void
store_peek_close(struct store_peek *p, const char *reason)
{
	if (p == NULL)
		return;
	log_debug("peek closed", "consumer=%s reason=%s", p->consumer,
	    log_q(reason));
	p->closed = 1;
}

/*
 * The connection dropped: no request sent on it will be answered.  End
 * them now rather than at their timeouts, which for a long-poll can be 35
 * seconds away, so that their owners answer or ask again.
 */
void
store_req_fail_all(void)
{
	struct store_req	*r;

	while ((r = TAILQ_FIRST(&rq.live)) != NULL)
		req_end(r, STORE_REPLY_TIMEOUT, "disconnected");
}

/* The plain requests' reply subscription. */
void
store_req_init(void)
{
	char	 subj[STORE_SUBJECT_BUF];

	if (store_wire_req_reply(subj, sizeof(subj),
	    (const char *)store_conn.inbox, 0) == 0)
		store_sub_sync(&store_polled.replies, subj, NULL);
}

/* Shutdown, before the drain (see store_pub_unsubscribe). */
void
store_req_unsubscribe(void)
{
	if (store_polled.replies != NULL)
		natsSubscription_Unsubscribe(store_polled.replies);
}

/* After the loop: requests still pending are forgotten. */
void
store_req_destroy(void)
{
	struct store_req	*r;

	while ((r = TAILQ_FIRST(&rq.live)) != NULL)
		store_req_close(r, "shutdown");
	natsSubscription_Destroy(store_polled.replies);
	store_polled.replies = NULL;
}
