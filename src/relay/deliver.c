/*
 * deliver.c: push delivery (SPEC 3): the deliveries; the subscribers
 * they belong to, and what a reload does to them, are deliver-sub.c's
 * (deliver-int.h, what the two share).  Loop thread only.
 *
 * Delivery is a pipeline (docs/DESIGN.md, "The delivery pipeline"):
 *
 *   source --> gates --> delivery (resolve, sign, POST) --> outcome
 *                                                             |
 *   the source's ledger <-------------------------------------+
 *
 * A message comes from a source (source.h): the subscriber's own
 * consumer, or a replay's, which replay.c hands down with
 * deliver_source_msg.  It becomes one struct delivery, carrying a copy of
 * its source (which consumer, its max_deliver), that passes the gates
 * (gate.h: the window today) in their order before its POST, and whose
 * outcome goes to JetStream and, for a replay's, to the ledger
 * (source_outcome).  Nothing here calls up into replay.c: what a replay
 * needs of its deliveries is in the ledger, below both.
 *
 * A delivery is a small state machine (delivery_set_state):
 *
 * [WAITING ->] IDLE -> RESOLVING -> IDLE -> SENDING -> IDLE -> closed
 *                                                      \
 *                                             DROPPING -> IDLE -> closed
 *
 * WAITING is a place in the queue of a gate (the window, below),
 * RESOLVING waits for resolve.c (bounded DNS, the refusal list, the pin
 * cache), SENDING for outbound.c (the signed POST to the pinned addresses,
 * the next one tried when a connect fails), DROPPING for audit.c (the drop
 * record stored in AUDIT).  The state says which of those is pending, so
 * delivery_close, the one teardown, knows what to cancel.  Before closing,
 * the delivery tells JetStream what happened:
 *
 *   2xx                                  ack
 *   408, 429, 5xx, 3xx, network, timeout,
 *   refused address, DNS failure          nak with the backoff delay (or
 *                                         Retry-After on 429/503), until
 *                                         maxDeliver; then as below
 *   other 4xx, not a valid stored event,
 *   maxDeliver used up                    AUDIT record, then a plain term
 *
 * While a delivery runs, "in progress" goes to JetStream every
 * progress_seconds so the ack wait does not expire under it.  At most
 * maxInFlight messages of a subscriber are unacknowledged at once
 * (JetStream's MaxAckPending, across all relay instances), so a slow or
 * dead subscriber cannot hold up another.
 *
 * A replay's consumer has its own MaxAckPending (replay.c), so that new
 * events keep flowing beside it; JetStream alone would then let a
 * subscriber have twice maxInFlight requests at once.  So the instance
 * also keeps a window per subscriber, the first gate (gate-window.c): at
 * most maxInFlight of its deliveries, its own and its replays', between
 * the start and the answer of a POST; the others wait in arrival order,
 * telling JetStream every progress_seconds that they are under way.  A
 * delivery is admitted by the gates (gate_admit) before its address is
 * looked up, leaves them (gate_done) at its answer or its end, and one
 * that waits is resumed from the loop (dl.pump, gate_resume).  A new
 * gate is a file and a line in gate.c's list, never a case in here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/util.h>

#include "treaty.h"
#include "attempts.h"
#include "audit.h"
#include "config.h"
#include "deliver.h"
#include "deliver-int.h"
#include "gate.h"
#include "log.h"
#include "metrics.h"
#include "outbound.h"
#include "resolve.h"
#include "source.h"
#include "store-msg.h"
#include "store-sub.h"
#include "store-wire.h"
#include "substate.h"
#include "util.h"

#define PIN_CACHE_MS		(10 * 60 * 1000)
#define MAX_HEADERS		80	/* stored ce-* headers forwarded */
#define OWN_HEADERS		8	/* ours: the attempt, the probe, the
					   signature, Standard Webhooks' three,
					   traceparent, tracestate */
/*
 * The attempt's number for the receiver, JetStream's delivery count (1 on
 * the first try): a receiver can tell a retry, and how many it has had,
 * without keeping state.  Not signed: it says nothing about the event.
 */
