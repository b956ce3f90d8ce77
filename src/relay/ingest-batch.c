/*
 * ingest-batch.c: batches, POST /v1/events/<subject> with
 * application/cloudevents-batch+json (SPEC 14).  Loop thread.
 *
 * All or nothing before the store: the request's checks (ingest.c, up to
 * 403), then 429 for the whole batch's tokens, 413 and the array's shape,
 * then every event parsed and checked exactly as if it had been sent
 * alone (each element goes to the same structured-mode parser), its
 * stored form made and its size checked.  The first event that fails
 * refuses the batch with its index and nothing is published.  Then all
 * are published at once (pipelined: store_publish never waits) and the
 * request is answered when the last acknowledgement, timeout or failure
 * is in.  A partial failure is a 503 whose results say which events are
 * stored; each event keeps its Nats-Msg-Id, so a resend stores the rest
 * and reports the others as duplicates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "treaty.h"
#include "api.h"
#include "cevent.h"
#include "config.h"
#include "query.h"
#include "reply.h"
#include "ingest-int.h"
#include "json.h"
#include "log.h"
#include "util.h"

enum bev_state {
	BEV_WAITING,		/* published, no answer yet */
	BEV_STORED,
	BEV_FAILED
};

struct batch;

/* One event of a batch: its stored form and what JetStream said. */
struct bev {
	struct batch		*b;
	struct ingest_msg	 m;
	enum bev_state		 state;
	int			 dup;
};

/* A batch waiting for JetStream: answered when waiting drops to 0. */
struct batch {
	struct evhttp_request	*req;
	/* Copies: a reload may free the producer before JetStream answers. */
	char			 producer[NAME_MAX_LEN + 1];
	char			 subject[TREATY_SUBJECT_MAX + 1];
	long long		 start;
	size_t			 n, waiting;
	int			 publishing;	/* still in the publish loop */
	int			 timeout;	/* a publish timed out */
	struct bev		 ev[];
};

/* Free a batch and the stored forms of its events. */
static void
batch_free(struct batch *b, size_t made)
{
	size_t	 i;

	for (i = 0; i < made; i++)
		ingest_msg_free(&b->ev[i].m);
	free(b);
}

/*
 * Every event has its answer: 202 with the results when all are stored,
 * else 503 with each one's stored flag.  Ends the batch.
 */
static void
batch_answer(struct batch *b)
{
	struct json_result	*r = xcalloc(b->n, sizeof(*r));
	struct evbuffer		*out = evbuffer_new();
	size_t			 i, stored = 0, dups = 0;

	for (i = 0; i < b->n; i++) {
		r[i].id = b->ev[i].m.id;
		r[i].stored = b->ev[i].state == BEV_STORED;
		r[i].duplicate = r[i].stored && b->ev[i].dup;
		stored += r[i].stored;
		dups += r[i].duplicate;
	}
	if (stored == b->n) {
		json_results_body(out, NULL, NULL, r, b->n);
		reply_json(b->req, ROUTE_EVENTS, 202, out);
		log_debug("batch stored", "producer=%s subject=%s events=%zu "
		    "duplicates=%zu ms=%lld", b->producer, b->subject, b->n,
		    dups, now_ms() - b->start);
	} else {
		evhttp_add_header(evhttp_request_get_output_headers(b->req),
		    "Retry-After", REPLY_RETRY_AFTER);
		json_results_body(out, "publish_failed", b->timeout ?
		    "JetStream did not confirm every event in time; send the "
		    "batch again (stored events come back as duplicates)" :
		    "JetStream did not store every event; send the batch "
		    "again (stored events come back as duplicates)", r, b->n);
		reply_json(b->req, ROUTE_EVENTS, 503, out);
		log_info("batch not stored", "status=503 error=publish_failed "
		    "producer=%s subject=%s events=%zu stored=%zu",
		    b->producer, b->subject, b->n, stored);
	}
	evbuffer_free(out);
	free(r);
	batch_free(b, b->n);
}

/* JetStream answered (or did not) for one event. */
static void
batch_published_cb(void *arg, enum store_result res, int dup)
{
	struct bev	*e = arg;
	struct batch	*b = e->b;

	e->state = res == STORE_OK ? BEV_STORED : BEV_FAILED;
	e->dup = dup;
	if (res == STORE_TIMEOUT)
		b->timeout = 1;
	if (--b->waiting == 0 && !b->publishing)
		batch_answer(b);
}

/*
 * Parse, check and make the stored form of every event: 0, or -1 when
 * the batch was refused (answered, freed).
 */
