/*
 * store-msg.c: message ownership.  A struct store_msg wraps one natsMsg
 * handed out by a consumer, a request or a peek; this file reads it, sends
 * its acknowledgement verbs and frees it.  Loop thread only.
 *
 * With manual acknowledgement a message has one owner at a time: whoever
 * holds the struct store_msg, until one of ack, nak, give_back or term
 * (which answer JetStream) or free (which does not) ends it.  Verbs are
 * core publishes to the message's $JS.ACK reply subject: they only fill
 * nats.c's buffer and never wait, but while nats.c reconnects its
 * reconnect thread holds the connection's lock through each attempt (up
 * to its 2 s connect timeout), and a publish would wait for it on the
 * loop.  So while NATS is away verbs are held here (ANSWERS_HELD_MAX,
 * beyond which JetStream redelivers after the ack wait) and sent when it
 * is back: an acknowledgement made during an outage still counts.
 *
 * natsMsg_Destroy hands each message to nats.c's garbage-collector thread,
 * and wakes that thread whenever it is idle: destroying messages one at a
 * time on the hot path costs a thread wake-up each.  They are collected
 * here (the grave) and destroyed together when GRAVE_MAX messages or
 * GRAVE_BYTES bytes have gathered, and at least every publish sweep, so
 * the collector wakes a few times per thousand events instead of once per
 * event.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "treaty.h"
#include "log.h"
#include "store-int.h"
#include "util.h"

#define GRAVE_MAX	512
#define GRAVE_BYTES	(4 * 1024 * 1024)
#define GRAVE_OVERHEAD	256	/* bytes counted per message besides data */
#define ANSWERS_HELD_MAX 65536	/* verbs kept while NATS is away */

struct held_answer {
	char			*reply;
	char			 verb[STORE_VERB_MAX];
	STAILQ_ENTRY(held_answer) entry;
};
static STAILQ_HEAD(, held_answer) held = STAILQ_HEAD_INITIALIZER(held);
static size_t			 nheld;

static struct {
	natsMsg		*msgs[GRAVE_MAX];
	int		 n;
	size_t		 bytes;
} grave;

/* Destroy every collected message. */
void
store_grave_flush(void)
{
	int	 i;

	for (i = 0; i < grave.n; i++)
		natsMsg_Destroy(grave.msgs[i]);
	grave.n = 0;
	grave.bytes = 0;
}

/*
 * The next message nats.c has queued for sub (NULL: none), without
 * waiting: 1 and *m, or 0.  Every poll of the loop asks each
 * subscription, mostly to find it empty, and an empty
 * natsSubscription_NextMsg(.., 0) costs about 3,000 instructions (nats.c
 * records a timeout error each time); the queue's length costs a lock.
 */
int
store_next(natsSubscription *sub, natsMsg **m)
{
	uint64_t	 queued = 0;

	if (sub == NULL || natsSubscription_QueuedMsgs(sub, &queued) !=
	    NATS_OK || queued == 0)
		return 0;
	return natsSubscription_NextMsg(m, sub, 0) == NATS_OK;
}

/* Collect a message for store_grave_flush. */
void
store_grave_add(natsMsg *m)
{
	grave.msgs[grave.n++] = m;
	grave.bytes += (size_t)natsMsg_GetDataLength(m) + GRAVE_OVERHEAD;
	if (grave.n == GRAVE_MAX || grave.bytes >= GRAVE_BYTES)
		store_grave_flush();
}

/* Wrap a JetStream message; its lease numbers from the reply subject. */
struct store_msg *
store_msg_wrap(natsMsg *m)
{
	struct store_msg	*sm = xcalloc(1, sizeof(*sm));
	struct store_lease	 l;

	sm->m = m;
	store_wire_ack_parse(natsMsg_GetReply(m), &l);
	sm->delivered = l.delivered;
	sm->seq = l.seq;
	return sm;
}

/*
 * Send a verb to a message's reply subject, if it has one from a consumer
 * (a peeked or re-read message has none: answering it does nothing).
 */
void
store_msg_answer(natsMsg *m, enum store_verb v, long long delay_ms)
{
	const char	*reply = natsMsg_GetReply(m);
	char		 verb[STORE_VERB_MAX];
	natsStatus	 s;

	if (!store_wire_is_ack(reply) || store_conn.nc == NULL)
		return;
	store_wire_verb(v, delay_ms, verb);
	if (!store_conn.connected) {
		struct held_answer	*h;

		if (nheld >= ANSWERS_HELD_MAX || store_conn.closing)
			return;		/* JetStream redelivers it */
		h = xmalloc(sizeof(*h));
		h->reply = xstrdup(reply);
		memcpy(h->verb, verb, sizeof(h->verb));
		STAILQ_INSERT_TAIL(&held, h, entry);
		nheld++;
		return;
	}
	if ((s = natsConnection_PublishString(store_conn.nc, reply, verb)) !=
	    NATS_OK)
		log_warnx("cannot answer JetStream", "verb=%s err=%s",
		    log_q(verb), log_q(natsStatus_GetText(s)));
}

