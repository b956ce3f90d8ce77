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
struct sub_changes;

/*
 * Register each pull subscriber's consumer.  cfg stays in place for the
 * life of the relay; a reload changes what it holds, then inbox_reload.
 */
void	inbox_init(struct event_base *base, const struct config *cfg);
/*
 * The configuration was reloaded: inboxes added, changed (tokens,
 * secrets, filter, maxDeliver, maxInFlight) or removed (404 from now on;
 * requests under way finish; the JetStream consumer stays), counted into
 * ch.
 */
void	inbox_reload(struct sub_changes *ch);
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