#define ATTEMPT_HEADER		"x-treaty-attempt"
/*
 * On a tripped subscriber's probe (SPEC 17), its number: the breaker's
 * own try, not counted by JetStream (x-treaty-attempt stays the event's).
 */
#define PROBE_HEADER		"x-treaty-probe"

static const char *const delivery_state_names[] = {
	"waiting", "ordered", "retrying", "idle", "resolving", "sending",
	"dropping"
};

struct hdrs {
	struct outbound_header	 h[MAX_HEADERS];
	size_t			 n;
};

struct deliver_state dl = {
	.subs = TAILQ_HEAD_INITIALIZER(dl.subs),
	.gone = TAILQ_HEAD_INITIALIZER(dl.gone)
};

static void	delivery_begin(struct delivery *d);

/* Move a delivery to state s. */
void
delivery_set_state(struct delivery *d, enum delivery_state s)
{
	log_debug("delivery state", "sub=%s id=%s from=%s to=%s",
	    d->s->cfg->name, log_q(d->id), delivery_state_names[d->state],
	    delivery_state_names[s]);
	d->state = s;
}

/* " trace=<id>" for a delivery's log lines, or "" (SPEC 17). */
static const char *
delivery_trace(const struct delivery *d)
{
	static char	 buf[sizeof(" trace=") + TRACE_ID_HEX];

	if (!d->traced)
		return "";
	snprintf(buf, sizeof(buf), " trace=%s", d->trace.id);
	return buf;
}

/*
 * This attempt into ATTEMPTS (SPEC 17): answered (status, ms), or not
 * (status 0 and error; ms -1 when nothing was sent).
 */
static void
delivery_attempted(const struct delivery *d, int status, const char *error,
    long long ms)
{
	struct attempt	 a;

	a.subscriber = d->s->cfg->name;
	a.event_id = d->id;
	a.sequence = d->m != NULL ? store_msg_seq(d->m) : 0;
	a.attempt = d->attempt;
	a.probe = d->gp.probe;
	a.replay = source_id(&d->src);
	a.trace = d->traced ? d->trace.id : NULL;
	a.time_ns = d->started_ns;
	a.status = status;
	a.error = error;
	a.ms = ms;
	attempts_record(&a);
}

/*
 * End a delivery, the one way: what its state waits for is cancelled, the
 * timer stopped, a message JetStream was not told about is let go (it is
 * redelivered after the ack wait), the counters and lists updated, and
 * the reason logged.
 */
void
delivery_close(struct delivery *d, const char *reason)
{
	switch (d->state) {
	case DS_RESOLVING:
		resolve_cancel(d->op.rr);
		break;
	case DS_SENDING:
		outbound_cancel(d->op.out);
		break;
	case DS_DROPPING:
		audit_drop_close(d->op.ad, reason);
		break;
	case DS_RETRYING:
		evtimer_del(&d->retry);
		break;
	case DS_WAITING:		/* gate_done takes it out */
	case DS_ORDERED:		/* dorder_leave takes it out */
	case DS_IDLE:
		break;
	}
	/* Out of the gates; one that opens resumes the next from the loop. */
	gate_done(&d->s->gates, &d->gp, GATE_ENDED);
	/* Out of its key (ordered): the next of it goes on from the loop. */
	dorder_leave(d);
	/* A probe ended unsent (a stop, given back): the lease goes. */
	if (d->gp.probe)
		substate_probe_done(d->s->cfg->name, 0);
	log_debug("delivery closed", "sub=%s id=%s state=%s reason=%s",
	    d->s->cfg->name, log_q(d->id), delivery_state_names[d->state],
	    log_q(reason));
	event_del(&d->progress);
	store_msg_free(d->m);
	TAILQ_REMOVE(&d->s->live, d, entry);
	dl.in_flight--;
	metrics_in_flight(d->s->idx, -1);
	dtarget_release(d->t);
	dsign_release(d->sign);
	if (d->s->consumer == NULL && TAILQ_EMPTY(&d->s->live)) {
		/* The last delivery of a removed subscriber. */
		TAILQ_REMOVE(&dl.gone, d->s, entry);
		dsub_free(d->s);
	}
	free(d->id);
	free(d->source);
	free(d->tracestate);
	free(d);
}

