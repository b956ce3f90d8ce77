/*
 * door.h: the front door (SPEC 13).  Every connection of both listeners
 * passes through it: the connection cap, the request deadline from the
 * first byte, the bound on an unfinished head, the framing rules against
 * request smuggling, and SPEC 2's answer for a body announced over 1 MiB,
 * all before evhttp sees the request.  Loop thread only.
 */
#ifndef DOOR_H
#define DOOR_H

struct event_base;
struct evhttp;
struct config;
struct route_def;

#define DOOR_CONTROL_MAX	64	/* the control listener's connections */

/* Once, at start, before door_attach (http_init). */
void	door_init(struct event_base *base);
/*
 * Put the door on an evhttp server: the main listener (control 0) with
 * TREATY_RELAY_MAX_CONNECTIONS, or the control listener with its own
 * small reserve.  cfg stays in place (a reload refills it); routes is
 * the server's route table (route.h), for each route's label in /metrics
 * and the checks the door makes from a head.  A request the door
 * refuses is answered by the door itself; evhttp never sees it.
 */
void	door_attach(struct evhttp *http, struct event_base *base,
	    const struct config *cfg, int control,
	    const struct route_def *routes);
/* Connections open on the main listener. */
int	door_connections(void);
/*
 * Fit the main listener's cap to the descriptor limit: when the limit
 * does not hold TREATY_RELAY_MAX_CONNECTIONS and what the relay needs
 * besides (the control listener's reserve, lingering refusals, NATS,
 * push deliveries), the cap is lowered to what it does hold, with a
 * warning naming both numbers.  After door_attach, after a reload, and
 * when the subscribers bucket changed the subscribers.
 */
void	door_fit(void);
/* The main listener's cap as it applies (lowered by door_fit or not). */
int	door_max_connections(void);

#endif
