/*
 * reply.c: answering requests (reply.h), the bottom of the request layer:
 * the routes (http.c), the handlers (ingest, inbox, admin) and the front
 * door (door.c) answer through here, and it calls nothing of theirs.
 * Loop thread only.
 *
 * A request we answer later (after JetStream's acknowledgement) stays valid
 * even if its client leaves: evhttp 2.1 detaches a request the user has not
 * answered from its dying connection (evhttp_connection_incoming_fail) and
 * frees it when we finally call evhttp_send_reply.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/util.h>

#include "api.h"
#include "json.h"
#include "metrics.h"
#include "reply.h"

static int	 reply_close;	/* shutdown began: Connection: close */

/* SPEC 2's refusals, each written once; see reply.h. */
static const struct refusal_text reply_refusals[REFUSAL_MAX] = {
	[REFUSAL_NONE] = { 0, NULL, NULL },
	[REFUSAL_METHOD] = { 405, "method_not_allowed",
	    "events are published with POST" },
	[REFUSAL_UNAUTHENTICATED] = { 401, "unauthenticated",
	    "a producer's bearer token is required: Authorization: Bearer "
	    "<token>" },
	[REFUSAL_UNKNOWN_TOKEN] = { 401, "unauthenticated",
	    "unknown token: its SHA-256 is no producer's tokenSha256" },
	[REFUSAL_BAD_SUBJECT] = { 400, "bad_subject",
	    "the path must end in evt|audit.<scope>.<product>.<entity>.<verb>" },
	[REFUSAL_SUBJECT_NOT_ALLOWED] = { 403, "subject_not_allowed",
	    "this producer may not publish to this subject" },
	[REFUSAL_RATE_LIMITED] = { 429, "rate_limited",
	    "this producer is over its rate; send it again after Retry-After "
	    "seconds" },
	[REFUSAL_TOO_LARGE] = { 413, "too_large",
	    "the body is over " API_STR(API_BODY_MAX_MIB) " MiB" },
};

/* A refusal's answer; see reply.h. */
const struct refusal_text *
reply_refusal(enum refusal r)
{
	return &reply_refusals[r < REFUSAL_MAX ? r : REFUSAL_NONE];
}

/*
 * The reason phrase for a status libevent 2.1 does not name (it says
 * "Client Error"), or NULL to let libevent choose; with all, libevent's
 * own phrases too, for an answer the door writes itself.
 */