/* The drop record is in AUDIT (or the relay stops): terminate the event. */
static void
deliver_dropped_cb(void *arg, int stored)
{
	struct delivery	*d = arg;

	delivery_set_state(d, DS_IDLE);
	if (!stored) {
		delivery_close(d, "drop not recorded: shutting down");
		return;
	}
	dorder_answered(d);
	store_msg_term(d->m);
	d->m = NULL;
	source_outcome(&d->src, 0);
	delivery_close(d, "dropped");
}

/*
 * The event will never reach this subscriber: log it, count it, record it
 * in AUDIT as a CloudEvent, and only once that is stored terminate it
 * (SPEC 3: no drop is silent).  Until then the event stays held.
 */
static void
delivery_drop(struct delivery *d, enum drop_reason why, int status,
    const char *error, long long ms)
{
	struct dsub	*s = d->s;

	log_warnx("delivery dropped", "sub=%s id=%s subject=%s attempt=%llu "
	    "status=%d error=%s%s", s->cfg->name, log_q(d->id),
	    log_q(d->subject), (unsigned long long)d->attempt, status,
	    log_q(error), delivery_trace(d));
	metrics_dropped(s->idx, why);
	/* A drop with no request (ms -1: invalid, JetStream's) adds none. */
	metrics_delivery(s->idx, DELIVERY_DROPPED, ms, d->attempt > 1 &&
	    ms >= 0);
	delivery_set_state(d, DS_DROPPING);
	d->op.ad = audit_drop(s->cfg->name, source_id(&d->src), d->m,
	    d->attempt, status, error, deliver_dropped_cb, d);
}

/*
 * A failed attempt: redeliver later with backoff, or drop when this was
 * the last attempt maxDeliver allows.
 */
static void
delivery_failed(struct delivery *d, int status, const char *error,
    const char *retry_after, long long ms)
{
	struct dsub	*s = d->s;
	long long	 delay, ra;
	uint32_t	 rnd;
	enum substate	 st;

	/*
	 * Not sent at all: the gates hear it here (the breaker counts it),
	 * with no earlier answer's timeout or Retry-After.  A probe that
	 * was not sent is a failed probe: the next one is due later.
	 */
	d->gp.timed_out = 0;
	d->gp.retry_after_ms = -1;
	gate_done(&s->gates, &d->gp, GATE_NOT_SENT);
	if (d->gp.probe) {
		d->gp.probe = 0;
		substate_probe_done(s->cfg->name, 0);
	}
	if (d->oi.k != NULL && !dorder_keeps(d)) {
		/*
		 * Ordered, and no longer this instance's to try: given back
		 * at once, for the holder, whose recovery waits for it (let
		 * go unanswered, it would come back only after its ack wait;
		 * JetStream counts the redelivery either way).
		 */
		metrics_delivery(s->idx, DELIVERY_RETRY, ms, d->attempt > 1);
		dorder_answered(d);
		store_msg_give_back(d->m);
		d->m = NULL;
		delivery_close(d, "given back: another instance delivers it");
		return;
	}
	if ((st = substate_of(s->state)) != SUBSTATE_ACTIVE) {
		/*
		 * Paused or tripped (perhaps by this very answer): held, not
		 * given back, so that JetStream counts nothing while the
		 * state lasts (SPEC 17); it is sent again when the
		 * subscriber is active, or as the probe.
		 */
		if (log_limit_ok(&s->failed_log))
			log_warnx("delivery failed", "sub=%s id=%s subject=%s "
			    "attempt=%llu status=%d error=%s held=%s%s",
			    s->cfg->name, log_q(d->id), log_q(d->subject),
			    (unsigned long long)d->attempt, status,
			    log_q(error), substate_text(st), delivery_trace(d));
		metrics_delivery(s->idx, DELIVERY_RETRY, ms, d->attempt > 1);
		if (gate_admit(&s->gates, &d->gp) == GATE_WAIT)
			delivery_set_state(d, DS_WAITING);
		else
			delivery_begin(d);
		return;
	}
	if (d->attempt >= (uint64_t)d->src.max_deliver) {
		delivery_drop(d, DROP_EXHAUSTED, status, error != NULL ? error :
		    "maxDeliver attempts failed", ms);
		return;
	}
	evutil_secure_rng_get_bytes(&rnd, sizeof(rnd));
	delay = treaty_backoff_ms((unsigned)d->attempt, dl.cfg->retry_base_ms,
	    dl.cfg->retry_max_ms, rnd);
	if ((status == 429 || status == 503) &&
	    (ra = outbound_retry_after_ms(retry_after, time(NULL))) >= 0)
		delay = ra < dl.cfg->retry_max_ms ? ra : dl.cfg->retry_max_ms;
	if (log_limit_ok(&s->failed_log))
		log_warnx("delivery failed", "sub=%s id=%s subject=%s "
		    "attempt=%llu status=%d error=%s next_ms=%lld%s",
		    s->cfg->name, log_q(d->id), log_q(d->subject),
		    (unsigned long long)d->attempt, status, log_q(error), delay,
		    delivery_trace(d));
	metrics_delivery(s->idx, DELIVERY_RETRY, ms, d->attempt > 1);
	if (d->oi.k != NULL) {
		/* Kept here (dorder_keeps, above). */
		/*
		 * Ordered (SPEC 18): tried again in hand, holding its key, so
		 * that it never leaves this instance while a later event of
		 * its key waits here.  JetStream does not count these
		 * attempts; the relay does (x-treaty-attempt, maxDeliver).
		 */
		struct timeval	 tv = { delay / 1000, (delay % 1000) * 1000 };

		d->attempt++;
		d->gp.attempt = d->attempt;
		delivery_set_state(d, DS_RETRYING);
		evtimer_add(&d->retry, &tv);
		return;
	}
	dorder_answered(d);
	store_msg_nak(d->m, delay);
	d->m = NULL;
	delivery_close(d, "retry later");
}

