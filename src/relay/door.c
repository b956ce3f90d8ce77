/*
 * door.c: the front door (SPEC 13).  Loop thread only.
 *
 * libevent 2.1's evhttp has no connection cap and no hook between a
 * request's bytes and its parser, and a filter bufferevent cannot sit
 * under it (its ctrl does not pass the accepted descriptor on).  So the
 * door stands in evhttp's callbacks instead: evhttp_set_bevcb makes each
 * connection's socket bufferevent here, and on the loop's next turn,
 * before anything can be read, the door takes over its callbacks
 * (bufferevent_getcb, keeping evhttp's) and its close (the
 * evhttp_connection is their argument).  What the socket gives goes into
 * the door's own buffer; evhttp's input gets only what the door lets
 * through, and evhttp's read callback is called by the door:
 *
 *   a head     is held until it is whole (at most DOOR_HEAD_MAX bytes and
 *              DOOR_HEADERS_MAX lines), then read (door-head.c): framing
 *              that two parties could read differently is refused, a
 *              Content-Length over 1 MiB gets SPEC 2's answer unread;
 *   a body     goes through as it comes (Content-Length bytes, or chunks
 *              followed to their end), so the next head is found;
 *   a refusal  is answered by the door itself on the connection (the
 *              relay's JSON error, Connection: close: reply_door),
 *              before evhttp has a request; nothing after it is read
 *              as a request, and the descriptor lingers a little so the
 *              answer is not lost to a reset while the client still
 *              sends.
 *
 * One request at a time (nginx, HAProxy): once a request's last byte is
 * through, evhttp holds it ("handed") and the door lets nothing more
 * through until evhttp's answer is written and evhttp reads again.
 * evhttp 2.1 cannot take bytes meanwhile (its read callback exits the
 * process in its writing state), and a connection then costs one request
 * and one answer whatever its client pipelines: what comes meanwhile waits
 * in the door's buffer, and past DOOR_AHEAD_MAX the socket is not read.
 *
 * The request deadline runs from a request's first byte to its last, so a
 * client trickling bytes cannot hold a connection longer.  At the cap, the
 * connection idle longest (no request begun, none held by evhttp) is
 * closed to admit the new one; with none idle, the new one is closed at
 * once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <event2/util.h>
#include <openssl/ssl.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "door-head.h"
#include "door-linger.h"
#include "door.h"
#include "log.h"
#include "metrics.h"
#include "reply.h"
#include "route.h"
#include "util.h"

#define CHUNK_LINE_MAX		1024
#define DOOR_HEAD_TOO_LARGE	"the request's head is over " \
				API_STR(DOOR_HEAD_MAX_KIB) " KiB or " \
				API_STR(DOOR_HEADERS_MAX) " header lines"
/*
 * Descriptors the relay itself keeps open besides connections: NATS (a
 * connection or two), the listeners, DNS, the log and files it reads, and
 * room for what a libevent or nats.c call opens for a moment.
 */
#define DOOR_OWN_FDS		64
/* The cap is never lowered below this, however few descriptors there are. */
#define DOOR_MIN_CONNECTIONS	16
/*
 * A body larger than this (or chunked) is let through only to a producer
 * that passes SPEC 2's checks on its head: anyone else could otherwise
 * make the relay hold up to 1 MiB per connection.  Bodies to other routes
 * are never this large.
 */
#define DOOR_OPEN_BODY_MAX	(64 * 1024)
/*
 * Bytes read ahead while evhttp holds a request (waiting for its answer,
 * or writing it): evhttp reads while it writes, to see a close, and a
 * client that pipelines without reading its answers would otherwise grow
 * the door's buffer without end.  Past this the socket is not read until
 * the answer is out; TCP holds the rest back at the client.  A head's
 * worth: the next request can begin at once when the answer is out.
 */
#define DOOR_AHEAD_MAX		DOOR_HEAD_MAX

enum dstate {
	D_HEAD,
	D_BODY,			/* left: Content-Length bytes */
	D_CHUNK_SIZE,
	D_CHUNK_DATA,		/* left: chunk bytes */
	D_CHUNK_END,		/* the line end after a chunk */
	D_TRAILER,
	D_REFUSED		/* everything after is discarded */
};

struct dconn;
TAILQ_HEAD(dconn_list, dconn);

struct door {
	struct event_base	*base;
	const struct config	*cfg;
	const struct route_def	*routes;	/* http.c's table */
	int			 control;
	int			 nconns;
	int			 max;		/* the effective cap */
	struct dconn_list	 idle;		/* longest idle first */
};

