/*
 * store-leftover.h: the consumers a subscriber left in JetStream
 * (store-leftover.c).  A subscriber removed from the configuration keeps
 * its consumer relay-<name> on WORK, by design (another instance, or its
 * return under the name, goes on from its position); the operations API
 * lists those that no subscriber of this instance owns and deletes one
 * on an operator's word.  Called on the loop thread only; the JetStream
 * calls are jobs on the worker thread (store-admin.c), since they wait
 * for JetStream's answer.
 */
#ifndef STORE_LEFTOVER_H
#define STORE_LEFTOVER_H

#include <stdint.h>

/* Consumers listed at most (each one's info is a request on the worker). */
#define STORE_LEFTOVER_MAX	1000

struct store_leftover {
	char		*name;		/* relay-<subscriber> */
	const char	*subscriber;	/* within name */
	int		 push;		/* 0: a pull consumer (an inbox's) */
	char		*filter;
	uint64_t	 pending;	/* JetStream's num_pending */
	uint64_t	 in_flight;	/* num_ack_pending */
	int64_t		 created_ns;	/* Unix ns */
	int64_t		 last_ns;	/* last delivery, Unix ns; 0: never */
};

enum store_leftover_result {
	STORE_LEFTOVER_OK,		/* listed, or deleted */
	STORE_LEFTOVER_NONE,		/* no consumer of that name on WORK */
	STORE_LEFTOVER_FAILED		/* JetStream did not answer */
};

/*
 * The answer: the result; a list's consumers (owned by the store, valid
 * during the call) and more, 1 when there were more than
 * STORE_LEFTOVER_MAX of them.
 */
typedef void (*store_leftover_cb)(void *arg, enum store_leftover_result r,
		    const struct store_leftover *c, int n, int more);

/* Who owns a consumer of WORK, by its name, as this instance sees it. */
enum store_leftover_owner {
	STORE_OWNER_NONE,	/* relay-<name> of no subscriber here */
	STORE_OWNER_SUBSCRIBER,	/* relay-<name> of a subscriber here */
	STORE_OWNER_REPLAY,	/* replay-<id>: a replay's (store-replay.h) */
	STORE_OWNER_OTHER	/* no name the relay gives */
};
/*
 * Who owns consumer, given this instance's subscribers (n names); *tail
 * is then the subscriber's name or the replay's id within consumer.
 */
enum store_leftover_owner store_leftover_owner(const char *consumer,
		    const char *const *subscribers, int n, const char **tail);

struct store_leftover_job;
/*
 * List WORK's consumers whose owner is STORE_OWNER_NONE (subscribers: this
 * instance's, n names), with each one's figures.  NULL when JetStream
 * cannot be asked now.
 */
struct store_leftover_job *store_leftover_list(
		    const char *const *subscribers, int n,
		    store_leftover_cb cb, void *arg);
/*
 * Delete WORK's consumer name (the caller has made sure that its owner is
 * STORE_OWNER_NONE).  NULL when JetStream cannot be asked now.
 */
struct store_leftover_job *store_leftover_delete(const char *name,
		    store_leftover_cb cb, void *arg);
/* Forget a job: its callback does not run. */
void		 store_leftover_close(struct store_leftover_job *j);

#endif
