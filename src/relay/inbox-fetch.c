/*
 * inbox-fetch.c: GET /v1/inbox/<name>: the fetch queues, the pump that
 * sends the store's pulls for them, and the answer's envelopes.  Loop
 * thread only.
 *
 * nats.c 3.4 has no asynchronous fetch, so a GET drives the pull protocol
 * itself through store_pull.  JetStream sends a pull request's messages
 * under their own subjects, so the store tells requests apart only by
 * subscription: each inbox has one pull "now" (no_wait) and one "waiting"
 * pending at a time, and the GETs queue here for them.  A long-poll waits
 * in the waiting queue, whose pull asks for one message with the head's
 * remaining wait as its expiry; the message goes to the longest waiter,
 * which then queues for the rest (up to max - 1) without waiting.  Asking
 * for the whole batch with an expiry would keep the request open after
 * the first event, and events arriving for it later would be leased to
 * nobody.
 *
 * An inbox may have replays (SPEC 15) taken up here (replay.c): each has
 * a pull consumer of its own, a source beside the inbox's own consumer,
 * with a "now" queue and pull of its own.  A GET then makes a round of
 * the sources, one at a time, until it has max events: every replay's,
 * in the order they came, then its own consumer's (now, or waiting when
 * it has nothing yet).  Every other GET asks its own consumer first as
 * well, so that new events are not held up behind a long replay, nor a
 * replay behind a steady flow of new events.  A replay's message that it
 * does not hand out (stored after it started; for a redrive, not
 * dropped) is acknowledged at once and never seen; when a full batch had
 * some, the GET asks the same replay again.  A long-poll waits on its own
 * consumer only: a replay's event that becomes available again while it
 * waits (a lease ran out) goes to the next GET.  Peek (peek=true) shows
 * what the inbox's own consumer has: never a replay's events.
 *
 * JetStream answers a "now" pull at once, except that nats-server 2.9
 * keeps one, unanswered, while the consumer has MaxAckPending events out
 * (a replay whose maxInFlight leases are all held): a replay's pull quiet
 * for REPLAY_QUIET_MS is forgotten, what JetStream sends for it later is
 * kept for the next pull (store_req_close), and its GET goes on to the
 * next source instead of waiting out the store's deadline (5 s) while the
 * inbox's own consumer may have events.
 *
 * An answer holds at most FETCH_BYTES_MAX bytes of stored events (one
 * event at least), whatever max asked: 256 events of 1 MiB would be some
 * 340 MiB of JSON, more than a client can be expected to read (treaty
 * work's limit is 64 MiB; base64 and JSON escapes grow the bytes by up to
 * six times).  The pulls ask JetStream for the bytes left (max_bytes): a
 * message past them stays in the consumer, undelivered, for the next GET,
 * rather than being leased and given back, which would count a delivery.
 *
 * A struct fetch lives from the GET to its answer; fetch_close is its one
 * teardown, and cancels whatever the fetch still waits for (its place in
 * a queue, a peek on the worker, the confirmations of a destructive
 * fetch's acknowledgements).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <yajl/yajl_gen.h>

#include "config.h"
#include "query.h"
#include "reply.h"
#include "inbox-int.h"
#include "inbox-lease.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "source.h"
#include "substate.h"
#include "util.h"

#define PUMP_RETRY_MS		500	/* long-polls, while NATS is away */
#define WAIT_PULL_MIN_MS	100	/* the shortest expiry asked for */
#define REPLAY_QUIET_MS		250	/* a replay's "now" pull, unanswered */
#define FETCH_BYTES_MAX		(8LL * 1024 * 1024)	/* stored, per answer */

/* A destructive fetch's acknowledgement of one of its events. */
struct take {
	struct fetch		*f;
	int			 i;		/* in f->msgs */
	struct store_req	*r;		/* pending confirmation */
};

/* Take a fetch out of its queue (a long-poll's wait is then over). */
static void
fetch_unqueue(struct fetch *f)
{
	if (f->q == FETCH_UNQUEUED)
		return;
	if (f->q == FETCH_HAND)
		ohand_fetch_unqueue(f);
	else
		TAILQ_REMOVE(&f->src->queue[f->q], f, qentry);
	if (f->q == STORE_PULL_WAIT || f->q == FETCH_HAND)
		metrics_inbox_waiting(f->s->idx, -1);
	f->q = FETCH_UNQUEUED;
	f->src = NULL;
	event_del(&f->deadline);
}