struct dconn {
	struct door		*d;
	struct bufferevent	*bev;		/* evhttp's, on the socket */
	struct evbuffer		*raw;		/* read, not yet let through */
	struct evbuffer		*tmp;
	struct evbuffer_cb_entry *incb;		/* takes the socket's bytes */
	struct evbuffer_cb_entry *outcb;	/* an answer begun: hook */
	int			 adding;	/* the door adds: not fresh */
	bufferevent_data_cb	 h_read, h_write;
	bufferevent_event_cb	 h_event;
	void			*h_arg;		/* the evhttp_connection */
	struct event		 hook;		/* takes the callbacks over */
	struct event		 deadline;	/* armed: at or before due */
	long long		 due;		/* ms; the request's deadline */
	enum dstate		 st;
	uint64_t		 left;
	size_t			 off;		/* raw's first bytes, to let through */
	size_t			 scanned;	/* head bytes searched so far */
	int			 busy;		/* a request has begun */
	int			 handed;	/* evhttp holds a whole request */
	int			 refused;	/* over the cap */
	int			 hooked;
	int			 tls;		/* the handshake is the first bytes */
	int			 idle;		/* on d->idle */
	TAILQ_ENTRY(dconn)	 idle_entry;
	const char		*why;		/* the door closed it: why */
	int			*gone;		/* set when freed: door_read_cb */
};

static struct door	 doors[2];

/*
 * The door adds to evhttp's input: not fresh bytes.  A socket bufferevent
 * keeps its input's end frozen (only its own reads add there; it opens it
 * around them), so the door opens it too; an OpenSSL one does not freeze
 * it, and must not find it frozen (it could not read any more).
 */
static void
door_add_begin(struct dconn *c, struct evbuffer *in)
{
	c->adding = 1;
	if (!c->tls)
		evbuffer_unfreeze(in, 0);
}

static void
door_add_end(struct dconn *c, struct evbuffer *in)
{
	if (!c->tls)
		evbuffer_freeze(in, 0);
	c->adding = 0;
}

/*
 * Let n more bytes of raw through.  They are moved at the end of the
 * read (door_flush), all at once: moving a head and its body separately
 * splits the chunk they came in, a copy and an allocation per request,
 * where moving whole chunks costs neither.
 */
static void
door_pass(struct dconn *c, size_t n)
{
	c->off += n;
}

/*
 * In place of raw's next n bytes (after what is let through), let text
 * through (len bytes; none for NULL): a line the door rewrites or drops.
 */
static void	door_flush(struct dconn *);

static void
door_pass_as(struct dconn *c, size_t n, const char *text, size_t len)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	door_flush(c);
	evbuffer_drain(c->raw, n);
	if (text == NULL)
		return;
	door_add_begin(c, in);
	evbuffer_add(in, text, len);
	door_add_end(c, in);
}

/*
 * Move what was let through to evhttp's input.
 */
static void
door_flush(struct dconn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	if (c->off == 0)
		return;
	door_add_begin(c, in);
	evbuffer_remove_buffer(c->raw, in, c->off);
	door_add_end(c, in);
	c->off = 0;
}

/* Up to want bytes of raw after what is let through, contiguous. */
static const char *
door_peek(struct dconn *c, size_t want, size_t *have)
{
	size_t		 n = evbuffer_get_length(c->raw) - c->off;
	unsigned char	*p;

	*have = want < n ? want : n;
	if (*have == 0 || (p = evbuffer_pullup(c->raw,
	    (ev_ssize_t)(c->off + *have))) == NULL)
		return NULL;
	return (const char *)p + c->off;
}

/*
 * The connection has no request: none begun, none held by evhttp.  It
 * goes to the end of its listener's idle list, whose first is closed
 * first when a new connection finds the listener full.
 */
static void
door_idle_enter(struct dconn *c)
{
	if (c->idle || c->busy || c->handed || c->st == D_REFUSED)
		return;
	TAILQ_INSERT_TAIL(&c->d->idle, c, idle_entry);
	c->idle = 1;
}

/* A request begins (or the connection ends): not idle any more. */
static void
door_idle_leave(struct dconn *c)
{
	if (!c->idle)
		return;
	TAILQ_REMOVE(&c->d->idle, c, idle_entry);
	c->idle = 0;
}

/*
 * evhttp holds a whole request: nothing more goes through until its answer
 * is written.  door_output_cb sees the answer begin, the hook then passes
 * evhttp's write callback on, and door_write_cb sees the answer out.
 */
static void
door_hand(struct dconn *c)
{
	c->handed = 1;
	evbuffer_cb_set_flags(bufferevent_get_output(c->bev), c->outcb,
	    EVBUFFER_CB_ENABLED);
}

