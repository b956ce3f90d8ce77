/*
 * inbox-forward.c: where an inbox's answers go (struct iresp), and the
 * forwarding of an ordered inbox's requests to its holder.  Loop thread
 * only.
 *
 * Only the holder of an ordered inbox serves it (inbox-order.c).  Another
 * instance that a worker reached checks the token and the route as ever,
 * then sends the request on over core NATS, to FORWARD_PREFIX<name>: the
 * verb, the token's hash (receipts are made with it), the query and the
 * event id.  Every instance listens there; only the holder answers
 * (inbox_forwarded), and it serves the request with the very code that
 * serves its own workers, writing the answer to the request's reply
 * subject instead of an HTTP connection: the body in pieces no larger
 * than the server's max_payload allows, numbered, the last one with the
 * status; a piece missing (a slow consumer's limit) makes the answer a
 * 502, never a body with a hole.
 * The instance that forwarded relays that answer to its worker as it
 * came.  No holder known (the bucket names none, or one unchanged for a
 * lease: a takeover), or one that does not answer in time: 503 with
 * Retry-After, as JetStream away is.
 *
 * Whoever can publish on the NATS account can also answer JetStream's
 * leases: the forwarding trusts the account as the rest of the relay
 * does (man page, SECURITY).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "inbox-int.h"
#include "holder.h"
#include "json.h"
#include "log.h"
#include "query.h"
#include "reply.h"
#include "store.h"
#include "store-ask.h"
#include "store-msg.h"
#include "util.h"

#define FORWARD_PREFIX		"treaty.inbox."
/*
 * Past a long-poll's wait: the holder's own JetStream round trips (a
 * destructive GET waits for its acknowledgements, up to 5 s) and more.
 */
#define FORWARD_SLACK_MS	12000
#define FORWARD_OP_MS		10000	/* an ack waits for JetStream */
#define PIECE_MARGIN		1024	/* a piece's headers, and more */
#define PIECE_DEFAULT		(64 * 1024)	/* max_payload not known */
#define STATUS_HEADER		"Treaty-Status"
#define PIECE_HEADER		"Treaty-Piece"

static const char *const verbs[] = { "get", "ack", "extend", "release" };

/* A request forwarded to the holder, waiting for its answer. */
struct fwd {
	struct evhttp_request	*req;
	struct isub		*s;
	struct evbuffer		*body;
	int			 pieces;	/* got so far */
	struct store_req	*sr;
	TAILQ_ENTRY(fwd)	 entry;
};
TAILQ_HEAD(fwd_list, fwd);
static struct fwd_list	 fwds = TAILQ_HEAD_INITIALIZER(fwds);

/* Send body (NULL: none) to a forwarded request's reply, in pieces. */
static void
iresp_tell(struct iresp *r, int status, struct evbuffer *body)
{
	struct store_header	 h[2] = { { PIECE_HEADER, NULL },
				    { STATUS_HEADER, NULL } };
	char			 code[16], num[24];
	size_t			 left = body != NULL ? evbuffer_get_length(body) :
				    0, piece = PIECE_DEFAULT, n;
	const unsigned char	*p;
	int			 i = 0;

	if (store_max_payload() > 2 * PIECE_MARGIN)
		piece = (size_t)store_max_payload() - PIECE_MARGIN;
	snprintf(code, sizeof(code), "%d", status);
	h[1].value = code;
	p = body != NULL ? evbuffer_pullup(body, -1) : NULL;
	do {
		n = left < piece ? left : piece;
		snprintf(num, sizeof(num), "%d", i++);
		h[0].value = num;
		/* A piece not sent: the other instance times out (503). */
		if (store_tell(r->reply, h, n == left ? 2 : 1, p, n) == -1)
			break;
		p += n;
		left -= n;
	} while (left > 0);
	free(r->reply);
	r->reply = NULL;
}

void
iresp_json(struct iresp *r, int status, struct evbuffer *body)
{
	if (r->req != NULL)
		reply_json(r->req, ROUTE_INBOX, status, body);
	else
		iresp_tell(r, status, body);
}

void
iresp_error(struct iresp *r, int status, const char *code,
    const char *detail)
{
	struct evbuffer	*b;

	if (r->req != NULL) {
		reply_error(r->req, ROUTE_INBOX, status, code, detail);
		return;
	}
	b = evbuffer_new();
	json_error_body(b, code, detail);
	iresp_tell(r, status, b);
	evbuffer_free(b);
}

int
iresp_gone(struct iresp *r)
{
	return r->req != NULL && reply_client_gone(r->req);
}

void
iresp_gone_close(struct iresp *r)
{
	if (r->req != NULL)
		evhttp_send_reply(r->req, 499, "Client gone", NULL);
	free(r->reply);
	r->reply = NULL;
}

/* End a forwarded request, the one way. */
static void
fwd_close(struct fwd *f, const char *reason)
{
	log_debug("forwarded request closed", "inbox=%s reason=%s",
	    f->s->cfg->name, log_q(reason));
	store_req_close(f->sr, reason);
	evbuffer_free(f->body);
	TAILQ_REMOVE(&fwds, f, entry);
	inbox_sub_unref(f->s);
	free(f);
}

