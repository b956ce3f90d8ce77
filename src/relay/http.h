/*
 * http.h: the evhttp servers and their route table (the top of the
 * request layer; answers: reply.h, reading a request: query.h), and the
 * /healthz and /metrics routes.  Loop thread only.
 */
#ifndef HTTP_H
#define HTTP_H

struct event_base;
struct config;

#define HTTP_MAX_HEADERS	(16 * 1024)

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

#endif
