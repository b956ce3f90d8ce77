/*
 * inbox.c: pull subscribers (SPEC 4): the routes under /v1/inbox/, their
 * authentication and parameters, the lease operations (DELETE, extend,
 * release), set-up and shutdown.  Loop thread only.  GET is served by
 * inbox-fetch.c, receipts and the memory of leases by inbox-lease.c
 * (inbox-int.h lists the files).
 *
 * Each pull subscriber has a durable pull consumer relay-<name> on WORK
 * whose ack wait is the lease: an event handed out with lease=true stays
 * pending in JetStream until it is acknowledged (DELETE), and JetStream
 * hands it out again when the lease runs out.  The lease therefore lives
 * in JetStream, survives a relay restart, and any instance can answer it:
 * a receipt carries the lease's JetStream numbers, which rebuild its
 * acknowledgement subject.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "treaty.h"
#include "audit.h"
#include "auth.h"
#include "config.h"
#include "evmem.h"
#include "query.h"
#include "reply.h"
#include "inbox.h"
#include "inbox-int.h"
#include "inbox-lease.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"
#include "source.h"
#include "store.h"
#include "store-sub.h"
#include "substate.h"
#include "util.h"

/* An acknowledgement, extension or release waiting for JetStream. */
enum lease_op {
	OP_ACK,
	OP_EXTEND,
	OP_RELEASE
};
struct op {
	struct iresp		 r;
	struct isub		*s;
	struct store_lease	 l;
	char			 replay[STORE_REPLAY_ID_LEN + 1];	/* or "" */
	enum lease_op		 kind;
	int			 hand;		/* an ordered inbox's ack */
	struct store_req	*sr;
	TAILQ_ENTRY(op)		 entry;
};
TAILQ_HEAD(op_list, op);

struct inbox_state	 ib = {
	.subs = TAILQ_HEAD_INITIALIZER(ib.subs),
	.gone = TAILQ_HEAD_INITIALIZER(ib.gone),
	.fetches = TAILQ_HEAD_INITIALIZER(ib.fetches)
};
static struct op_list	 ops = TAILQ_HEAD_INITIALIZER(ops);

static void	isub_reap_cb(evutil_socket_t, short, void *);
static void	inbox_route(struct evhttp_request *, struct isub *,
		    enum inbox_verb, const char *, const struct evkeyvalq *,
		    const char *);

/* Reject and log one request (metadata only). */
void
inbox_reject(struct iresp *r, int status, const char *code,
    const char *detail, const char *inbox)
{
	if (log_refused_ok())
		log_info("inbox request rejected", "status=%d error=%s "
		    "inbox=%s", status, code, log_q(inbox));
	iresp_error(r, status, code, detail);
}

/*
 * The bearer token must be the inbox's own: none, or one nobody has, is
 * 401 (each with its own detail), another inbox's, a producer's or an
 * admin's is 403.  With s NULL (no such inbox) such a known token gets 404
 * instead; a 401 says the same whether the inbox exists or not, so that
 * names cannot be probed without a token.  hex: its hash.
 */
static int
inbox_auth(struct evhttp_request *req, const struct isub *s,
    char hex[AUTH_HASH_HEX])
{
	const char	*name = s != NULL ? s->cfg->name : NULL;
	const char	*detail = "the inbox's bearer token is required: "
			    "Authorization: Bearer <token>";

	if (auth_bearer(query_header(evhttp_request_get_input_headers(req),
	    "Authorization"), hex) == 0) {
		detail = "unknown token: its SHA-256 is not in the relay's "
		    "configuration";
		if (s != NULL && config_token_match(&s->cfg->tokens, hex))
			return 0;
		if (config_find_inbox(ib.cfg, hex) != NULL ||
		    config_find_producer(ib.cfg, hex) != NULL ||
		    config_token_match(&ib.cfg->admin, hex)) {
			if (s == NULL)
				reply_error(req, ROUTE_INBOX, 404, "not_found",
				    "no such inbox");
			else
				inbox_reject(&IRESP(req), 403, "forbidden", "this "
				    "token is not this inbox's", name);
			return -1;
		}
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "WWW-Authenticate", "Bearer");
	if (s == NULL)
		reply_error(req, ROUTE_INBOX, 401, "unauthenticated", detail);
	else
		inbox_reject(&IRESP(req), 401, "unauthenticated", detail,
		    name);
	return -1;
}

