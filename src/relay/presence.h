/*
 * presence.h: which instances are running, and which of their push
 * subscribers have a rateLimit, so that the instances sharing one divide
 * its rate (SPEC 17's pace).  Loop thread only.
 *
 * Each instance writes its key in the TREATY_INSTANCES bucket (its name,
 * the subscribers it paces) every PRESENCE_EVERY_MS and when the list
 * changes, and deletes it at a clean stop; the bucket's max age removes
 * the key of one that died.  An instance is counted while its key
 * changed within PRESENCE_LIVE_MS, by this instance's own clock: no two
 * hosts' clocks are compared.  A crashed instance is counted until then,
 * so the others send less, never more.
 */
#ifndef PRESENCE_H
#define PRESENCE_H

struct config;
struct event_base;

#define PRESENCE_EVERY_MS	5000
#define PRESENCE_LIVE_MS	15000

/* Start (before store_init); cfg is the running configuration. */
void	presence_init(struct event_base *base, const struct config *cfg,
	    const char *instance);
/* The running subscribers changed (a reload, the bucket): say so now. */
void	presence_changed(void);
/* Stopping: take this instance's key away (best effort). */
void	presence_stop(void);
void	presence_free(void);
/*
 * How many instances share subscriber name's rateLimit: this one and
 * every other counted one that paces it (at least 1).
 */
int	presence_share(const char *name);

#endif