/* A long-poll waits, until its wait_end at most. */
static void
fetch_wait_until(struct fetch *f)
{
	struct timeval	 tv;
	long long	 left;

	metrics_inbox_waiting(f->s->idx, 1);
	left = f->wait_end - now_ms();
	if (left < 0)
		left = 0;
	tv.tv_sec = left / 1000;
	tv.tv_usec = left % 1000 * 1000;
	evtimer_add(&f->deadline, &tv);
}

/*
 * Put a fetch at the end of a source's queue, and have the pulls sent.  A
 * long-poll waits there until its wait_end.
 */
static void
fetch_queue(struct fetch *f, struct isrc *src, enum store_pull_kind k)
{
	fetch_unqueue(f);
	f->src = src;
	f->q = (int)k;
	TAILQ_INSERT_TAIL(&src->queue[k], f, qentry);
	if (k == STORE_PULL_WAIT)
		fetch_wait_until(f);
	event_active(&f->s->pump, EV_TIMEOUT, 0);
}

/* See inbox-int.h. */
void
inbox_fetch_unqueue(struct fetch *f)
{
	fetch_unqueue(f);
}

/* See inbox-int.h. */
void
inbox_fetch_wait(struct fetch *f, struct fetch_list *waiters)
{
	fetch_unqueue(f);
	f->q = FETCH_HAND;
	TAILQ_INSERT_TAIL(waiters, f, qentry);
	fetch_wait_until(f);
}

/* Add an event from src (NULL: its own consumer) to what a fetch got. */
static void
fetch_add(struct fetch *f, const struct isrc *src, struct store_msg *m)
{
	f->msgs[f->n].m = m;
	f->msgs[f->n].from = src != NULL ? src->from : f->s->own.from;
	store_msg_lease(m, &f->msgs[f->n].l);
	f->n++;
	f->bytes += store_msg_size(m);
}

/* See inbox-int.h. */
void
inbox_fetch_lend(struct fetch *f, const struct source *from,
    struct store_msg *m, const struct store_lease *l)
{
	fetch_add(f, NULL, m);
	f->msgs[f->n - 1].from = *from;
	f->msgs[f->n - 1].l = *l;
	f->msgs[f->n - 1].lent = 1;
}


/* No room for more: the count asked for, or the answer's bytes. */
static int
fetch_full(const struct fetch *f)
{
	return f->n >= f->max || f->bytes >= FETCH_BYTES_MAX;
}

/* See inbox-int.h. */
int
inbox_fetch_full(const struct fetch *f)
{
	return fetch_full(f);
}

/*
 * An event of s's that no GET can take now (its worker left, or no GET
 * waits): back to JetStream, or kept by its consumer if that would drop
 * it (store_pull_return).  A replay's that has left: given back.
 */
static void
fetch_return(struct isub *s, const struct fetch_msg *fm)
{
	const struct source	*from = &fm->from;
	struct store_msg	*m = fm->m;
	struct isrc		*src;

	if (fm->lent) {
		ohand_lent_back(s, m, 0);
		return;
	}
	if (source_id(from) == NULL) {
		store_pull_return(s->own.consumer, m);
		return;
	}
	TAILQ_FOREACH(src, &s->replays, entry)
		if (strcmp(src->from.id, from->id) == 0) {
			store_pull_return(src->consumer, m);
			return;
		}
	store_msg_give_back(m);
}

/*
 * End a fetch, the one way, once its request is answered: off its queue
 * and the list, what it waits for cancelled, its messages freed
 * (JetStream keeps their leases), the reason logged.
 */
static void
fetch_close(struct fetch *f, const char *reason)
{
	int	 i;

	log_debug("fetch closed", "inbox=%s events=%d reason=%s",
	    f->s->cfg->name, f->n, log_q(reason));
	fetch_unqueue(f);
	store_peek_close(f->peek, reason);
	if (f->takes != NULL)
		for (i = 0; i < f->n; i++) {
			if (f->takes[i].r == NULL)
				continue;
			store_req_close(f->takes[i].r, reason);
			/* Unconfirmed: the hand's again (or JetStream's). */
			if (f->msgs[i].lent) {
				if (ohand_lent_back(f->s, f->msgs[i].m, 0) ==
				    -1)
					store_msg_give_back(f->msgs[i].m);
				f->msgs[i].lent = 0;
				f->msgs[i].m = NULL;
			}
		}
	for (i = 0; i < f->n; i++)
		if (!f->msgs[i].lent)
			store_msg_free(f->msgs[i].m);
	TAILQ_REMOVE(&ib.fetches, f, entry);
	inbox_sub_unref(f->s);
	free(f->takes);
	free(f->msgs);
	free(f);
}