static int
batch_prepare(struct batch *b, const struct producer *p, const char *body,
    const struct json_span *el)
{
	struct cevent	 ev;
	const char	*code, *detail;
	size_t		 i;
	int		 st;

	for (i = 0; i < b->n; i++) {
		if (cevent_from_structured(&ev, body + el[i].off,
		    el[i].len) == -1) {
			ingest_reject_at(b->req, 400, "bad_event", ev.detail,
			    b->producer, b->subject, (long long)i);
			cevent_free(&ev);
			goto fail;
		}
		if ((st = ingest_event_check(&ev, b->subject, &code,
		    &detail)) != 0) {
			ingest_reject_at(b->req, st, code, detail,
			    b->producer, b->subject, (long long)i);
			cevent_free(&ev);
			goto fail;
		}
		b->ev[i].b = b;
		ingest_msg_make(&b->ev[i].m, &ev, p, NULL, NULL);
		cevent_free(&ev);
		if (!store_fits(b->ev[i].m.h, b->ev[i].m.nh,
		    b->ev[i].m.msgid, b->ev[i].m.len)) {
			ingest_msg_free(&b->ev[i].m);
			ingest_reject_at(b->req, 413, "too_large", "the event "
			    "with its headers is over the NATS server's "
			    "max_payload", b->producer, b->subject,
			    (long long)i);
			goto fail;
		}
	}
	return 0;
fail:
	batch_free(b, i);
	return -1;
}

/* Publish every event; the answer comes from the last callback. */
static void
batch_publish(struct batch *b)
{
	enum store_result	 res;
	size_t			 i;

	b->waiting = b->n;
	b->publishing = 1;
	for (i = 0; i < b->n; i++) {
		res = ingest_msg_store(&b->ev[i].m, b->subject,
		    batch_published_cb, &b->ev[i]);
		if (res == STORE_OK)
			continue;
		/*
		 * Refused (store_publish counted this one): the rest is not
		 * even tried, and counted under the same cause.
		 */
		store_count_refused(res, b->n - i - 1);
		for (; i < b->n; i++) {
			b->ev[i].state = BEV_FAILED;
			b->waiting--;
		}
	}
	b->publishing = 0;
	if (b->waiting == 0)
		batch_answer(b);
}

/* A batch; see ingest-int.h. */
void
ingest_batch(struct evhttp_request *req, const struct producer *p,
    const char *subject)
{
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct json_span	*el;
	struct batch		*b;
	enum store_result	 res;
	const char		*body;
	size_t			 len = evbuffer_get_length(in), i;
	long long		 wait;
	int			 n;
	char			 detail[160];

	body = (const char *)evbuffer_pullup(in, -1);
	if (body == NULL)
		body = "";
	el = xmalloc(API_BATCH_MAX * sizeof(*el));
	n = len > API_BODY_MAX ? JSON_SPLIT_TOO_MANY :
	    json_array_split(body, len, el, API_BATCH_MAX);
	/*
	 * One token per event, the whole batch or nothing (SPEC 13).  A
	 * batch larger than the burst could never pass: 413, so that a
	 * client sends smaller ones instead of waiting in vain.
	 */
	if (p->rate > 0 && n > p->burst) {
		snprintf(detail, sizeof(detail), "this batch has more events "
		    "than the producer's burst (%d): send smaller batches",
		    p->burst);
		ingest_reject_at(req, 413, "too_large", detail, p->name,
		    subject, -1);
		goto out;
	}
	if ((wait = ingest_rate(p, n > 0 ? n : 1)) > 0) {
		ingest_limited(req, p, subject, wait);
		goto out;
	}
	if (len > API_BODY_MAX) {
		ingest_reject_at(req, 413, "too_large", "the body is over "
		    API_STR(API_BODY_MAX_MIB) " MiB", p->name, subject, -1);
		goto out;
	}
	if (n == JSON_SPLIT_TOO_MANY) {
		ingest_reject_at(req, 413, "too_large", "a batch holds at "
		    "most " API_STR(API_BATCH_MAX) " events", p->name, subject,
		    -1);
		goto out;
	}
	if (n <= 0) {
		ingest_reject_at(req, 400, "bad_event", n == 0 ? "a batch "
		    "holds at least one event" : "a batch is a JSON array of "
		    "structured-mode events", p->name, subject, -1);
		goto out;
	}
	b = xcalloc(1, sizeof(*b) + (size_t)n * sizeof(b->ev[0]));
	b->req = req;
	b->n = (size_t)n;
	memcpy(b->producer, p->name, sizeof(b->producer));
	memcpy(b->subject, subject, strlen(subject) + 1);
	b->start = now_ms();
	if (batch_prepare(b, p, body, el) == -1)
		goto out;
	if ((size_t)n > (size_t)ingest_cfg->max_pending) {
		snprintf(detail, sizeof(detail), "this batch has more events "
		    "than the relay keeps in flight (%d): send smaller "
		    "batches", ingest_cfg->max_pending);
		ingest_reject_at(req, 413, "too_large", detail, p->name,
		    subject, -1);
		batch_free(b, b->n);
		goto out;
	}
	if ((res = store_can_publish(b->n)) != STORE_OK) {
		for (i = 0; i < b->n; i++)
			b->ev[i].state = BEV_FAILED;
		batch_answer(b);
		goto out;
	}
	batch_publish(b);
out:
	free(el);
}
