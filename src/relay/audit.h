/*
 * audit.h: drop records.  When a subscriber, push or pull, will never get
 * an event, the relay says so in AUDIT as a CloudEvent of type
 * dev.treaty.delivery.dropped.v1 on audit.relay.treaty.delivery.dropped
 * (SPEC 3: no drop is silent); and each change of a subscriber kept in
 * JetStream (SPEC 16).  Loop thread only.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stdint.h>

struct event_base;
struct store_msg;
struct audit_drop;

/* Called once: stored is 1 when the record is in AUDIT, 0 at shutdown. */
typedef void (*audit_cb)(void *arg, int stored);

void	audit_init(struct event_base *base);
/*
 * Record that subscriber will never get the stored event m (its id,
 * source and subject are read from m, which the caller keeps) after
 * attempts, with the last HTTP status (0: none) and error; replay is the
 * id of the replay that dropped it, or NULL.  Stored once (a fixed
 * Nats-Msg-Id per subscriber, stream sequence and replay), retried every
 * 2 s until JetStream has it.  cb runs on the loop, never from inside.
 */
struct audit_drop *audit_drop(const char *subscriber, const char *replay,
	    const struct store_msg *m, uint64_t attempts, int status,
	    const char *error, audit_cb cb, void *arg);
/*
 * End a record, stored or not, the one way: its retry stopped, the reason
 * logged; its callback does not run (the owner is closing it).
 */
void	audit_drop_close(struct audit_drop *a, const char *reason);
/*
 * Record that subscriber of the TREATY_SUBSCRIBERS bucket was put or
 * deleted ("put", "delete") at revision, by actor (the first 12 hex
 * digits of the admin token's SHA-256): a dev.treaty.subscriber.changed.v1
 * on audit.relay.treaty.subscriber.changed (SPEC 16), stored as a drop
 * record is, and never with a secret.
 */
void	audit_subscriber_changed(const char *subscriber, const char *action,
	    uint64_t revision, const char *actor);
/*
 * A subscriber's new state (SPEC 17), by the instance whose write won:
 * dev.treaty.subscriber.state.v1 on audit.relay.treaty.subscriber.state,
 * its Nats-Msg-Id the state's revision.  url (410) and failures (the
 * breaker) are left out when NULL or 0.
 */
struct audit_state {
	const char	*subscriber;
	const char	*state;
	const char	*previous;
	const char	*reason;
	const char	*since;
	const char	*instance;
	uint64_t	 revision;
	const char	*url;
	int		 failures;
};
void	audit_subscriber_state(const struct audit_state *st);
/* Shutdown: every record not stored yet ends, callbacks with stored 0. */
void	audit_close_all(void);

#endif