/* A piece of the holder's answer, or the end of the request. */
static int
fwd_cb(void *arg, struct store_msg *m, int status)
{
	struct fwd	*f = arg;
	const char	*code, *data, *piece;
	size_t		 len;
	int		 st;

	if (m == NULL) {
		f->sr = NULL;
		log_warnx("ordered inbox: its holder did not answer",
		    "inbox=%s status=%d", f->s->cfg->name, status);
		reply_error(f->req, ROUTE_INBOX, 503, "inbox_unavailable",
		    "the instance serving this ordered inbox did not answer "
		    "(it may be changing); try again");
		fwd_close(f, "no answer");
		return 0;
	}
	piece = store_msg_header(m, PIECE_HEADER);
	if (piece == NULL || atoi(piece) != f->pieces++) {
		/* Lost on the way (or another's): no body with a hole. */
		store_msg_free(m);
		f->sr = NULL;		/* the store ends it */
		log_warnx("ordered inbox: its holder's answer came incomplete",
		    "inbox=%s", f->s->cfg->name);
		reply_error(f->req, ROUTE_INBOX, 502, "bad_gateway", "the "
		    "answer of the instance serving this ordered inbox came "
		    "incomplete; try again");
		fwd_close(f, "incomplete");
		return 0;
	}
	data = store_msg_data(m, &len);
	evbuffer_add(f->body, data, len);
	if ((code = store_msg_header(m, STATUS_HEADER)) == NULL) {
		store_msg_free(m);
		return 1;	/* more to come */
	}
	st = atoi(code);
	store_msg_free(m);
	f->sr = NULL;		/* the store ends it */
	if (st < 200 || st > 599)
		st = 502;
	if (st == 503)
		evhttp_add_header(evhttp_request_get_output_headers(f->req),
		    "Retry-After", REPLY_RETRY_AFTER);
	reply_json(f->req, ROUTE_INBOX, st, st == 204 ? NULL : f->body);
	fwd_close(f, "answered");
	return 0;
}

void
inbox_forward(struct evhttp_request *req, struct isub *s, enum inbox_verb v,
    const char *id, const char *key)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*query = uri != NULL ? evhttp_uri_get_query(uri) :
				    NULL;
	struct store_header	 h[] = { { "Treaty-Verb", verbs[v] } };
	struct evkeyvalq	 q;
	struct evbuffer		*data;
	char			 subject[STORE_SUBJECT_BUF];
	long long		 wait = 0, timeout = FORWARD_OP_MS;
	struct fwd		*f;

	if (query == NULL)
		query = "";
	/* Nobody to ask (a takeover under way): say so now, not later. */
	if (!holder_other(s->cfg->name)) {
		reply_error(req, ROUTE_INBOX, 503, "inbox_unavailable", "no "
		    "instance serves this ordered inbox at the moment (one "
		    "is taking it over); try again");
		return;
	}
	if (v == INBOX_GET) {
		TAILQ_INIT(&q);
		if (evhttp_parse_query_str(query, &q) == 0)
			wait = query_int(&q, "wait", 0, API_INBOX_WAIT_MAX_MS);
		evhttp_clear_headers(&q);
		timeout = (wait > 0 ? wait : 0) + FORWARD_SLACK_MS;
	}
	/* The key, the query, then the id: it may hold any byte. */
	data = evbuffer_new();
	evbuffer_add_printf(data, "%s\n%s\n%s", key, query,
	    id != NULL ? id : "");
	snprintf(subject, sizeof(subject), FORWARD_PREFIX "%s", s->cfg->name);
	f = xcalloc(1, sizeof(*f));
	f->req = req;
	f->s = s;
	s->refs++;
	f->body = evbuffer_new();
	TAILQ_INSERT_TAIL(&fwds, f, entry);
	f->sr = store_ask(subject, h, 1, evbuffer_pullup(data, -1),
	    evbuffer_get_length(data), timeout, fwd_cb, f);
	evbuffer_free(data);
	if (f->sr == NULL) {
		reply_error(req, ROUTE_INBOX, 503, "inbox_unavailable",
		    "NATS is not available; try again");
		fwd_close(f, "not connected");
	}
}

/* A request another instance forwarded: to inbox.c, if ours. */
static void
forwarded_cb(struct store_msg *m)
{
	const char	*subj = store_msg_subject(m), *reply = store_msg_reply(m);
	const char	*verb = store_msg_header(m, "Treaty-Verb"), *data;
	const char	*nl1, *nl2;
	char		*key = NULL, *query = NULL, *id = NULL;
	size_t		 len, i;
	int		 v = -1;

	for (i = 0; verb != NULL && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verb, verbs[i]) == 0)
			v = (int)i;
	data = store_msg_data(m, &len);
	if (v == -1 || reply == NULL || subj == NULL ||
	    strncmp(subj, FORWARD_PREFIX, strlen(FORWARD_PREFIX)) != 0 ||
	    (nl1 = memchr(data, '\n', len)) == NULL ||
	    (nl2 = memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - data))) ==
	    NULL) {
		store_msg_free(m);
		return;
	}
	key = xstrndup(data, (size_t)(nl1 - data));
	query = xstrndup(nl1 + 1, (size_t)(nl2 - nl1 - 1));
	id = xstrndup(nl2 + 1, len - (size_t)(nl2 + 1 - data));
	inbox_forwarded(subj + strlen(FORWARD_PREFIX), (enum inbox_verb)v,
	    id, query, key, xstrdup(reply));
	free(key);
	free(query);
	free(id);
	store_msg_free(m);
}

void
inbox_forward_init(void)
{
	store_listen(FORWARD_PREFIX "*", forwarded_cb);
}

/* The grace period is over: 503 to every request still forwarded. */
void
inbox_forward_fail_all(void)
{
	struct fwd	*f;

	while ((f = TAILQ_FIRST(&fwds)) != NULL) {
		reply_error(f->req, ROUTE_INBOX, 503, "inbox_unavailable",
		    "the relay is shutting down");
		fwd_close(f, "shutting down");
	}
}

/* Forwarded requests waiting for their answer. */
int
inbox_forward_count(void)
{
	struct fwd	*f;
	int		 n = 0;

	TAILQ_FOREACH(f, &fwds, entry)
		n++;
	return n;
}
