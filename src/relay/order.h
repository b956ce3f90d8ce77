/*
 * order.h: key order for an ordered subscriber (SPEC 18).  Loop thread
 * only; no I/O, no timers: it decides, deliver.c acts.
 *
 * An event of an ordered subscriber holds its ordering key from the
 * moment it passes here until it is finished (acknowledged, or dropped
 * and recorded, or let go), across all its attempts: the next event of
 * the key waits until then, and events of other keys go on.  What waits
 * behind a key is kept in WORK's order (the stream sequence), whatever
 * order it arrived in, so that the redeliveries a new holder receives
 * after a crash (JetStream hands them over in no promised order) are put
 * back in order while held (order_hold).
 */
#ifndef ORDER_H
#define ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

struct order;
struct order_key;

/* An event's place in its key; deliver.c embeds one in each delivery. */
struct order_item {
	struct order_key	*k;		/* NULL: not in the order */
	uint64_t		 seq;		/* its stream sequence */
	int			 passed;	/* holds its key */
	TAILQ_ENTRY(order_item)	 entry;		/* behind its key */
};

/*
 * An event's ordering key: the id of the source it came from (NULL: the
 * subscriber's own consumer), a NUL, then 'k' and its partitionkey (pk,
 * as stored: ingest keeps one spelling of each) or, without one, 's' and
 * its subject; so a replay's keys are its own, and a partitionkey never
 * shares a key with a subject.  In buf when it fits (*heap 0), else
 * allocated (*heap 1: the caller frees it); its length in *len.
 */
#define ORDER_KEY_STACK	1024
char		*order_key(const char *source, const char *pk,
		    const char *subject, char buf[ORDER_KEY_STACK], size_t *len,
		    int *heap);

/* A subscriber's keys: none yet, nothing held. */
struct order	*order_new(void);
/* Free o; every item must be done. */
void		 order_free(struct order *o);

/*
 * it arrives with key (len bytes) at stream sequence seq: 1 when it
 * passes (it holds its key now), 0 when it waits behind an earlier event
 * of its key or a hold.
 */
int		 order_admit(struct order *o, struct order_item *it,
		    const char *key, size_t len, uint64_t seq);
/*
 * it, already past (sent before the subscriber was ordered), holds its
 * key from now on: the order starts behind what is under way.
 */
void		 order_adopt(struct order *o, struct order_item *it,
		    const char *key, size_t len, uint64_t seq);
/*
 * it is finished, or let go: out of its key.  Returns the event of its
 * key that passes now (it holds the key; the caller sends it), or NULL.
 */
struct order_item *order_done(struct order *o, struct order_item *it);
/*
 * Hold every key (on), so that nothing passes; or stop holding: each
 * key's first waiting event that can pass now goes to pass, which must
 * not call back in here (it queues the event to be sent from the loop).
 */
void		 order_hold(struct order *o, int on,
		    void (*pass)(struct order_item *it, void *arg), void *arg);
/* Keys with an event held or waiting; events waiting behind them. */
size_t		 order_keys(const struct order *o);
size_t		 order_waiting(const struct order *o);

#endif