/* Answer a fetch with its envelopes, and close it. */
static void
fetch_answer(struct fetch *f)
{
	struct isub		*s = f->s;
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	size_t			 len;
	struct store_lease	 l;
	struct evbuffer		*b;
	int64_t			 t = (int64_t)time(NULL);
	int			 i, sent = 0, redelivered = 0;

	yajl_gen_map_open(g);
	json_gen_str(g, "leaseSeconds");
	yajl_gen_integer(g, f->lease ? ib.cfg->lease_seconds : 0);
	json_gen_str(g, "envelopes");
	yajl_gen_array_open(g);
	for (i = 0; i < f->n; i++) {
		if (f->msgs[i].m == NULL)
			continue;	/* destructive, not confirmed */
		if (inbox_envelope(g, f, &f->msgs[i], t, &l) == -1)
			continue;
		sent++;
		if (l.delivered > 1)
			redelivered++;
	}
	yajl_gen_array_close(g);
	if (f->paused) {
		json_gen_str(g, "paused");
		yajl_gen_bool(g, 1);
	}
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	b = evbuffer_new();
	evbuffer_add(b, buf, len);
	yajl_gen_free(g);
	if (!f->peeking) {
		metrics_inbox(s->idx, f->lease ? INBOX_LEASED : INBOX_TAKEN,
		    (unsigned)sent);
		metrics_inbox(s->idx, INBOX_REDELIVERED,
		    (unsigned)redelivered);
	}
	iresp_json(&f->r, 200, b);
	evbuffer_free(b);
	fetch_close(f, "answered");
}

/* A destructive fetch: JetStream confirmed (or not) one acknowledgement. */
static int
take_cb(void *arg, struct store_msg *m, int status)
{
	struct take		*tk = arg;
	struct fetch		*f = tk->f;
	struct fetch_msg	*fm = &f->msgs[tk->i];
	struct store_lease	 l;

	tk->r = NULL;
	if (fm->lent) {
		/*
		 * The hand's (inbox-order.c): taken, the message is the
		 * fetch's now; unconfirmed, the hand has it again.
		 */
		if (ohand_lent_back(f->s, fm->m, m != NULL) == -1 && m == NULL)
			store_msg_give_back(fm->m);	/* the hand is gone */
		fm->lent = 0;
		if (m == NULL)
			fm->m = NULL;
		else
			source_outcome(&fm->from, 1);
		if (m != NULL)
			store_msg_free(m);
		goto out;
	}
	if (m != NULL)
		store_msg_free(m);
	if (m == NULL && status != 0) {
		/* Unconfirmed: give it back rather than hand it out. */
		store_msg_give_back(fm->m);
		fm->m = NULL;
		goto out;
	}
	/* Gone: an earlier lease's receipt is 404 from now on. */
	store_msg_lease(fm->m, &l);
	inbox_leases_handout(ib.leases, f->s->idx, fm->from.id, &l,
	    INBOX_LEASE_ACKED, now_ms());
	source_outcome(&fm->from, 1);
out:
	if (--f->acks == 0)
		fetch_answer(f);
	return 0;
}

/*
 * A fetch has what JetStream gave it.  With a lease, answer.  Destructive:
 * first acknowledge each event and wait for JetStream to confirm, so that
 * what is answered is gone from the inbox.
 */
