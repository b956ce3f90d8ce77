/*
 * store.c: the only file that includes nats.h.  The NATS connection, the
 * WORK and AUDIT streams, and asynchronous JetStream publishes.
 *
 * THE THREADING RULE (see bridge.h).  nats.c's libevent adapter does the
 * socket I/O on our loop, but nats.c runs the publish-acknowledgement
 * handler and the connection callbacks on its own threads.  Every function
 * below marked "Runs on a nats.c thread" only fills a bridge item and posts
 * it; everything else here runs on the loop thread.  Stream management
 * (js_GetStreamInfo, js_AddStream, js_UpdateStream) waits for a reply that
 * the loop reads, so it runs as a bridge job on the worker thread.
 *
 * Publishes do not use nats.c's asynchronous JetStream publish: its
 * acknowledgement handler runs on a nats.c thread, which cost one thread
 * wake-up per event on the hot path.  Instead each event is a plain core
 * publish whose reply subject is <inbox>.<seq>, and the acknowledgements
 * land in a synchronous subscription on <inbox>.* that the loop thread
 * polls with natsSubscription_NextMsg(0) (which never waits) right after
 * nats.c has processed a read on the connection's socket: our own
 * event-loop adapter (store_attach and friends) calls both in one
 * callback.  The data path
 * therefore never leaves the loop thread; the bridge carries only
 * connection events and management jobs.  Publishes in flight are bounded
 * (cfg->max_pending) and each has a deadline (cfg->publish_timeout_ms)
 * enforced by a sweep timer: a publish in flight when NATS dies is
 * answered 503 on time, never left hanging.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/thread.h>
#include <nats/nats.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "bridge.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "util.h"

#define STREAM_CHECK_MS		10000	/* background re-check of streams */
#define SWEEP_MS		100	/* publish deadlines */
#define JS_API_WAIT_MS		5000	/* stream management requests */
#define DRAIN_MS		2000
#define OUT_BUFFER_MAX		(64 * 1024 * 1024)	/* unsent bytes */
#define CHECK_RETRY_MS		1000	/* after a stream check without answer */
#define CHECK_TRANSIENT		(-2)

/* One publish waiting for JetStream's acknowledgement. */
struct pub {
	uint64_t		 seq;		/* key: reply subject suffix */
	store_publish_cb	 cb;
	void			*arg;
	enum stream_id		 stream;
	long long		 deadline;	/* backstop, now_ms() */
	struct pub		*hnext;		/* hash chain */
	TAILQ_ENTRY(pub)	 entry;		/* oldest first */
};
TAILQ_HEAD(pub_list, pub);

/* Connection event handed from a nats.c thread to the loop. */
enum conn_event {
	CONN_CONNECTED,
	CONN_DISCONNECTED,
	CONN_RECONNECTED,
	CONN_CLOSED
};
struct connev {
	struct bridge_item	 item;
	enum conn_event		 what;
};

/* The stream check job, on the worker thread. */
struct stream_job {
	struct bridge_job	 job;
	int			 result;	/* 0, -1, CHECK_TRANSIENT */
	int			 consumer_failed;
	char			 cdetail[512];	/* consumers created, updated, failed */
	char			 detail[256];
};

/*
 * A push consumer.  The list is built at start-up and never changes
 * after, so the worker thread may read it while ensuring consumers.
 */
struct consumer {
	char			*name;		/* relay-<subscriber> */
	char			*deliver;	/* deliver subject; NULL: pull */
	char			*filter;
	int			 max_deliver;
	int			 max_ack_pending;
	int			 ack_wait_s;
	store_msg_cb		 cb;
	store_msg_cb		 exhausted_cb;
	void			*arg;
	natsSubscription	*sub;		/* queue subscription, polled */
	/*
	 * A pull consumer's replies: JetStream sends the messages of a pull
	 * request with their own subjects, so only the subscription tells
	 * which request they answer.  One subscription per kind of request,
	 * one request of each kind at a time.
	 */
	int			 idx;
	natsSubscription	*pull_sub[STORE_PULL_KINDS];
	struct store_req	*pull_req[STORE_PULL_KINDS];
	TAILQ_ENTRY(consumer)	 entry;
};
TAILQ_HEAD(consumer_list, consumer);

struct store_msg {
	natsMsg			*m;
	uint64_t		 delivered;
	uint64_t		 seq;
};

/*
 * A JetStream API request whose replies come to <inbox>.r.<id> and are
 * handed to cb on the loop thread (store_request).
 */
struct store_req {
	uint64_t		 id;
	store_reply_cb		 cb;
	void			*arg;
	struct event		 timeout;
	struct consumer		*pull;		/* a pull request's consumer */
	enum store_pull_kind	 kind;
	TAILQ_ENTRY(store_req)	 entry;
};
TAILQ_HEAD(req_list, store_req);

#define POLL_BATCH		256	/* messages per consumer per poll */
#define EXHAUSTED_SUBJECT \
	"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.WORK.*"

/* Fetching a message JetStream gave up on, on the worker thread. */
struct exhausted_job {
	struct bridge_job	 job;
	struct consumer		*c;
	uint64_t		 seq;
	uint64_t		 deliveries;
	natsMsg			*msg;		/* NULL: no longer in WORK */
	char			 err[96];
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	natsOptions		*opts;
	natsConnection		*nc;
	jsCtx			*js;
	int			 connected;
	int			 streams_ready;
	int			 closing;
	struct pub_list		 pubs;
	int			 npubs;
	struct pub		**hash;
	size_t			 hmask;
	struct event		 sweep_ev;
	struct event		 check_ev;
	struct event		 retry_ev;	/* one-shot re-check */
	struct event		 drain_ev;
	int			 check_running;
	void			(*drained)(void);
	int			 max_payload;
	natsInbox		*inbox;		/* reply prefix for publishes */
	size_t			 inbox_len;
	natsSubscription	*acks;		/* <inbox>.*, polled */
	uint64_t		 next_seq;
	struct consumer_list	 consumers;
	natsSubscription	*exhausted;	/* MAX_DELIVERIES advisories */
	natsSubscription	*replies;	/* <inbox>.r.*, polled */
	struct req_list		 reqs;
	uint64_t		 next_req;
	int			 npull;
	struct event		 repoll_ev;	/* more messages were waiting */
} st;

static void	store_check_streams(void);
static void	requests_fail_all(void);
static void	store_set_state(int, int);

#define ACK_NO_STREAM	(-503)	/* no responders: no stream for the subject */

/*
 * natsMsg_Destroy hands each message to nats.c's garbage-collector thread,
 * and wakes that thread whenever it is idle: destroying messages one at a
 * time on the hot path costs a thread wake-up each.  We collect them here
 * and destroy them together when GRAVE_MAX messages or GRAVE_BYTES bytes
 * have gathered, and at least every SWEEP_MS, so the collector wakes a few
 * times per thousand events instead of once per event.
 */
#define GRAVE_MAX	512
#define GRAVE_BYTES	(4 * 1024 * 1024)
static natsMsg	*grave[GRAVE_MAX];
static int	 ngrave;
static size_t	 grave_bytes;

/* Destroy every collected message. */
static void
grave_flush(void)
{
	int	 i;

	for (i = 0; i < ngrave; i++)
		natsMsg_Destroy(grave[i]);
	ngrave = 0;
	grave_bytes = 0;
}

/* Collect a message for grave_flush. */
static void
grave_add(natsMsg *m)
{
	grave[ngrave++] = m;
	grave_bytes += (size_t)natsMsg_GetDataLength(m) + 256;
	if (ngrave == GRAVE_MAX || grave_bytes >= GRAVE_BYTES)
		grave_flush();
}

/* Hash a publish sequence number. */
static size_t
pub_slot(uint64_t seq)
{
	return (size_t)(seq * 0x9E3779B97F4A7C15ULL >> 20) & st.hmask;
}

/* Remove pub from the hash, the list and the gauge. */
static void
pub_unlink(struct pub *p)
{
	struct pub	**pp = &st.hash[pub_slot(p->seq)];

	while (*pp != NULL && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp == p)
		*pp = p->hnext;
	TAILQ_REMOVE(&st.pubs, p, entry);
	st.npubs--;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, st.npubs);
}

