/*
 * ingest.c: POST /v1/events/<subject> (SPEC section 2).  Loop thread.
 *
 * The checks run in the order of the SPEC's table, so a request that fails
 * several gets the first one's answer.  An accepted event is published
 * asynchronously; the request is answered from the publish callback, so no
 * answer ever waits on another request's.  Batches (SPEC 14) pass the same
 * request checks here and go on in ingest-batch.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "treaty.h"
#include "auth.h"
#include "config.h"
#include "cevent.h"
#include "query.h"
#include "reply.h"
#include "ingest.h"
#include "ingest-int.h"
#include "json.h"
#include "api.h"
#include "log.h"
#include "metrics.h"
#include "ratelimit.h"
#include "store-pub.h"
#include "store-wire.h"
#include "trace.h"
#include "util.h"

/*
 * A request waiting for JetStream.  Holding the evhttp_request is safe in
 * libevent 2.1: a request the user has not answered is detached from its
 * connection when the client leaves, never freed under us, and freed by
 * evhttp_send_reply; and every waiting publish is answered (acknowledged,
 * timed out, or failed at shutdown) within publish_timeout_ms.
 */
struct ingest_req {
	struct evhttp_request	*req;
	struct ingest_msg	 m;
	/* A copy: a reload may free the producer before JetStream answers. */
	char			 producer[NAME_MAX_LEN + 1];
	char			 subject[TREATY_SUBJECT_MAX + 1];
	long long		 start;
};

const struct config		*ingest_cfg;

/*
 * The producers' token buckets (SPEC 13), one per producer in the order
 * of ingest_cfg->producers, so config_find_producer's answer indexes it.
 * A reload carries each bucket over by name.
 */
struct pbucket {
	char		 name[NAME_MAX_LEN + 1];
	struct bucket	 b;
};
static struct pbucket		*ingest_buckets;

/*
 * One bucket per producer of the configuration, old ones kept by name;
 * the metrics show the rate-limited counts of these producers only.
 */
static void
ingest_buckets_sync(void)
{
	struct pbucket	*old = ingest_buckets, *nb;
	size_t		 i, k, nold = 0;

	for (k = 0; old != NULL && old[k].name[0] != '\0'; k++)
		nold++;
	nb = xcalloc(ingest_cfg->nproducers + 1, sizeof(*nb));
	metrics_producers_reset();
	for (i = 0; i < ingest_cfg->nproducers; i++) {
		memcpy(nb[i].name, ingest_cfg->producers[i].name,
		    sizeof(nb[i].name));
		metrics_producer_kept(nb[i].name);
		for (k = 0; k < nold; k++)
			if (strcmp(old[k].name, nb[i].name) == 0)
				nb[i].b = old[k].b;
	}
	free(old);
	ingest_buckets = nb;
}

/* Remember the configuration. */
void
ingest_init(const struct config *cfg)
{
	ingest_cfg = cfg;
	ingest_buckets_sync();
}

/* The configuration was reloaded. */
void
ingest_reload(void)
{
	ingest_buckets_sync();
}

/* Free the buckets. */
void
ingest_free(void)
{
	free(ingest_buckets);
	ingest_buckets = NULL;
}

/*
 * Take n events from p's bucket: 0, or the seconds to wait (429).  A
 * producer without a rate is never limited.
 */
long long
ingest_rate(const struct producer *p, int n)
{
	struct pbucket	*pb = &ingest_buckets[p - ingest_cfg->producers];

	if (p->rate <= 0)
		return 0;
	return bucket_take(&pb->b, p->rate, p->burst, n, now_ms());
}

/* The line a rejected request logs (metadata only, rate-limited). */
static void
ingest_log_reject(struct evhttp_request *req, int status, const char *code,
    const char *producer, const char *subject, long long index)
{
	struct evhttp_connection *c = evhttp_request_get_connection(req);
	char			*addr = NULL;
	ev_uint16_t		 port = 0;

	if (c != NULL)
		evhttp_connection_get_peer(c, &addr, &port);
	if (!log_refused_ok())
		;
	else if (index >= 0)
		log_info("batch rejected", "status=%d error=%s index=%lld "
		    "producer=%s subject=%s remote=%s", status, code, index,
		    log_q(producer), log_q(subject), log_q(addr));
	else
		log_info("event rejected", "status=%d error=%s producer=%s "
		    "subject=%s remote=%s", status, code, log_q(producer),
		    log_q(subject), log_q(addr));
}

