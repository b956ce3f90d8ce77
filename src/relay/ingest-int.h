/*
 * ingest-int.h: what ingest.c (one event per request) shares with
 * ingest-batch.c (SPEC 14's batches): the checks after the request's
 * own, the stored form of an event, and the rejection log line.  Loop
 * thread only.
 */
#ifndef INGEST_INT_H
#define INGEST_INT_H

#include <stddef.h>

#include "reply.h"
#include "store-pub.h"

struct cevent;
struct config;
struct evhttp_request;
struct producer;

/* The configuration (ingest_init), replaced in place on reload. */
extern const struct config	*ingest_cfg;

/*
 * An event in its stored form (SPEC 2): NATS headers in the binding's
 * binary mode, values percent-encoded, Treaty-Producer, and Nats-Msg-Id
 * scoped by producer; one allocation holds it all, data included, so it
 * outlives the request's body and the event it was made from.
 */
struct ingest_msg {
	char			*id;		/* decoded ce-id, for answers */
	char			*msgid;		/* Nats-Msg-Id */
	struct store_header	*h;
	size_t			 nh;
	const char		*data;
	size_t			 len;
	char			*mem;		/* owns everything above */
};

/*
 * ev's stored form for producer p into m; ev may be freed after.  tp and
 * ts: a binary-mode request's plain traceparent and tracestate, stored
 * as TRACEPARENT_HEADER and TRACESTATE_HEADER (NULL: none).
 */
void	ingest_msg_make(struct ingest_msg *m, const struct cevent *ev,
	    const struct producer *p, const char *tp, const char *ts);
void	ingest_msg_free(struct ingest_msg *m);
/* Publish m on subject; store_publish's answer. */
enum store_result ingest_msg_store(const struct ingest_msg *m,
	    const char *subject, store_publish_cb cb, void *arg);

/*
 * The checks SPEC 2 makes of a parsed event against the subject: 0, or
 * 422 with code and detail.
 */
int	ingest_event_check(const struct cevent *ev, const char *subject,
	    const char **code, const char **detail);
/*
 * Take n events from p's token bucket: 0, or the whole seconds to wait
 * (the request is then answered 429; ingest_limited says so).
 */
long long ingest_rate(const struct producer *p, int n);
void	ingest_limited(struct evhttp_request *req, const struct producer *p,
	    const char *subject, long long wait);
/*
 * Reject and log one request (metadata only): status, code and detail;
 * index >= 0 names a batch's event at fault.
 */
void	ingest_reject_at(struct evhttp_request *req, int status,
	    const char *code, const char *detail, const char *producer,
	    const char *subject, long long index);
/* The same with refusal r's answer (SPEC 2's, written once: reply.c). */
void	ingest_refuse(struct evhttp_request *req, enum refusal r,
	    long long retry_after, const char *producer, const char *subject);

/* POST of a batch (application/cloudevents-batch+json), checks passed
 * up to 403. */
void	ingest_batch(struct evhttp_request *req, const struct producer *p,
	    const char *subject);

#endif /* INGEST_INT_H */