/* The subscriber answered (or did not). */
static void
delivery_sent_cb(void *arg, const struct outbound_result *r)
{
	struct delivery	*d = arg;
	int		 probe = d->gp.probe;

	delivery_set_state(d, DS_IDLE);
	/* What the window and the pace gate go by besides the status. */
	d->gp.timed_out = r->timed_out;
	d->gp.retry_after_ms = r->retry_after == NULL ? -1 :
	    outbound_retry_after_ms(r->retry_after, time(NULL));
	delivery_attempted(d, r->status, r->status == 0 ? r->error : NULL,
	    r->ms);
	gate_done(&d->s->gates, &d->gp, r->status);
	/* 410 Gone: the endpoint says stop; pause it, drop nothing. */
	if (r->status == 410)
		substate_gone(d->s->state, d->s->cfg->url);
	if (probe) {
		d->gp.probe = 0;
		substate_probe_done(d->s->cfg->name, r->status);
	}
	if (r->status >= 200 && r->status < 300) {
		struct store_lease	 l;

		log_debug("delivered", "sub=%s id=%s attempt=%llu status=%d "
		    "ms=%lld%s", d->s->cfg->name, log_q(d->id),
		    (unsigned long long)d->attempt, r->status, r->ms,
		    delivery_trace(d));
		metrics_delivery(d->s->idx, DELIVERY_OK, r->ms, d->attempt > 1);
		/* A replay's events are as old as the replay makes them. */
		if (source_id(&d->src) == NULL) {
			store_msg_lease(d->m, &l);
			metrics_latency(d->s->idx, (wall_ns() - l.ts) / 1000000);
		}
		dorder_answered(d);
		store_msg_ack(d->m);
		d->m = NULL;
		source_outcome(&d->src, 1);
		delivery_close(d, "delivered");
	} else if (r->status >= 400 && r->status < 500 && r->status != 408 &&
	    r->status != 429 && r->status != 410)
		delivery_drop(d, DROP_REJECTED, r->status, NULL, r->ms);
	else
		delivery_failed(d, r->status, r->status == 0 ? r->error :
		    r->status < 300 ? "unexpected status" : NULL,
		    r->retry_after, r->ms);
}

