/*
 * store-sub.h: the subscribers' consumers in JetStream (store-sub.c):
 * registering them, what a reload changes, leaving at shutdown, and
 * their figures for the operations API.  Loop thread only.
 *
 * Each subscriber has a durable consumer relay-<name> on WORK, shared by
 * every relay instance: a push consumer delivering to a queue group (one
 * instance gets each message), or a pull consumer whose ack wait is the
 * inbox's lease.  It is created or updated with the streams, and checked
 * again with them.  A pull consumer's pulls and leases are requests
 * (store-req.h).
 */
#ifndef STORE_SUB_H
#define STORE_SUB_H

#include <stdint.h>

#include "config.h"
#include "store-msg.h"

enum store_consumer_kind {
	STORE_PUSH,
	STORE_PULL
};
struct store_consumer_spec {
	const char		*name;		/* the subscriber's */
	enum store_consumer_kind kind;
	const char		*filter;
	int			 max_deliver;
	int			 max_ack_pending;
	int			 ack_wait_s;
	/*
	 * A replay's id, or NULL: its consumer replay-<id> was made by
	 * store_replay_start, and the stream check leaves it alone.
	 */
	const char		*replay;
	/*
	 * Where it starts when this relay makes it (deliverFrom); not read
	 * for a replay's.  JetStream cannot move a consumer it has.
	 */
	enum sub_from		 from;
	int64_t			 from_ns;
	/*
	 * A push consumer this instance joins only when told
	 * (store_consumer_join): an ordered subscriber's, whose group one
	 * instance at a time is in (holder.h).
	 */
	int			 hold_back;
};
struct store_consumer;
/*
 * Register a consumer (at start-up, or when a reload adds a subscriber:
 * it is subscribed at once and made in JetStream by a stream check).  A push
 * consumer's messages go to cb on the loop thread; a pull consumer (cb
 * NULL) hands out messages only through store_pull.  exhausted_cb gets
 * each message JetStream stopped handing out on its own after
 * max_deliver deliveries (the last one was given back, or lost with a
 * relay, so no relay terminated it): a copy whose ack, nak and term do
 * nothing, with store_msg_delivered() the number of deliveries.
 */
struct store_consumer *store_consumer_add(
		    const struct store_consumer_spec *spec, store_msg_cb cb,
		    store_msg_cb exhausted_cb, void *arg);
/*
 * A reload changed the subscriber: c's JetStream consumer is updated by a
 * stream check (nothing happens when nothing differs; name and kind are
 * fixed, and so is where it started: a changed deliverFrom is logged and
 * applies only if the consumer has to be made again).
 */
void		 store_consumer_update(struct store_consumer *c,
		    const struct store_consumer_spec *spec);
/* c's name in JetStream (relay-<subscriber>), for log lines. */
const char	*store_consumer_name(const struct store_consumer *c);
/*
 * A reload removed the subscriber: this instance takes no more of c's
 * messages (a push consumer's queued ones go to cb first, as in
 * store_consumer_stop) and c is freed.  Its JetStream consumer stays, for
 * the other instances and for a later return.  The caller has closed its
 * pulls, peeks and lease answers.
 */
void		 store_consumer_remove(struct store_consumer *c);
/*
 * Shutdown: a push consumer takes no more messages here.  What nats.c
 * has queued goes to cb now, then this instance leaves the delivery
 * group, so JetStream hands the rest to the other instances (or keeps it)
 * instead of back to this one.
 */
void		 store_consumer_stop(struct store_consumer *c);
/*
 * 1 when JetStream's consumer of c's name is of the other kind (push for a
 * pull subscriber, or the reverse): it cannot serve c, and the consumer
 * check says so in the log until it is deleted or the subscriber renamed.
 */
int		 store_consumer_wrong_kind(const struct store_consumer *c);

/*
 * A consumer's figures from JetStream's consumer info (SPEC 15), across
 * every instance: stored and not yet handed out, handed out and not
 * acknowledged, handed out more than once; and when the oldest of the
 * events not yet acknowledged (handed out or not) was stored.
 */
struct store_figures {
	char		*subscriber;	/* the subscriber's name */
	int		 ok;		/* 0: JetStream did not answer */
	uint64_t	 pending, in_flight, redelivered;
	int64_t		 oldest_ns;	/* Unix ns; 0: none pending */
};
typedef void (*store_figures_cb)(const struct store_figures *f, int n);
/*
 * Ask JetStream for every consumer's figures, on the worker thread: cb
 * gets them on the loop thread (not when the store is closing by then).
 * -1 when it cannot ask now (not connected).
 */
int		 store_figures(store_figures_cb cb);

/*
 * Join (1) or leave (0) the delivery group of c, a hold_back push
 * consumer.  Leaving hands what nats.c has queued to cb first, as
 * store_consumer_stop does.
 */
void		 store_consumer_join(struct store_consumer *c, int join);
/*
 * JetStream's num_ack_pending for c, asked on the worker: cb gets it on
 * the loop thread (ok 0: no answer), unless closed first.  NULL when it
 * cannot ask now.
 */
typedef void (*store_pending_cb)(void *arg, int ok, uint64_t n);
struct store_pending_job;
struct store_pending_job *store_consumer_pending(struct store_consumer *c,
		    store_pending_cb cb, void *arg);
void		 store_consumer_pending_close(struct store_pending_job *j);

#endif