/* Find the pub for a sequence number, or NULL (it timed out already). */
static struct pub *
pub_find(uint64_t seq)
{
	struct pub	*p;

	for (p = st.hash[pub_slot(seq)]; p != NULL; p = p->hnext)
		if (p->seq == seq)
			return p;
	return NULL;
}

/* Answer one publish and free it. */
static void
pub_close(struct pub *p, enum store_result res, int dup)
{
	pub_unlink(p);
	p->cb(p->arg, res, dup);
	free(p);
}

/*
 * 1 when key (with its quotes) is followed by ':' and true, with any JSON
 * whitespace between: nats-server writes "duplicate": true.
 */
#define JSON_WS(c)	((c) == ' ' || (c) == '\t' || (c) == '\r' || (c) == '\n')
static int
json_flag_true(const char *data, size_t len, const char *key)
{
	const char	*p = memmem(data, len, key, strlen(key));
	const char	*end = data + len;

	if (p == NULL)
		return 0;
	for (p += strlen(key); p < end && JSON_WS(*p); p++)
		;
	if (p == end || *p++ != ':')
		return 0;
	for (; p < end && JSON_WS(*p); p++)
		;
	return end - p >= 4 && memcmp(p, "true", 4) == 0;
}

/*
 * Parse a JetStream publish acknowledgement: {"stream":..,"seq":..,
 * "duplicate":true} or {"error":{"code":..,"err_code":..,"description":..}}.
 * Returns 0 and sets *dup, or -1 with *code and desc.
 */
static int
puback_parse(natsMsg *m, int *dup, int *code, char *desc, size_t dlen)
{
	const char	*data = natsMsg_GetData(m), *status = NULL;
	int		 len = natsMsg_GetDataLength(m);
	char		*text, ebuf[64];
	yajl_val	 root, v;
	static const char *err_path[] = { "error", NULL };
	static const char *code_path[] = { "err_code", NULL };
	static const char *desc_path[] = { "description", NULL };
	static const char *dup_path[] = { "duplicate", NULL };
	static const char *seq_path[] = { "seq", NULL };

	*dup = 0;
	*code = 0;
	snprintf(desc, dlen, "unreadable acknowledgement");
	if (natsMsgHeader_Get(m, "Status", &status) == NATS_OK &&
	    status != NULL) {
		snprintf(desc, dlen, "status %s%s", status,
		    strcmp(status, "503") == 0 ? " (no stream responded)" : "");
		*code = strcmp(status, "503") == 0 ? ACK_NO_STREAM : 0;
		return -1;
	}
	if (data == NULL || len <= 0 || len > 4096)
		return -1;
	/*
	 * The usual answer, {"stream":"WORK","seq":N[,"duplicate":true]}
	 * (perhaps with "domain"), is recognised without building a tree:
	 * none of its string values can contain these keys, since stream
	 * names are ours.  Anything else goes through yajl.
	 */
	if (memmem(data, (size_t)len, "\"error\"", 7) == NULL &&
	    memmem(data, (size_t)len, "\"seq\"", 5) != NULL) {
		*dup = json_flag_true(data, (size_t)len, "\"duplicate\"");
		return 0;
	}
	text = xstrndup(data, (size_t)len);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	free(text);
	if (root == NULL || !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return -1;
	}
	if ((v = yajl_tree_get(root, err_path, yajl_t_object)) != NULL) {
		yajl_val c = yajl_tree_get(v, code_path, yajl_t_number);
		yajl_val d = yajl_tree_get(v, desc_path, yajl_t_string);

		*code = c != NULL && YAJL_IS_INTEGER(c) ?
		    (int)YAJL_GET_INTEGER(c) : 0;
		snprintf(desc, dlen, "%s", d != NULL ? d->u.string :
		    "JetStream error");
		yajl_tree_free(root);
		return -1;
	}
	if (yajl_tree_get(root, seq_path, yajl_t_number) == NULL) {
		yajl_tree_free(root);
		return -1;
	}
	*dup = yajl_tree_get(root, dup_path, yajl_t_true) != NULL;
	yajl_tree_free(root);
	return 0;
}

/* One acknowledgement, on the loop: answer the request it belongs to. */
static void
store_ack(natsMsg *m)
{
	const char	*subj = natsMsg_GetSubject(m);
	char		*end, desc[160];
	uint64_t	 seq;
	struct pub	*p;
	int		 dup, code;

	if (subj == NULL || strlen(subj) <= st.inbox_len + 1)
		return;
	seq = strtoull(subj + st.inbox_len + 1, &end, 10);
	if (*end != '\0' || (p = pub_find(seq)) == NULL) {
		log_debug("late publish acknowledgement", NULL);
		return;
	}
	if (puback_parse(m, &dup, &code, desc, sizeof(desc)) == 0) {
		metrics_stored(p->stream, dup);
		pub_close(p, STORE_OK, dup);
	} else {
		metrics_publish_failure(PUBFAIL_NATS);
		log_warnx("publish failed", "stream=%s code=%d detail=%s",
		    p->stream == STREAM_WORK ? "WORK" : "AUDIT", code,
		    log_q(desc));
		pub_close(p, STORE_FAILED, 0);
		if (code == ACK_NO_STREAM && st.streams_ready) {
			/* A stream vanished: stop taking events, re-create it. */
			store_set_state(1, 0);
			store_check_streams();
		}
	}
}

/*
 * The delivery count and stream sequence from a JetStream ack subject:
 * $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>, or
 * the newer form with <domain>.<account hash> before <stream> (and a
 * token after).
 */
static void
ack_subject_parse(const char *reply, struct store_lease *l)
{
	const char	*tok[16];
	int		 n = 0, base;
	const char	*p;

	memset(l, 0, sizeof(*l));
	if (reply == NULL || strncmp(reply, "$JS.ACK.", 8) != 0)
		return;		/* not delivered by a consumer */
	l->delivered = 1;
	for (p = reply; p != NULL && n < 16; p = strchr(p, '.')) {
		if (*p == '.')
			p++;
		tok[n++] = p;
	}
	if (n == 9)
		base = 4;
	else if (n >= 11)
		base = 6;
	else
		return;
	l->delivered = strtoull(tok[base], NULL, 10);
	l->seq = strtoull(tok[base + 1], NULL, 10);
	l->dseq = strtoull(tok[base + 2], NULL, 10);
	l->ts = strtoll(tok[base + 3], NULL, 10);
}

/* Wrap a JetStream message; its lease from the reply subject. */
static struct store_msg *
store_msg_new(natsMsg *m)
{
	struct store_msg	*sm = xcalloc(1, sizeof(*sm));
	struct store_lease	 l;

	sm->m = m;
	ack_subject_parse(natsMsg_GetReply(m), &l);
	sm->delivered = l.delivered;
	sm->seq = l.seq;
	return sm;
}

/* Worker thread: load the message from WORK. */
static void
exhausted_job_work(struct bridge_job *job)
{
	struct exhausted_job *xj = BRIDGE_CONTAINER(job, struct exhausted_job,
	    job);
	jsErrCode	 jerr = 0;
	natsStatus	 s;

	if (st.js == NULL)
		return;
	s = js_GetMsg(&xj->msg, st.js, "WORK", xj->seq, NULL, &jerr);
	if (s != NATS_OK) {
		xj->msg = NULL;
		snprintf(xj->err, sizeof(xj->err), "%s (%d)",
		    natsStatus_GetText(s), (int)jerr);
	}
}

/* Loop thread: hand the message to its consumer's exhausted callback. */
static void
exhausted_job_done(struct bridge_job *job)
{
	struct exhausted_job *xj = BRIDGE_CONTAINER(job, struct exhausted_job,
	    job);
	struct store_msg *sm;

	if (st.closing || xj->msg == NULL) {
		if (!st.closing)
			log_warnx("gave-up event not readable", "consumer=%s "
			    "seq=%llu err=%s", xj->c->name,
			    (unsigned long long)xj->seq, log_q(xj->err));
		if (xj->msg != NULL)
			natsMsg_Destroy(xj->msg);
		free(xj);
		return;
	}
	/* No reply subject: answering it is a no-op. */
	sm = xcalloc(1, sizeof(*sm));
	sm->m = xj->msg;
	sm->delivered = xj->deliveries;
	sm->seq = xj->seq;
	xj->c->exhausted_cb(xj->c->arg, sm);
	free(xj);
}