/* Keep the stored ce-* headers and the content type for the POST. */
static void
collect_header(void *arg, const char *key, const char *value)
{
	struct hdrs	*hs = arg;

	if (hs->n >= MAX_HEADERS - OWN_HEADERS)
		return;
	if (strncasecmp(key, "ce-", 3) == 0)
		hs->h[hs->n++] = (struct outbound_header){ key, value };
	else if (strcasecmp(key, "content-type") == 0)
		hs->h[hs->n++] = (struct outbound_header){ "Content-Type",
		    value };
}

/* Sign and POST to the pinned addresses (outbound tries them in order). */
static void
delivery_send(struct delivery *d, const struct resolve_result *to)
{
	struct dsign	*g = d->sign;
	struct hdrs	 hs;
	struct outbound_msg msg;
	const void	*body;
	size_t		 len;
	char		 sig[TREATY_SIG_HEADER_SIZE(TREATY_MAX_SECRETS)];
	char		 swsig[TREATY_SW_HEADER_SIZE(TREATY_MAX_SECRETS)];
	char		 ts[24], att[24], probe[24];
	char		 tp[TRACEPARENT_LEN + 1];
	uint8_t		 span[8];
	int64_t		 t = (int64_t)time(NULL);

	body = store_msg_data(d->m, &len);
	memset(&hs, 0, sizeof(hs));
	store_msg_headers(d->m, collect_header, &hs);
	snprintf(att, sizeof(att), "%llu", (unsigned long long)d->attempt);
	hs.h[hs.n++] = (struct outbound_header){ ATTEMPT_HEADER, att };
	if (d->gp.probe) {
		snprintf(probe, sizeof(probe), "%d", d->gp.probe);
		hs.h[hs.n++] = (struct outbound_header){ PROBE_HEADER, probe };
	}
	if (d->traced) {
		/* The producer's trace, a new span per attempt (SPEC 17). */
		do
			evutil_secure_rng_get_bytes(span, sizeof(span));
		while (memcmp(span, "\0\0\0\0\0\0\0\0", 8) == 0);
		trace_child(&d->trace, span, tp);
		hs.h[hs.n++] = (struct outbound_header){ "traceparent", tp };
		if (d->tracestate != NULL)
			hs.h[hs.n++] = (struct outbound_header){ "tracestate",
			    d->tracestate };
	}
	if (treaty_keys_sig_sign(g->keys, t, d->id, body, len, sig,
	    sizeof(sig)) < 0) {
		delivery_attempted(d, 0, "cannot sign", -1);
		delivery_failed(d, 0, "cannot sign", NULL, -1);
		return;
	}
	hs.h[hs.n++] = (struct outbound_header){ TREATY_SIG_HEADER, sig };
	if (g->standard_webhooks) {
		/*
		 * The same instant, signed the Standard Webhooks way too.  Its
		 * id is the ce-id as the header carries it (percent-encoded
		 * where it is not printable ASCII): a raw non-ASCII header
		 * value is refused by that specification's verifiers, and
		 * what is signed must be exactly what is sent.
		 */
		const char	*swid = store_msg_header(d->m, "ce-id");

		snprintf(ts, sizeof(ts), "%lld", (long long)t);
		if (swid == NULL || treaty_keys_sw_sign(g->keys, swid, t,
		    body, len, swsig, sizeof(swsig)) < 0) {
			delivery_attempted(d, 0, "cannot sign", -1);
			delivery_failed(d, 0, "cannot sign", NULL, -1);
			return;
		}
		hs.h[hs.n++] = (struct outbound_header){ "webhook-id", swid };
		hs.h[hs.n++] = (struct outbound_header){ "webhook-timestamp",
		    ts };
		hs.h[hs.n++] = (struct outbound_header){ "webhook-signature",
		    swsig };
	}
	msg = (struct outbound_msg){ OUTBOUND_POST, NULL, hs.h, hs.n, body,
	    len };
	if ((d->op.out = outbound_send(d->t->t, to, &msg, delivery_sent_cb,
	    d)) == NULL) {
		delivery_attempted(d, 0, "connection failed", -1);
		delivery_failed(d, 0, "connection failed", NULL, -1);
		return;
	}
	delivery_set_state(d, DS_SENDING);
}

