/*
 * door-linger.h: what a closed front-door connection (door.c) leaves
 * behind: a refused one's descriptor, read and dropped for a while so the
 * answer is not lost to a reset, and the memory a burst of connections
 * held, given back to the system.  Loop thread only.
 */
#ifndef DOOR_LINGER_H
#define DOOR_LINGER_H

struct bufferevent;
struct event_base;

/* The trim timer.  Once, before any connection. */
void	door_linger_init(struct event_base *base);
/*
 * A refused connection is being freed: take its descriptor from bev (which
 * then closes nothing) and linger on it, when fewer than LINGER_MAX do;
 * else it closes with bev.
 */
void	door_linger(struct event_base *base, struct bufferevent *bev);
/*
 * Lingering descriptors are outside the connection cap: at most 1,024, and
 * at most a sixteenth of the descriptor limit nofile (door_fit).
 */
void	door_linger_fit(long long nofile);
int	door_linger_max(void);
/* A connection was freed: after TRIM_AFTER, trim a second later. */
void	door_trim_later(void);

#endif