static void
fetch_done(struct fetch *f)
{
	struct store_lease	 l;
	int			 i, unsent = 0;

	fetch_unqueue(f);
	if (iresp_gone(&f->r)) {
		/* The client left: give everything back at once. */
		for (i = 0; i < f->n && !f->peeking; i++) {
			fetch_return(f->s, &f->msgs[i]);
			f->msgs[i].m = NULL;
		}
		iresp_gone_close(&f->r);
		fetch_close(f, "client gone");
		return;
	}
	if (f->lease || f->n == 0 || f->peeking) {
		fetch_answer(f);
		return;
	}
	/* The store never calls take_cb from inside store_lease_answer. */
	f->takes = xcalloc((size_t)f->n, sizeof(*f->takes));
	for (i = 0; i < f->n; i++) {
		f->takes[i].f = f;
		f->takes[i].i = i;
		store_msg_lease(f->msgs[i].m, &l);
		if (source_id(&f->msgs[i].from) != NULL)
			f->takes[i].r = store_replay_lease_answer(
			    f->msgs[i].from.id, &l, STORE_ACK, 0, take_cb,
			    &f->takes[i]);
		else
			f->takes[i].r = store_lease_answer(f->s->own.consumer,
			    &l, STORE_ACK, 0, take_cb, &f->takes[i]);
	}
	/* What could not be sent counts as unconfirmed: given back. */
	for (i = 0; i < f->n; i++)
		if (f->takes[i].r == NULL) {
			if (f->msgs[i].lent) {
				if (ohand_lent_back(f->s, f->msgs[i].m, 0) == -1)
					store_msg_give_back(f->msgs[i].m);
				f->msgs[i].lent = 0;
			} else
				store_msg_give_back(f->msgs[i].m);
			f->msgs[i].m = NULL;
			unsent++;
		}
	f->acks = f->n - unsent;
	if (f->acks == 0)
		fetch_answer(f);
}

/* See inbox-int.h. */
void
inbox_fetch_done(struct fetch *f)
{
	fetch_done(f);
}

/*
 * On to a fetch's next source, or its answer (see the top of the file):
 * after its start, or when the source it was at has nothing more now.
 */
static void
fetch_next(struct fetch *f)
{
	struct isub	*s = f->s;
	struct isrc	*next = NULL;
	int		 wait;

	if (fetch_full(f) || f->stage == FETCH_OWN) {
		fetch_done(f);
		return;
	}
	if (f->stage == FETCH_START && !TAILQ_EMPTY(&s->replays) &&
	    s->turn++ % 2 == 1) {
		f->stage = FETCH_OWN_FIRST;
		f->own_asked = 1;
		fetch_queue(f, &s->own, STORE_PULL_NOW);
		return;
	}
	if (f->stage == FETCH_REPLAYS)
		next = TAILQ_NEXT(f->src, entry);
	else
		next = TAILQ_FIRST(&s->replays);
	if (next != NULL) {
		f->stage = FETCH_REPLAYS;
		fetch_queue(f, next, STORE_PULL_NOW);
		return;
	}
	/* An ordered inbox's own events come from its hand alone. */
	if (s->hand != NULL) {
		fetch_done(f);
		return;
	}
	wait = f->n == 0 && !ib.stopping && f->wait_end > now_ms();
	if (f->own_asked && !wait) {
		fetch_done(f);
		return;
	}
	f->stage = FETCH_OWN;
	fetch_queue(f, &s->own, wait ? STORE_PULL_WAIT : STORE_PULL_NOW);
}

/* A source's "now" pull is over (answered, or closed). */
static void
src_quiet_off(struct isrc *src)
{
	event_del(&src->quiet);
	src->req = NULL;
}

/* A replay's "now" pull may now be quiet for REPLAY_QUIET_MS. */
static void
src_quiet_on(struct isrc *src)
{
	struct timeval	 tv = { 0, REPLAY_QUIET_MS * 1000 };

	if (source_id(&src->from) != NULL)
		evtimer_add(&src->quiet, &tv);
}

/* A reply to a source's "now" pull: for the head of that queue. */
static int
now_cb(void *arg, struct store_msg *m, int status)
{
	struct isrc	*src = arg;
	struct isub	*s = src->s;
	struct fetch	*f = TAILQ_FIRST(&src->queue[STORE_PULL_NOW]);

	(void)status;
	/* After this callback (a removed s is freed from the loop, later). */
	event_active(&s->pump, EV_TIMEOUT, 0);
	if (m == NULL) {
		/* 404, 408, 409, timeout: nothing more now. */
		src_quiet_off(src);
		if (f != NULL)
			fetch_next(f);
		return 0;
	}
	src->got++;
	if (src->want != NULL && !src->want(src->want_arg, store_msg_seq(m)))
		store_msg_ack(m);	/* not the replay's: never seen */
	else if (f == NULL || fetch_full(f))
		store_pull_return(src->consumer, m);
	else
		fetch_add(f, src, m);
	if (src->got < src->asked) {
		src_quiet_on(src);	/* the rest, or JetStream keeps it */
		return 1;
	}
	src_quiet_off(src);
	/*
	 * The batch is complete: JetStream sends no status after that.  A
	 * fetch with room left (its replay did not want some) asks again.
	 */
	if (f != NULL && fetch_full(f))
		fetch_next(f);
	return 0;
}