/* Reject and log one request; see ingest-int.h. */
void
ingest_reject_at(struct evhttp_request *req, int status, const char *code,
    const char *detail, const char *producer, const char *subject,
    long long index)
{
	ingest_log_reject(req, status, code, producer, subject, index);
	reply_error_at(req, ROUTE_EVENTS, status, code, detail, index);
}

/* Refuse and log one request with SPEC 2's answer; see ingest-int.h. */
void
ingest_refuse(struct evhttp_request *req, enum refusal r,
    long long retry_after, const char *producer, const char *subject)
{
	const struct refusal_text	*t = reply_refusal(r);

	ingest_log_reject(req, t->status, t->code, producer, subject, -1);
	reply_refuse(req, ROUTE_EVENTS, r, retry_after, -1);
}

/* Reject one request that is not a batch's event. */
static void
ingest_reject(struct evhttp_request *req, int status, const char *code,
    const char *detail, const char *producer, const char *subject)
{
	ingest_reject_at(req, status, code, detail, producer, subject, -1);
}

/* 429 with Retry-After; see ingest-int.h. */
void
ingest_limited(struct evhttp_request *req, const struct producer *p,
    const char *subject, long long wait)
{
	metrics_rate_limited(p->name);
	ingest_refuse(req, REFUSAL_RATE_LIMITED, wait, p->name, subject);
}

/* The checks of an event against the subject; see ingest-int.h. */
int
ingest_event_check(const struct cevent *ev, const char *subject,
    const char **code, const char **detail)
{
	/* Matching implies valid: the usual event is split once, not twice. */
	if (treaty_type_matches_subject(ev->type, subject))
		return 0;
	if (!treaty_type_valid(ev->type)) {
		*code = "bad_type";
		*detail = "type must be "
		    "<namespace>.<product>.<entity>.<verb>.v<major>";
		return 422;
	}
	*code = "type_does_not_match_subject";
	*detail = "the type's product, entity and verb must be the subject's";
	return 422;
}

/*
 * A binary-mode event's plain traceparent and tracestate headers (SPEC
 * 17), kept when the event has no traceparent attribute of its own and
 * the header is a valid one: stored beside the event, not as its
 * attributes, which stay as the producer sent them.
 */
static void
ingest_trace(const struct cevent *ev, const struct evkeyvalq *ih,
    const char **tp, const char **ts)
{
	struct trace	 t;
	size_t		 i;

	*tp = *ts = NULL;
	for (i = 0; i < ev->nattrs; i++)
		if (ev->attrs[i].nlen == 11 &&
		    memcmp(ev->attrs[i].name, "traceparent", 11) == 0)
			return;
	if (trace_parse(evhttp_find_header(ih, "traceparent"), &t) == -1)
		return;
	*tp = evhttp_find_header(ih, "traceparent");
	*ts = evhttp_find_header(ih, "tracestate");
	if (*ts != NULL && (strlen(*ts) > TRACESTATE_MAX ||
	    !treaty_utf8_valid(*ts, strlen(*ts))))
		*ts = NULL;
}