/*
 * Read a receipt of this inbox (l, and the replay it names into replay):
 * 0, -1 when it is not a receipt, -2 when no token hash of the inbox made
 * it.  Receipts are made with the hash of the token that took the lease
 * and read with any, so a lease taken before a token rotation can still
 * be answered until the old hash is removed (whatever the list's order).
 */
static int
inbox_receipt_check(const struct isub *s, const char *id, const char *r,
    struct store_lease *l, char replay[STORE_REPLAY_ID_LEN + 1])
{
	size_t	 i;
	int	 rc = -2;

	for (i = 0; i < s->cfg->tokens.n && rc == -2; i++)
		rc = inbox_receipt_parse(s->cfg->name, s->cfg->tokens.hash[i],
		    id, r, l, replay);
	return rc;
}

/* GET /v1/inbox/<name>: the parameters, then inbox-fetch.c. */
static void
inbox_get(struct iresp *r, struct isub *s,
    const struct evkeyvalq *q, const char *key)
{
	long long	 max, wait;
	int		 lease, peek;

	lease = query_bool(q, "lease");
	peek = query_bool(q, "peek");
	max = query_int(q, "max", 1, API_INBOX_BATCH_MAX);
	wait = query_int(q, "wait", 0, API_INBOX_WAIT_MAX_MS);
	if (lease == -2 || peek == -2 || max == -2 || wait == -2) {
		inbox_reject(r, 400, "bad_request", "lease and peek are "
		    "true or false, max 1-" API_STR(API_INBOX_BATCH_MAX)
		    ", wait 0-" API_STR(API_INBOX_WAIT_MAX_MS), s->cfg->name);
		return;
	}
	if (!store_ready()) {
		inbox_reject(r, 503, "inbox_unavailable", "JetStream is not "
		    "available; try again", s->cfg->name);
		return;
	}
	/* An empty 200 would look like "no work" (SPEC 10's trap). */
	if (store_consumer_wrong_kind(s->own.consumer)) {
		inbox_reject(r, 503, "inbox_unavailable", "the inbox's "
		    "JetStream consumer is a push consumer; see the relay's "
		    "log", s->cfg->name);
		return;
	}
	inbox_fetch(r, s, max > 0 ? (int)max : API_INBOX_BATCH_DEFAULT, lease,
	    peek, wait > 0 ? wait : 0, key);
}

/* End an operation, the one way (its request answered, or to be). */
static void
op_close(struct op *o, const char *reason)
{
	log_debug("lease operation closed", "inbox=%s seq=%llu reason=%s",
	    o->s->cfg->name, (unsigned long long)o->l.seq, log_q(reason));
	store_req_close(o->sr, reason);
	/* Unconfirmed (closed before JetStream said): the lease goes on. */
	if (o->hand)
		ohand_acked(o->s, o->replay, o->l.seq, 0);
	TAILQ_REMOVE(&ops, o, entry);
	inbox_sub_unref(o->s);
	free(o);
}

/* The lease is gone with the replay that lent it: 404. */
static void
op_lender_gone(struct op *o)
{
	iresp_error(&o->r, 404, "lease_not_held", "the replay "
	    "that lent it has ended");
	op_close(o, "replay ended");
}

