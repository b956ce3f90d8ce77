/*
 * inbox.h: pull subscribers (SPEC 4): leases on JetStream pull consumers,
 * over GET /v1/inbox/<name>, POST .../<id>/extend and .../release, and
 * DELETE /v1/inbox/<name>/<id>.  Loop thread only.
 */
#ifndef INBOX_H
#define INBOX_H

#include <stdint.h>

struct event_base;
struct evhttp_request;
struct config;
struct sub_changes;
struct source;
struct store_consumer;
struct store_msg;

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
/* 1 when name is a pull subscriber here (and the relay is not stopping). */
int	inbox_has(const char *name);
/*
 * 1 when this instance takes up replays of inbox name: it has it, and
 * for an ordered inbox holds it (its hand orders the replay's events).
 */
int	inbox_takes(const char *name);
/*
 * Sources beside the inbox's own consumer (SPEC 15's replays, which
 * replay.c feeds in here).  Source from's pull consumer c becomes one of
 * inbox name's sources, which GETs draw from beside the inbox's own
 * consumer (inbox-fetch.c says how).  want(arg, seq) is 1 for the events
 * the source hands out; the others are acknowledged at once, never seen.
 * Leases of its events get receipts naming the replay, which any
 * instance answers on its consumer; an acknowledged one is counted in
 * the ledger (source.h).  -1 when name is not an inbox here.
 */
int	inbox_source_add(const char *name, const struct source *from,
	    struct store_consumer *c, int (*want)(void *, uint64_t),
	    void *arg);
/*
 * 1 while c is a source of an inbox here: 0 once a reload removed its
 * inbox (the replay then leaves it, and may be fed in again).
 */
int	inbox_source_has(const struct store_consumer *c);
/*
 * c leaves its inbox (before store_consumer_remove(c)): GETs waiting for
 * its pull go on to the next source.  Nothing when it is no source.
 */
void	inbox_source_remove(struct store_consumer *c);
/*
 * JetStream gave up on source from's event m of inbox name (its leases
 * ran out maxDeliver times): recorded as a drop of the inbox's own
 * (record in AUDIT, log line, metric) and counted in the ledger.  Takes
 * m.
 */
void	inbox_source_dropped(const char *name, const struct source *from,
	    struct store_msg *m);
/*
 * This instance began (held 1) or stopped holding ordered inbox name
 * (holder.h): it serves the inbox, or forwards to the one that does.
 */
void	inbox_held(const char *name, int held);
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
