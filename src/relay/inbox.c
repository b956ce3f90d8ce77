/*
 * inbox.c: pull subscribers (SPEC 4).  Loop thread only.
 *
 * Each pull subscriber has a durable pull consumer relay-<name> on WORK
 * whose ack wait is the lease: an event handed out with lease=true stays
 * pending in JetStream until it is acknowledged (DELETE), and JetStream
 * hands it out again when the lease runs out.  The lease therefore lives
 * in JetStream, survives a relay restart, and any instance can answer it.
 *
 * nats.c 3.4 has no asynchronous fetch, so a GET drives the pull protocol
 * itself through store_pull (a request to $JS.API.CONSUMER.MSG.NEXT whose
 * replies the loop collects).  JetStream sends a pull request's messages
 * under their own subjects, so the store can tell requests apart only by
 * subscription: each inbox has one request "now" (no_wait) and one
 * "waiting" outstanding at a time, and the GETs queue for them here.  A
 * long-poll waits in the waiting queue, whose request asks for one
 * message with the head's remaining wait as its expiry; the message goes
 * to the longest waiter, which then queues for the rest (up to max - 1)
 * without waiting.  Asking for the whole batch with an expiry would keep
 * the request open after the first event, and events arriving for it
 * later would be leased to nobody.
 *
 * The receipt of an envelope is the lease's JetStream numbers (delivery
 * count, stream and consumer sequence, delivery time) and a MAC over them,
 * the inbox and the event id, keyed by the inbox's token hash: a receipt
 * from another inbox, or for another event, is refused, and the numbers
 * rebuild the acknowledgement subject without any state here.  What this
 * instance remembers of the leases it handed out (for a while) only serves
 * to answer 404 for a lease it knows is gone: acknowledged, released, or
 * handed out again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/evp.h>
#include <yajl/yajl_gen.h>

#include "treaty.h"
#include "audit.h"
#include "cevent.h"
#include "config.h"
#include "http.h"
#include "inbox.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "util.h"

#define INBOX_MAX_BATCH		256
#define INBOX_DEFAULT_BATCH	10
#define INBOX_MAX_WAIT_MS	30000
#define RECEIPT_MAC_HEX		32
#define LEASE_BUCKETS		4096
#define LEASE_MAX		65536	/* remembered leases, oldest dropped */
#define LEASE_KEEP_MS		60000	/* remembered past the lease's end */
#define MAX_RELEASE_DELAY_MS	(3600 * 1000LL)
#define PUMP_RETRY_MS		500	/* long-polls, while NATS is away */

struct fetch;
TAILQ_HEAD(fetch_list, fetch);

struct isub {
	int			 idx;
	const struct subscriber	*cfg;
	struct treaty_secret	*secrets;
	struct fetch_list	 queue[STORE_PULL_KINDS];
	struct store_req	*req[STORE_PULL_KINDS];	/* outstanding */
	struct event		 pump;		/* send the next requests */
};

/* What this instance knows of a lease it handed out or answered. */
enum lease_state {
	LEASE_HELD,
	LEASE_ACKED,
	LEASE_RELEASED
};
struct lease {
	int			 inbox;
	uint64_t		 seq;
	uint64_t		 dseq;
	enum lease_state	 state;
	long long		 forget;	/* now_ms() */
	struct lease		*hnext;
	TAILQ_ENTRY(lease)	 entry;		/* oldest forget first */
};
TAILQ_HEAD(lease_list, lease);

/* A GET waiting for JetStream. */
#define Q_NONE		(-1)
struct fetch {
	struct evhttp_request	*req;
	struct isub		*s;
	int			 max;
	int			 lease;		/* lease=true */
	int			 peek;		/* peek=true */
	int			 q;		/* queue it is in, or Q_NONE */
	struct event		 deadline;	/* end of a long-poll's wait */
	long long		 wait_end;	/* now_ms() */
	struct store_msg	*msgs[INBOX_MAX_BATCH];
	int			 n;
	int			 acks;		/* destructive: unconfirmed */
	TAILQ_ENTRY(fetch)	 entry;		/* all fetches */
	TAILQ_ENTRY(fetch)	 qentry;
};

/* An acknowledgement, extension or release waiting for JetStream. */
enum lease_op {
	OP_ACK,
	OP_EXTEND,
	OP_RELEASE
};
struct op {
	struct evhttp_request	*req;
	struct isub		*s;
	struct store_lease	 l;
	enum lease_op		 kind;
	struct store_req	*sr;
	TAILQ_ENTRY(op)		 entry;
};
TAILQ_HEAD(op_list, op);