/* JetStream did not confirm: 503, try again. */
static void
op_unconfirmed(struct op *o, int status)
{
	log_warnx("inbox: JetStream did not confirm", "inbox=%s seq=%llu "
	    "replay=%s status=%d", o->s->cfg->name,
	    (unsigned long long)o->l.seq, o->replay, status);
	inbox_reject(&o->r, 503, "inbox_unavailable", "JetStream did not "
	    "confirm; try again", o->s->cfg->name);
	op_close(o, "not confirmed");
}

/* Whether the replay that lent o's lease still has its consumer. */
static int
op_info_cb(void *arg, struct store_msg *m, int status)
{
	struct op	*o = arg;
	int		 found = m != NULL ? store_replay_info_found(m) : -1;

	o->sr = NULL;		/* the store ends it */
	if (m != NULL)
		store_msg_free(m);
	if (found == 0)
		op_lender_gone(o);
	else
		op_unconfirmed(o, status);
	return 0;
}

/* JetStream confirmed (or not) an acknowledgement, extension or release. */
static int
op_done_cb(void *arg, struct store_msg *m, int status)
{
	struct op	*o = arg;
	static const enum inbox_counter counter[] = { INBOX_ACKED,
	    INBOX_EXTENDED, INBOX_RELEASED };
	static const enum inbox_lease_state state[] = { INBOX_LEASE_ACKED,
	    INBOX_LEASE_HELD, INBOX_LEASE_RELEASED };

	o->sr = NULL;		/* the store ends it */
	if (m == NULL && o->replay[0] != '\0') {
		/*
		 * A replay that ended has no consumer, and nothing answers
		 * (NATS's "no responders" does not reach us): ask JetStream
		 * whether the consumer is there, unless this instance saw it
		 * end.
		 */
		if (source_ended(o->replay))
			op_lender_gone(o);
		else if ((o->sr = store_replay_info(o->replay, op_info_cb,
		    o)) == NULL)
			op_unconfirmed(o, status);
	} else if (m == NULL)
		op_unconfirmed(o, status);
	else {
		store_msg_free(m);
		if (o->hand) {
			ohand_acked(o->s, o->replay, o->l.seq, 1);
			o->hand = 0;
		}
		inbox_leases_note(ib.leases, o->s->idx, o->replay, &o->l,
		    state[o->kind], now_ms());
		metrics_inbox(o->s->idx, counter[o->kind], 1);
		/* Any instance counts what it confirmed for a replay. */
		if (o->kind == OP_ACK && o->replay[0] != '\0')
			source_counted(o->replay, 1);
		iresp_json(&o->r, 204, NULL);
		op_close(o, "confirmed");
	}
	return 0;
}

/* DELETE, extend, release of one lease. */
static void
inbox_lease_op(struct iresp *r, struct isub *s, const char *id,
    enum lease_op kind, const struct evkeyvalq *q)
{
	static const enum store_verb verbs[] = { STORE_ACK, STORE_PROGRESS,
	    STORE_NAK };
	struct store_lease	 l;
	struct op		*o;
	const char		*rcpt = evhttp_find_header(q, "receipt");
	char			 replay[STORE_REPLAY_ID_LEN + 1];
	long long		 delay = 0;
	int			 rc, hand = 0;