static const char *
reply_reason(int status, int all)
{
	switch (status) {
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	}
	if (!all)
		return NULL;
	switch (status) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Request Entity Too Large";
	case 417:
		return "Expectation Failed";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

/*
 * The Date header, made once a second: libevent formats one for every
 * answer that has none (gmtime and a printf, about 3,500 instructions).
 */
static const char *
reply_date(void)
{
	static char	 date[64];
	static time_t	 made = -1;
	time_t		 now = time(NULL);
	struct tm	 tm;

	if (now != made && gmtime_r(&now, &tm) != NULL &&
	    evutil_date_rfc1123(date, sizeof(date), &tm) > 0)
		made = now;
	return date;
}

/* Answer with body (consumed), Content-Type application/json. */
void
reply_json(struct evhttp_request *req, enum route route, int status,
    struct evbuffer *body)
{
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(req);
	enum evhttp_cmd_type	 cmd = evhttp_request_get_command(req);
	const char		*date;

	evhttp_add_header(oh, "Content-Type", route == ROUTE_METRICS &&
	    status == 200 ? "text/plain; version=0.0.4" : "application/json");
	/*
	 * What a GET answers is kept by no cache.  An answer to a POST or a
	 * DELETE is never stored by one without freshness headers (RFC 9111
	 * 3): no header line for it on every event.
	 */
	if (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD)
		evhttp_add_header(oh, "Cache-Control", "no-store");
	if (*(date = reply_date()) != '\0')
		evhttp_add_header(oh, "Date", date);
	if (reply_close)
		evhttp_add_header(oh, "Connection", "close");
	metrics_request(route, status);
	/*
	 * HEAD: the length the GET would have, and no body (libevent 2.1
	 * would send it, and a keep-alive client would read it as the start
	 * of the next answer).
	 */
	if (cmd == EVHTTP_REQ_HEAD && body != NULL) {
		char	 len[24];

		snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
		evhttp_add_header(oh, "Content-Length", len);
		evbuffer_drain(body, evbuffer_get_length(body));
	}
	/* A body already in evhttp's own output buffer stays where it is. */
	evhttp_send_reply(req, status, reply_reason(status, 0),
	    body == evhttp_request_get_output_buffer(req) ? NULL : body);
}

/* A JSON error answer; see reply.h. */
void
reply_error(struct evhttp_request *req, enum route route, int status,
    const char *code, const char *detail)
{
	reply_error_at(req, route, status, code, detail, -1);
}

/* The same naming a batch's event; see reply.h. */
void
reply_error_at(struct evhttp_request *req, enum route route, int status,
    const char *code, const char *detail, long long index)
{
	struct evbuffer		*b = evbuffer_new();
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(req);

	if (status == 503)
		evhttp_add_header(oh, "Retry-After", REPLY_RETRY_AFTER);
	json_error_index_body(b, code, detail, index);
	reply_json(req, route, status, b);
	evbuffer_free(b);
}

/* A refusal of SPEC 2 with its headers; see reply.h. */
void
reply_refuse(struct evhttp_request *req, enum route route, enum refusal r,
    long long retry_after, long long index)
{
	const struct refusal_text	*t = reply_refusal(r);
	struct evkeyvalq		*oh = evhttp_request_get_output_headers(req);
	char				 ra[24];

	if (t->status == 401)
		evhttp_add_header(oh, "WWW-Authenticate", "Bearer");
	else if (t->status == 405)
		evhttp_add_header(oh, "Allow", "POST");
	else if (t->status == 429) {
		snprintf(ra, sizeof(ra), "%lld", retry_after);
		evhttp_add_header(oh, "Retry-After", ra);
	}
	reply_error_at(req, route, t->status, t->code, t->detail, index);
}

/*
 * The door's own answer; see reply.h.  The headers are reply_error's for
 * a GET (the door answered its refusals as one before it wrote them
 * itself), in the order evhttp writes them.
 */
void
reply_door(struct evbuffer *out, enum route route, int status,
    const char *code, const char *detail, long long retry_after)
{
	struct evbuffer	*b = evbuffer_new();

	json_error_body(b, code, detail);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", status,
	    reply_reason(status, 1));
	if (status == 401)
		evbuffer_add_printf(out, "WWW-Authenticate: Bearer\r\n");
	else if (status == 429)
		evbuffer_add_printf(out, "Retry-After: %lld\r\n", retry_after);
	else if (status == 405)
		evbuffer_add_printf(out, "Allow: POST\r\n");
	evbuffer_add_printf(out, "Content-Type: application/json\r\n"
	    "Cache-Control: no-store\r\nDate: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", reply_date(),
	    evbuffer_get_length(b));
	evbuffer_add_buffer(out, b);
	evbuffer_free(b);
	metrics_request(route, status);
}

/* Shutdown began; see reply.h. */
void
reply_closing(void)
{
	reply_close = 1;
}

/* Whether a waiting request's client closed its connection; see reply.h. */
int
reply_client_gone(struct evhttp_request *req)
{
	struct evhttp_connection	*c = evhttp_request_get_connection(req);
	struct bufferevent		*bev;
	evutil_socket_t			 fd;
	char				 b;
	ssize_t				 n;

	if (c == NULL)
		return 1;	/* evhttp saw it go */
	if ((bev = evhttp_connection_get_bufferevent(c)) == NULL ||
	    (fd = bufferevent_getfd(bev)) == -1)
		return 0;
	/* 0: the peer closed; data (a pipelined request) or EAGAIN: alive. */
	n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR);
}