/* A destructive fetch's acknowledgement of one event. */
struct take {
	struct fetch		*f;
	int			 i;
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	struct isub		*subs;
	int			 nsubs;
	struct lease		*hash[LEASE_BUCKETS];
	struct lease_list	 leases;
	int			 nleases;
	struct fetch_list	 fetches;
	struct op_list		 ops;
	int			 stopping;
} ib;

/* Hash of a lease key. */
static size_t
lease_slot(int inbox, uint64_t seq)
{
	return (size_t)((seq * 0x9E3779B97F4A7C15ULL + (uint64_t)inbox) >>
	    20) % LEASE_BUCKETS;
}

/* Unlink and free a remembered lease. */
static void
lease_drop(struct lease *l)
{
	struct lease	**pp = &ib.hash[lease_slot(l->inbox, l->seq)];

	while (*pp != NULL && *pp != l)
		pp = &(*pp)->hnext;
	if (*pp == l)
		*pp = l->hnext;
	TAILQ_REMOVE(&ib.leases, l, entry);
	ib.nleases--;
	free(l);
}

/* Forget leases past their time, and the oldest over LEASE_MAX. */
static void
lease_gc(void)
{
	struct lease	*l;
	long long	 now = now_ms();

	while ((l = TAILQ_FIRST(&ib.leases)) != NULL &&
	    (l->forget < now || ib.nleases > LEASE_MAX))
		lease_drop(l);
}

/* The remembered lease of an inbox's event, or NULL. */
static struct lease *
lease_find(int inbox, uint64_t seq)
{
	struct lease	*l;

	for (l = ib.hash[lease_slot(inbox, seq)]; l != NULL; l = l->hnext)
		if (l->inbox == inbox && l->seq == seq)
			return l;
	return NULL;
}

/* Remember a lease's state until its end plus LEASE_KEEP_MS. */
static void
lease_note(int inbox, const struct store_lease *sl, enum lease_state st)
{
	struct lease	*l = lease_find(inbox, sl->seq);
	size_t		 slot;

	lease_gc();
	if (l == NULL) {
		l = xcalloc(1, sizeof(*l));
		l->inbox = inbox;
		l->seq = sl->seq;
		slot = lease_slot(inbox, sl->seq);
		l->hnext = ib.hash[slot];
		ib.hash[slot] = l;
		ib.nleases++;
	} else {
		if (l->dseq > sl->dseq)
			return;		/* we know a newer lease */
		TAILQ_REMOVE(&ib.leases, l, entry);
	}
	l->dseq = sl->dseq;
	l->state = st;
	l->forget = now_ms() + ib.cfg->lease_seconds * 1000LL + LEASE_KEEP_MS;
	TAILQ_INSERT_TAIL(&ib.leases, l, entry);
}

/* The MAC of a receipt, RECEIPT_MAC_HEX hex digits + NUL. */
static int
receipt_mac(const struct isub *s, const char *id,
    const struct store_lease *l, char out[RECEIPT_MAC_HEX + 1])
{
	char	 body[192], hex[TREATY_SIG_HEX_LEN + 1];
	int	 n;

	n = snprintf(body, sizeof(body), "%s.%llu.%llu.%lld", s->cfg->name,
	    (unsigned long long)l->delivered, (unsigned long long)l->dseq,
	    (long long)l->ts);
	if (n < 0 || (size_t)n >= sizeof(body) ||
	    treaty_sig_hmac_hex(s->cfg->token_sha256, 64, (int64_t)l->seq,
	    id, body, (size_t)n, hex) != TREATY_OK)
		return -1;
	memcpy(out, hex, RECEIPT_MAC_HEX);
	out[RECEIPT_MAC_HEX] = '\0';
	return 0;
}

