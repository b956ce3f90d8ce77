/*
 * deliver.h: push delivery (SPEC 3): one struct delivery per attempt, from
 * a JetStream message to the subscriber's answer and back to JetStream
 * (ack, delayed nak, or term with a record in AUDIT).  Loop thread only.
 */
#ifndef DELIVER_H
#define DELIVER_H

struct event_base;
struct config;
struct sub_changes;

/*
 * Set up DNS, outbound HTTP and one consumer per push subscriber.  cfg
 * stays in place for the life of the relay; a reload changes what it
 * holds and then calls deliver_reload.
 */
void	deliver_init(struct event_base *base, const struct config *cfg);
/*
 * The configuration was reloaded: push subscribers added (consumer made,
 * deliveries start), changed (later attempts use the new settings; the
 * consumer is updated) or removed (no new deliveries here; those under
 * way finish; the JetStream consumer stays), counted into ch.
 */
void	deliver_reload(struct sub_changes *ch);
/* 1 when name is a push subscriber of this instance (and it is not stopping). */
int	deliver_has(const char *name);
/*
 * 1 when this instance delivers name's events now: it has the push
 * subscriber, and holds it when it is ordered (holder.h), so that one
 * instance at a time delivers an ordered subscriber's replays too.
 */
int	deliver_takes(const char *name);
struct store_consumer;
struct store_msg;
struct source;
/*
 * A message of src (a replay's consumer: replay.c feeds its source in
 * here) for push subscriber name: delivered like one of the subscriber's
 * own (through the gates, signed, retried, drop records, metrics), with
 * src's max_deliver (its consumer's, from the replay's start), and its
 * outcome counted in the ledger (source_outcome).  exhausted: JetStream
 * gave up on it (as the subscriber's consumer's exhausted callback).  -1
 * when name is not a push subscriber here (m is the caller's still).
 */
int	deliver_source_msg(const char *name, const struct source *src,
	    struct store_msg *m, int exhausted);
/*
 * Replay id's source of push subscriber name left this instance: its
 * deliveries waiting at a gate go back to JetStream (those under way
 * finish).
 */
void	deliver_source_left(const char *name, const char *id);
/*
 * Replay src of push subscriber name joined its group here, on consumer
 * c: of an ordered subscriber, its events wait until what an old holder
 * had out of the replay is back in hand (takeover.h).
 */
void	deliver_source_joined(const char *name, const struct source *src,
	    struct store_consumer *c);
/*
 * Each subscriber's "delivery failed" lines are rate limited (log.h's
 * log_limit); at least once a second this says how many were left out.
 */
void	deliver_log_flush(void);
/* Deliveries under way (with those waiting at a gate). */
int	deliver_in_flight(void);
/*
 * Shutdown: take no new messages (leave the delivery groups, so JetStream
 * does not hand back what this instance gives back).
 */
void	deliver_stop(void);
/* Shutdown: give every delivery under way back to JetStream at once. */
void	deliver_give_back_all(void);
/* Free everything (after the loop). */
void	deliver_free(void);

/*
 * holder.h's callback: this instance began (held 1) or stopped holding
 * ordered push subscriber name (deliver-order.c).
 */
void	deliver_held(const char *name, int held);

#endif