/*
 * Refuse the request whose head the door is reading: the door writes the
 * answer itself (reply_door: the JSON error, Connection: close) on the
 * connection, where evhttp has no request yet and is not writing, and
 * closes the connection once it is out (door_write_cb); nothing after it
 * is read as a request.  evhttp is not told: its callbacks stay the
 * door's, which pass nothing on from now.
 */
static void
door_refuse(struct dconn *c, enum route route, int status, const char *code,
    const char *detail, long long retry_after)
{
	evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
	c->off = 0;
	c->st = D_REFUSED;
	c->busy = 0;
	c->handed = 1;
	if (log_refused_ok())
		log_info("request refused at the door", "status=%d error=%s",
		    status, code);
	reply_door(bufferevent_get_output(c->bev), route, status, code,
	    detail, retry_after);
	bufferevent_enable(c->bev, EV_WRITE);
}

/* Refuse with one of SPEC 2's refusals (reply.h). */
static void
door_refuse_as(struct dconn *c, enum route route, enum refusal r,
    long long retry_after)
{
	const struct refusal_text	*t = reply_refusal(r);

	door_refuse(c, route, t->status, t->code, t->detail, retry_after);
}

/*
 * A request began: its deadline runs.  The timer is not moved for every
 * request (an event_add and event_del per request cost a tenth of the
 * door's time): it stays armed, and when it fires early for a later
 * request it is armed again for what is left.
 */
static void
door_deadline_start(struct dconn *c)
{
	struct timeval	 tv = { c->d->cfg->request_timeout_seconds, 0 };

	if (c->busy)
		return;
	c->busy = 1;
	c->due = now_ms() + tv.tv_sec * 1000;
	if (!evtimer_pending(&c->deadline, NULL))
		event_add(&c->deadline, &tv);
}

/* A request's first byte came: it is in progress, under its deadline. */
static void
door_begin(struct dconn *c)
{
	door_idle_leave(c);
	door_deadline_start(c);
}

/* The request's last byte went through: evhttp holds it. */
static void
door_end(struct dconn *c)
{
	c->busy = 0;
	c->st = D_HEAD;
	c->scanned = 0;
	door_hand(c);
}

/*
 * A whole head is in raw (len bytes): read it, then let it through or
 * refuse.  SPEC 2's order holds for a body announced over 1 MiB: the
 * route's checks before 413 (route.h's precheck) come first.
 */
static void
door_head(struct dconn *c, size_t len)
{
	struct door_head	 h;
	size_t			 have;
	const char		*head = door_peek(c, len, &have);
	const char		*rest;
	const struct route_def	*r;
	enum route		 route;
	enum refusal		 rf;
	int			 status, big, over;
	long long		 retry_after = 0;

	status = door_head_parse(head, len, &h);
	r = route_find(c->d->routes, c->d->control ? ROUTE_ON_CONTROL :
	    ROUTE_ON_MAIN, h.path != NULL ? h.path : "", h.pathlen, &rest);
	route = r != NULL ? r->metric : ROUTE_OTHER;
	if (status == 501 && r != NULL && r->known_methods_only) {
		/* SPEC 2: anything but POST to an event is 405. */
		door_refuse_as(c, route, REFUSAL_METHOD, 0);
		return;
	}
	if (status != 0) {
		door_refuse(c, route, status, h.code, h.detail, 0);
		return;
	}
	big = h.framing == DOOR_CHUNKED || (h.framing == DOOR_LENGTH &&
	    h.length > DOOR_OPEN_BODY_MAX);
	over = h.framing == DOOR_LENGTH && h.length > API_BODY_MAX;
	if (big && r != NULL && r->precheck != NULL) {
		/*
		 * Checked from the head, so a client without a token cannot
		 * make the relay hold a large body: the route's checks
		 * before 413, the rate only for a body refused here (the
		 * handler takes the request's token when it reads it).
		 */
		char	*auth = h.auth != NULL ? xstrndup(h.auth, h.authlen) :
			    NULL;

		rf = r->precheck(h.method, rest, h.pathlen -
		    (size_t)(rest - h.path), auth, over ? &retry_after : NULL);
		free(auth);
		if (rf != REFUSAL_NONE) {
			door_refuse_as(c, route, rf, retry_after);
			return;
		}
	}
	if (over || (big && (r == NULL || r->precheck == NULL))) {
		door_refuse_as(c, route, REFUSAL_TOO_LARGE, 0);
		return;
	}
	door_pass(c, len);
	c->scanned = 0;
	if (h.framing == DOOR_LENGTH) {
		c->st = D_BODY;
		c->left = h.length;
	} else if (h.framing == DOOR_CHUNKED)
		c->st = D_CHUNK_SIZE;
	else
		door_end(c);
}