/* NATS is back: send the verbs held meanwhile (or, closing, drop them). */
void
store_answers_flush(void)
{
	struct held_answer	*h;
	size_t			 n = 0;
	int			 send = store_conn.connected &&
				    !store_conn.closing;

	while ((h = STAILQ_FIRST(&held)) != NULL) {
		STAILQ_REMOVE_HEAD(&held, entry);
		if (send && natsConnection_PublishString(store_conn.nc,
		    h->reply, h->verb) == NATS_OK)
			n++;
		free(h->reply);
		free(h);
	}
	nheld = 0;
	if (n > 0)
		log_info("answers held while NATS was away sent",
		    "answers=%zu", n);
}

/* The message's subject. */
const char *
store_msg_subject(const struct store_msg *m)
{
	return natsMsg_GetSubject(m->m);
}

/* The message's payload. */
const void *
store_msg_data(const struct store_msg *m, size_t *len)
{
	*len = (size_t)natsMsg_GetDataLength(m->m);
	return natsMsg_GetData(m->m);
}

/* The stored size: payload and header lines; see store-msg.h. */
size_t
store_msg_size(const struct store_msg *m)
{
	return store_natsmsg_size(m->m);
}

/* The same of a natsMsg: NATS/1.0, each "key: value", the empty line. */
size_t
store_natsmsg_size(natsMsg *m)
{
	const char	**keys = NULL, *v;
	int		  n = 0, i;
	size_t		  sz = (size_t)natsMsg_GetDataLength(m) + 12;

	if (natsMsgHeader_Keys(m, &keys, &n) != NATS_OK)
		return sz;
	for (i = 0; i < n; i++)
		if (natsMsgHeader_Get(m, keys[i], &v) == NATS_OK)
			sz += strlen(keys[i]) + strlen(v) + 4;
	free((void *)keys);
	return sz;
}

/* First value of a header. */
const char *
store_msg_header(const struct store_msg *m, const char *key)
{
	const char	*v = NULL;

	if (natsMsgHeader_Get(m->m, key, &v) != NATS_OK)
		return NULL;
	return v;
}

/*
 * The stored value of header key, percent-decoded (ingest stores ce-*
 * values percent-encoded): malloc'd, or NULL when absent, empty or not
 * valid.
 */
char *
store_msg_header_decoded(const struct store_msg *m, const char *key)
{
	const char	*v = store_msg_header(m, key);
	size_t		 n, out;
	char		*buf;

	if (v == NULL)
		return NULL;
	n = strlen(v);
	buf = xmalloc(n + 1);
	if (treaty_pct_decode(v, n, buf, n + 1, &out) != TREATY_OK ||
	    out == 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Each header's first value. */
void
store_msg_headers(const struct store_msg *m,
    void (*fn)(void *arg, const char *key, const char *value), void *arg)
{
	const char	**keys = NULL, *v;
	int		  n = 0, i;

	if (natsMsgHeader_Keys(m->m, &keys, &n) != NATS_OK)
		return;
	for (i = 0; i < n; i++)
		if (natsMsgHeader_Get(m->m, keys[i], &v) == NATS_OK)
			fn(arg, keys[i], v);
	free((void *)keys);
}

/* JetStream's delivery count. */
uint64_t
store_msg_delivered(const struct store_msg *m)
{
	return m->delivered;
}

/* The message's sequence in WORK. */
uint64_t
store_msg_seq(const struct store_msg *m)
{
	return m->seq;
}

/* Its lease: the JetStream acknowledgement subject's numbers. */
void
store_msg_lease(const struct store_msg *m, struct store_lease *l)
{
	store_wire_ack_parse(natsMsg_GetReply(m->m), l);
}

/* Acknowledge and free. */
void
store_msg_ack(struct store_msg *m)
{
	store_msg_answer(m->m, STORE_ACK, 0);
	store_msg_free(m);
}

/* Negative acknowledgement with a redelivery delay, then free. */
void
store_msg_nak(struct store_msg *m, long long delay_ms)
{
	store_msg_answer(m->m, STORE_NAK, delay_ms);
	store_msg_free(m);
}

/* Back to JetStream at once, then free. */
void
store_msg_give_back(struct store_msg *m)
{
	store_msg_nak(m, 0);
}

/* Terminate, then free. */
void
store_msg_term(struct store_msg *m)
{
	store_msg_answer(m->m, STORE_TERM, 0);
	store_msg_free(m);
}

/* Work in progress: restart the ack wait. */
void
store_msg_progress(struct store_msg *m)
{
	store_msg_answer(m->m, STORE_PROGRESS, 0);
}

/* Its reply subject (a request's), or NULL. */
const char *
store_msg_reply(const struct store_msg *m)
{
	return natsMsg_GetReply(m->m);
}

/* Free without answering. */
void
store_msg_free(struct store_msg *m)
{
	if (m == NULL)
		return;
	store_grave_add(m->m);
	free(m);
}