/*
 * JetStream gave up on a message of one of our consumers without our
 * term: its last attempt was given back or lost with a relay.  Load it
 * (on the worker) so the subscriber's drop is recorded like any other.
 */
static void
exhausted_advisory(natsMsg *m)
{
	char		 ebuf[64], *js;
	const char	*p_con[] = { "consumer", NULL };
	const char	*p_seq[] = { "stream_seq", NULL };
	const char	*p_dc[] = { "deliveries", NULL };
	yajl_val	 root, v;
	struct consumer	*c = NULL;
	struct exhausted_job *xj;
	const char	*name;

	js = xstrndup(natsMsg_GetData(m), natsMsg_GetDataLength(m));
	root = yajl_tree_parse(js, ebuf, sizeof(ebuf));
	free(js);
	if (root == NULL)
		return;
	v = yajl_tree_get(root, p_con, yajl_t_string);
	if (v != NULL && (name = YAJL_GET_STRING(v)) != NULL)
		TAILQ_FOREACH(c, &st.consumers, entry)
			if (strcmp(c->name, name) == 0)
				break;
	if (c != NULL && c->exhausted_cb != NULL &&
	    (v = yajl_tree_get(root, p_seq, yajl_t_number)) != NULL &&
	    YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) > 0) {
		xj = xcalloc(1, sizeof(*xj));
		xj->c = c;
		xj->seq = (uint64_t)YAJL_GET_INTEGER(v);
		v = yajl_tree_get(root, p_dc, yajl_t_number);
		xj->deliveries = v != NULL && YAJL_IS_INTEGER(v) ?
		    (uint64_t)YAJL_GET_INTEGER(v) : (uint64_t)c->max_deliver;
		xj->job.work = exhausted_job_work;
		xj->job.done = exhausted_job_done;
		bridge_run(&xj->job);
	}
	yajl_tree_free(root);
}

/* Hand one consumer message to its callback. */
static void
consumer_deliver(struct consumer *c, natsMsg *m)
{
	/* Status messages (no reply subject) are not events. */
	if (natsMsg_GetReply(m) == NULL) {
		grave_add(m);
		return;
	}
	c->cb(c->arg, store_msg_new(m));
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
	ack_subject_parse(natsMsg_GetReply(m->m), l);
}

/* Send an acknowledgement verb to the message's reply subject. */
static void
store_msg_reply(struct store_msg *m, const char *verb)
{
	const char	*reply = natsMsg_GetReply(m->m);
	natsStatus	 s;

	/* A core publish: it only fills nats.c's buffer, never waits. */
	if (reply != NULL && st.nc != NULL &&
	    (s = natsConnection_PublishString(st.nc, reply, verb)) != NATS_OK)
		log_warnx("cannot answer JetStream", "verb=%s err=%s",
		    log_q(verb), log_q(natsStatus_GetText(s)));
}

/* Acknowledge and free. */
void
store_msg_ack(struct store_msg *m)
{
	store_msg_reply(m, "+ACK");
	store_msg_free(m);
}

/* Negative acknowledgement with a redelivery delay, then free. */
void
store_msg_nak(struct store_msg *m, long long delay_ms)
{
	char	 verb[64];

	snprintf(verb, sizeof(verb), "-NAK {\"delay\":%lld}",
	    delay_ms * 1000000LL);
	store_msg_reply(m, verb);
	store_msg_free(m);
}

/* Terminate (plain +TERM: a reason makes nats-server 2.9 ignore it). */
void
store_msg_term(struct store_msg *m)
{
	store_msg_reply(m, "+TERM");
	store_msg_free(m);
}

/* Work in progress: restart the ack wait. */
void
store_msg_progress(struct store_msg *m)
{
	store_msg_reply(m, "+WPI");
}

/* Free without answering. */
void
store_msg_free(struct store_msg *m)
{
	if (m == NULL)
		return;
	grave_add(m->m);
	free(m);
}

/* A consumer of either kind, on the list (set up at store_init). */
static struct consumer *
consumer_add(const char *name, const char *filter, int max_deliver,
    int max_ack_pending, int ack_wait_s, store_msg_cb exhausted_cb, void *arg)
{
	struct consumer	*c = xcalloc(1, sizeof(*c));

	if (st.consumers.tqh_last == NULL)	/* before store_init */
		TAILQ_INIT(&st.consumers);
	c->name = xjoin("relay", "-", name);
	c->filter = xstrdup(filter);
	c->max_deliver = max_deliver;
	c->max_ack_pending = max_ack_pending;
	c->ack_wait_s = ack_wait_s;
	c->exhausted_cb = exhausted_cb;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&st.consumers, c, entry);
	return c;
}

/* Register a push consumer; see store.h. */
void
store_consumer_add(const char *name, const char *filter, int max_deliver,
    int max_ack_pending, int ack_wait_s, store_msg_cb cb,
    store_msg_cb exhausted_cb, void *arg)
{
	struct consumer	*c = consumer_add(name, filter, max_deliver,
	    max_ack_pending, ack_wait_s, exhausted_cb, arg);

	/* Outside evt.> and audit.>, so no stream captures deliveries. */
	c->deliver = xjoin("treaty.deliver", ".", name);
	c->cb = cb;
}

/* Register a pull consumer; see store.h. */
void
store_pull_consumer_add(const char *name, const char *filter,
    int max_deliver, int max_ack_pending, int ack_wait_s,
    store_msg_cb exhausted_cb, void *arg)
{
	struct consumer	*c = consumer_add(name, filter, max_deliver,
	    max_ack_pending, ack_wait_s, exhausted_cb, arg);

	c->idx = st.npull++;
}

/* End a request: off the list, timer off, freed (no callback). */
static void
req_free(struct store_req *r)
{
	if (r->pull != NULL && r->pull->pull_req[r->kind] == r)
		r->pull->pull_req[r->kind] = NULL;
	event_del(&r->timeout);
	TAILQ_REMOVE(&st.reqs, r, entry);
	free(r);
}

/* End a request with a status: freed first, then told. */
static void
req_free_cb(struct store_req *r, int status)
{
	store_reply_cb	 cb = r->cb;
	void		*cbarg = r->arg;

	req_free(r);
	cb(cbarg, NULL, status);
}

/* A request's time is up. */
static void
req_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	req_free_cb(arg, STORE_REPLY_TIMEOUT);
}

