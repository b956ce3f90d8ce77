/*
 * bridge.h: the only way work crosses from nats.c's threads (and the
 * worker thread) to the loop thread.
 *
 * THE THREADING RULE.  Only the loop thread touches relay state, libevent
 * objects and evhttp requests.  A nats.c callback does one thing: fill an
 * item and bridge_post() it, then return.  The loop drains the whole queue
 * in one grab and runs each item's fn outside the lock.
 *
 * nats.c calls that wait for a reply (stream and consumer management, a
 * message read from a stream, a peek's direct gets) never run on the loop
 * thread: the loop is what reads their reply, so they would block until
 * their timeout.  They run as jobs on the bridge's one worker thread
 * (bridge_run), whose done function runs back on the loop thread.
 *
 * The store is the bridge's only user (store_init starts it, store_free
 * stops it).
 */
#ifndef BRIDGE_H
#define BRIDGE_H

#include <stddef.h>
#include <sys/queue.h>

struct event_base;

struct bridge_item {
	/* Runs on the loop thread; owns (and usually frees) the item. */
	void			(*fn)(struct bridge_item *);
	STAILQ_ENTRY(bridge_item) entry;
};

struct bridge_job {
	/* Runs on the worker thread; may block on nats.c requests. */
	void			(*work)(struct bridge_job *);
	/* Runs on the loop thread after work; owns the job. */
	void			(*done)(struct bridge_job *);
	struct bridge_item	  item;		/* set by bridge_run */
	STAILQ_ENTRY(bridge_job)  jentry;
};

#define BRIDGE_CONTAINER(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Create the wake-up event on base and start the worker thread. */
void	bridge_init(struct event_base *base);
/* Hand item to the loop thread.  Any thread. */
void	bridge_post(struct bridge_item *item);
/* Queue job for the worker thread.  Loop thread. */
void	bridge_run(struct bridge_job *job);
/* Jobs queued or running. Loop thread. */
int	bridge_jobs_pending(void);
/*
 * Stop the worker (after the jobs queued for it) and join it, then run
 * what it posted.  After the loop has stopped and NATS is closed, so no
 * job is left waiting for a reply; before nats.c's library is closed.
 */
void	bridge_stop_worker(void);
/*
 * Run what is still queued for the loop and free the wake-up event.  Only
 * once nothing can post any more (nats.c's threads have ended).
 */
void	bridge_free(void);

#endif