/* "<delivered>.<seq>.<dseq>.<ts>.<mac>" */
static int
receipt_make(const struct isub *s, const char *id,
    const struct store_lease *l, char *out, size_t outsz)
{
	char	 mac[RECEIPT_MAC_HEX + 1];
	int	 n;

	if (receipt_mac(s, id, l, mac) == -1)
		return -1;
	n = snprintf(out, outsz, "%llu.%llu.%llu.%lld.%s",
	    (unsigned long long)l->delivered, (unsigned long long)l->seq,
	    (unsigned long long)l->dseq, (long long)l->ts, mac);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* Parse and check a receipt: 0 ok, -1 malformed, -2 not this inbox's. */
static int
receipt_parse(const struct isub *s, const char *id, const char *r,
    struct store_lease *l)
{
	char		 mac[RECEIPT_MAC_HEX + 1];
	const char	*p = r;
	char		*end;
	unsigned long long v[4];
	int		 i;

	for (i = 0; i < 4; i++) {
		if (*p < '0' || *p > '9')
			return -1;
		v[i] = strtoull(p, &end, 10);
		if (*end != '.')
			return -1;
		p = end + 1;
	}
	if (strlen(p) != RECEIPT_MAC_HEX)
		return -1;
	l->delivered = v[0];
	l->seq = v[1];
	l->dseq = v[2];
	l->ts = (int64_t)v[3];
	if (receipt_mac(s, id, l, mac) == -1)
		return -1;
	return treaty_memeq(mac, p, RECEIPT_MAC_HEX) ? 0 : -2;
}

/* Reject and log one request (metadata only). */
static void
inbox_reject(struct evhttp_request *req, int status, const char *code,
    const char *detail, const char *inbox)
{
	log_info("inbox request rejected", "status=%d error=%s inbox=%s",
	    status, code, log_q(inbox));
	http_error(req, ROUTE_INBOX, status, code, detail);
}

/*
 * The bearer token must be the inbox's own: none (or one nobody has) is
 * 401, another inbox's or a producer's is 403.
 */
static int
inbox_auth(struct evhttp_request *req, const struct isub *s)
{
	const char	*h;
	char		 hex[65];
	size_t		 i;

	h = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Authorization");
	if (h != NULL && strncasecmp(h, "Bearer ", 7) == 0) {
		for (h += 7; *h == ' '; h++)
			;
		if (*h != '\0' &&
		    treaty_sha256_hex(h, strlen(h), hex) == TREATY_OK) {
			if (treaty_memeq(hex, s->cfg->token_sha256, 64))
				return 0;
			for (i = 0; i < ib.cfg->nsubscribers; i++)
				if (ib.cfg->subscribers[i].kind == SUB_PULL &&
				    treaty_memeq(hex,
				    ib.cfg->subscribers[i].token_sha256, 64))
					break;
			if (i < ib.cfg->nsubscribers ||
			    config_find_producer(ib.cfg, hex) != NULL) {
				inbox_reject(req, 403, "forbidden", "this "
				    "token is not this inbox's", s->cfg->name);
				return -1;
			}
		}
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "WWW-Authenticate", "Bearer");
	inbox_reject(req, 401, "unauthenticated", "the inbox's bearer token "
	    "is required", s->cfg->name);
	return -1;
}

/* Add a NUL-terminated string. */
static void
gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

struct attr_ctx {
	yajl_gen	 g;
	const char	*ct;
};

/* One stored header as a structured-mode attribute. */
static void
attr_cb(void *arg, const char *key, const char *value)
{
	struct attr_ctx	*a = arg;
	size_t		 n = strlen(value), out;
	char		*v;

	if (strcasecmp(key, "content-type") == 0) {
		a->ct = value;
		return;
	}
	if (strncasecmp(key, "ce-", 3) != 0 || key[3] == '\0')
		return;
	v = xmalloc(n + 1);
	if (treaty_pct_decode(value, n, v, n + 1, &out) == TREATY_OK) {
		gen_str(a->g, key + 3);
		yajl_gen_string(a->g, (const unsigned char *)v, out);
	}
	free(v);
}

/*
 * The stored event as a structured-mode CloudEvent: attributes from the
 * ce-* headers, datacontenttype, and the data written so that a worker
 * recovers the stored bytes exactly (cevent_gen_data).
 */
static void
gen_event(yajl_gen g, const struct store_msg *m)
{
	struct attr_ctx	 a = { g, NULL };
	const char	*data;
	size_t		 len;

	yajl_gen_map_open(g);
	store_msg_headers(m, attr_cb, &a);
	if (a.ct != NULL) {
		gen_str(g, "datacontenttype");
		gen_str(g, a.ct);
	}
	data = store_msg_data(m, &len);
	cevent_gen_data(g, a.ct, data, len);
	yajl_gen_map_close(g);
}

/* Take a fetch out of its queue. */
static void
fetch_unqueue(struct fetch *f)
{
	if (f->q == Q_NONE)
		return;
	TAILQ_REMOVE(&f->s->queue[f->q], f, qentry);
	if (f->q == STORE_PULL_WAIT)
		metrics_inbox_waiting(f->s->idx, -1);
	f->q = Q_NONE;
	event_del(&f->deadline);
}

/* Put a fetch at the end of a queue, and have the requests sent. */
static void
fetch_queue(struct fetch *f, enum store_pull_kind k)
{
	fetch_unqueue(f);
	f->q = (int)k;
	TAILQ_INSERT_TAIL(&f->s->queue[k], f, qentry);
	if (k == STORE_PULL_WAIT)
		metrics_inbox_waiting(f->s->idx, 1);
	event_active(&f->s->pump, EV_TIMEOUT, 0);
}

/* End a fetch: off the lists, messages freed (JetStream keeps leases). */
static void
fetch_free(struct fetch *f)
{
	int	 i;

	fetch_unqueue(f);
	for (i = 0; i < f->n; i++)
		if (f->msgs[i] != NULL)
			store_msg_free(f->msgs[i]);
	TAILQ_REMOVE(&ib.fetches, f, entry);
	free(f);
}

/* Answer a fetch with its envelopes. */
static void
fetch_answer(struct fetch *f)
{
	struct isub		*s = f->s;
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	size_t			 len, blen;
	struct store_lease	 l;
	struct evbuffer		*b;
	char			 receipt[160], sig[16 + 68 * 8];
	const void		*body;
	char			*id;
	int64_t			 t = (int64_t)time(NULL);
	int			 i, sent = 0, redelivered = 0;

	yajl_gen_map_open(g);
	gen_str(g, "leaseSeconds");
	yajl_gen_integer(g, f->lease ? ib.cfg->lease_seconds : 0);
	gen_str(g, "envelopes");
	yajl_gen_array_open(g);
	for (i = 0; i < f->n; i++) {
		if (f->msgs[i] == NULL)
			continue;	/* destructive, not confirmed */
		store_msg_lease(f->msgs[i], &l);
		if ((id = store_msg_header_decoded(f->msgs[i], "ce-id")) == NULL) {
			/* Not an event (never stored by ingest): skip it. */
			log_warnx("inbox: stored message without an id",
			    "inbox=%s seq=%llu", s->cfg->name,
			    (unsigned long long)l.seq);
			continue;
		}
		body = store_msg_data(f->msgs[i], &blen);
		yajl_gen_map_open(g);
		gen_str(g, "id");
		gen_str(g, id);
		gen_str(g, "receipt");
		if (f->lease && receipt_make(s, id, &l, receipt,
		    sizeof(receipt)) == 0) {
			gen_str(g, receipt);
			lease_note(s->idx, &l, LEASE_HELD);
		} else
			yajl_gen_null(g);
		gen_str(g, "deliveryCount");
		yajl_gen_integer(g, (long long)l.delivered);
		gen_str(g, "event");
		gen_event(g, f->msgs[i]);
		gen_str(g, "signature");
		if (treaty_sig_sign(s->secrets, s->cfg->nsecrets, t, id, body,
		    blen, sig, sizeof(sig)) > 0)
			gen_str(g, sig);
		else
			yajl_gen_null(g);
		yajl_gen_map_close(g);
		free(id);
		sent++;
		if (l.delivered > 1)
			redelivered++;
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	b = evbuffer_new();
	evbuffer_add(b, buf, len);
	yajl_gen_free(g);
	if (!f->peek) {
		metrics_inbox(s->idx, f->lease ? INBOX_LEASED : INBOX_TAKEN,
		    (unsigned)sent);
		metrics_inbox(s->idx, INBOX_REDELIVERED,
		    (unsigned)redelivered);
	}
	http_reply(f->req, ROUTE_INBOX, 200, b);
	evbuffer_free(b);
	fetch_free(f);
}


/* A destructive fetch: JetStream confirmed (or not) one acknowledgement. */
static int
take_cb(void *arg, struct store_msg *m, int status)
{
	struct take	*tk = arg;
	struct fetch	*f = tk->f;

	if (m != NULL)
		store_msg_free(m);
	if (m == NULL && status != 0) {
		/* Unconfirmed: give it back rather than hand it out. */
		store_msg_nak(f->msgs[tk->i], 0);
		f->msgs[tk->i] = NULL;
	}
	free(tk);
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
	struct take		*tk;
	int			 i;

	fetch_unqueue(f);
	if (http_client_gone(f->req)) {
		/* The client left: give everything back at once. */
		for (i = 0; i < f->n; i++) {
			store_msg_nak(f->msgs[i], 0);
			f->msgs[i] = NULL;
		}
		evhttp_send_reply(f->req, 499, "Client gone", NULL);
		fetch_free(f);
		return;
	}
	if (f->lease || f->n == 0) {
		fetch_answer(f);
		return;
	}
	f->acks = f->n;
	for (i = 0; i < f->n; i++) {
		tk = xcalloc(1, sizeof(*tk));
		tk->f = f;
		tk->i = i;
		store_msg_lease(f->msgs[i], &l);
		if (store_lease_answer(f->s->cfg->name, &l, "+ACK", take_cb,
		    tk) == NULL)
			take_cb(tk, NULL, STORE_REPLY_TIMEOUT);
	}
}

/* A message for nobody: back to JetStream at once. */
static void
give_back(struct store_msg *m)
{
	store_msg_nak(m, 0);
}

/* A reply to the inbox's "now" request: for the head of that queue. */
static int
now_cb(void *arg, struct store_msg *m, int status)
{
	struct isub	*s = arg;
	struct fetch	*f = TAILQ_FIRST(&s->queue[STORE_PULL_NOW]);

	(void)status;
	if (m == NULL) {
		/* 404, 408, 409, timeout: nothing more now. */
		s->req[STORE_PULL_NOW] = NULL;
		if (f != NULL)
			fetch_done(f);
		event_active(&s->pump, EV_TIMEOUT, 0);
		return 0;
	}
	if (f == NULL || f->n >= f->max) {
		give_back(m);
		return 1;
	}
	f->msgs[f->n++] = m;
	if (f->n < f->max)
		return 1;
	/* Its batch is full: JetStream sends no status after that. */
	s->req[STORE_PULL_NOW] = NULL;
	fetch_done(f);
	event_active(&s->pump, EV_TIMEOUT, 0);
	return 0;
}

/* A reply to the inbox's waiting request: for the longest waiter. */
static int
wait_cb(void *arg, struct store_msg *m, int status)
{
	struct isub	*s = arg;
	struct fetch	*f = TAILQ_FIRST(&s->queue[STORE_PULL_WAIT]);

	(void)status;
	s->req[STORE_PULL_WAIT] = NULL;		/* it asked for one */
	event_active(&s->pump, EV_TIMEOUT, 0);
	if (m == NULL)
		return 0;
	/* Waiters whose clients left get nothing (and are let go). */
	while (f != NULL && http_client_gone(f->req)) {
		fetch_done(f);
		f = TAILQ_FIRST(&s->queue[STORE_PULL_WAIT]);
	}
	if (f == NULL) {
		give_back(m);
		return 0;
	}
	f->msgs[f->n++] = m;
	if (f->n < f->max && !ib.stopping)
		fetch_queue(f, STORE_PULL_NOW);	/* the rest, without waiting */
	else
		fetch_done(f);
	return 0;
}

/*
 * Send the requests the queues need: the head of the "now" queue asks
 * for what it still lacks; the head of the waiting queue for one message
 * within its remaining wait.
 */
static void
inbox_pump_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct isub	*s = arg;
	struct fetch	*f;
	struct timeval	 tv = { 0, PUMP_RETRY_MS * 1000 };
	long long	 left;

	(void)fd;
	(void)ev;
	if (s->req[STORE_PULL_NOW] == NULL &&
	    (f = TAILQ_FIRST(&s->queue[STORE_PULL_NOW])) != NULL) {
		s->req[STORE_PULL_NOW] = store_pull(s->cfg->name,
		    STORE_PULL_NOW, f->max - f->n, 0, now_cb, s);
		if (s->req[STORE_PULL_NOW] == NULL) {
			/* Not connected: what it has, or 503 when nothing. */
			if (f->n == 0) {
				inbox_reject(f->req, 503, "inbox_unavailable",
				    "JetStream is not available; try again",
				    s->cfg->name);
				fetch_free(f);
			} else
				fetch_done(f);
			event_active(&s->pump, EV_TIMEOUT, 0);
			return;
		}
	}
	if (s->req[STORE_PULL_WAIT] == NULL &&
	    (f = TAILQ_FIRST(&s->queue[STORE_PULL_WAIT])) != NULL) {
		left = f->wait_end - now_ms();
		s->req[STORE_PULL_WAIT] = store_pull(s->cfg->name,
		    STORE_PULL_WAIT, 1, left > 100 ? left : 100, wait_cb, s);
		/* Not connected: ask again soon; deadlines still apply. */
		if (s->req[STORE_PULL_WAIT] == NULL)
			event_add(&s->pump, &tv);
	}
}

/* What a peek found. */
static void
peek_cb(void *arg, struct store_msg **msgs, int n, int result)
{
	struct fetch	*f = arg;
	int		 i;

	for (i = 0; i < n; i++)
		f->msgs[f->n++] = msgs[i];
	if (f->req == NULL) {
		/* Orphaned by inbox_fail_all: off every list already. */
		for (i = 0; i < f->n; i++)
			store_msg_free(f->msgs[i]);
		free(f);
		return;
	}
	if (result == -1 && n == 0) {
		inbox_reject(f->req, 503, "inbox_unavailable", "JetStream did "
		    "not answer; try again", f->s->cfg->name);
		fetch_free(f);
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

/* An integer query parameter in [lo, hi]; -1 when absent, -2 when bad. */
static long long
query_int(const struct evkeyvalq *q, const char *key, long long lo,
    long long hi)
{
	const char	*v = evhttp_find_header(q, key);
	char		*end;
	long long	 n;

	if (v == NULL)
		return -1;
	if (*v < '0' || *v > '9')
		return -2;
	n = strtoll(v, &end, 10);
	return *end != '\0' || n < lo || n > hi ? -2 : n;
}

/* A boolean query parameter: 1, 0 (absent or false), -2 when bad. */
static int
query_bool(const struct evkeyvalq *q, const char *key)
{
	const char	*v = evhttp_find_header(q, key);

	if (v == NULL || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || *v == '\0')
		return 1;
	return -2;
}

/* GET /v1/inbox/<name>. */
static void
inbox_get(struct evhttp_request *req, struct isub *s,
    const struct evkeyvalq *q)
{
	struct fetch	*f;
	struct timeval	 tv;
	long long	 max, wait;
	int		 lease, peek;

	lease = query_bool(q, "lease");
	peek = query_bool(q, "peek");
	max = query_int(q, "max", 1, INBOX_MAX_BATCH);
	wait = query_int(q, "wait", 0, INBOX_MAX_WAIT_MS);
	if (lease == -2 || peek == -2 || max == -2 || wait == -2) {
		inbox_reject(req, 400, "bad_request", "lease and peek are "
		    "true or false, max 1-256, wait 0-30000", s->cfg->name);
		return;
	}
	if (!store_ready()) {
		inbox_reject(req, 503, "inbox_unavailable", "JetStream is not "
		    "available; try again", s->cfg->name);
		return;
	}
	f = xcalloc(1, sizeof(*f));
	f->req = req;
	f->s = s;
	f->q = Q_NONE;
	f->max = max > 0 ? (int)max : INBOX_DEFAULT_BATCH;
	f->lease = lease;
	evtimer_assign(&f->deadline, ib.base, fetch_deadline_cb, f);
	TAILQ_INSERT_TAIL(&ib.fetches, f, entry);
	if (peek == 1) {
		/* Looks only: no lease taken, none extended. */
		f->peek = 1;
		f->lease = 0;
		if (store_peek(s->cfg->name, f->max, peek_cb, f) == -1) {
			inbox_reject(req, 503, "inbox_unavailable", "JetStream "
			    "is not available; try again", s->cfg->name);
			f->req = NULL;
			fetch_free(f);
		}
	} else if (wait > 0) {
		f->wait_end = now_ms() + wait;
		fetch_queue(f, STORE_PULL_WAIT);
		tv.tv_sec = wait / 1000;
		tv.tv_usec = wait % 1000 * 1000;
		evtimer_add(&f->deadline, &tv);
	} else
		fetch_queue(f, STORE_PULL_NOW);
}

/* End an operation. */
static void
op_free(struct op *o)
{
	TAILQ_REMOVE(&ib.ops, o, entry);
	free(o);
}

/* JetStream confirmed (or not) an acknowledgement, extension or release. */
static int
op_done_cb(void *arg, struct store_msg *m, int status)
{
	struct op	*o = arg;
	static const enum inbox_counter counter[] = { INBOX_ACKED,
	    INBOX_EXTENDED, INBOX_RELEASED };
	static const enum lease_state state[] = { LEASE_ACKED, LEASE_HELD,
	    LEASE_RELEASED };

	o->sr = NULL;
	if (m == NULL) {
		log_warnx("inbox: JetStream did not confirm", "inbox=%s "
		    "seq=%llu status=%d", o->s->cfg->name,
		    (unsigned long long)o->l.seq, status);
		inbox_reject(o->req, 503, "inbox_unavailable", "JetStream did "
		    "not confirm; try again", o->s->cfg->name);
	} else {
		store_msg_free(m);
		lease_note(o->s->idx, &o->l, state[o->kind]);
		metrics_inbox(o->s->idx, counter[o->kind], 1);
		http_reply(o->req, ROUTE_INBOX, 204, NULL);
	}
	op_free(o);
	return 0;
}

/* DELETE, extend, release of one lease. */
static void
inbox_lease_op(struct evhttp_request *req, struct isub *s, const char *id,
    enum lease_op kind, const struct evkeyvalq *q)
{
	struct store_lease	 l;
	struct lease		*known;
	struct op		*o;
	const char		*r = evhttp_find_header(q, "receipt");
	long long		 delay = 0;
	char			 verb[64];
	int			 rc;

	if (r == NULL) {
		inbox_reject(req, 400, "bad_request", "receipt is required",
		    s->cfg->name);
		return;
	}
	if (kind == OP_RELEASE &&
	    (delay = query_int(q, "delay", 0, MAX_RELEASE_DELAY_MS)) == -2) {
		inbox_reject(req, 400, "bad_request", "delay is 0-3600000 ms",
		    s->cfg->name);
		return;
	}
	if ((rc = receipt_parse(s, id, r, &l)) == -1) {
		inbox_reject(req, 400, "bad_receipt", "not a receipt",
		    s->cfg->name);
		return;
	}
	if (rc == -2) {
		inbox_reject(req, 403, "receipt_refused", "the receipt is not "
		    "for this inbox and event", s->cfg->name);
		return;
	}
	known = lease_find(s->idx, l.seq);
	if (known != NULL && (known->dseq > l.dseq ||
	    (known->dseq == l.dseq && known->state != LEASE_HELD))) {
		http_error(req, ROUTE_INBOX, 404, "lease_not_held", "already "
		    "acknowledged, released, or handed out again");
		return;
	}
	if (kind == OP_ACK)
		snprintf(verb, sizeof(verb), "+ACK");
	else if (kind == OP_EXTEND)
		snprintf(verb, sizeof(verb), "+WPI");
	else if (delay > 0)
		snprintf(verb, sizeof(verb), "-NAK {\"delay\":%lld}",
		    delay * 1000000LL);
	else
		snprintf(verb, sizeof(verb), "-NAK");
	o = xcalloc(1, sizeof(*o));
	o->req = req;
	o->s = s;
	o->l = l;
	o->kind = kind;
	TAILQ_INSERT_TAIL(&ib.ops, o, entry);
	o->sr = store_lease_answer(s->cfg->name, &l, verb, op_done_cb, o);
	if (o->sr == NULL) {
		inbox_reject(req, 503, "inbox_unavailable", "JetStream is not "
		    "available; try again", s->cfg->name);
		op_free(o);
	}
}

/* The pull subscriber called name, or NULL. */
static struct isub *
inbox_find(const char *name, size_t len)
{
	int	 i;

	for (i = 0; i < ib.nsubs; i++)
		if (strlen(ib.subs[i].cfg->name) == len &&
		    memcmp(ib.subs[i].cfg->name, name, len) == 0)
			return &ib.subs[i];
	return NULL;
}

/* Route /v1/inbox/<name>[/<id>[/extend|/release]]. */
void
inbox_handle(struct evhttp_request *req, const char *rest)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);
	struct evkeyvalq	 q;
	const char		*slash = strchr(rest, '/'), *idp, *verb = NULL;
	struct isub		*s;
	char			*id = NULL, *seg;
	size_t			 idlen;

	s = inbox_find(rest, slash != NULL ? (size_t)(slash - rest) :
	    strlen(rest));
	if (s == NULL) {
		http_error(req, ROUTE_INBOX, 404, "not_found", "no such inbox");
		return;
	}
	if (ib.stopping) {
		http_error(req, ROUTE_INBOX, 503, "inbox_unavailable", "the "
		    "relay is shutting down");
		return;
	}
	if (inbox_auth(req, s) == -1)
		return;
	TAILQ_INIT(&q);
	if (evhttp_parse_query_str(uri != NULL && evhttp_uri_get_query(uri) ?
	    evhttp_uri_get_query(uri) : "", &q) == -1) {
		inbox_reject(req, 400, "bad_request", "unreadable query",
		    s->cfg->name);
		return;
	}
	if (slash == NULL || slash[1] == '\0') {
		if (m != EVHTTP_REQ_GET) {
			evhttp_add_header(evhttp_request_get_output_headers(req),
			    "Allow", "GET");
			http_error(req, ROUTE_INBOX, 405, "method_not_allowed",
			    "fetch with GET");
		} else
			inbox_get(req, s, &q);
		evhttp_clear_headers(&q);
		return;
	}
	idp = slash + 1;
	idlen = strcspn(idp, "/");
	if (idp[idlen] == '/')
		verb = idp + idlen + 1;
	seg = xstrndup(idp, idlen);
	id = evhttp_uridecode(seg, 0, NULL);
	free(seg);
	if (id == NULL || *id == '\0' ||
	    (verb != NULL && strcmp(verb, "extend") != 0 &&
	    strcmp(verb, "release") != 0)) {
		http_error(req, ROUTE_INBOX, 404, "not_found", "no such route");
	} else if (verb == NULL && m != EVHTTP_REQ_DELETE) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "DELETE");
		http_error(req, ROUTE_INBOX, 405, "method_not_allowed",
		    "acknowledge with DELETE");
	} else if (verb != NULL && m != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		http_error(req, ROUTE_INBOX, 405, "method_not_allowed",
		    "use POST");
	} else
		inbox_lease_op(req, s, id, verb == NULL ? OP_ACK :
		    strcmp(verb, "extend") == 0 ? OP_EXTEND : OP_RELEASE, &q);
	free(id);
	evhttp_clear_headers(&q);
}

