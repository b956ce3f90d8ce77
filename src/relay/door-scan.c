/*
 * door-scan.c: a connection's bytes through the front door (door-scan.h).
 * Loop thread only.
 *
 * The bytes the socket gave wait in the connection's raw buffer (door.c's
 * door_input_cb puts them there); this decides how many of them evhttp's
 * parser may have, and moves those to evhttp's input:
 *
 *   a head     is held until it is whole (at most DOOR_HEAD_MAX bytes and
 *              DOOR_HEADERS_MAX lines), then read (door-head.c): framing
 *              that two parties could read differently is refused, a
 *              Content-Length over 1 MiB gets SPEC 2's answer unread;
 *   a body     goes through as it comes (Content-Length bytes, or chunks
 *              followed to their end, their sizes rewritten without
 *              extensions and trailers dropped), so the next head is found;
 *   a refusal  is written by the door itself (reply_door), before evhttp
 *              has a request, and nothing after it is read as a request.
 *
 * After a request's last byte nothing goes through until evhttp has
 * answered it (door_end, "handed"): libevent 2.1's evhttp cannot take
 * bytes while it writes.  When a request begins and ends is door.c's
 * (door_begin, door_end: the deadline, the idle list).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "api.h"
#include "door-head.h"
#include "door-int.h"
#include "door-scan.h"
#include "log.h"
#include "reply.h"
#include "route.h"
#include "util.h"

#define CHUNK_LINE_MAX		1024
#define DOOR_HEAD_TOO_LARGE	"the request's head is over " \
				API_STR(DOOR_HEAD_MAX_KIB) " KiB or " \
				API_STR(DOOR_HEADERS_MAX) " header lines"
/*
 * A body larger than this (or chunked) is let through only to a producer
 * that passes SPEC 2's checks on its head: anyone else could otherwise
 * make the relay hold up to 1 MiB per connection.  Bodies to other routes
 * are never this large.
 */
#define DOOR_OPEN_BODY_KIB	64
#define DOOR_OPEN_BODY_MAX	(DOOR_OPEN_BODY_KIB * 1024)

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
	if (over) {
		door_refuse_as(c, route, REFUSAL_TOO_LARGE, 0);
		return;
	}
	if (big && (r == NULL || r->precheck == NULL)) {
		/* Only events may be larger (SPEC 2); say what holds here. */
		door_refuse(c, route, 413, "too_large", h.framing ==
		    DOOR_CHUNKED ? "a chunked body is taken only by the events "
		    "routes; send this one with Content-Length" : "the body is "
		    "over " API_STR(DOOR_OPEN_BODY_KIB) " KiB", 0);
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

/* door_scan, then what it let through goes to evhttp; see door-scan.h. */
int
door_process(struct dconn *c)
{
	int	 r = door_scan(c);

	if (r != -1)
		door_flush(c);
	return r;
}
