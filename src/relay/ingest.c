/*
 * ingest.c: POST /v1/events/<subject> (SPEC section 2).  Loop thread.
 *
 * The checks run in the order of the SPEC's table, so a request that fails
 * several gets the first one's answer.  An accepted event is published
 * asynchronously; the request is answered from the publish callback, so no
 * answer ever waits on another request's.
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
#include "http.h"
#include "ingest.h"
#include "json.h"
#include "api.h"
#include "log.h"
#include "metrics.h"
#include "ratelimit.h"
#include "store.h"
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
	char			*id;		/* decoded ce-id, for the body */
	/* A copy: a reload may free the producer before JetStream answers. */
	char			 producer[NAME_MAX_LEN + 1];
	char			 subject[TREATY_SUBJECT_MAX + 1];
	long long		 start;
};

static const struct config	*ingest_cfg;

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

/* One bucket per producer of the configuration, old ones kept by name. */
static void
ingest_buckets_sync(void)
{
	struct pbucket	*old = ingest_buckets, *nb;
	size_t		 i, k, nold = 0;

	for (k = 0; old != NULL && old[k].name[0] != '\0'; k++)
		nold++;
	nb = xcalloc(ingest_cfg->nproducers + 1, sizeof(*nb));
	for (i = 0; i < ingest_cfg->nproducers; i++) {
		memcpy(nb[i].name, ingest_cfg->producers[i].name,
		    sizeof(nb[i].name));
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
static long long
ingest_rate(const struct producer *p, int n)
{
	struct pbucket	*pb = &ingest_buckets[p - ingest_cfg->producers];

	if (p->rate <= 0)
		return 0;
	return bucket_take(&pb->b, p->rate, p->burst, n, now_ms());
}

#define INGEST_RATE_DETAIL	"this producer is over its rate; send it " \
				"again after Retry-After seconds"

/* Reject and log one request (metadata only). */
static void
ingest_reject(struct evhttp_request *req, int status, const char *code,
    const char *detail, const char *producer, const char *subject)
{
	struct evhttp_connection *c = evhttp_request_get_connection(req);
	char			*addr = NULL;
	ev_uint16_t		 port = 0;

	if (c != NULL)
		evhttp_connection_get_peer(c, &addr, &port);
	log_info("event rejected", "status=%d error=%s producer=%s subject=%s "
	    "remote=%s", status, code, log_q(producer), log_q(subject),
	    log_q(addr));
	http_error(req, ROUTE_EVENTS, status, code, detail);
}

/* The producer named by the bearer token, or NULL. */
static const struct producer *
ingest_auth(struct evhttp_request *req)
{
	char	 hex[AUTH_HASH_HEX];

	if (auth_bearer(req, hex) == -1)
		return NULL;
	return config_find_producer(ingest_cfg, hex);
}

/* 1 when one of the producer's patterns matches subject. */
static int
ingest_allowed(const struct producer *p, const char *subject)
{
	size_t	 i;

	for (i = 0; i < p->nsubjects; i++)
		if (treaty_pattern_match(p->subjects[i], subject))
			return 1;
	return 0;
}

/*
 * The checks SPEC 2 puts before 413, for a request whose body is refused
 * unread (door.c): 0 when none fails, else the status, with code and
 * detail.  The same order and answers as ingest_handle.
 */
int
ingest_precheck(const char *method, const char *subject, const char *auth,
    const char **code, const char **detail, long long *retry_after)
{
	const struct producer	*p;
	char			 hex[AUTH_HASH_HEX];

	if (strcmp(method, "POST") != 0) {
		*code = "method_not_allowed";
		*detail = "events are published with POST";
		return 405;
	}
	if (auth_bearer_value(auth, hex) == -1 ||
	    (p = config_find_producer(ingest_cfg, hex)) == NULL) {
		*code = "unauthenticated";
		*detail = "a producer's bearer token is required";
		return 401;
	}
	if (!treaty_subject_valid(subject)) {
		*code = "bad_subject";
		*detail = "the path must end in "
		    "evt|audit.<scope>.<product>.<entity>.<verb>";
		return 400;
	}
	if (!ingest_allowed(p, subject)) {
		*code = "subject_not_allowed";
		*detail = "this producer may not publish to this subject";
		return 403;
	}
	if (retry_after != NULL && (*retry_after = ingest_rate(p, 1)) > 0) {
		metrics_rate_limited(p->name);
		*code = "rate_limited";
		*detail = INGEST_RATE_DETAIL;
		return 429;
	}
	return 0;
}

/* JetStream answered (or did not): answer the request. */
static void
ingest_published_cb(void *arg, enum store_result res, int dup)
{
	struct ingest_req	*ir = arg;
	struct evbuffer		*b;

	if (res == STORE_OK) {
		b = evbuffer_new();
		json_accepted_body(b, ir->id, dup);
		http_reply(ir->req, ROUTE_EVENTS, 202, b);
		evbuffer_free(b);
		log_debug("event stored", "producer=%s subject=%s id=%s "
		    "duplicate=%d ms=%lld", ir->producer, ir->subject,
		    log_q(ir->id), dup, now_ms() - ir->start);
	} else
		ingest_reject(ir->req, 503, "publish_failed",
		    res == STORE_TIMEOUT ? "JetStream did not confirm the "
		    "store in time; send it again with the same id" :
		    "JetStream did not store the event; send it again with "
		    "the same id", ir->producer, ir->subject);
	free(ir->id);
	free(ir);
}

/* Handle POST /v1/events/<subject>. */
void
ingest_handle(struct evhttp_request *req, const char *subject)
{
	const struct producer	*p;
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq	*ih = evhttp_request_get_input_headers(req);
	struct store_header	 hdrs[CEVENT_MAX_ATTRS + 2];
	char			*enc[CEVENT_MAX_ATTRS + 1], *body, *msgid;
	struct cevent		 ev;
	struct ingest_req	*ir;
	enum store_result	 res;
	size_t			 len, i, nh = 0, nenc = 0;
	const char		*ct;
	long long		 wait;
	int			 rc;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		http_error(req, ROUTE_EVENTS, 405, "method_not_allowed",
		    "events are published with POST");
		return;
	}
	if ((p = ingest_auth(req)) == NULL) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer");
		ingest_reject(req, 401, "unauthenticated", "a producer's "
		    "bearer token is required", NULL, NULL);
		return;
	}
	if (!treaty_subject_valid(subject)) {
		ingest_reject(req, 400, "bad_subject", "the path must end in "
		    "evt|audit.<scope>.<product>.<entity>.<verb>", p->name,
		    NULL);
		return;
	}
	if (!ingest_allowed(p, subject)) {
		ingest_reject(req, 403, "subject_not_allowed", "this producer "
		    "may not publish to this subject", p->name, subject);
		return;
	}
	if ((wait = ingest_rate(p, 1)) > 0) {
		char	 ra[24];

		snprintf(ra, sizeof(ra), "%lld", wait);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", ra);
		metrics_rate_limited(p->name);
		ingest_reject(req, 429, "rate_limited", INGEST_RATE_DETAIL,
		    p->name, subject);
		return;
	}
	len = evbuffer_get_length(in);
	if (len > API_BODY_MAX) {
		ingest_reject(req, 413, "too_large", "the body is over "
		    API_STR(API_BODY_MAX_MIB) " MiB",
		    p->name, subject);
		return;
	}
	body = (char *)evbuffer_pullup(in, -1);
	ct = evhttp_find_header(ih, "Content-Type");
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
	if (!treaty_type_valid(ev.type)) {
		ingest_reject(req, 422, "bad_type", "type must be "
		    "<namespace>.<product>.<entity>.<verb>.v<major>", p->name,
		    subject);
		cevent_free(&ev);
		return;
	}
	if (!treaty_type_matches_subject(ev.type, subject)) {
		ingest_reject(req, 422, "type_does_not_match_subject", "the "
		    "type's product, entity and verb must be the subject's",
		    p->name, subject);
		cevent_free(&ev);
		return;
	}

	/* Stored in the NATS binding's binary mode, values percent-encoded. */
	for (i = 0; i < ev.nattrs; i++) {
		size_t	 vlen = strlen(ev.attrs[i].value);
		size_t	 cap = vlen * 3 + 1;
		size_t	 nlen = strlen(ev.attrs[i].name);
		char	*v = xmalloc(cap + nlen + 4);
		char	*k = v + cap;

		treaty_pct_encode(ev.attrs[i].value, vlen, v, cap);
		memcpy(k, "ce-", 3);
		memcpy(k + 3, ev.attrs[i].name, nlen + 1);
		enc[nenc++] = v;
		hdrs[nh].key = k;
		hdrs[nh++].value = v;
	}
	if (ev.content_type != NULL) {
		hdrs[nh].key = "content-type";
		hdrs[nh++].value = ev.content_type;
	}
	hdrs[nh].key = "Treaty-Producer";
	hdrs[nh++].value = p->name;
	/* Scoped by producer: nobody can suppress another's event id. */
	msgid = xjoin(p->name, ":", ev.id);

	ir = xcalloc(1, sizeof(*ir));
	ir->req = req;
	ir->id = xstrdup(ev.id);
	memcpy(ir->producer, p->name, sizeof(ir->producer));
	/* Valid suite subjects always fit. */
	memcpy(ir->subject, subject, strlen(subject) + 1);
	ir->start = now_ms();
	res = store_publish(subject, hdrs, nh, msgid, ev.data, ev.datalen,
	    ingest_published_cb, ir);
	free(msgid);
	for (i = 0; i < nenc; i++)
		free(enc[i]);
	cevent_free(&ev);
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
	free(ir->id);
	free(ir);
}