/* The drop record of an exhausted event is stored (or the relay stops). */
static void
inbox_dropped_cb(void *arg, int stored)
{
	(void)stored;
	store_msg_free(arg);
}

/*
 * JetStream stopped handing out an event of this inbox: its leases ran
 * out maxDeliver times without an acknowledgement.  Record the drop like
 * a push subscriber's (SPEC 3: no drop is silent).
 */
static void
inbox_exhausted_cb(void *arg, struct store_msg *m)
{
	struct isub	*s = arg;
	char		*id = store_msg_header_decoded(m, "ce-id");

	log_warnx("inbox event dropped", "inbox=%s id=%s subject=%s "
	    "attempts=%llu", s->cfg->name, log_q(id),
	    log_q(store_msg_subject(m)),
	    (unsigned long long)store_msg_delivered(m));
	free(id);
	metrics_inbox(s->idx, INBOX_DROPPED, 1);
	audit_drop(s->cfg->name, m, store_msg_delivered(m), 0,
	    "lease expired maxDeliver times", inbox_dropped_cb, m);
}

/* Register the pull consumers. */
void
inbox_init(struct event_base *base, const struct config *cfg)
{
	const char	**names;
	size_t		  i;

	ib.base = base;
	ib.cfg = cfg;
	TAILQ_INIT(&ib.leases);
	TAILQ_INIT(&ib.fetches);
	TAILQ_INIT(&ib.ops);
	ib.subs = xcalloc(cfg->nsubscribers, sizeof(*ib.subs));
	names = xcalloc(cfg->nsubscribers, sizeof(*names));
	for (i = 0; i < cfg->nsubscribers; i++) {
		const struct subscriber	*sc = &cfg->subscribers[i];
		struct isub		*s = &ib.subs[ib.nsubs];

		if (sc->kind != SUB_PULL)
			continue;
		s->idx = ib.nsubs;
		s->cfg = sc;
		TAILQ_INIT(&s->queue[STORE_PULL_NOW]);
		TAILQ_INIT(&s->queue[STORE_PULL_WAIT]);
		event_assign(&s->pump, base, -1, 0, inbox_pump_cb, s);
		s->secrets = config_secrets(sc);
		names[ib.nsubs++] = sc->name;
		store_pull_consumer_add(sc->name, sc->filter, sc->max_deliver,
		    sc->max_in_flight, cfg->lease_seconds, inbox_exhausted_cb,
		    s);
	}
	metrics_inboxes(names, ib.nsubs);
	free(names);
}

