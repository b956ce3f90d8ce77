/*
 * reply.h: answering requests, at the bottom of the request layer: the
 * JSON answers every route gives (SPEC 2's error body, the Date, the
 * cache and connection headers, the count in /metrics), SPEC 2's
 * refusals of an event written once, and the answer the front door
 * writes itself before evhttp has a request.  Loop thread only.
 */
#ifndef REPLY_H
#define REPLY_H

#include "metrics.h"

struct evbuffer;
struct evhttp_request;

#define REPLY_RETRY_AFTER	"2"	/* seconds, on every 503 */

/*
 * SPEC 2's refusals of an event, each answered the same wherever it is
 * found: the door (from a head), ingest (from the request), a batch.
 */
enum refusal {
	REFUSAL_NONE = 0,
	REFUSAL_METHOD,			/* 405, with Allow: POST */
	REFUSAL_UNAUTHENTICATED,	/* 401, with WWW-Authenticate: no token */
	REFUSAL_UNKNOWN_TOKEN,		/* the same: a token no producer has */
	REFUSAL_BAD_SUBJECT,		/* 400 */
	REFUSAL_SUBJECT_NOT_ALLOWED,	/* 403 */
	REFUSAL_RATE_LIMITED,		/* 429, with Retry-After */
	REFUSAL_TOO_LARGE,		/* 413: the body is over 1 MiB */
	REFUSAL_MAX
};
struct refusal_text {
	int		 status;
	const char	*code;
	const char	*detail;
};
/* A refusal's status, error code and detail. */
const struct refusal_text *reply_refusal(enum refusal r);

/*
 * Answer with a JSON body (consumed; it may be the request's own output
 * buffer, evhttp_request_get_output_buffer) and count it under route.
 */
void	reply_json(struct evhttp_request *req, enum route route, int status,
	    struct evbuffer *body);
/* Answer {"error":code,"detail":detail}; adds Retry-After to a 503. */
void	reply_error(struct evhttp_request *req, enum route route, int status,
	    const char *code, const char *detail);
/* The same with "index":index, the batch's event at fault (SPEC 14). */
void	reply_error_at(struct evhttp_request *req, enum route route,
	    int status, const char *code, const char *detail,
	    long long index);
/*
 * Answer refusal r with its headers (retry_after: the 429's seconds),
 * "index":index when index >= 0.
 */
void	reply_refuse(struct evhttp_request *req, enum route route,
	    enum refusal r, long long retry_after, long long index);
/*
 * The front door's own answer, before evhttp has a request (door.c): the
 * status line, the headers reply_error would give (with Connection:
 * close, and those of a refusal's status: WWW-Authenticate, Allow: POST,
 * Retry-After), the JSON error, into out; counted under route.
 */
void	reply_door(struct evbuffer *out, enum route route, int status,
	    const char *code, const char *detail, long long retry_after);
/* Shutdown began: every answer from now on closes its connection. */
void	reply_closing(void);
/*
 * 1 when the client of a request we have not answered yet has gone: evhttp
 * does not read a connection while its request waits for us, so a closed
 * one is only seen by looking.
 */
int	reply_client_gone(struct evhttp_request *req);

#endif