/* The addresses are known and valid: send. */
static void
delivery_resolved_cb(void *arg, const struct resolve_result *r)
{
	struct delivery	*d = arg;

	delivery_set_state(d, DS_IDLE);
	if (r->status != RESOLVE_OK) {
		delivery_attempted(d, 0, r->why, -1);
		delivery_failed(d, 0, r->why, NULL, -1);
	} else
		delivery_send(d, r);
}

/* Tell JetStream the delivery is still under way. */
static void
delivery_progress_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct delivery	*d = arg;

	(void)fd;
	(void)ev;
	if (d->m != NULL)
		store_msg_progress(d->m);
}

/*
 * The producer's trace context (SPEC 17): its ce-traceparent attribute,
 * else the plain traceparent a binary-mode request carried; with its
 * tracestate.  One that is not valid counts as none: nothing is invented.
 */
static void
delivery_trace_read(struct delivery *d)
{
	char		*tp = store_msg_header_decoded(d->m, "ce-traceparent");
	const char	*plain;

	if (tp != NULL) {
		d->traced = trace_parse(tp, &d->trace) == 0;
		free(tp);
		if (d->traced)
			d->tracestate = store_msg_header_decoded(d->m,
			    "ce-tracestate");
	} else if ((plain = store_msg_header(d->m, TRACEPARENT_HEADER)) !=
	    NULL && trace_parse(plain, &d->trace) == 0) {
		d->traced = 1;
		if ((plain = store_msg_header(d->m, TRACESTATE_HEADER)) != NULL)
			d->tracestate = xstrdup(plain);
	}
	if (d->tracestate != NULL && (strlen(d->tracestate) > TRACESTATE_MAX ||
	    strpbrk(d->tracestate, "\r\n") != NULL)) {
		free(d->tracestate);
		d->tracestate = NULL;
	}
}

/* An ordered delivery's next attempt is due. */
static void
delivery_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct delivery	*d = arg;

	(void)fd;
	(void)ev;
	delivery_set_state(d, DS_IDLE);
	delivery_admit(d);
}

/* Start tracking a message from src: timer armed, attributes decoded. */
static struct delivery *
delivery_new(struct dsub *s, struct store_msg *m, const struct source *src)
{
	struct delivery	*d;
	struct timeval	 tv = { dl.cfg->progress_seconds, 0 };
	const char	*subj = store_msg_subject(m);

	d = xcalloc(1, sizeof(*d));
	d->s = s;
	d->t = s->target;
	d->t->refs++;
	d->sign = s->sign;
	d->sign->refs++;
	d->m = m;
	d->state = DS_IDLE;
	d->attempt = store_msg_delivered(m);
	d->src = *src;
	d->gp.owner = d;
	d->gp.src = &d->src;
	d->gp.attempt = d->attempt;
	d->gp.retry_after_ms = -1;
	if (subj != NULL && strlen(subj) < sizeof(d->subject))
		memcpy(d->subject, subj, strlen(subj) + 1);
	/* Every progress_seconds until the delivery ends. */
	event_assign(&d->progress, dl.base, -1, EV_PERSIST,
	    delivery_progress_cb, d);
	evtimer_assign(&d->retry, dl.base, delivery_retry_cb, d);
	TAILQ_INSERT_TAIL(&s->live, d, entry);
	dl.in_flight++;
	metrics_in_flight(s->idx, 1);
	event_add(&d->progress, &tv);
	d->id = store_msg_header_decoded(m, "ce-id");
	d->source = store_msg_header_decoded(m, "ce-source");
	delivery_trace_read(d);
	return d;
}

/*
 * A message for s from src, its own consumer or a replay's (whose
 * max_deliver, its consumer's, a reload does not change): through the
 * gates to its POST, or waiting at one.
 */