/* Answer the long-polls now; refuse new requests. */
void
inbox_stop(void)
{
	struct fetch	*f;
	int		 i;

	ib.stopping = 1;
	for (i = 0; i < ib.nsubs; i++)
		while ((f = TAILQ_FIRST(&ib.subs[i].queue[STORE_PULL_WAIT])) !=
		    NULL)
			fetch_done(f);
}

/* Requests waiting for JetStream. */
int
inbox_in_flight(void)
{
	struct fetch	*f;
	struct op	*o;
	int		 n = 0;

	TAILQ_FOREACH(f, &ib.fetches, entry)
		n++;
	TAILQ_FOREACH(o, &ib.ops, entry)
		n++;
	return n;
}

/* Answer 503 to every request still waiting for JetStream. */
void
inbox_fail_all(void)
{
	struct fetch	*f;
	struct op	*o;
	int		 i, k;

	while ((f = TAILQ_FIRST(&ib.fetches)) != NULL) {
		http_error(f->req, ROUTE_INBOX, 503, "inbox_unavailable",
		    "the relay is shutting down");
		if (f->peek) {
			/* Its job still runs: peek_cb frees it. */
			TAILQ_REMOVE(&ib.fetches, f, entry);
			f->req = NULL;
		} else
			fetch_free(f);
	}
	for (i = 0; i < ib.nsubs; i++)
		for (k = 0; k < STORE_PULL_KINDS; k++) {
			store_request_cancel(ib.subs[i].req[k]);
			ib.subs[i].req[k] = NULL;
			event_del(&ib.subs[i].pump);
		}
	while ((o = TAILQ_FIRST(&ib.ops)) != NULL) {
		store_request_cancel(o->sr);
		http_error(o->req, ROUTE_INBOX, 503, "inbox_unavailable",
		    "the relay is shutting down");
		op_free(o);
	}
}

/* Free everything; requests still waiting are answered 503. */
void
inbox_free(void)
{
	struct lease	*l;
	int		 i;

	inbox_fail_all();
	while ((l = TAILQ_FIRST(&ib.leases)) != NULL)
		lease_drop(l);
	for (i = 0; i < ib.nsubs; i++)
		free(ib.subs[i].secrets);
	free(ib.subs);
	ib.subs = NULL;
	ib.nsubs = 0;
}