	if (rcpt == NULL) {
		inbox_reject(r, 400, "bad_request", "receipt is required",
		    s->cfg->name);
		return;
	}
	if (kind == OP_RELEASE && (delay = query_int(q, "delay", 0,
	    API_RELEASE_DELAY_MAX_MS)) == -2) {
		inbox_reject(r, 400, "bad_request", "delay is 0-"
		    API_STR(API_RELEASE_DELAY_MAX_MS) " ms", s->cfg->name);
		return;
	}
	if ((rc = inbox_receipt_check(s, id, rcpt, &l, replay)) == -1) {
		inbox_reject(r, 400, "bad_receipt", "not a receipt",
		    s->cfg->name);
		return;
	}
	if (rc == -2) {
		inbox_reject(r, 403, "receipt_refused", "the receipt is not "
		    "for this inbox and event", s->cfg->name);
		return;
	}
	if (s->hand != NULL) {
		switch (ohand_op(s, kind == OP_ACK ? INBOX_ACK :
		    kind == OP_EXTEND ? INBOX_EXTEND : INBOX_RELEASE, replay,
		    &l, delay > 0 ? delay : 0, &l)) {
		case OHAND_DONE:
			metrics_inbox(s->idx, kind == OP_EXTEND ?
			    INBOX_EXTENDED : INBOX_RELEASED, 1);
			iresp_json(r, 204, NULL);
			return;
		case OHAND_GONE:
			iresp_error(r, 404, "lease_not_held", "no lease of "
			    "the inbox's holder: acknowledged, released, ran "
			    "out, or handed out again");
			return;
		case OHAND_ACK:
			hand = 1;
			break;
		case OHAND_JETSTREAM:
			if (inbox_leases_gone(ib.leases, s->idx, replay, &l)) {
				iresp_error(r, 404, "lease_not_held",
				    "already acknowledged");
				return;
			}
			break;
		}
	} else if (inbox_leases_gone(ib.leases, s->idx, replay, &l)) {
		iresp_error(r, 404, "lease_not_held", "already "
		    "acknowledged, released, or handed out again");
		return;
	}
	if (kind == OP_EXTEND && !hand && inbox_leases_ran_out(ib.leases, s->idx,
	    replay, &l, now_ms())) {
		iresp_error(r, 404, "lease_not_held", "the lease "
		    "ran out; it cannot be extended");
		return;
	}
	if (replay[0] != '\0' && source_ended(replay)) {
		iresp_error(r, 404, "lease_not_held", "the "
		    "replay that lent it has ended");
		return;
	}
	o = xcalloc(1, sizeof(*o));
	o->r = *r;
	o->s = s;
	s->refs++;
	o->l = l;
	memcpy(o->replay, replay, sizeof(o->replay));
	o->kind = kind;
	o->hand = hand;
	TAILQ_INSERT_TAIL(&ops, o, entry);
	/* A replay's lease: to its consumer, taken up here or not. */
	if (replay[0] != '\0')
		o->sr = store_replay_lease_answer(replay, &l, verbs[kind],
		    delay > 0 ? delay : 0, op_done_cb, o);
	else
		o->sr = store_lease_answer(s->own.consumer, &l, verbs[kind],
		    delay > 0 ? delay : 0, op_done_cb, o);
	if (o->sr == NULL) {
		inbox_reject(r, 503, "inbox_unavailable", "JetStream is not "
		    "available; try again", s->cfg->name);
		op_close(o, "not connected");
	}
}

/* The pull subscriber called name, or NULL. */
static struct isub *
inbox_find(const char *name, size_t len)
{
	struct isub	*s;

	TAILQ_FOREACH(s, &ib.subs, entry)
		if (strlen(s->cfg->name) == len &&
		    memcmp(s->cfg->name, name, len) == 0)
			return s;
	return NULL;
}