/*
 * A replay's "now" pull was quiet for REPLAY_QUIET_MS (see the top of the
 * file): forgotten, and the GET at the head of the queue goes on.
 */
static void
src_quiet_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct isrc	*src = arg;
	struct fetch	*f = TAILQ_FIRST(&src->queue[STORE_PULL_NOW]);

	(void)fd;
	(void)ev;
	log_debug("replay pull unanswered; on to the next source",
	    "inbox=%s replay=%s", src->s->cfg->name, src->from.id);
	store_req_close(src->req, "unanswered");
	src->req = NULL;
	event_active(&src->s->pump, EV_TIMEOUT, 0);
	if (f != NULL)
		fetch_next(f);
}

/* A reply to the inbox's waiting pull: for the longest waiter. */
static int
wait_cb(void *arg, struct store_msg *m, int status)
{
	struct isub	*s = arg;
	struct fetch	*f = TAILQ_FIRST(&s->own.queue[STORE_PULL_WAIT]);

	(void)status;
	/* It asked for one: done either way; the pump sends the next. */
	event_active(&s->pump, EV_TIMEOUT, 0);
	if (m == NULL)
		return 0;
	/* Waiters whose clients left get nothing (and are let go). */
	while (f != NULL && iresp_gone(&f->r)) {
		fetch_done(f);
		f = TAILQ_FIRST(&s->own.queue[STORE_PULL_WAIT]);
	}
	if (f == NULL) {
		store_pull_return(s->own.consumer, m);
		return 0;
	}
	fetch_add(f, &s->own, m);
	if (!fetch_full(f) && !ib.stopping)	/* the rest, without waiting */
		fetch_queue(f, &s->own, STORE_PULL_NOW);
	else
		fetch_done(f);
	return 0;
}

/*
 * Send the "now" pull a source's queue needs: its head asks for what it
 * still lacks.  -1 when it could not be sent (NATS is not connected): the
 * head is answered with what it has, or 503 when nothing.
 */
static int
pump_now(struct isrc *src)
{
	struct fetch	*f = TAILQ_FIRST(&src->queue[STORE_PULL_NOW]);
	long long	 left;

	if (f == NULL || store_pull_pending(src->consumer, STORE_PULL_NOW))
		return 0;
	src->asked = f->max - f->n;
	src->got = 0;
	left = FETCH_BYTES_MAX - (long long)f->bytes;
	if ((src->req = store_pull(src->consumer, STORE_PULL_NOW, src->asked,
	    0, left > 0 ? left : 1, now_cb, src)) != NULL) {
		src_quiet_on(src);
		return 0;
	}
	if (f->n == 0) {
		inbox_reject(&f->r, 503, "inbox_unavailable",
		    "JetStream is not available; try again", f->s->cfg->name);
		fetch_close(f, "not connected");
	} else
		fetch_done(f);
	return -1;
}

/*
 * Send the pulls the queues need: the head of each "now" queue asks for
 * what it still lacks; the head of the waiting queue for one message
 * within its remaining wait.
 */
static void
fetch_pump_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct isub	*s = arg;
	struct isrc	*src;
	struct fetch	*f;
	struct timeval	 tv = { 0, PUMP_RETRY_MS * 1000 };
	long long	 left;

	(void)fd;
	(void)ev;
	/* pump_now may end fetches, never a source. */
	if (pump_now(&s->own) == -1) {
		/* The next one in the queue, at once. */
		event_active(&s->pump, EV_TIMEOUT, 0);
		return;
	}
	TAILQ_FOREACH(src, &s->replays, entry)
		if (pump_now(src) == -1) {
			event_active(&s->pump, EV_TIMEOUT, 0);
			return;
		}
	if (!store_pull_pending(s->own.consumer, STORE_PULL_WAIT) &&
	    (f = TAILQ_FIRST(&s->own.queue[STORE_PULL_WAIT])) != NULL) {
		left = f->wait_end - now_ms();
		/* Not connected: ask again soon; deadlines still apply. */
		if (store_pull(s->own.consumer, STORE_PULL_WAIT, 1,
		    left > WAIT_PULL_MIN_MS ? left : WAIT_PULL_MIN_MS, 0,
		    wait_cb, s) == NULL)
			event_add(&s->pump, &tv);
	}
}