/*
 * The length of raw's first line with its end (LF or CRLF), at most max
 * bytes looked at, or 0 when none is whole; *linelen without the end.
 * (Searched in a pulled-up copy: evbuffer_search in libevent 2.1 can spin
 * on buffers built by evbuffer_add_buffer.)
 */
static size_t
door_line(struct dconn *c, size_t max, size_t *linelen)
{
	size_t		 n;
	const char	*p = door_peek(c, max, &n), *nl;

	if (p == NULL || (nl = memchr(p, '\n', n)) == NULL)
		return 0;
	*linelen = (size_t)(nl - p) - (nl > p && nl[-1] == '\r' ? 1 : 0);
	return (size_t)(nl - p) + 1;
}

/* The length of a whole head at raw's start (after what is let through) (to its empty line), or 0. */
static size_t
door_head_len(struct dconn *c)
{
	size_t		 n, i;
	const char	*p = door_peek(c, DOOR_HEAD_MAX + 4, &n), *nl;

	if (p == NULL)
		return 0;
	/* An empty line: LF, then LF or CRLF. */
	/* Back two: an end split over reads as "\n\r" | "\n". */
	i = c->scanned > 2 ? c->scanned - 2 : 0;
	while (i < n && (nl = memchr(p + i, '\n', n - i)) != NULL) {
		i = (size_t)(nl - p);
		if (i + 1 < n && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
		i++;
	}
	return 0;
}

/* 1 when a chunk-size line's len bytes are hex digits alone. */
static int
door_hex_only(const char *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (!((p[i] >= '0' && p[i] <= '9') ||
		    ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')))
			return 0;
	return 1;
}

/*
 * Let through what can go of one request: its head once whole (read
 * first), its body as it comes; after its last byte, nothing until evhttp
 * has answered it (handed).  1 when something went through, -1 when a
 * chunked body's framing broke.
 */
static int
door_scan(struct dconn *c)
{
	size_t			 n, take, line, linelen;
	int64_t			 sz;
	int			 passed = 0;
	const char		*lp;
	char			 hex[24];

	while ((c->st == D_REFUSED || !c->handed) &&
	    (n = evbuffer_get_length(c->raw) - c->off) > 0) {
		switch (c->st) {
		case D_REFUSED:
			evbuffer_drain(c->raw, n);
			return passed;
		case D_HEAD:
			door_begin(c);
			/* Empty lines before a request are skipped. */
			if (c->scanned == 0 && (line = door_line(c, 2,
			    &linelen)) > 0 && linelen == 0) {
				door_flush(c);
				evbuffer_drain(c->raw, line);
				continue;
			}
			if ((take = door_head_len(c)) == 0) {
				if (n > DOOR_HEAD_MAX) {
					door_refuse(c, ROUTE_OTHER, 431,
					    "headers_too_large",
					    DOOR_HEAD_TOO_LARGE, 0);
					return 1;
				}
				c->scanned = n;
				return passed;
			}
			if (take > DOOR_HEAD_MAX) {
				door_refuse(c, ROUTE_OTHER, 431,
				    "headers_too_large", DOOR_HEAD_TOO_LARGE,
				    0);
				return 1;
			}
			door_head(c, take);
			passed = 1;
			break;
		case D_BODY:
			take = n < c->left ? n : (size_t)c->left;
			door_pass(c, take);
			passed = 1;
			if ((c->left -= take) == 0)
				door_end(c);
			break;
		case D_CHUNK_SIZE:
			if ((line = door_line(c, CHUNK_LINE_MAX, &linelen)) == 0) {
				if (n > CHUNK_LINE_MAX)
					return -1;
				return passed;
			}
			lp = door_peek(c, linelen, &take);
			if ((sz = door_chunk_size(lp, linelen)) < 0)
				return -1;
			/*
			 * libevent 2.1 reads the size alone: extensions (valid
			 * HTTP, and ours to ignore) would be its HTML 413.
			 */
			if (!door_hex_only(lp, linelen)) {
				take = (size_t)snprintf(hex, sizeof(hex),
				    "%llx\r\n", (unsigned long long)sz);
				door_pass_as(c, line, hex, take);
			} else
				door_pass(c, line);
			passed = 1;
			if (sz == 0)
				c->st = D_TRAILER;
			else {
				c->left = (uint64_t)sz;
				c->st = D_CHUNK_DATA;
			}
			break;
		case D_CHUNK_DATA:
			take = n < c->left ? n : (size_t)c->left;
			door_pass(c, take);
			passed = 1;
			if ((c->left -= take) == 0)
				c->st = D_CHUNK_END;
			break;
		case D_CHUNK_END:
		case D_TRAILER:
			if ((line = door_line(c, CHUNK_LINE_MAX, &linelen)) == 0) {
				if (n > CHUNK_LINE_MAX)
					return -1;
				return passed;
			}
			/* After a chunk's data, its line end and nothing else. */
			if (c->st == D_CHUNK_END && linelen != 0)
				return -1;
			/*
			 * Trailer fields are dropped: nothing here reads them,
			 * evhttp would add them to the request's headers after
			 * the body (where a proxy in front may not look), and
			 * one it cannot parse would be its HTML 413.
			 */
			if (c->st == D_TRAILER && linelen != 0) {
				door_pass_as(c, line, NULL, 0);
				continue;
			}
			door_pass(c, line);
			passed = 1;
			if (c->st == D_CHUNK_END)
				c->st = D_CHUNK_SIZE;
			else if (linelen == 0)
				door_end(c);
			break;
		}
	}
	return passed;
}

/* door_scan, then what it let through goes to evhttp. */
static int
door_process(struct dconn *c)
{
	int	 r = door_scan(c);

	if (r != -1)
		door_flush(c);
	return r;
}

/*
 * The door ends the connection: the event callback of whoever holds the
 * bufferevent's callbacks (evhttp's, or the door's, which passes what on
 * to evhttp's) fails it with what, evhttp frees it at once, and
 * door_closed_cb logs why and frees c.  c is gone when this returns.
 */
static void
door_close(struct dconn *c, short what, const char *why)
{
	bufferevent_event_cb	 evcb;
	void			*evarg;

	c->why = why;
	bufferevent_getcb(c->bev, NULL, NULL, &evcb, &evarg);
	evcb(c->bev, what, evarg);
}

/*
 * Bytes came while evhttp holds a request (or writes its own answer):
 * they wait in raw, and past DOOR_AHEAD_MAX the socket is not read.
 * evhttp enables reading again when its answer is out (and it is off
 * meanwhile but while evhttp writes, to see a close).
 */
static void
door_ahead(struct dconn *c)
{
	if (evbuffer_get_length(c->raw) - c->off > DOOR_AHEAD_MAX)
		bufferevent_disable(c->bev, EV_READ);
}

/*
 * Whatever reads the socket (a socket or an OpenSSL bufferevent, whoever
 * holds its callbacks) adds to evhttp's input, and this runs at once:
 * the fresh bytes (the end of the input) go to raw, so evhttp's parser
 * never sees a byte the door has not let through.  They are looked at by
 * door_read_cb: now when it is the read callback, else once the door
 * holds the callbacks again (the hook, at once when evhttp reads again,
 * or when the answer evhttp is writing is out).
 */
static void	door_read_cb(struct bufferevent *, void *);

static void
door_input_cb(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct dconn		*c = arg;
	size_t			 keep;
	bufferevent_data_cb	 rd;

	if (c->adding || info->n_added == 0)
		return;
	keep = evbuffer_get_length(in) - info->n_added;
	c->adding = 1;
	if (keep > 0)
		evbuffer_remove_buffer(in, c->tmp, keep);
	evbuffer_add_buffer(c->raw, in);
	if (keep > 0) {
		if (!c->tls)
			evbuffer_unfreeze(in, 0);
		evbuffer_add_buffer(in, c->tmp);
		if (!c->tls)
			evbuffer_freeze(in, 0);
	}
	c->adding = 0;
	if (c->st == D_REFUSED) {
		/* Nothing after a refusal is a request: read and dropped. */
		evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
		return;
	}
	bufferevent_getcb(c->bev, &rd, NULL, NULL, NULL);
	if (rd == door_read_cb)
		return;
	/* evhttp writes an answer: held until it is out. */
	if (rd == NULL)
		door_ahead(c);
	event_active(&c->hook, EV_TIMEOUT, 0);
}

/*
 * evhttp began an answer (it adds it whole before writing): the hook
 * takes its write callback over, to see when the answer is out.
 */
static void
door_output_cb(struct evbuffer *out, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct dconn	*c = arg;

	(void)info;
	evbuffer_cb_clear_flags(out, c->outcb, EVBUFFER_CB_ENABLED);
	event_active(&c->hook, EV_TIMEOUT, 0);
}

/*
 * raw has bytes: through the door, then evhttp reads what it was let
 * have.  Nothing goes through while evhttp holds a request: its read
 * callback must not run then (libevent 2.1 ends the process on it).
 *
 * The connection is taken from the bufferevent, not from arg: evhttp's
 * deferred read (after an answer, when input is left) calls the read
 * callback with its own evhttp_connection as the argument.
 */
static void
door_read_cb(struct bufferevent *bev, void *arg)
{
	struct dconn	*c;
	struct evbuffer	*in = bufferevent_get_input(bev);
	int		 gone = 0;

	bufferevent_getcb(bev, NULL, NULL, NULL, &arg);
	c = arg;
	if (c->handed) {
		if (c->st == D_REFUSED)
			evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
		else
			door_ahead(c);
		return;
	}
	if (door_process(c) == -1) {
		/* Broken chunked framing, mid-body: nothing to answer. */
		door_close(c, BEV_EVENT_READING | BEV_EVENT_ERROR,
		    "broken chunked framing");
		return;
	}
	if (evbuffer_get_length(in) == 0 || c->h_read == NULL)
		goto out;
	/*
	 * evhttp's parser drains the input a line at a time, some twenty
	 * times a request, and libevent calls every callback on the buffer
	 * for each drain.  On a socket bufferevent nothing reads the socket
	 * while evhttp parses, so door_input_cb has nothing to take and is
	 * off the buffer meanwhile.  (An OpenSSL bufferevent may read at once
	 * when evhttp enables reading: there it stays.)  evhttp may close the
	 * connection inside, freeing c: gone says so.
	 */
	c->gone = &gone;
	if (!c->tls) {
		evbuffer_remove_cb_entry(in, c->incb);
		c->incb = NULL;
	}
	c->h_read(bev, c->h_arg);
	if (gone)
		return;
	c->gone = NULL;
	if (c->incb == NULL)
		c->incb = evbuffer_add_cb(in, door_input_cb, c);
out:
	if (c->handed && c->st != D_REFUSED)
		door_ahead(c);
}

/*
 * The socket took what was written.  While evhttp writes an answer this
 * is the door's, passing it on: when evhttp then reads again (its
 * answer is out; it set its callbacks in evhttp_start_read_), the hook
 * goes on with the next request.  An OpenSSL bufferevent calls it
 * deferred, after the output is empty: only here is the answer surely
 * out.  evhttp may close the connection inside, freeing c.
 */
static void
door_write_cb(struct bufferevent *bev, void *arg)
{
	struct dconn		*c = arg;
	bufferevent_data_cb	 rd;
	int			 gone = 0, *outer = c->gone;

	if (c->st == D_REFUSED) {
		/* The door's own answer is out: the connection ends. */
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			door_close(c, BEV_EVENT_WRITING | BEV_EVENT_EOF,
			    "refusal answered");
		return;
	}
	if (c->h_write == NULL)
		return;
	c->gone = &gone;
	c->h_write(bev, c->h_arg);
	if (gone) {
		if (outer != NULL)
			*outer = 1;
		return;
	}
	c->gone = outer;
	bufferevent_getcb(bev, &rd, NULL, NULL, NULL);
	if (rd != NULL && rd != door_read_cb)
		event_active(&c->hook, EV_TIMEOUT, 0);
}

static void
door_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct dconn	*c = arg;

	/*
	 * The TLS handshake is over before any request byte: the deadline
	 * that covered it stops, and the first request's byte starts its
	 * own (door_read_cb).  Until then the connection is idle, under
	 * TREATY_RELAY_HTTP_TIMEOUT_SECONDS as a plain one, not a slow
	 * request: a client may open its connections before it needs them.
	 */
	if ((what & BEV_EVENT_CONNECTED) && c->tls && c->busy &&
	    c->st == D_HEAD && c->scanned == 0 &&
	    evbuffer_get_length(c->raw) == 0) {
		c->busy = 0;
		door_idle_enter(c);
	}
	c->h_event(bev, what, c->h_arg);
}

/*
 * The deadline timer: the request's deadline passed before its last byte
 * (close), or the timer was armed for an earlier request (arm it again for
 * what is left, or leave it off between requests).  A request's time runs
 * only while the door reads it: one that waits behind its predecessor's
 * answer begins when that answer is out.
 */
static void
door_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct dconn		*c = arg;
	long long		 left = c->due - now_ms();
	struct timeval		 tv;

	(void)fd;
	(void)ev;
	if (!c->busy)
		return;
	if (left > 0) {
		tv.tv_sec = left / 1000;
		tv.tv_usec = (left % 1000) * 1000;
		event_add(&c->deadline, &tv);
		return;
	}
	metrics_door(DOOR_TIMED_OUT);
	if (log_refused_ok())
		log_info("request deadline passed; connection closed",
		    "seconds=%d control=%d", c->d->cfg->request_timeout_seconds,
		    c->d->control);
	door_close(c, BEV_EVENT_READING | BEV_EVENT_TIMEOUT,
	    "request deadline");
}

/*
 * The one end of every door connection: evhttp frees it (this is its
 * close callback), after door_close or on its own (the client left, an
 * answer with Connection: close, the idle timeout, shutdown).  The reason
 * is logged once, then everything the door holds is freed.  A refused
 * connection lingers (door-linger.c), so that the kernel does not answer
 * what the client still sends with a reset that could destroy the answer.
 */
static void
door_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct dconn	*c = arg;

	(void)evcon;
	if (c->st == D_REFUSED)
		door_linger(c->d->base, c->bev);
	door_idle_leave(c);
	event_del(&c->hook);
	event_del(&c->deadline);
	if (c->gone != NULL)
		*c->gone = 1;
	if (c->incb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_input(c->bev),
		    c->incb);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->outcb);
	evbuffer_free(c->raw);
	evbuffer_free(c->tmp);
	c->d->nconns--;
	door_trim_later();
	if (!c->d->control)
		metrics_gauge(GAUGE_CONNECTIONS, c->d->nconns);
	log_debug("connection closed", "control=%d reason=%s", c->d->control,
	    log_q(c->why != NULL ? c->why : c->st == D_REFUSED ?
	    "refusal answered" : "ended by evhttp"));
	free(c);
}