static void
deliver_start(struct dsub *s, struct store_msg *m, const struct source *src)
{
	struct delivery	*d;
	const char	*spec;

	/*
	 * Stopping, or the subscriber was removed (what nats.c had queued):
	 * give it back for another instance, unless this is its last delivery: JetStream would count the give-back as the last
	 * attempt, and the event would be dropped untried.  Try it within
	 * the grace period instead.
	 */
	if ((dl.stopping || s->consumer == NULL) &&
	    store_msg_delivered(m) < (uint64_t)src->max_deliver) {
		store_msg_give_back(m);
		return;
	}
	d = delivery_new(s, m, src);
	spec = store_msg_header(m, "ce-specversion");
	if (d->id == NULL || d->source == NULL ||
	    store_msg_header(m, "ce-type") == NULL || spec == NULL ||
	    strcmp(spec, "1.0") != 0) {
		delivery_drop(d, DROP_INVALID, 0, "not a valid stored event", -1);
		return;
	}
	if (dorder_enter(d))
		delivery_admit(d);
}

/* Through the gates to its POST, or waiting at one; see deliver-int.h. */
void
delivery_admit(struct delivery *d)
{
	if (gate_admit(&d->s->gates, &d->gp) == GATE_WAIT) {
		delivery_set_state(d, DS_WAITING);
		return;
	}
	delivery_begin(d);
}

/* Through the gates: find the address, then send. */
static void
delivery_begin(struct delivery *d)
{
	d->started_ns = wall_ns();
	delivery_set_state(d, DS_RESOLVING);
	d->op.rr = resolve_host(outbound_target_host(d->t->t),
	    outbound_target_port(d->t->t), d->s->accept,
	    delivery_resolved_cb, d);
}

/*
 * A waiting delivery passed the last gate.  resolve_host answers on a
 * later turn of the loop, so no delivery ends in here (and a removed
 * subscriber, freed with its last delivery, stays while gate_resume
 * runs).
 */
static void
deliver_through(struct gate_pass *p)
{
	struct delivery	*d = p->owner;

	delivery_set_state(d, DS_IDLE);
	delivery_begin(d);
}

/* A gate opened (gate_done), or a reload may have widened a window. */
static void
deliver_pump_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct dsub	*s;

	(void)fd;
	(void)ev;
	(void)arg;
	TAILQ_FOREACH(s, &dl.subs, entry) {
		dorder_pump(s);
		gate_resume(&s->gates, deliver_through);
	}
	TAILQ_FOREACH(s, &dl.gone, entry) {
		dorder_pump(s);
		gate_resume(&s->gates, deliver_through);
	}
}

/*
 * Give back what waits at s's gates (the relay stops, the subscriber or
 * a replay left this instance: id NULL for all), but not a last attempt
 * (gate_give_back).  A removed subscriber is freed with its last
 * delivery: s is not read once they are taken out.
 */
void
dsub_give_back_waiting(struct dsub *s, const char *id)
{
	struct gate_queue	 back;
	struct gate_pass	*p;
	struct delivery		*d, **oback;
	size_t			 i, n;

	/* Behind their keys first: closing those at the gates frees keys. */
	oback = dorder_give_back(s, id, &n);
	gate_give_back(&s->gates, id, &back);
	for (i = 0; i < n; i++) {
		dorder_answered(oback[i]);
		store_msg_give_back(oback[i]->m);
		oback[i]->m = NULL;
		delivery_close(oback[i], "given back before its turn");
	}
	free(oback);
	while ((p = TAILQ_FIRST(&back)) != NULL) {
		TAILQ_REMOVE(&back, p, wentry);
		d = p->owner;
		dorder_answered(d);
		store_msg_give_back(d->m);
		d->m = NULL;
		delivery_close(d, "given back before its turn");
	}
}

/* A message from a subscriber's consumer; see deliver-int.h. */
void
deliver_msg_cb(void *arg, struct store_msg *m)
{
	struct dsub	*s = arg;

	if (s->order != NULL && !dorder_msg(s, m))
		return;
	deliver_start(s, m, &s->own);
}

/*
 * JetStream stopped delivering m to this subscriber without a relay
 * terminating it: its last attempt was given back after the grace period
 * or lost with a relay (kill -9, a lost connection).  Record the drop like
 * any other (SPEC 3: no drop is silent); the term that follows is a no-op.
 */
void
deliver_exhausted_cb(void *arg, struct store_msg *m)
{
	struct dsub	*s = arg;
	struct delivery	*d = delivery_new(s, m, &s->own);

	delivery_drop(d, DROP_EXHAUSTED, 0,
	    "last attempt unfinished (relay stopped or lost)", -1);
}