/* What a peek found. */
static void
peek_cb(void *arg, struct store_msg **msgs, int n, int result)
{
	struct fetch	*f = arg;
	int		 i;

	f->peek = NULL;
	for (i = 0; i < n; i++)
		fetch_add(f, NULL, msgs[i]);
	if (result == -1 && n == 0) {
		inbox_reject(&f->r, 503, "inbox_unavailable", "JetStream did "
		    "not answer; try again", f->s->cfg->name);
		fetch_close(f, "peek failed");
		return;
	}
	fetch_answer(f);
}

/* A long-poll's wait is over without an event. */
static void
fetch_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	fetch_done(arg);
}

/* Start a GET whose parameters inbox.c checked. */
void
inbox_fetch(struct iresp *r, struct isub *s, int max, int lease,
    int peek, long long wait_ms, const char *key)
{
	struct fetch	*f = xcalloc(1, sizeof(*f));

	snprintf(f->key, sizeof(f->key), "%s", key);
	f->r = *r;
	f->s = s;
	s->refs++;
	f->q = FETCH_UNQUEUED;
	f->max = max;
	f->msgs = xcalloc((size_t)max, sizeof(*f->msgs));
	f->lease = lease;
	evtimer_assign(&f->deadline, ib.base, fetch_deadline_cb, f);
	TAILQ_INSERT_TAIL(&ib.fetches, f, entry);
	if (wait_ms > 0)
		f->wait_end = now_ms() + wait_ms;
	if (s->hand != NULL) {
		/* Ordered: the hand's events (inbox-order.c). */
		f->peeking = peek;
		f->lease = lease && !peek;
		if (!peek && substate_get(s->cfg->name) != SUBSTATE_ACTIVE) {
			f->paused = 1;
			fetch_answer(f);
		} else
			ohand_fetch(f);
	} else if (peek) {
		/* Looks only: no lease taken, none extended. */
		f->peeking = 1;
		f->lease = 0;
		if (store_peeks_full()) {
			inbox_reject(&f->r, 503, "inbox_unavailable", "too many "
			    "peeks under way; try again", s->cfg->name);
			fetch_close(f, "peeks full");
		} else if ((f->peek = store_peek(s->own.consumer, f->max,
		    peek_cb, f)) == NULL) {
			inbox_reject(&f->r, 503, "inbox_unavailable", "JetStream "
			    "is not available; try again", s->cfg->name);
			fetch_close(f, "not connected");
		}
	} else if (substate_get(s->cfg->name) != SUBSTATE_ACTIVE) {
		/* Paused (SPEC 17): no lease, at once, and it says why. */
		f->paused = 1;
		fetch_answer(f);
	} else {
		f->stage = FETCH_START;
		fetch_next(f);
	}
}

/* See inbox-int.h. */
void
inbox_fetch_states(void)
{
	struct fetch	*f, *next;

	for (f = TAILQ_FIRST(&ib.fetches); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (f->peeking || (f->q != STORE_PULL_WAIT &&
		    f->q != FETCH_HAND) || f->n > 0 ||
		    substate_get(f->s->cfg->name) == SUBSTATE_ACTIVE)
			continue;
		fetch_unqueue(f);
		f->paused = 1;
		fetch_answer(f);
	}
}

/* A source's queues. */
static void
isrc_init(struct isrc *src, struct isub *s, struct store_consumer *c)
{
	src->s = s;
	src->consumer = c;
	evtimer_assign(&src->quiet, ib.base, src_quiet_cb, src);
	TAILQ_INIT(&src->queue[STORE_PULL_NOW]);
	TAILQ_INIT(&src->queue[STORE_PULL_WAIT]);
}