/*
 * The loop's next turn after the connection was made (evhttp has set its
 * callbacks, nothing has been read yet), again after each answer (evhttp
 * set them again to read the next request: the request it held is done),
 * and whenever bytes came while evhttp held the callbacks: take them over,
 * and go on with what waits in raw.  A connection over the cap is closed.
 */
static void
door_hook_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct dconn		*c = arg;
	bufferevent_data_cb	 rd, wr;

	(void)fd;
	(void)ev;
	bufferevent_getcb(c->bev, &rd, &wr, NULL, NULL);
	if (rd == NULL) {
		/*
		 * evhttp writes an answer (its own callbacks, reading off):
		 * the door passes them on, and door_write_cb sees it end.
		 */
		if (c->hooked && wr != door_write_cb)
			bufferevent_setcb(c->bev, NULL, door_write_cb,
			    door_event_cb, c);
		return;
	}
	if (rd != door_read_cb) {
		bufferevent_getcb(c->bev, &c->h_read, &c->h_write,
		    &c->h_event, &c->h_arg);
		if (!c->hooked)
			evhttp_connection_set_closecb(c->h_arg, door_closed_cb,
			    c);
		bufferevent_setcb(c->bev, door_read_cb, door_write_cb,
		    door_event_cb, c);
		if (c->refused) {
			metrics_door(DOOR_REFUSED);
			door_close(c, BEV_EVENT_READING | BEV_EVENT_EOF,
			    "over the connection cap");
			return;
		}
		/* The TLS handshake counts against the first deadline. */
		if (!c->hooked && c->tls)
			door_deadline_start(c);
		c->hooked = 1;
		/*
		 * evhttp sets its callbacks after a request only once its
		 * answer is out (evhttp_start_read_): the next may go on.
		 */
		if (c->st != D_REFUSED)
			c->handed = 0;
	}
	if (c->handed)
		return;
	if (evbuffer_get_length(c->raw) > 0)
		door_read_cb(c->bev, c);
	else
		door_idle_enter(c);
}