/* 405 with Allow. */
static void
inbox_not_allowed(struct evhttp_request *req, const char *allow,
    const char *detail)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    allow);
	reply_error(req, ROUTE_INBOX, 405, "method_not_allowed", detail);
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
	char			*id = NULL, *seg, key[AUTH_HASH_HEX];
	size_t			 idlen;

	s = inbox_find(rest, slash != NULL ? (size_t)(slash - rest) :
	    strlen(rest));
	/*
	 * An unknown inbox is 404 only to a token the relay knows: to anyone
	 * else it is the 401 of an inbox, so that names cannot be probed.
	 */
	if (s == NULL) {
		inbox_auth(req, NULL, key);
		return;
	}
	if (ib.stopping) {
		reply_error(req, ROUTE_INBOX, 503, "inbox_unavailable", "the "
		    "relay is shutting down");
		return;
	}
	if (inbox_auth(req, s, key) == -1)
		return;
	TAILQ_INIT(&q);
	if (evhttp_parse_query_str(uri != NULL && evhttp_uri_get_query(uri) ?
	    evhttp_uri_get_query(uri) : "", &q) == -1) {
		inbox_reject(&IRESP(req), 400, "bad_request", "unreadable query",
		    s->cfg->name);
		return;
	}
	if (slash == NULL || slash[1] == '\0') {
		if (m != EVHTTP_REQ_GET)
			inbox_not_allowed(req, "GET", "fetch with GET");
		else
			inbox_route(req, s, INBOX_GET, NULL, &q, key);
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
	    strcmp(verb, "release") != 0))
		reply_error(req, ROUTE_INBOX, 404, "not_found", "no such route");
	else if (verb == NULL && m != EVHTTP_REQ_DELETE)
		inbox_not_allowed(req, "DELETE", "acknowledge with DELETE");
	else if (verb != NULL && m != EVHTTP_REQ_POST)
		inbox_not_allowed(req, "POST", "use POST");
	else
		inbox_route(req, s, verb == NULL ? INBOX_ACK :
		    strcmp(verb, "extend") == 0 ? INBOX_EXTEND : INBOX_RELEASE,
		    id, &q, key);
	evmem_free_returned(id);	/* libevent's */
	evhttp_clear_headers(&q);
}

/* Serve a request whose route, token and query were read (here, or by the
 * instance that forwarded it). */
static void
inbox_serve(struct iresp *r, struct isub *s, enum inbox_verb v,
    const char *id, const struct evkeyvalq *q, const char *key)
{
	if (v == INBOX_GET)
		inbox_get(r, s, q, key);
	else
		inbox_lease_op(r, s, id, v == INBOX_ACK ? OP_ACK :
		    v == INBOX_EXTEND ? OP_EXTEND : OP_RELEASE, q);
}

/*
 * A request to inbox s: served here, or forwarded to the holder of an
 * ordered inbox (inbox-forward.c), which serves it with inbox_forwarded.
 */
static void
inbox_route(struct evhttp_request *req, struct isub *s, enum inbox_verb v,
    const char *id, const struct evkeyvalq *q, const char *key)
{
	struct iresp	 r = IRESP(req);

	if (s->hand != NULL && !holder_held(s->cfg->name))
		inbox_forward(req, s, v, id, key);
	else
		inbox_serve(&r, s, v, id, q, key);
}

/* See inbox-int.h. */
void
inbox_forwarded(const char *name, enum inbox_verb v, const char *id,
    const char *query, const char *key, char *reply)
{
	struct iresp	 r = { NULL, reply };
	struct isub	*s = inbox_find(name, strlen(name));
	struct evkeyvalq q;

	/* Another instance holds it, or nobody: another answers, or none. */
	if (s == NULL || s->hand == NULL || !holder_held(name) ||
	    ib.stopping) {
		free(reply);
		return;
	}
	TAILQ_INIT(&q);
	if (evhttp_parse_query_str(query, &q) == -1)
		inbox_reject(&r, 400, "bad_request", "unreadable query", name);
	else
		inbox_serve(&r, s, v, id, &q, key);
	evhttp_clear_headers(&q);
}

/* See inbox-int.h. */
struct audit_drop *
inbox_drop_record(struct isub *s, const struct source *from,
    struct store_msg *m, uint64_t attempts, void (*cb)(void *, int),
    void *arg)
{
	const char	*replay = source_id(from);
	char		*id = store_msg_header_decoded(m, "ce-id");

	log_warnx("inbox event dropped", "inbox=%s id=%s subject=%s "
	    "attempts=%llu%s%s", s->cfg->name, log_q(id),
	    log_q(store_msg_subject(m)), (unsigned long long)attempts,
	    replay != NULL ? " replay=" : "", replay != NULL ? replay : "");
	free(id);
	metrics_inbox(s->idx, INBOX_DROPPED, 1);
	source_outcome(from, 0);
	return audit_drop(s->cfg->name, replay, m, attempts, 0,
	    "lease expired maxDeliver times", cb, arg);
}

