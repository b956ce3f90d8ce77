/*
 * http.h: the evhttp server, its route table and reply helpers, and the
 * /healthz and /metrics routes.  Loop thread only.
 */
#ifndef HTTP_H
#define HTTP_H

#include "metrics.h"

struct event_base;
struct evbuffer;
struct evhttp_request;
struct config;

#define HTTP_MAX_HEADERS	(16 * 1024)
#define HTTP_RETRY_AFTER	"2"

/*
 * Bind the main socket and listen on it, but with reuseport only bind
 * (http_open listens); the control listener too, when configured.  Exits
 * 1 when an address cannot be bound.
 */
void	http_init(struct event_base *base, const struct config *cfg);
/* The relay is ready: with reuseport, join the port's group now. */
void	http_open(void);
/* A reload: settings for the connections accepted from now on. */
void	http_reload(const struct config *cfg);
/* Close the listening socket; answer new requests 503 shutting_down. */
void	http_stop_accepting(void);
/* Free the server and every connection; all requests must be answered. */
void	http_free(void);
/*
 * Answer with a JSON body (consumed; it may be the request's own output
 * buffer, evhttp_request_get_output_buffer) and count it under route.
 */
void	http_reply(struct evhttp_request *req, enum route route, int status,
	    struct evbuffer *body);
/* Answer {"error":code,"detail":detail}; adds Retry-After to a 503. */
void	http_error(struct evhttp_request *req, enum route route, int status,
	    const char *code, const char *detail);
/* The same with "index":index, the batch's event at fault (SPEC 14). */
void	http_error_at(struct evhttp_request *req, enum route route,
	    int status, const char *code, const char *detail,
	    long long index);
/* 1 once shutdown began. */
int	http_draining(void);
/*
 * Query parameters, for handlers: http_query_int gives key's value in
 * [lo, hi], -1 when absent, -2 when not a number in range;
 * http_query_bool gives 1 (true, 1, or the key alone), 0 (absent, false,
 * 0), or -2.
 */
struct evkeyvalq;
long long	http_query_int(const struct evkeyvalq *q, const char *key,
		    long long lo, long long hi);
int		http_query_bool(const struct evkeyvalq *q, const char *key);
/*
 * A header's value, its name compared without case, or NULL: the answer
 * of evhttp_find_header.  name starts with a letter and has two bytes at
 * least.
 */
const char	*http_header(const struct evkeyvalq *h, const char *name);
/*
 * 1 when the client of a request we have not answered yet has gone: evhttp
 * does not read a connection while its request waits for us, so a closed
 * one is only seen by looking.
 */
int	http_client_gone(struct evhttp_request *req);

#endif