/* The inbox's own source (its consumer c) and pump event. */
void
inbox_fetch_pump_init(struct isub *s, struct store_consumer *c)
{
	isrc_init(&s->own, s, c);
	TAILQ_INIT(&s->replays);
	event_assign(&s->pump, ib.base, -1, 0, fetch_pump_cb, s);
}

/* A replay's consumer c becomes a source of s; see inbox_source_add. */
void
inbox_fetch_source_add(struct isub *s, const struct source *from,
    struct store_consumer *c, int (*want)(void *, uint64_t), void *arg)
{
	struct isrc	*src = xcalloc(1, sizeof(*src));

	isrc_init(src, s, c);
	src->from = *from;
	src->want = want;
	src->want_arg = arg;
	if (TAILQ_EMPTY(&s->replays))
		s->turn = 0;
	TAILQ_INSERT_TAIL(&s->replays, src, entry);
	ohand_source_add(s, src);
}

/*
 * A replay's source leaves s: its pull is closed (late messages go back
 * to JetStream) and the GETs queued at it go on to the next source.
 */
void
inbox_fetch_source_remove(struct isub *s, struct isrc *src)
{
	struct fetch	*f;

	/* A GET moved on may be answered: s must outlive the loop. */
	s->refs++;
	/* The hand's part first: its pull is among those closed here. */
	ohand_source_remove(s, src);
	store_pull_close_all(src->consumer, "replay left");
	src_quiet_off(src);
	while ((f = TAILQ_FIRST(&src->queue[STORE_PULL_NOW])) != NULL)
		fetch_next(f);
	TAILQ_REMOVE(&s->replays, src, entry);
	free(src);
	event_active(&s->pump, EV_TIMEOUT, 0);
	inbox_sub_unref(s);
}

/* See inbox-int.h. */
void
inbox_fetch_ordered(struct isub *s)
{
	struct isrc	*src;
	struct fetch	*f;
	int		 k;

	/* fetch_done may end fetches, never a source or s (s->refs). */
	s->refs++;
	for (src = &s->own; src != NULL; src = src == &s->own ?
	    TAILQ_FIRST(&s->replays) : TAILQ_NEXT(src, entry)) {
		for (k = 0; k < STORE_PULL_KINDS; k++)
			while ((f = TAILQ_FIRST(&src->queue[k])) != NULL)
				fetch_done(f);
		store_pull_close_all(src->consumer, "made ordered");
		src_quiet_off(src);
	}
	inbox_sub_unref(s);
}

/* Free the replays' sources of s, which no fetch uses any more. */
void
inbox_fetch_sources_free(struct isub *s)
{
	struct isrc	*src;

	while ((src = TAILQ_FIRST(&s->replays)) != NULL) {
		store_pull_close_all(src->consumer, "inbox gone");
		src_quiet_off(src);
		TAILQ_REMOVE(&s->replays, src, entry);
		free(src);
	}
}

/* Shutting down: answer the long-polls now with what they have. */
void
inbox_fetch_stop(void)
{
	struct fetch	*f, *next;

	/* fetch_done may end f (and free a removed inbox), no other. */
	for (f = TAILQ_FIRST(&ib.fetches); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (f->q == STORE_PULL_WAIT)
			fetch_done(f);
	}
}

/*
 * The grace period is over: answer 503 to every fetch still waiting, and
 * end the pulls in flight (their late messages go back to JetStream).
 */
void
inbox_fetch_close_all(void)
{
	struct fetch	*f;
	struct isub	*s;
	struct isrc	*src;

	/* A removed inbox is freed with its last fetch. */
	while ((f = TAILQ_FIRST(&ib.fetches)) != NULL) {
		iresp_error(&f->r, 503, "inbox_unavailable",
		    "the relay is shutting down");
		fetch_close(f, "shutting down");
	}
	TAILQ_FOREACH(s, &ib.subs, entry) {
		ohand_close_pulls(s);
		store_pull_close_all(s->own.consumer, "shutting down");
		TAILQ_FOREACH(src, &s->replays, entry) {
			store_pull_close_all(src->consumer, "shutting down");
			src_quiet_off(src);
		}
		event_del(&s->pump);
	}
}

/* Fetches waiting for JetStream. */
int
inbox_fetch_count(void)
{
	struct fetch	*f;
	int		 n = 0;

	TAILQ_FOREACH(f, &ib.fetches, entry)
		n++;
	return n;
}