/* Send a request with reply subject reply; replies go to cb. */
static struct store_req *
request_send(const char *subject, const char *reply, uint64_t id,
    const char *data, long long timeout_ms, store_reply_cb cb, void *arg)
{
	struct store_req	*r;
	struct timeval		 tv;
	natsStatus		 s;

	/* A core publish: it only fills nats.c's buffer, never waits. */
	s = natsConnection_PublishRequestString(st.nc, subject, reply, data);
	if (s != NATS_OK) {
		log_warnx("cannot send JetStream request", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->id = id;
	r->cb = cb;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&st.reqs, r, entry);
	evtimer_assign(&r->timeout, st.base, req_timeout_cb, r);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = timeout_ms % 1000 * 1000;
	evtimer_add(&r->timeout, &tv);
	return r;
}

/* 1 when requests can be sent now. */
static int
request_ok(void)
{
	return st.nc != NULL && st.connected && !st.closing &&
	    st.replies != NULL;
}

/* Send a request whose replies go to cb; see store.h. */
struct store_req *
store_request(const char *subject, const char *data, long long timeout_ms,
    store_reply_cb cb, void *arg)
{
	char		 reply[128];
	uint64_t	 id = ++st.next_req;

	if (!request_ok())
		return NULL;
	snprintf(reply, sizeof(reply), "%s.r.%llu", (const char *)st.inbox,
	    (unsigned long long)id);
	return request_send(subject, reply, id, data, timeout_ms, cb, arg);
}

/* Forget a request: later replies are given back (see req_reply). */
void
store_request_cancel(struct store_req *r)
{
	if (r != NULL)
		req_free(r);
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
	TAILQ_FOREACH(r, &st.reqs, entry)
		if (r->id == id)
			return r;
	return NULL;
}

/* A consumer's message nobody waits for: give it back at once. */
static void
give_back(natsMsg *m)
{
	const char	*reply = natsMsg_GetReply(m);

	if (reply != NULL && strncmp(reply, "$JS.ACK.", 8) == 0)
		natsConnection_PublishString(st.nc, reply, "-NAK");
	grave_add(m);
}

/* One reply to a plain request, on the loop: to its callback. */
static void
req_reply(natsMsg *m)
{
	struct store_req	*r = req_by_subject(natsMsg_GetSubject(m));
	int			 code = msg_status(m);

	if (r == NULL) {
		grave_add(m);
		return;
	}
	if (code != 0) {
		grave_add(m);
		req_free_cb(r, code);
		return;
	}
	if (r->cb(r->arg, store_msg_new(m), 0) == 0)
		req_free(r);
}

/*
 * One reply on a pull consumer's subscription of one kind.  A status
 * message (404 no messages, 408 expired, 409 ...) has the request's own
 * reply subject and ends that request; a message belongs to the request
 * of that kind now outstanding, or, when there is none (it timed out or
 * was cancelled), goes back to JetStream.
 */
static void
pull_reply(struct consumer *c, enum store_pull_kind kind, natsMsg *m)
{
	struct store_req	*r;
	int			 code = msg_status(m);

	if (code != 0) {
		r = req_by_subject(natsMsg_GetSubject(m));
		grave_add(m);
		if (r != NULL && r->pull == c)
			req_free_cb(r, code);
		return;
	}
	if ((r = c->pull_req[kind]) == NULL) {
		give_back(m);
		return;
	}
	if (r->cb(r->arg, store_msg_new(m), 0) == 0)
		req_free(r);
}

/* Fetch from a pull consumer; see store.h. */
struct store_req *
store_pull(const char *name, enum store_pull_kind kind, int batch,
    long long wait_ms, store_reply_cb cb, void *arg)
{
	struct consumer		*c;
	struct store_req	*r;
	char			 subj[256], reply[160], data[128];
	uint64_t		 id;

	TAILQ_FOREACH(c, &st.consumers, entry)
		if (c->deliver == NULL && strcmp(c->name + 6, name) == 0)
			break;
	if (c == NULL || c->pull_req[kind] != NULL || !request_ok())
		return NULL;
	id = ++st.next_req;
	snprintf(subj, sizeof(subj), "$JS.API.CONSUMER.MSG.NEXT.WORK.%s",
	    c->name);
	snprintf(reply, sizeof(reply), "%s.p.%d.%d.%llu",
	    (const char *)st.inbox, c->idx, (int)kind, (unsigned long long)id);
	if (kind == STORE_PULL_NOW)
		snprintf(data, sizeof(data), "{\"batch\":%d,\"no_wait\":true}",
		    batch);
	else
		snprintf(data, sizeof(data), "{\"batch\":%d,\"expires\":%lld}",
		    batch, wait_ms * 1000000LL);
	/* Our own deadline a little after the server's. */
	r = request_send(subj, reply, id, data,
	    (kind == STORE_PULL_WAIT ? wait_ms : 0) + 5000, cb, arg);
	if (r != NULL) {
		r->pull = c;
		r->kind = kind;
		c->pull_req[kind] = r;
	}
	return r;
}

/* A peek, on the worker thread. */
struct peek_job {
	struct bridge_job	 job;
	struct consumer		*c;
	int			 max;
	store_peek_cb		 cb;
	void			*arg;
	natsMsg			*msgs[STORE_PEEK_MAX];
	int			 n;
	int			 failed;
};

/*
 * Worker thread: the messages after the last one the consumer delivered
 * that match its filter, by direct gets (no consumer state changes).
 */
static void
peek_job_work(struct bridge_job *job)
{
	struct peek_job	*pj = BRIDGE_CONTAINER(job, struct peek_job, job);
	jsConsumerInfo	*ci = NULL;
	jsDirectGetMsgOptions dg;
	jsErrCode	 code = 0;
	natsMsg		*m;
	const char	*v;
	uint64_t	 seq;
	natsStatus	 s;

	if (st.js == NULL || js_GetConsumerInfo(&ci, st.js, "WORK",
	    pj->c->name, NULL, &code) != NATS_OK) {
		pj->failed = 1;
		return;
	}
	seq = ci->Delivered.Stream + 1;
	jsConsumerInfo_Destroy(ci);
	while (pj->n < pj->max) {
		jsDirectGetMsgOptions_Init(&dg);
		dg.Sequence = seq;
		dg.NextBySubject = pj->c->filter;
		m = NULL;
		s = js_DirectGetMsg(&m, st.js, "WORK", NULL, &dg);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK) {
			pj->failed = pj->n == 0;
			break;
		}
		pj->msgs[pj->n++] = m;
		if (natsMsgHeader_Get(m, "Nats-Sequence", &v) != NATS_OK ||
		    (seq = strtoull(v, NULL, 10)) == 0)
			break;
		seq++;
	}
}

/* Loop thread: hand the messages over. */
static void
peek_job_done(struct bridge_job *job)
{
	struct peek_job		*pj = BRIDGE_CONTAINER(job, struct peek_job,
				    job);
	struct store_msg	*sm[STORE_PEEK_MAX];
	const char		*v;
	int			 i;

	for (i = 0; i < pj->n; i++) {
		sm[i] = xcalloc(1, sizeof(*sm[i]));
		sm[i]->m = pj->msgs[i];
		if (natsMsgHeader_Get(pj->msgs[i], "Nats-Sequence", &v) ==
		    NATS_OK)
			sm[i]->seq = strtoull(v, NULL, 10);
	}
	if (st.closing) {
		for (i = 0; i < pj->n; i++)
			store_msg_free(sm[i]);
		pj->cb(pj->arg, NULL, 0, -1);
	} else
		pj->cb(pj->arg, sm, pj->n, pj->failed ? -1 : 0);
	free(pj);
}

/* Look at what a pull consumer would hand out next; see store.h. */
int
store_peek(const char *name, int max, store_peek_cb cb, void *arg)
{
	struct consumer	*c;
	struct peek_job	*pj;

	TAILQ_FOREACH(c, &st.consumers, entry)
		if (c->deliver == NULL && strcmp(c->name + 6, name) == 0)
			break;
	if (c == NULL || !request_ok())
		return -1;
	pj = xcalloc(1, sizeof(*pj));
	pj->c = c;
	pj->max = max < STORE_PEEK_MAX ? max : STORE_PEEK_MAX;
	pj->cb = cb;
	pj->arg = arg;
	pj->job.work = peek_job_work;
	pj->job.done = peek_job_done;
	bridge_run(&pj->job);
	return 0;
}

/* Answer a lease by its numbers; see store.h. */
struct store_req *
store_lease_answer(const char *name, const struct store_lease *l,
    const char *verb, store_reply_cb cb, void *arg)
{
	char	 subj[256];

	snprintf(subj, sizeof(subj), "$JS.ACK.WORK.relay-%s.%llu.%llu.%llu.%lld.0",
	    name, (unsigned long long)l->delivered, (unsigned long long)l->seq,
	    (unsigned long long)l->dseq, (long long)l->ts);
	return store_request(subj, verb, 5000, cb, arg);
}

/* A pull consumer's reply subscriptions, one per kind of request. */
static void
pull_subscribe(struct consumer *c)
{
	char		 subj[160];
	natsStatus	 s;
	int		 k;

	for (k = 0; k < STORE_PULL_KINDS; k++) {
		if (c->pull_sub[k] != NULL)
			continue;
		snprintf(subj, sizeof(subj), "%s.p.%d.%d.*",
		    (const char *)st.inbox, c->idx, k);
		s = natsConnection_SubscribeSync(&c->pull_sub[k], st.nc, subj);
		if (s == NATS_OK)
			s = natsSubscription_SetPendingLimits(c->pull_sub[k],
			    -1, -1);
		if (s != NATS_OK)
			fatalx("cannot subscribe", "consumer=%s err=%s",
			    c->name, log_q(natsStatus_GetText(s)));
	}
}