/* The stored form of an event; see ingest-int.h. */
void
ingest_msg_make(struct ingest_msg *m, const struct cevent *ev,
    const struct producer *p, const char *tp, const char *ts)
{
	size_t	 i, need, plen = strlen(p->name), idlen = strlen(ev->id);
	char	*o;

	if (tp == NULL)
		ts = NULL;
	m->nh = ev->nattrs + (ev->content_type != NULL) + 1 + (tp != NULL) +
	    (ts != NULL);
	need = m->nh * sizeof(*m->h);
	/* Percent-encoding at most triples a value. */
	for (i = 0; i < ev->nattrs; i++)
		need += 3 + ev->attrs[i].nlen + 1 + 3 * ev->attrs[i].vlen + 1;
	if (ev->content_type != NULL)
		need += strlen(ev->content_type) + 1;
	need += plen + 1 + (plen + 1 + idlen + 1) + (idlen + 1) + ev->datalen;
	need += (tp != NULL ? strlen(tp) + 1 : 0) +
	    (ts != NULL ? strlen(ts) + 1 : 0);
	m->mem = xmalloc(need);
	m->h = (struct store_header *)(void *)m->mem;
	o = m->mem + m->nh * sizeof(*m->h);
	for (i = 0; i < ev->nattrs; i++) {
		const struct event_attr	*a = &ev->attrs[i];
		int			 n;

		m->h[i].key = o;
		memcpy(o, "ce-", 3);
		memcpy(o + 3, a->name, a->nlen + 1);
		o += 3 + a->nlen + 1;
		m->h[i].value = o;
		if (a->verbatim) {
			/* What treaty_pct_encode would copy unchanged. */
			memcpy(o, a->value, a->vlen + 1);
			o += a->vlen + 1;
			continue;
		}
		n = treaty_pct_encode(a->value, a->vlen, o, 3 * a->vlen + 1);
		o += (n < 0 ? 0 : (size_t)n) + 1;
	}
	if (ev->content_type != NULL) {
		m->h[i].key = "content-type";
		m->h[i++].value = o;
		o = stpcpy(o, ev->content_type) + 1;
	}
	m->h[i].key = "Treaty-Producer";
	m->h[i++].value = o;
	o = stpcpy(o, p->name) + 1;
	if (tp != NULL) {
		m->h[i].key = TRACEPARENT_HEADER;
		m->h[i++].value = o;
		o = stpcpy(o, tp) + 1;
	}
	if (ts != NULL) {
		m->h[i].key = TRACESTATE_HEADER;
		m->h[i++].value = o;
		o = stpcpy(o, ts) + 1;
	}
	/* Scoped by producer: nobody can suppress another's event id. */
	m->msgid = o;
	memcpy(o, p->name, plen);
	o[plen] = ':';
	o = stpcpy(o + plen + 1, ev->id) + 1;
	m->id = o;
	o = stpcpy(o, ev->id) + 1;
	m->data = o;
	m->len = ev->datalen;
	if (ev->datalen > 0)
		memcpy(o, ev->data, ev->datalen);
}

/* Free what ingest_msg_make made. */
void
ingest_msg_free(struct ingest_msg *m)
{
	free(m->mem);
	m->mem = NULL;
}

/* Publish a stored form; see ingest-int.h. */
enum store_result
ingest_msg_store(const struct ingest_msg *m, const char *subject,
    store_publish_cb cb, void *arg)
{
	return store_publish(subject, m->h, m->nh, m->msgid, m->data, m->len,
	    cb, arg);
}

/*
 * The producer named by an Authorization header's value, or NULL and why:
 * no bearer token, or one no producer has (the same 401, told apart so
 * that a client knows which to fix).
 */
static const struct producer *
ingest_auth(const char *auth, enum refusal *why)
{
	const struct producer	*p = NULL;
	char			 hex[AUTH_HASH_HEX];

	if (auth_bearer(auth, hex) == -1)
		*why = REFUSAL_UNAUTHENTICATED;
	else if ((p = config_find_producer(ingest_cfg, hex)) == NULL)
		*why = REFUSAL_UNKNOWN_TOKEN;
	return p;
}

/*
 * 1 when one of the producer's patterns matches subject, which is not one
 * of the relay's own (even under a pattern such as audit.>).
 */
static int
ingest_allowed(const struct producer *p, const char *subject)
{
	size_t	 i;

	if (strncmp(subject, STORE_OWN_PREFIX, strlen(STORE_OWN_PREFIX)) == 0)
		return 0;
	for (i = 0; i < p->nsubjects; i++)
		if (treaty_pattern_match(p->subjects[i], subject))
			return 1;
	return 0;
}

/*
 * The checks SPEC 2 puts before 413, made by the door from a head before
 * it reads a large body (route.h, http.c's table): the same order and
 * answers as ingest_handle.
 */
enum refusal
ingest_precheck(const char *method, const char *rest, size_t restlen,
    const char *auth, long long *retry_after)
{
	const struct producer	*p;
	enum refusal		 why;
	char			 subject[TREATY_SUBJECT_MAX + 1];

	if (strcmp(method, "POST") != 0)
		return REFUSAL_METHOD;
	if ((p = ingest_auth(auth, &why)) == NULL)
		return why;
	if (restlen >= sizeof(subject))
		return REFUSAL_BAD_SUBJECT;
	memcpy(subject, rest, restlen);
	subject[restlen] = '\0';
	if (!treaty_subject_valid(subject))
		return REFUSAL_BAD_SUBJECT;
	if (!ingest_allowed(p, subject))
		return REFUSAL_SUBJECT_NOT_ALLOWED;
	if (retry_after != NULL && (*retry_after = ingest_rate(p, 1)) > 0) {
		metrics_rate_limited(p->name);
		return REFUSAL_RATE_LIMITED;
	}
	return REFUSAL_NONE;
}

