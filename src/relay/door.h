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
struct evhttp_request;
struct config;

#define DOOR_CONTROL_MAX	64	/* the control listener's connections */

/* Once, at start, before door_attach (http_init). */
void	door_init(struct event_base *base);
/*
 * Put the door on an evhttp server: the main listener (control 0) with
 * TREATY_RELAY_MAX_CONNECTIONS, or the control listener with its own
 * small reserve.  cfg stays in place (a reload refills it).
 */
void	door_attach(struct evhttp *http, struct event_base *base,
	    const struct config *cfg, int control);
/*
 * A request the door refused reaches evhttp as a stand-in whose path
 * starts with the door's secret prefix: door_answer sends its JSON error
 * and returns 1; any other request, 0.
 */
int	door_answer(struct evhttp_request *req, const char *path);
/* Connections open on the main listener. */
int	door_connections(void);
/*
 * Fit the main listener's cap to the descriptor limit: when the limit
 * does not hold TREATY_RELAY_MAX_CONNECTIONS and what the relay needs
 * besides (the control listener's reserve, lingering refusals, NATS,
 * push deliveries), the cap is lowered to what it does hold, with a
 * warning naming both numbers.  After door_attach, and after a reload.
 */
void	door_fit(void);
/* The main listener's cap as it applies (lowered by door_fit or not). */
int	door_max_connections(void);

#endif
