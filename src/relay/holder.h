/*
 * holder.h: which instance delivers an ordered push subscriber (SPEC 18),
 * a lease in the TREATY_ORDER_HOLDERS bucket (holder.c).  Loop thread
 * only.
 *
 * nats-server 2.9 has no pinned consumer: every instance in a delivery
 * group gets some of the messages, and two instances would send two
 * events of one key at once.  So one instance at a time joins an ordered
 * subscriber's group, the one whose name its key in the bucket holds;
 * the others stay out and take over when it stops or dies.
 */
#ifndef HOLDER_H
#define HOLDER_H

struct config;
struct event_base;

/*
 * This instance began (held 1) or stopped (held 0) holding name: join
 * its group, or leave it and let go of what it had in hand.
 */
typedef void (*holder_cb)(const char *name, int held);

void	holder_init(struct event_base *base, const struct config *cfg,
	    const char *instance, holder_cb cb);
/*
 * name is an ordered subscriber here (want 1), or no longer (want 0):
 * counted, each 1 matched by a 0 later.  A want of a key held already
 * calls the callback (held 1) at once.
 */
void	holder_want(const char *name, int want);
/*
 * 1 when another instance holds name, as far as this one can tell: the
 * bucket names it, written less than a lease ago (by this one's clock).
 */
int	holder_other(const char *name);
/* 1 while this instance holds name. */
int	holder_held(const char *name);
/*
 * The relay begins to stop: take nothing more (what is held is renewed
 * until holder_stop).
 */
void	holder_stop_taking(void);
/*
 * The relay stops, its deliveries given back: release every lease held
 * (a write nobody waits for), so the next holder need not wait it out.
 */
void	holder_stop(void);
void	holder_free(void);

#endif
