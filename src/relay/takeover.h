/*
 * takeover.h: a new holder's wait for what the old one had out (SPEC 18),
 * for an ordered push subscriber (deliver-order.c) and an ordered inbox
 * (inbox-order.c).  Loop thread only.
 *
 * When an instance becomes an ordered subscriber's holder, the old
 * holder's events come back from JetStream only after their ack wait, in
 * no promised order: one of them handed on before an earlier event of its
 * key came back would break the order.  So the new holder holds every key
 * until what JetStream has out for the consumer, its num_ack_pending, is
 * all in its hand.  It asks every TAKEOVER_ASK_MS, counting what it holds
 * before it asks: what JetStream counts then includes all of that, less
 * what was answered (acknowledged, given back) since, so the two agree
 * only when nothing else is out.  A redelivery of an event already in
 * hand takes its place there (the owner sees to that), so each event
 * counts once.  The wait is bounded (two ack waits and 10 s: what is out
 * comes back after one); past it the holder starts anyway and says so.
 */
#ifndef TAKEOVER_H
#define TAKEOVER_H

#include <stdint.h>

#include <event2/event_struct.h>

struct event_base;
struct store_consumer;
struct store_pending_job;

#define TAKEOVER_ASK_MS		250

struct takeover {
	/* What the owner has in hand of the consumer's own events. */
	uint64_t		(*in_hand)(void *arg);
	/* The wait is over: every key may go on. */
	void			(*done)(void *arg);
	void			*arg;
	char			*name;		/* the subscriber's, for logs */
	struct store_consumer	*c;
	int			 on;
	long long		 since;		/* now_ms() */
	long long		 max_ms;
	struct event		 ev;		/* asks again */
	struct store_pending_job *job;		/* the question under way */
	uint64_t		 hand;		/* in hand when it was asked */
	uint64_t		 answered;	/* own events answered */
	uint64_t		 job_answered;	/* ... when it was asked */
};

void	takeover_init(struct takeover *t, struct event_base *base,
	    uint64_t (*in_hand)(void *), void (*done)(void *), void *arg);
/*
 * Begin the wait for c (name: the subscriber's, copied): done is
 * called, once, from the loop when it is over, unless stopped first.
 * ack_wait_s: the consumer's ack wait, which bounds the wait.
 */
void	takeover_start(struct takeover *t, const char *name,
	    struct store_consumer *c, int ack_wait_s);
/* No longer waiting (let go, removed, stopping); done is not called. */
void	takeover_stop(struct takeover *t);
/* 1 while waiting. */
int	takeover_on(const struct takeover *t);
/* One of the consumer's own events in hand was answered to JetStream. */
void	takeover_answered(struct takeover *t);

#endif
