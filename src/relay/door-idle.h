/*
 * door-idle.h: each listener's idle list, and the connection idle longest
 * closed to admit a new one when the listener is full (door-idle.c).  Loop
 * thread only.
 */
#ifndef DOOR_IDLE_H
#define DOOR_IDLE_H

struct door;
struct dconn;

/*
 * The connection has no request (none begun, none held by evhttp): to the
 * end of its listener's idle list.  Nothing when it is on it already, or
 * refused.
 */
void	door_idle_enter(struct dconn *c);
/* A request begins (or the connection ends): off the idle list. */
void	door_idle_leave(struct dconn *c);
/*
 * The listener d is full: close its connection idle longest to admit a
 * new one.  1 when one was closed, 0 when none is idle.
 */
int	door_evict(struct door *d);

#endif
