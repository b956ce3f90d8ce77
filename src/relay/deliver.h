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
struct store_msg;
/*
 * A message of replay (its id) for push subscriber name: delivered like
 * one of the subscriber's own (signed, retried, drop records, metrics),
 * with the replay's max_deliver (its consumer's, from its start), its
 * outcome counted with replay_counted.  exhausted: JetStream gave up on
 * it (as the subscriber's consumer's exhausted callback).  -1 when name
 * is not a push subscriber here (m is the caller's still).
 */
int	deliver_replay_msg(const char *name, const char *replay,
	    int max_deliver, struct store_msg *m, int exhausted);
/*
 * Replay (its id) of push subscriber name left this instance: its
 * deliveries waiting for the subscriber's window go back to JetStream
 * (those under way finish).
 */
void	deliver_replay_left(const char *name, const char *replay);
/* Deliveries under way (with those waiting for their window). */
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

#endif