/* The drop record of an exhausted event is stored (or the relay stops). */
static void
inbox_dropped_cb(void *arg, int stored)
{
	(void)stored;
	store_msg_free(arg);
}

/*
 * JetStream stopped handing out an event of inbox name (s: the inbox,
 * NULL when a reload removed it) from source from, its own consumer or a
 * replay's: its leases ran out maxDeliver times without an
 * acknowledgement.  Record the drop like a push subscriber's (SPEC 3: no
 * drop is silent), and count it for the source.
 */
static void
inbox_drop(const char *name, struct isub *s, const struct source *from,
    struct store_msg *m)
{
	const char	*replay = source_id(from);
	char		*id = store_msg_header_decoded(m, "ce-id");

	log_warnx("inbox event dropped", "inbox=%s id=%s subject=%s "
	    "attempts=%llu%s%s", name, log_q(id), log_q(store_msg_subject(m)),
	    (unsigned long long)store_msg_delivered(m),
	    replay != NULL ? " replay=" : "", replay != NULL ? replay : "");
	free(id);
	if (s != NULL)
		metrics_inbox(s->idx, INBOX_DROPPED, 1);
	source_outcome(from, 0);
	audit_drop(name, replay, m, store_msg_delivered(m), 0,
	    "lease expired maxDeliver times", inbox_dropped_cb, m);
}

/* The inbox's own consumer gave up on an event. */
static void
inbox_exhausted_cb(void *arg, struct store_msg *m)
{
	struct isub	*s = arg;

	inbox_drop(s->cfg->name, s, &s->own.from, m);
}

/* Its consumer's settings. */
static struct store_consumer_spec
isub_spec(const struct isub *s)
{
	/*
	 * An ordered inbox's hand counts maxDeliver itself (inbox-order.c):
	 * JetStream's count would drop, unseen, what a holder letting go
	 * gives back on its last delivery.
	 */
	return (struct store_consumer_spec){ s->cfg->name, STORE_PULL,
	    s->cfg->filter, s->cfg->ordered ? -1 : s->cfg->max_deliver,
	    config_max_ack_pending(s->cfg),
	    ib.cfg->lease_seconds, NULL, s->cfg->from, s->cfg->from_ns, 0 };
}

/* Take sc's settings (a copy). */
static void
isub_set(struct isub *s, const struct subscriber *sc)
{
	config_subscriber_free(s->cfg);
	s->cfg = config_subscriber_dup(sc);
	source_set(&s->own.from, NULL, s->cfg->max_deliver);
	treaty_keys_free(s->keys);
	s->keys = config_keys(s->cfg);
}

/* A pull subscriber, and its consumer. */
static void
isub_new(const struct subscriber *sc)
{
	struct isub			*s = xcalloc(1, sizeof(*s));
	struct store_consumer_spec	 spec;

	isub_set(s, sc);
	s->idx = metrics_inbox_add(sc->name);
	s->seen = 1;
	evtimer_assign(&s->reap, ib.base, isub_reap_cb, s);
	TAILQ_INSERT_TAIL(&ib.subs, s, entry);
	spec = isub_spec(s);
	inbox_fetch_pump_init(s, store_consumer_add(&spec, NULL,
	    inbox_exhausted_cb, s));
	ohand_set(s);
}

/* Free an inbox nothing uses. */
static void
isub_free(struct isub *s)
{
	ohand_free(s);
	event_del(&s->pump);
	event_del(&s->reap);
	inbox_fetch_sources_free(s);
	store_consumer_remove(s->own.consumer);
	treaty_keys_free(s->keys);
	config_subscriber_free(s->cfg);
	free(s);
}