/* The connections one listener may have. */
static int
door_max(const struct door *d)
{
	if (d->control)
		return DOOR_CONTROL_MAX;
	return d->max > 0 && d->max < d->cfg->max_connections ? d->max :
	    d->cfg->max_connections;
}

/*
 * A TLS connection whose client has not sent its hello yet: as idle as a
 * plain one that has sent nothing.
 */
static int
door_tls_unstarted(const struct dconn *c)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(c->bev);

	return ssl != NULL && SSL_get_state(ssl) == TLS_ST_BEFORE;
}

/*
 * The listener is full: close the connection idle longest to admit a new
 * one (nginx's reusable connections), so that idle keep-alive connections
 * never keep a working client out.  A connection with a request begun or
 * held by evhttp is never closed for this.  0 when none is idle.
 */
static int
door_evict(struct door *d)
{
	struct dconn	*c;

	while ((c = TAILQ_FIRST(&d->idle)) != NULL) {
		/*
		 * Accepted earlier in this turn's burst (evhttp has set it
		 * up whole): the hook takes it over now, so it ends as any
		 * other connection does.
		 */
		if (!c->hooked) {
			door_hook_cb(-1, 0, c);
			if (!c->hooked)
				return 0;
			continue;
		}
		/* A handshake under way is a request begun. */
		if (c->tls && c->busy && !door_tls_unstarted(c)) {
			door_idle_leave(c);
			continue;
		}
		metrics_door(DOOR_EVICTED);
		door_close(c, BEV_EVENT_READING | BEV_EVENT_EOF,
		    "idle longest, closed for a new connection");
		return 1;
	}
	return 0;
}