/* Subscribe each consumer's delivery group (once connected or not). */
static void
consumers_subscribe(void)
{
	struct consumer	*c;
	natsStatus	 s;

	/*
	 * Before the deliveries: JetStream announces a message it gave up
	 * on only while it delivers, so a relay that comes back hears about
	 * the ones its predecessors left on their last attempt.  One
	 * instance of the group handles each.
	 */
	if (st.exhausted == NULL && !TAILQ_EMPTY(&st.consumers)) {
		s = natsConnection_QueueSubscribeSync(&st.exhausted, st.nc,
		    EXHAUSTED_SUBJECT, "treaty-relay");
		if (s == NATS_OK)
			s = natsSubscription_SetPendingLimits(st.exhausted,
			    -1, -1);
		if (s != NATS_OK)
			fatalx("cannot subscribe", "subject=%s err=%s",
			    EXHAUSTED_SUBJECT, log_q(natsStatus_GetText(s)));
	}
	TAILQ_FOREACH(c, &st.consumers, entry) {
		if (c->deliver == NULL) {
			pull_subscribe(c);
			continue;
		}
		if (c->sub != NULL)
			continue;
		/* The group is the consumer: one instance gets each message. */
		s = natsConnection_QueueSubscribeSync(&c->sub, st.nc,
		    c->deliver, c->name);
		if (s == NATS_OK)
			s = natsSubscription_SetPendingLimits(c->sub, -1, -1);
		if (s != NATS_OK)
			fatalx("cannot subscribe", "consumer=%s err=%s",
			    c->name, log_q(natsStatus_GetText(s)));
	}
}

/*
 * Take every acknowledgement nats.c has queued on the subscription.
 * NextMsg with a zero timeout never waits.
 */
static void
store_poll(void)
{
	natsMsg		*m;
	struct consumer	*c;
	int		 n, more = 0;

	if (st.acks == NULL)
		return;
	while (natsSubscription_NextMsg(&m, st.acks, 0) == NATS_OK) {
		store_ack(m);
		grave_add(m);
	}
	while (st.replies != NULL &&
	    natsSubscription_NextMsg(&m, st.replies, 0) == NATS_OK)
		req_reply(m);
	while (st.exhausted != NULL &&
	    natsSubscription_NextMsg(&m, st.exhausted, 0) == NATS_OK) {
		exhausted_advisory(m);
		grave_add(m);
	}
	/* Bounded per turn, so one busy consumer cannot hold the loop. */
	TAILQ_FOREACH(c, &st.consumers, entry) {
		int	 k;

		for (k = 0; k < STORE_PULL_KINDS; k++)
			for (n = 0; c->pull_sub[k] != NULL && n < POLL_BATCH &&
			    natsSubscription_NextMsg(&m, c->pull_sub[k], 0) ==
			    NATS_OK; n++)
				pull_reply(c, (enum store_pull_kind)k, m);
		if (n == POLL_BATCH)
			more = 1;
		for (n = 0; c->sub != NULL && n < POLL_BATCH &&
		    natsSubscription_NextMsg(&m, c->sub, 0) == NATS_OK; n++)
			consumer_deliver(c, m);
		if (n == POLL_BATCH)
			more = 1;
	}
	if (more)
		event_active(&st.repoll_ev, EV_TIMEOUT, 0);
}

/* More consumer messages were waiting after a full batch. */
static void
store_repoll_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	store_poll();
}

/*
 * Our event-loop adapter for nats.c (natsOptions_SetEventLoop), in place
 * of adapters/libevent.h: the same contract, but a read on the socket is
 * followed at once by store_poll(), in the same callback, so every
 * acknowledgement nats.c has just parsed is answered without waiting for
 * another loop iteration.  nats.c calls attach and detach from its own
 * threads (connect and reconnect) as well as from ours; libevent's thread
 * locking (store_global_init) makes event_new/event_add/event_free safe
 * there, and read/write removals use event_del_noblock because nats.c may
 * hold its connection lock when it asks.
 */
struct nloop {
	natsConnection		*nc;
	struct event_base	*base;
	struct event		*read;
	struct event		*write;
};

/* The connection's socket is readable or writable.  Loop thread. */
static void
store_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nloop	*nl = arg;

	(void)fd;
	if (what & EV_READ) {
		natsConnection_ProcessReadEvent(nl->nc);
		store_poll();
	}
	if (what & EV_WRITE)
		natsConnection_ProcessWriteEvent(nl->nc);
}

/* Start or stop polling for reads. */
static natsStatus
store_read(void *userData, bool add)
{
	struct nloop	*nl = userData;

	return (add ? event_add(nl->read, NULL) :
	    event_del_noblock(nl->read)) == 0 ? NATS_OK : NATS_ERR;
}

/* Start or stop polling for writes. */
static natsStatus
store_write(void *userData, bool add)
{
	struct nloop	*nl = userData;

	return (add ? event_add(nl->write, NULL) :
	    event_del_noblock(nl->write)) == 0 ? NATS_OK : NATS_ERR;
}

/* A (re)connected socket: new events for it, reading at once. */
static natsStatus
store_attach(void **userData, void *loop, natsConnection *nc, natsSock sock)
{
	struct nloop	*nl = *userData;

	if (nl == NULL) {
		if ((nl = calloc(1, sizeof(*nl))) == NULL)
			return NATS_NO_MEMORY;
		nl->nc = nc;
		nl->base = loop;
	} else {
		/* A reconnect: the old socket is gone. */
		if (nl->read != NULL)
			event_free(nl->read);
		if (nl->write != NULL)
			event_free(nl->write);
	}
	nl->read = event_new(nl->base, sock, EV_READ | EV_PERSIST,
	    store_io_cb, nl);
	nl->write = event_new(nl->base, sock, EV_WRITE | EV_PERSIST,
	    store_io_cb, nl);
	*userData = nl;
	if (nl->read == NULL || nl->write == NULL)
		return NATS_NO_MEMORY;
	return store_read(nl, true);
}

/* The connection is closed for good: free the events. */
static natsStatus
store_detach(void *userData)
{
	struct nloop	*nl = userData;

	if (nl->read != NULL)
		event_free(nl->read);
	if (nl->write != NULL)
		event_free(nl->write);
	free(nl);
	return NATS_OK;
}

/* Fail publishes whose acknowledgement did not come in time. */
static void
store_sweep_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pub	*p;
	long long	 now = now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	store_poll();
	grave_flush();
	while ((p = TAILQ_FIRST(&st.pubs)) != NULL && p->deadline <= now) {
		metrics_publish_failure(PUBFAIL_TIMEOUT);
		log_warnx("publish timed out", "stream=%s",
		    p->stream == STREAM_WORK ? "WORK" : "AUDIT");
		pub_close(p, STORE_TIMEOUT, 0);
	}
}

/* <inbox>.<seq> into buf (128 bytes), without printf on the hot path. */
static void
reply_subject(char *buf, uint64_t seq)
{
	char	 digits[24];
	int	 n = 0;

	memcpy(buf, st.inbox, st.inbox_len);
	buf[st.inbox_len] = '.';
	do {
		digits[n++] = (char)('0' + seq % 10);
		seq /= 10;
	} while (seq != 0);
	for (buf += st.inbox_len + 1; n > 0; )
		*buf++ = digits[--n];
	*buf = '\0';
}