/* A removed inbox's last user is gone: free it. */
static void
isub_reap_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct isub	*s = arg;

	(void)fd;
	(void)ev;
	if (s->refs == 0 && s->removed) {
		TAILQ_REMOVE(&ib.gone, s, entry);
		isub_free(s);
	}
}

/*
 * A fetch or lease operation is done with s; see inbox-int.h.  A removed
 * inbox is freed from the loop, not here: the last fetch may end inside
 * the callback of one of its consumer's pulls, which freeing the
 * consumer would close under it.
 */
void
inbox_sub_unref(struct isub *s)
{
	if (--s->refs == 0 && s->removed)
		event_active(&s->reap, EV_TIMEOUT, 0);
}

/*
 * Bring the pull subscribers to the configuration: add, change, remove
 * (by name), counting into ch when it is not NULL (a reload).  A removed
 * inbox answers 404 from now on; its fetches and lease operations under
 * way finish, its consumer stays in JetStream.
 */
static void
inbox_sync(struct sub_changes *ch)
{
	const struct subscriber		*sc;
	struct store_consumer_spec	 spec;
	struct sub_changes		 start;
	struct isub			*s, *next;
	struct isrc			*src;
	size_t				 i;

	if (ch == NULL) {
		memset(&start, 0, sizeof(start));
		ch = &start;
	}
	TAILQ_FOREACH(s, &ib.subs, entry)
		s->seen = 0;
	for (i = 0; i < ib.cfg->nsubscribers; i++) {
		sc = &ib.cfg->subscribers[i];
		if (sc->kind != SUB_PULL)
			continue;
		if ((s = inbox_find(sc->name, strlen(sc->name))) == NULL) {
			isub_new(sc);
			if (ch != &start)
				log_info("inbox added", "inbox=%s", sc->name);
			ch->added++;
			continue;
		}
		s->seen = 1;
		if (config_subscriber_equal(s->cfg, sc))
			continue;
		isub_set(s, sc);
		spec = isub_spec(s);
		store_consumer_update(s->own.consumer, &spec);
		ohand_set(s);
		log_info("inbox changed", "inbox=%s", sc->name);
		ch->changed++;
	}
	for (s = TAILQ_FIRST(&ib.subs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->seen)
			continue;
		log_info(s->cfg->api ? "inbox removed: gone from the "
		    "subscribers bucket, or not usable here; this instance "
		    "serves it no more" :
		    "inbox removed: this instance serves it no more; its "
		    "consumer stays in JetStream", "inbox=%s consumer=%s "
		    "finishing=%d", s->cfg->name,
		    store_consumer_name(s->own.consumer), s->refs);
		ch->removed++;
		/* Its replays leave it now (replay.c sees that they left). */
		while ((src = TAILQ_FIRST(&s->replays)) != NULL)
			inbox_fetch_source_remove(s, src);
		TAILQ_REMOVE(&ib.subs, s, entry);
		ohand_free(s);
		metrics_inbox_gone(s->idx);
		if (s->refs == 0) {
			isub_free(s);
			continue;
		}
		s->removed = 1;
		TAILQ_INSERT_TAIL(&ib.gone, s, entry);
	}
}

/* 1 when name is a pull subscriber here; see inbox.h. */
int
inbox_has(const char *name)
{
	return !ib.stopping && inbox_find(name, strlen(name)) != NULL;
}

/* See inbox.h. */
int
inbox_takes(const char *name)
{
	struct isub	*s = inbox_find(name, strlen(name));

	return !ib.stopping && s != NULL && (s->hand == NULL ||
	    holder_held(name));
}

/* A replay's consumer c joins inbox name's sources; see inbox.h. */
int
inbox_source_add(const char *name, const struct source *from,
    struct store_consumer *c, int (*want)(void *, uint64_t), void *arg)
{
	struct isub	*s = inbox_find(name, strlen(name));

	if (s == NULL || ib.stopping)
		return -1;
	inbox_fetch_source_add(s, from, c, want, arg);
	event_active(&s->pump, EV_TIMEOUT, 0);
	return 0;
}

