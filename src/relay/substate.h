/*
 * substate.h: every subscriber's state (SPEC 17): active, paused (by an
 * operator, or by its endpoint's 410), tripped (by the breaker), kept in
 * the TREATY_SUBSCRIBER_STATE bucket so that every instance follows it
 * within the watch's round trip and a restart keeps it.  Loop thread
 * only.
 *
 * This is a view of the bucket (store-kv.h's watch) and the one writer
 * of it: every change is a compare-and-set on the revision it was
 * decided from (substate-rule.c's table), so two instances that decide at
 * once cannot both win; the loser decides again from what won.  The
 * instance whose write won logs the change and records it in AUDIT.
 *
 * It sits below the gates, deliver.c and inbox*.c, which read it (a gate
 * keeps a pointer to an entry: entries live until exit) and tell it what
 * they saw (a trip, a 410, a probe's answer); it wakes them through the
 * events they register, never by calling up.  The probe of a tripped
 * subscriber is taken by one instance at a time, through a lease in the
 * state's value; its delays are timed by each instance from when it saw
 * the revision, on its own clock, so that no two hosts' clocks are ever
 * compared.
 */
#ifndef SUBSTATE_H
#define SUBSTATE_H

#include <stdint.h>

struct config;
struct event;
struct event_base;

enum substate {
	SUBSTATE_ACTIVE,
	SUBSTATE_PAUSED,
	SUBSTATE_TRIPPED
};
#define SUBSTATE_N	3

struct substate_entry;

/* "active", "paused", "tripped". */
const char *substate_text(enum substate s);

/*
 * Start: watch the bucket (before store_init).  instance is this
 * instance's name (replay.c's); cfg the running configuration.
 */
void	substate_init(struct event_base *base, const struct config *cfg,
	    const char *instance);
void	substate_free(void);

/*
 * name's entry, made when there is none (it stays until exit): a gate
 * keeps it, so that asking costs no lookup.
 */
struct substate_entry *substate_ref(const char *name);
/* Its state as this instance goes by: its own verdict first, then the bucket's. */
enum substate substate_of(const struct substate_entry *e);
/* The same by name (active when the bucket has nothing). */
enum substate substate_get(const char *name);
/*
 * As stored, for status: the time it came to be (RFC 3339) and why; NULL
 * and NULL when the bucket has no state for it (active since ever).
 */
void	substate_detail(const char *name, const char **since,
	    const char **reason);

/* ev is made active after any state changes here (at most 4). */
void	substate_watch(struct event *ev);
/*
 * 1 once the states' first whole reading is in (and from then on): until
 * it is, a subscriber's state is not known, and nothing is sent to it.
 */
int	substate_read(void);
/* The first reading is in (the watch; a unit test, which has no store). */
void	substate_mark_read(void);

/*
 * What the deliveries saw.  failures failed attempts in a row on this
 * instance: trip (from active only).  A 410 from url: pause.  This
 * instance stops at once; the others when the write reaches them.
 */
int	substate_trip(struct substate_entry *e, int failures);
void	substate_gone(struct substate_entry *e, const char *url);

/*
 * The probe of a tripped subscriber.  can(name): this instance holds a
 * delivery of it to probe with; start(name, n): send probe n now.  Its
 * answer comes back through substate_probe_done: status the HTTP status,
 * 0 for none, -1 when nothing was there to send.
 */
void	substate_prober(int (*can)(const char *name),
	    void (*start)(const char *name, int n));
void	substate_probe_done(const char *name, int status);

/*
 * The operations API: pause (1) or resume (0) name.  cb(arg, 0) once the
 * change is stored and applied here (or nothing had to change),
 * cb(arg, -1) when JetStream could not be asked.  NULL when it cannot
 * start (not connected).
 */
struct substate_req;
typedef void (*substate_cb)(void *arg, int result);
struct substate_req *substate_request(const char *name, int pause,
	    substate_cb cb, void *arg);
/* Forget a request: its callback does not run. */
void	substate_request_close(struct substate_req *r);

#endif