/* Publish one event; see store.h. */
enum store_result
store_publish(const char *subject, const struct store_header *h, size_t nh,
    const char *msg_id, const void *data, size_t len, store_publish_cb cb,
    void *arg)
{
	natsMsg		*msg = NULL;
	natsStatus	 s;
	struct pub	*p;
	char		 reply[128];
	size_t		 i, hdrlen = 12 + strlen("Nats-Msg-Id: \r\n") +
			    strlen(msg_id);

	/* Size first: too large is 413 whatever the state (SPEC 2). */
	for (i = 0; i < nh; i++)
		hdrlen += strlen(h[i].key) + strlen(h[i].value) + 4;
	if (st.max_payload > 0 && hdrlen + len > (size_t)st.max_payload)
		return STORE_TOO_LARGE;
	if (!store_ready() || st.closing) {
		metrics_publish_failure(PUBFAIL_NOT_READY);
		return STORE_NOT_READY;
	}
	/*
	 * Both bounds: publishes waiting, and bytes nats.c has not written
	 * yet (its buffer has no limit of its own, and a stalled server keeps
	 * it growing after our publishes have timed out).
	 */
	if (st.npubs >= st.cfg->max_pending ||
	    natsConnection_Buffered(st.nc) > OUT_BUFFER_MAX) {
		metrics_publish_failure(PUBFAIL_OVERLOAD);
		return STORE_OVERLOAD;
	}

	st.next_seq++;
	reply_subject(reply, st.next_seq);
	s = natsMsg_Create(&msg, subject, reply, data, (int)len);
	for (i = 0; s == NATS_OK && i < nh; i++)
		s = natsMsgHeader_Set(msg, h[i].key, h[i].value);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id);
	/* The message is copied into the connection's buffer here. */
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(st.nc, msg);
	grave_add(msg);
	if (s != NATS_OK) {
		metrics_publish_failure(PUBFAIL_NATS);
		log_warnx("publish refused by nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return STORE_FAILED;
	}
	p = xcalloc(1, sizeof(*p));
	p->seq = st.next_seq;
	p->cb = cb;
	p->arg = arg;
	p->stream = strncmp(subject, "audit.", 6) == 0 ? STREAM_AUDIT :
	    STREAM_WORK;
	p->deadline = now_ms() + st.cfg->publish_timeout_ms;
	p->hnext = st.hash[pub_slot(p->seq)];
	st.hash[pub_slot(p->seq)] = p;
	TAILQ_INSERT_TAIL(&st.pubs, p, entry);
	st.npubs++;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, st.npubs);
	return STORE_OK;
}

/* Fail everything still waiting (shutdown). */
void
store_fail_all(void)
{
	struct pub	*p;

	while ((p = TAILQ_FIRST(&st.pubs)) != NULL) {
		metrics_publish_failure(PUBFAIL_NOT_READY);
		pub_close(p, STORE_FAILED, 0);
	}
}

/* Publishes in flight. */
int
store_in_flight(void)
{
	return st.npubs;
}

/* Connected and both streams ready. */
int
store_ready(void)
{
	return st.connected && st.streams_ready;
}

/* Connected to a NATS server. */
int
store_connected(void)
{
	return st.connected;
}

/* WORK and AUDIT checked since the last (re)connection. */
int
store_streams_ready(void)
{
	return st.streams_ready;
}

/* Record the connection state in the gauges. */
static void
store_set_state(int connected, int streams)
{
	int	 was = store_ready();

	st.connected = connected;
	st.streams_ready = streams;
	metrics_gauge(GAUGE_NATS_CONNECTED, connected);
	metrics_gauge(GAUGE_STREAMS_READY, streams);
	if (was != store_ready())
		log_info(store_ready() ? "store ready" : "store not ready",
		    "connected=%d streams=%d", connected, streams);
}

/* A connection event, on the loop. */
static void
store_connev_loop(struct bridge_item *it)
{
	struct connev	*c = BRIDGE_CONTAINER(it, struct connev, item);
	enum conn_event	 what = c->what;

	free(c);
	switch (what) {
	case CONN_CONNECTED:
	case CONN_RECONNECTED:
		if (what == CONN_RECONNECTED)
			metrics_reconnect();
		log_info(what == CONN_CONNECTED ? "nats connected" :
		    "nats reconnected", NULL);
		st.max_payload = (int)natsConnection_GetMaxPayload(st.nc);
		/* Streams may have been lost with the server: check first. */
		store_set_state(1, 0);
		store_check_streams();
		break;
	case CONN_DISCONNECTED:
		if (!st.closing)
			log_warnx("nats disconnected", NULL);
		store_set_state(0, 0);
		requests_fail_all();
		break;
	case CONN_CLOSED:
		store_set_state(0, 0);
		if (st.drained != NULL) {
			void (*done)(void) = st.drained;

			st.drained = NULL;
			event_del(&st.drain_ev);
			done();
		}
		break;
	}
}

/*
 * The connection dropped: no request sent on it will be answered (a new
 * connection has new subscriptions' interest, not the old requests').  End
 * them now rather than at their timeouts, which for a long-poll can be 35
 * seconds away, so that their owners answer or ask again.
 */
static void
requests_fail_all(void)
{
	struct store_req	*r;

	while ((r = TAILQ_FIRST(&st.reqs)) != NULL)
		req_free_cb(r, STORE_REPLY_TIMEOUT);
}

/* Post a connection event.  Runs on a nats.c thread. */
static void
store_post_connev(enum conn_event what)
{
	struct connev	*c = xcalloc(1, sizeof(*c));

	c->item.fn = store_connev_loop;
	c->what = what;
	bridge_post(&c->item);
}

/* Runs on a nats.c thread. */
static void
store_connected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_CONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_disconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_DISCONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_reconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_RECONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_closed_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_CLOSED);
}

/*
 * The outcome of a JetStream management call: 0, -1 for a definite
 * failure, or CHECK_TRANSIENT when there was no answer (a timeout is not a
 * "no": the stream or consumer may well be there).  Worker thread.
 */
static int
api_result(natsStatus s, jsErrCode code, const char *what, const char *name,
    char *detail, size_t dlen)
{
	const char	*e;

	if (s == NATS_OK)
		return 0;
	e = nats_GetLastError(NULL);
	snprintf(detail, dlen, "%s %s: %s (code %d)", what, name,
	    e != NULL && e[0] != '\0' ? e : natsStatus_GetText(s), (int)code);
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS ||
	    s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED ?
	    CHECK_TRANSIENT : -1;
}

/* Fill a stream configuration from the settings of SPEC section 6. */
static void
stream_config(jsStreamConfig *sc, const char *name, const char **subj,
    int64_t max_age_ns)
{
	jsStreamConfig_Init(sc);
	sc->Name = name;
	sc->Subjects = subj;
	sc->SubjectsLen = 1;
	sc->Storage = js_FileStorage;
	sc->Retention = js_LimitsPolicy;
	sc->MaxAge = max_age_ns;
	sc->Duplicates = (int64_t)st.cfg->duplicate_window_minutes * 60 *
	    1000000000LL;
	sc->Replicas = st.cfg->replicas;
	/* Peeking into an inbox reads WORK with direct gets. */
	sc->AllowDirect = strcmp(name, "WORK") == 0;
}

/* Whether an existing stream differs from what we want. */
static int
stream_differs(const jsStreamConfig *have, const jsStreamConfig *want)
{
	return have->SubjectsLen != 1 ||
	    strcmp(have->Subjects[0], want->Subjects[0]) != 0 ||
	    have->MaxAge != want->MaxAge ||
	    have->Duplicates != want->Duplicates ||
	    have->Replicas != want->Replicas ||
	    have->Retention != want->Retention ||
	    have->AllowDirect != want->AllowDirect;
}

/*
 * Create one stream, or update it when its settings differ.  Worker thread
 * (blocks on JetStream API requests).
 */