/* The source whose consumer is c in one of list's inboxes, or NULL. */
static struct isrc *
inbox_source_find(struct isub_list *list, const struct store_consumer *c,
    struct isub **sp)
{
	struct isub	*s;
	struct isrc	*src;

	TAILQ_FOREACH(s, list, entry)
		TAILQ_FOREACH(src, &s->replays, entry)
			if (src->consumer == c) {
				*sp = s;
				return src;
			}
	return NULL;
}

/* Whether replay consumer c is a source of an inbox here; see inbox.h. */
int
inbox_source_has(const struct store_consumer *c)
{
	struct isub	*s;

	return inbox_source_find(&ib.subs, c, &s) != NULL;
}

/* Replay consumer c leaves its inbox; see inbox.h. */
void
inbox_source_remove(struct store_consumer *c)
{
	struct isub	*s;
	struct isrc	*src;

	if ((src = inbox_source_find(&ib.subs, c, &s)) != NULL ||
	    (src = inbox_source_find(&ib.gone, c, &s)) != NULL)
		inbox_fetch_source_remove(s, src);
}

/* An event of source from of inbox name was dropped; see inbox.h. */
void
inbox_source_dropped(const char *name, const struct source *from,
    struct store_msg *m)
{
	inbox_drop(name, inbox_find(name, strlen(name)), from, m);
}

/* A subscriber's state changed. */
static void
inbox_states_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	inbox_fetch_states();
}

/* Register the pull consumers. */
void
inbox_init(struct event_base *base, const struct config *cfg)
{
	ib.base = base;
	ib.cfg = cfg;
	ib.leases = inbox_leases_new(cfg->lease_seconds * 1000LL,
	    cfg->lease_seconds * 1000LL + INBOX_LEASE_KEEP_MS);
	event_assign(&ib.states, base, -1, 0, inbox_states_cb, NULL);
	substate_watch(&ib.states);
	inbox_forward_init();
	inbox_sync(NULL);
}

/* The configuration was reloaded; see inbox.h. */
void
inbox_reload(struct sub_changes *ch)
{
	if (!ib.stopping)
		inbox_sync(ch);
}

/* Answer the long-polls now; refuse new requests. */
void
inbox_stop(void)
{
	ib.stopping = 1;
	inbox_fetch_stop();
	ohand_stop();
}

/* See inbox.h. */
void
inbox_held(const char *name, int held)
{
	struct isub	*s = inbox_find(name, strlen(name));

	if (s != NULL)
		ohand_held(s, held);
}

/* Requests waiting for JetStream. */
int
inbox_in_flight(void)
{
	struct op	*o;
	int		 n = inbox_fetch_count() + inbox_forward_count();

	TAILQ_FOREACH(o, &ops, entry)
		n++;
	return n;
}

/* Answer 503 to every request still waiting for JetStream. */
void
inbox_fail_all(void)
{
	struct op	*o;

	inbox_fetch_close_all();
	inbox_forward_fail_all();
	while ((o = TAILQ_FIRST(&ops)) != NULL) {
		iresp_error(&o->r, 503, "inbox_unavailable",
		    "the relay is shutting down");
		op_close(o, "shutting down");
	}
}

/* Free everything; requests still waiting are answered 503. */
void
inbox_free(void)
{
	struct isub	*s;

	inbox_fail_all();
	event_del(&ib.states);
	inbox_leases_free(ib.leases);
	ib.leases = NULL;
	while ((s = TAILQ_FIRST(&ib.subs)) != NULL) {
		TAILQ_REMOVE(&ib.subs, s, entry);
		isub_free(s);
	}
	/* Removed ones whose reaping the loop did not get to. */
	while ((s = TAILQ_FIRST(&ib.gone)) != NULL) {
		TAILQ_REMOVE(&ib.gone, s, entry);
		isub_free(s);
	}
}