/* evhttp_set_bevcb: a new connection's bufferevent. */
static struct bufferevent *
door_bevcb(struct event_base *base, void *arg)
{
	struct door	*d = arg;
	struct dconn	*c = xcalloc(1, sizeof(*c));

	c->d = d;
	if (!d->control && d->cfg->tls_ctx != NULL) {
		/*
		 * HTTPS: evhttp gives the descriptor with bufferevent_setfd,
		 * and the handshake starts then; the SSL holds its own
		 * reference to the context a reload may replace.
		 */
		SSL	*ssl = SSL_new(d->cfg->tls_ctx);

		if (ssl == NULL)
			fatalx("cannot make a TLS connection", NULL);
		c->bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
		if (c->bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(c->bev,
			    1);
		c->tls = 1;
	} else
		c->bev = bufferevent_socket_new(base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("cannot make a bufferevent", NULL);
	c->raw = evbuffer_new();
	c->tmp = evbuffer_new();
	c->incb = evbuffer_add_cb(bufferevent_get_input(c->bev), door_input_cb,
	    c);
	c->outcb = evbuffer_add_cb(bufferevent_get_output(c->bev),
	    door_output_cb, c);
	evbuffer_cb_clear_flags(bufferevent_get_output(c->bev), c->outcb,
	    EVBUFFER_CB_ENABLED);
	c->refused = d->nconns >= door_max(d) && !door_evict(d);
	d->nconns++;
	if (!d->control)
		metrics_gauge(GAUGE_CONNECTIONS, d->nconns);
	evtimer_assign(&c->deadline, base, door_deadline_cb, c);
	event_assign(&c->hook, base, -1, 0, door_hook_cb, c);
	event_active(&c->hook, EV_TIMEOUT, 0);
	if (!c->refused) {
		TAILQ_INSERT_TAIL(&d->idle, c, idle_entry);
		c->idle = 1;
	}
	return c->bev;
}

/* The trim timer; see door.h. */
void
door_init(struct event_base *base)
{
	door_linger_init(base);
}

/* Put the door on a server; see door.h. */
void
door_attach(struct evhttp *http, struct event_base *base,
    const struct config *cfg, int control, const struct route_def *routes)
{
	struct door	*d = &doors[control ? 1 : 0];

	d->base = base;
	d->cfg = cfg;
	d->routes = routes;
	d->control = control;
	TAILQ_INIT(&d->idle);
	evhttp_set_bevcb(http, door_bevcb, d);
}

/*
 * Descriptors the relay needs besides the main listener's connections:
 * the control listener's, the lingering refusals', NATS, DNS, listeners
 * and files (DOOR_OWN_FDS), and a push subscriber's deliveries (up to
 * maxInFlight connections each, in flight or kept).
 */
static long long
door_needs(const struct config *cfg)
{
	long long	 n = DOOR_CONTROL_MAX + DOOR_OWN_FDS + door_linger_max();
	size_t		 i;

	for (i = 0; i < cfg->nsubscribers; i++)
		if (cfg->subscribers[i].kind == SUB_PUSH)
			n += cfg->subscribers[i].max_in_flight;
	return n;
}

/* Fit the cap to the descriptor limit; see door.h. */
void
door_fit(void)
{
	struct door	*d = &doors[0];
	struct rlimit	 rl;
	long long	 needs, room;
	int		 was = d->max;

	d->max = 0;
	if (d->cfg == NULL || getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY)
		goto out;
	door_linger_fit((long long)rl.rlim_cur);
	needs = door_needs(d->cfg);
	room = (long long)rl.rlim_cur - needs;
	if (room >= d->cfg->max_connections)
		goto out;
	d->max = room > DOOR_MIN_CONNECTIONS ? (int)room :
	    DOOR_MIN_CONNECTIONS;
	if (d->max != was)
		log_warnx("the descriptor limit is below the connection cap "
		    "and what the relay needs besides; connection cap lowered",
		    "nofile=%llu max_connections=%d needs=%lld effective=%d",
		    (unsigned long long)rl.rlim_cur,
		    d->cfg->max_connections, needs, d->max);
out:
	metrics_gauge(GAUGE_CONNECTIONS_MAX, door_max(d));
}

/* The main listener's cap as it applies; see door.h. */
int
door_max_connections(void)
{
	return door_max(&doors[0]);
}

/* Connections open on the main listener. */
int
door_connections(void)
{
	return doors[0].nconns;
}