static int
stream_ensure(const char *name, const char *subject, int64_t max_age_ns,
    char *detail, size_t dlen)
{
	jsStreamConfig	 want;
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	const char	*subj[1] = { subject };
	const char	*what = "get";

	stream_config(&want, name, subj, max_age_ns);
	s = js_GetStreamInfo(&si, st.js, name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
		what = "create";
		s = js_AddStream(&si, st.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", name);
	} else if (s == NATS_OK && si->Config->Storage != js_FileStorage) {
		snprintf(detail, dlen, "stream %s has memory storage, which "
		    "cannot be changed in place", name);
		jsStreamInfo_Destroy(si);
		return -1;
	} else if (s == NATS_OK && stream_differs(si->Config, &want)) {
		jsStreamInfo_Destroy(si);
		si = NULL;
		what = "update";
		s = js_UpdateStream(&si, st.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "updated %s", name);
	}
	jsStreamInfo_Destroy(si);
	return api_result(s, code, what, name, detail, dlen);
}

/* Two optional strings are the same (both absent, or equal). */
static int
str_same(const char *a, const char *b)
{
	if (a == NULL || *a == '\0')
		return b == NULL || *b == '\0';
	return b != NULL && strcmp(a, b) == 0;
}

/* Whether an existing consumer differs from what we want. */
static int
consumer_differs(const jsConsumerConfig *have, const jsConsumerConfig *want)
{
	return have->MaxDeliver != want->MaxDeliver ||
	    have->MaxAckPending != want->MaxAckPending ||
	    have->AckWait != want->AckWait ||
	    have->FilterSubject == NULL ||
	    strcmp(have->FilterSubject, want->FilterSubject) != 0 ||
	    !str_same(have->DeliverSubject, want->DeliverSubject) ||
	    !str_same(have->DeliverGroup, want->DeliverGroup);
}

/*
 * Create one push consumer on WORK, or update it when its settings
 * differ.  Worker thread.
 */
static int
consumer_ensure(const struct consumer *c, char *detail, size_t dlen)
{
	jsConsumerConfig	 want;
	jsConsumerInfo		*ci = NULL;
	jsErrCode		 code = 0;
	natsStatus		 s;
	const char		*what = "get";

	jsConsumerConfig_Init(&want);
	want.Durable = c->name;
	want.DeliverSubject = c->deliver;	/* NULL: a pull consumer */
	want.DeliverGroup = c->deliver != NULL ? c->name : NULL;
	want.DeliverPolicy = js_DeliverAll;
	want.AckPolicy = js_AckExplicit;
	want.AckWait = (int64_t)c->ack_wait_s * 1000000000LL;
	want.MaxDeliver = c->max_deliver;
	want.MaxAckPending = c->max_ack_pending;
	want.FilterSubject = c->filter;
	s = js_GetConsumerInfo(&ci, st.js, "WORK", c->name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr) {
		what = "create";
		s = js_AddConsumer(&ci, st.js, "WORK", &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", c->name);
	} else if (s == NATS_OK && consumer_differs(ci->Config, &want)) {
		jsConsumerInfo_Destroy(ci);
		ci = NULL;
		what = "update";
		s = js_UpdateConsumer(&ci, st.js, "WORK", &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "updated %s", c->name);
	}
	jsConsumerInfo_Destroy(ci);
	return api_result(s, code, what, c->name, detail, dlen);
}

/* Worker thread: make sure WORK and AUDIT exist as configured. */
static void
stream_job_work(struct bridge_job *job)
{
	struct stream_job *sj = BRIDGE_CONTAINER(job, struct stream_job, job);
	char		 d1[128] = "", d2[128] = "";
	int64_t		 hour = 3600LL * 1000000000LL;

	sj->result = stream_ensure("WORK", "evt.>",
	    st.cfg->work_max_age_hours * hour, d1, sizeof(d1));
	if (sj->result == 0)
		sj->result = stream_ensure("AUDIT", "audit.>",
		    st.cfg->audit_max_age_days * 24 * hour, d2, sizeof(d2));
	/*
	 * Consumers after the streams.  One that cannot be made is logged
	 * and retried with the next check; it does not make ingest unready.
	 */
	if (sj->result == 0) {
		struct consumer	*c;
		char		 d[128];
		size_t		 len;

		TAILQ_FOREACH(c, &st.consumers, entry) {
			d[0] = '\0';
			if (consumer_ensure(c, d, sizeof(d)) != 0)
				sj->consumer_failed = 1;
			len = strlen(sj->cdetail);
			if (d[0] != '\0' && len < sizeof(sj->cdetail) - 2)
				snprintf(sj->cdetail + len,
				    sizeof(sj->cdetail) - len, "%s%s",
				    len ? "; " : "", d);
		}
	}
	snprintf(sj->detail, sizeof(sj->detail), "%s%s%s", d1,
	    d1[0] && d2[0] ? "; " : "", d2);
}

/* Loop thread: the stream check finished. */
static void
stream_job_done(struct bridge_job *job)
{
	struct stream_job *sj = BRIDGE_CONTAINER(job, struct stream_job, job);

	struct timeval	 tv = { CHECK_RETRY_MS / 1000,
			    CHECK_RETRY_MS % 1000 * 1000 };

	st.check_running = 0;
	if (sj->result == CHECK_TRANSIENT) {
		/* Keep the state we had; ask again soon. */
		log_warnx("stream check got no answer", "detail=%s",
		    log_q(sj->detail));
		if (!st.closing)
			event_add(&st.retry_ev, &tv);
	} else if (sj->result != 0) {
		log_warnx("streams not ready", "detail=%s", log_q(sj->detail));
		if (st.connected && !st.closing)
			store_set_state(1, 0);
	} else {
		if (sj->detail[0] != '\0')
			log_info("streams", "detail=%s", log_q(sj->detail));
		if (st.connected && !st.closing)
			store_set_state(1, 1);
	}
	if (sj->consumer_failed)
		log_warnx("consumers not ready", "detail=%s",
		    log_q(sj->cdetail));
	else if (sj->cdetail[0] != '\0')
		log_info("consumers", "detail=%s", log_q(sj->cdetail));
	free(sj);
}

/* Start a stream check on the worker unless one is running. */
static void
store_check_streams(void)
{
	struct stream_job	*sj;

	if (st.check_running || !st.connected || st.closing)
		return;
	sj = xcalloc(1, sizeof(*sj));
	sj->job.work = stream_job_work;
	sj->job.done = stream_job_done;
	st.check_running = 1;
	bridge_run(&sj->job);
}

/* Every STREAM_CHECK_MS: re-check the streams (re-create vanished ones). */
static void
store_check_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	store_check_streams();
}

/* Fail a natsOptions call at start-up. */
static void
nats_check(natsStatus s, const char *what)
{
	if (s != NATS_OK)
		fatalx("nats option failed", "what=%s err=%s", what,
		    log_q(natsStatus_GetText(s)));
}

/*
 * libevent's pthread locking, which event_active and event_add from nats.c
 * threads rely on, must be on before event_base_new.
 */
void
store_global_init(void)
{
	natsStatus	 s;

	if (evthread_use_pthreads() == -1)
		fatalx("cannot enable libevent's thread support", NULL);
	if ((s = nats_Open(-1)) != NATS_OK)
		fatalx("cannot initialise nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
}

/* Connect, or start connecting in the background, and arm the timers. */
void
store_init(struct event_base *base, const struct config *cfg)
{
	jsOptions	 jo;
	natsStatus	 s;
	size_t		 n;
	struct timeval	 tv;
	const char	**servers;
	char		  subj[128];
	int		  i;

	st.base = base;
	st.cfg = cfg;
	TAILQ_INIT(&st.pubs);
	if (st.consumers.tqh_last == NULL)
		TAILQ_INIT(&st.consumers);
	for (n = 64; n < (size_t)cfg->max_pending * 2; n <<= 1)
		;
	st.hash = xcalloc(n, sizeof(*st.hash));
	st.hmask = n - 1;

	nats_check(natsOptions_Create(&st.opts), "create");
	servers = xcalloc(cfg->nnats_servers, sizeof(*servers));
	for (i = 0; i < cfg->nnats_servers; i++)
		servers[i] = cfg->nats_servers[i];
	nats_check(natsOptions_SetServers(st.opts, servers,
	    cfg->nnats_servers), "servers");
	free(servers);
	nats_check(natsOptions_SetName(st.opts, "treaty-relay"), "name");
	/*
	 * nats.c ignores the scheme: TLS is this one option.  It verifies the
	 * server's chain against OpenSSL's default paths (SSL_CERT_FILE and
	 * SSL_CERT_DIR are honoured) and its host name.
	 */
	if (cfg->nats_tls)
		nats_check(natsOptions_SetSecure(st.opts, true), "tls");
	nats_check(natsOptions_SetEventLoop(st.opts, base, store_attach,
	    store_read, store_write, store_detach), "event loop");
	/*
	 * Without SendAsap every publish wakes nats.c's flusher thread, which
	 * waits 1 ms and then asks our loop (from its thread) to write.  With
	 * it, the publish only arms the adapter's write event, on the loop
	 * thread, and everything published in one iteration goes out in one
	 * write.
	 */
	nats_check(natsOptions_SetSendAsap(st.opts, true), "send asap");
	nats_check(natsOptions_SetTimeout(st.opts, 2000), "timeout");
	nats_check(natsOptions_SetMaxReconnect(st.opts, -1), "reconnect");
	nats_check(natsOptions_SetReconnectWait(st.opts, 500), "wait");
	nats_check(natsOptions_SetReconnectJitter(st.opts, 500, 1000),
	    "jitter");
	nats_check(natsOptions_SetPingInterval(st.opts, 10000), "ping");
	nats_check(natsOptions_SetMaxPingsOut(st.opts, 2), "pings");
	nats_check(natsOptions_SetDisconnectedCB(st.opts,
	    store_disconnected_cb, NULL), "disconnected");
	nats_check(natsOptions_SetReconnectedCB(st.opts,
	    store_reconnected_cb, NULL), "reconnected");
	nats_check(natsOptions_SetClosedCB(st.opts, store_closed_cb, NULL),
	    "closed");
	/* Start even when NATS is down; /healthz and POST say 503 meanwhile. */
	nats_check(natsOptions_SetRetryOnFailedConnect(st.opts, true,
	    store_connected_cb, NULL), "retry");

	event_assign(&st.sweep_ev, base, -1, EV_PERSIST, store_sweep_cb, NULL);
	tv.tv_sec = 0;
	tv.tv_usec = SWEEP_MS * 1000;
	event_add(&st.sweep_ev, &tv);
	event_assign(&st.check_ev, base, -1, EV_PERSIST, store_check_cb, NULL);
	event_assign(&st.retry_ev, base, -1, 0, store_check_cb, NULL);
	tv.tv_sec = STREAM_CHECK_MS / 1000;
	tv.tv_usec = 0;
	event_add(&st.check_ev, &tv);

	s = natsConnection_Connect(&st.nc, st.opts);
	if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED)
		fatalx("cannot start the NATS connection", "err=%s",
		    log_q(natsStatus_GetText(s)));

	/* Acknowledgements: one subscription, polled by the loop. */
	nats_check(natsInbox_Create(&st.inbox), "inbox");
	st.inbox_len = strlen((const char *)st.inbox);
	snprintf(subj, sizeof(subj), "%s.*", (const char *)st.inbox);
	nats_check(natsConnection_SubscribeSync(&st.acks, st.nc, subj),
	    "subscribe");
	nats_check(natsSubscription_SetPendingLimits(st.acks, -1, -1),
	    "pending limits");
	snprintf(subj, sizeof(subj), "%s.r.*", (const char *)st.inbox);
	nats_check(natsConnection_SubscribeSync(&st.replies, st.nc, subj),
	    "subscribe");
	nats_check(natsSubscription_SetPendingLimits(st.replies, -1, -1),
	    "pending limits");
	TAILQ_INIT(&st.reqs);

	consumers_subscribe();
	event_assign(&st.repoll_ev, base, -1, 0, store_repoll_cb, NULL);

	/* Only stream management uses the JetStream context. */
	jsOptions_Init(&jo);
	jo.Wait = JS_API_WAIT_MS;
	if ((s = natsConnection_JetStream(&st.js, st.nc, &jo)) != NATS_OK)
		fatalx("cannot create the JetStream context", "err=%s",
		    log_q(natsStatus_GetText(s)));

	if (natsConnection_Status(st.nc) == NATS_CONN_STATUS_CONNECTED) {
		/* The connected callback only fires for a delayed connect. */
		store_post_connev(CONN_CONNECTED);
	} else
		log_warnx("nats not reachable yet, retrying in the background",
		    "servers=%d", cfg->nnats_servers);
}

/* The drain did not finish in time: go on without it. */
static void
store_drain_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	void	(*done)(void) = st.drained;

	(void)fd;
	(void)ev;
	(void)arg;
	log_warnx("nats drain timed out", NULL);
	st.drained = NULL;
	if (done != NULL)
		done();
}

