/*
 * inbox.h: pull subscribers (SPEC 4): leases on JetStream pull consumers,
 * over GET /v1/inbox/<name>, POST .../<id>/extend and .../release, and
 * DELETE /v1/inbox/<name>/<id>.  Loop thread only.
 */
#ifndef INBOX_H
#define INBOX_H

struct event_base;
struct evhttp_request;
struct config;

/* Register each pull subscriber's consumer; before store_init. */
void	inbox_init(struct event_base *base, const struct config *cfg);
/* Handle a request whose path is /v1/inbox/<rest>. */
void	inbox_handle(struct evhttp_request *req, const char *rest);
/*
 * Shutting down: answer every waiting long-poll now with what it has, and
 * take no new requests.
 */
void	inbox_stop(void);
/* Answer 503 to every request still waiting for JetStream. */
void	inbox_fail_all(void);
/* Requests still waiting for JetStream. */
int	inbox_in_flight(void);
/* Free everything (after the loop). */
void	inbox_free(void);

#endif