/* JetStream answered (or did not): answer the request. */
static void
ingest_published_cb(void *arg, enum store_result res, int dup)
{
	struct ingest_req	*ir = arg;
	struct evbuffer		*b;

	if (res == STORE_OK) {
		/* Written where evhttp sends from: no buffer of our own. */
		b = evhttp_request_get_output_buffer(ir->req);
		json_accepted_body(b, ir->m.id, dup);
		reply_json(ir->req, ROUTE_EVENTS, 202, b);
		log_debug("event stored", "producer=%s subject=%s id=%s "
		    "duplicate=%d ms=%lld", ir->producer, ir->subject,
		    log_q(ir->m.id), dup, now_ms() - ir->start);
	} else
		ingest_reject(ir->req, 503, "publish_failed",
		    res == STORE_TIMEOUT ? "JetStream did not confirm the "
		    "store in time; send it again with the same id" :
		    "JetStream did not store the event; send it again with "
		    "the same id", ir->producer, ir->subject);
	ingest_msg_free(&ir->m);
	free(ir);
}

/* Handle POST /v1/events/<subject>. */
void
ingest_handle(struct evhttp_request *req, const char *subject)
{
	const struct producer	*p;
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq	*ih = evhttp_request_get_input_headers(req);
	struct cevent		 ev;
	struct ingest_req	*ir;
	enum store_result	 res;
	enum refusal		 why;
	const char		*ct, *code, *detail, *tp, *ts;
	char			*body;
	size_t			 len;
	long long		 wait;
	int			 rc;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		reply_refuse(req, ROUTE_EVENTS, REFUSAL_METHOD, 0, -1);
		return;
	}
	if ((p = ingest_auth(query_header(ih, "Authorization"), &why)) ==
	    NULL) {
		ingest_refuse(req, why, 0, NULL, NULL);
		return;
	}
	if (!treaty_subject_valid(subject)) {
		ingest_refuse(req, REFUSAL_BAD_SUBJECT, 0, p->name, NULL);
		return;
	}
	if (!ingest_allowed(p, subject)) {
		ingest_refuse(req, REFUSAL_SUBJECT_NOT_ALLOWED, 0, p->name,
		    subject);
		return;
	}
	ct = query_header(ih, "Content-Type");
	if (cevent_is_batch(ct)) {
		ingest_batch(req, p, subject);
		return;
	}
	if ((wait = ingest_rate(p, 1)) > 0) {
		ingest_limited(req, p, subject, wait);
		return;
	}
	len = evbuffer_get_length(in);
	if (len > API_BODY_MAX) {
		ingest_refuse(req, REFUSAL_TOO_LARGE, 0, p->name, subject);
		return;
	}
	body = (char *)evbuffer_pullup(in, -1);
	if (cevent_is_structured(ct))
		rc = cevent_from_structured(&ev, body ? body : "", len);
	else
		rc = cevent_from_binary(&ev, ih, body ? body : "", len);
	if (rc == -1) {
		ingest_reject(req, 400, "bad_event", ev.detail, p->name,
		    subject);
		cevent_free(&ev);
		return;
	}
	if ((rc = ingest_event_check(&ev, subject, &code, &detail)) != 0) {
		ingest_reject(req, rc, code, detail, p->name, subject);
		cevent_free(&ev);
		return;
	}

	ir = xmalloc(sizeof(*ir));
	ir->req = req;
	if (cevent_is_structured(ct))
		tp = ts = NULL;		/* its attributes say it, if at all */
	else
		ingest_trace(&ev, ih, &tp, &ts);
	ingest_msg_make(&ir->m, &ev, p, tp, ts);
	cevent_free(&ev);
	memcpy(ir->producer, p->name, sizeof(ir->producer));
	/* Valid suite subjects always fit. */
	memcpy(ir->subject, subject, strlen(subject) + 1);
	ir->start = now_ms();
	res = ingest_msg_store(&ir->m, subject, ingest_published_cb, ir);
	if (res == STORE_OK)
		return;
	if (res == STORE_TOO_LARGE)
		ingest_reject(req, 413, "too_large", "the event with its "
		    "headers is over the NATS server's max_payload", p->name,
		    subject);
	else
		ingest_reject(req, 503, "publish_failed",
		    res == STORE_OVERLOAD ? "too many events in flight; send "
		    "it again shortly" : "JetStream is not available; send it "
		    "again with the same id", p->name, subject);
	ingest_msg_free(&ir->m);
	free(ir);
}