/* Drain and close the connection; done() runs when it is closed. */
void
store_drain(void (*done)(void))
{
	struct timeval	 tv = { DRAIN_MS / 1000 + 1, 0 };
	natsStatus	 s;

	st.closing = 1;
	event_del(&st.check_ev);
	event_del(&st.retry_ev);
	st.drained = done;
	event_assign(&st.drain_ev, st.base, -1, 0, store_drain_timeout_cb,
	    NULL);
	event_add(&st.drain_ev, &tv);
	/*
	 * Nothing is in flight now.  Unsubscribe the acknowledgement
	 * subscription first: a synchronous subscription polled with a zero
	 * timeout never reports its drain as done, and the drain would run
	 * to its timeout.
	 */
	if (st.acks != NULL)
		natsSubscription_Unsubscribe(st.acks);
	if (st.exhausted != NULL)
		natsSubscription_Unsubscribe(st.exhausted);
	if (st.replies != NULL)
		natsSubscription_Unsubscribe(st.replies);
	{
		struct consumer	*c;

		TAILQ_FOREACH(c, &st.consumers, entry) {
			int	 k;

			if (c->sub != NULL)
				natsSubscription_Unsubscribe(c->sub);
			for (k = 0; k < STORE_PULL_KINDS; k++)
				if (c->pull_sub[k] != NULL)
					natsSubscription_Unsubscribe(
					    c->pull_sub[k]);
		}
	}
	s = natsConnection_DrainTimeout(st.nc, DRAIN_MS);
	if (s != NATS_OK) {
		/* Not connected: nothing to drain; close now. */
		natsConnection_Close(st.nc);
	}
}

/*
 * After the loop has stopped: close the connection, so that a stream job
 * still waiting on the worker thread fails at once instead of using a
 * context that is about to be destroyed.
 */
void
store_close(void)
{
	grave_flush();
	event_del(&st.sweep_ev);
	event_del(&st.check_ev);
	event_del(&st.retry_ev);
	event_del(&st.drain_ev);
	event_del(&st.repoll_ev);
	if (st.nc != NULL && !natsConnection_IsClosed(st.nc))
		natsConnection_Close(st.nc);
}

/*
 * After the worker has been joined: destroy the nats.c objects and wait
 * for nats.c's threads to end, so that nothing can post to the bridge any
 * more.
 */
void
store_destroy(void)
{
	natsSubscription_Destroy(st.acks);
	st.acks = NULL;
	natsSubscription_Destroy(st.exhausted);
	st.exhausted = NULL;
	natsSubscription_Destroy(st.replies);
	st.replies = NULL;
	{
		struct consumer	*c;

		while ((c = TAILQ_FIRST(&st.consumers)) != NULL) {
			TAILQ_REMOVE(&st.consumers, c, entry);
			natsSubscription_Destroy(c->sub);
			natsSubscription_Destroy(c->pull_sub[0]);
			natsSubscription_Destroy(c->pull_sub[1]);
			free(c->name);
			free(c->deliver);
			free(c->filter);
			free(c);
		}
	}
	jsCtx_Destroy(st.js);
	st.js = NULL;
	natsConnection_Destroy(st.nc);
	st.nc = NULL;
	natsOptions_Destroy(st.opts);
	st.opts = NULL;
	if (nats_CloseAndWait(2000) != NATS_OK)
		log_warnx("nats.c threads did not end in time", NULL);
}

/* Free the tables, after the bridge ran what was left for them. */
void
store_free_tables(void)
{
	struct pub	*p;

	while ((p = TAILQ_FIRST(&st.pubs)) != NULL) {
		TAILQ_REMOVE(&st.pubs, p, entry);
		free(p);
	}
	free(st.hash);
	st.hash = NULL;
	natsInbox_Destroy(st.inbox);
	st.inbox = NULL;
}