/* A message of another source for push subscriber name; see deliver.h. */
int
deliver_source_msg(const char *name, const struct source *src,
    struct store_msg *m, int exhausted)
{
	struct dsub	*s = dsub_find(name);
	struct delivery	*d;

	if (s == NULL)
		return -1;
	if (!exhausted) {
		if (dorder_source_msg(s, src, m))
			deliver_start(s, m, src);
		return 0;
	}
	d = delivery_new(s, m, src);
	delivery_drop(d, DROP_EXHAUSTED, 0,
	    "last attempt unfinished (relay stopped or lost)", -1);
	return 0;
}

/* Set up every push subscriber. */
void
deliver_init(struct event_base *base, const struct config *cfg)
{
	dl.base = base;
	dl.cfg = cfg;
	dl.progress_s = cfg->progress_seconds;
	event_assign(&dl.pump, base, -1, 0, deliver_pump_cb, NULL);
	/* A state changed: what waits at the pause gate may go on. */
	substate_watch(&dl.pump);
	substate_prober(dsub_can_probe, dsub_probe);
	resolve_init(base, cfg->dns_server, cfg->dns_timeout_ms, PIN_CACHE_MS);
	if (outbound_init(base, cfg->ca_file, cfg->delivery_timeout_ms,
	    cfg->delivery_idle_ms, "treaty-relay") == -1)
		fatalx("cannot set up TLS for deliveries", "ca_file=%s",
		    log_q(cfg->ca_file));
	deliver_sync(NULL);
}

/* Deliveries under way. */
int
deliver_in_flight(void)
{
	return dl.in_flight;
}

/*
 * Take no new messages: what is queued is given back (also what waits at
 * a gate), the groups left.
 */
void
deliver_stop(void)
{
	struct dsub	*s, *next;

	dl.stopping = 1;
	TAILQ_FOREACH(s, &dl.subs, entry) {
		store_consumer_stop(s->consumer);
		dsub_give_back_waiting(s, NULL);
	}
	for (s = TAILQ_FIRST(&dl.gone); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		dsub_give_back_waiting(s, NULL);
	}
}

/* A replay's source left this instance: see deliver.h. */
void
deliver_source_left(const char *name, const char *id)
{
	struct dsub	*s = dsub_find(name);

	if (s != NULL) {
		dsub_give_back_waiting(s, id);
		dorder_source_left(s, id);
	}
}

/* A replay's source joined here; see deliver.h. */
void
deliver_source_joined(const char *name, const struct source *src,
    struct store_consumer *c)
{
	struct dsub	*s = dsub_find(name);

	if (s != NULL)
		dorder_source_joined(s, src, c);
}

/*
 * Give back and close every delivery of s.  A removed subscriber is freed
 * with its last delivery (delivery_close): s is not read after that.
 */
static void
dsub_give_back(struct dsub *s)
{
	struct delivery	*d;
	int		 last;

	while ((d = TAILQ_FIRST(&s->live)) != NULL) {
		last = TAILQ_NEXT(d, entry) == NULL;
		if (d->m != NULL) {
			dorder_answered(d);
			store_msg_give_back(d->m);
			d->m = NULL;
		}
		delivery_close(d, "given back: shutting down");
		if (last)
			return;
	}
}

/* Give every delivery under way back to JetStream now. */
void
deliver_give_back_all(void)
{
	struct dsub	*s;

	TAILQ_FOREACH(s, &dl.subs, entry)
		dsub_give_back(s);
	/* Each removed subscriber is freed with its last delivery. */
	while ((s = TAILQ_FIRST(&dl.gone)) != NULL)
		dsub_give_back(s);
}

/* Free everything. */
void
deliver_free(void)
{
	struct dsub	*s;

	deliver_give_back_all();
	event_del(&dl.pump);
	while ((s = TAILQ_FIRST(&dl.subs)) != NULL) {
		TAILQ_REMOVE(&dl.subs, s, entry);
		dsub_free(s);
	}
	resolve_free();
	outbound_free();
}
