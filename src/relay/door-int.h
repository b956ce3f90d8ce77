/*
 * door-int.h: the front door's private header, shared by door*.c alone:
 * a listener's door and a connection through it.  Loop thread only, all
 * of them.
 *
 *   door.c         accepting (the cap's check), taking evhttp's callbacks
 *                  over, the request deadline, the one close; door.h
 *   door-scan.c    what goes through to evhttp: a head held until whole
 *                  and read, a body followed to its end, a refusal written
 *   door-idle.c    the idle list, and the connection idle longest closed
 *                  for a new one at the cap
 *   door-head.c    a head's reading and its framing rules (pure)
 *   door-linger.c  what a closed connection leaves behind
 */
#ifndef DOOR_INT_H
#define DOOR_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/bufferevent.h>
#include <event2/event_struct.h>
#include <event2/util.h>

struct config;
struct evbuffer;
struct evbuffer_cb_entry;
struct route_def;

/* Where the door is in a connection's request. */
enum dstate {
	D_HEAD,
	D_BODY,			/* left: Content-Length bytes */
	D_CHUNK_SIZE,
	D_CHUNK_DATA,		/* left: chunk bytes */
	D_CHUNK_END,		/* the line end after a chunk */
	D_TRAILER,
	D_REFUSED		/* everything after is discarded */
};

struct dconn;
TAILQ_HEAD(dconn_list, dconn);

/* One listener's door: the main one (doors[0]) or the control one. */
struct door {
	struct event_base	*base;
	const struct config	*cfg;
	const struct route_def	*routes;	/* http.c's table */
	int			 control;
	int			 nconns;
	int			 max;		/* the effective cap */
	int			 push_warned;	/* door_fit's warning said */
	struct dconn_list	 idle;		/* longest idle first */
};

/* One connection through a door, from its accept to door_closed_cb. */
struct dconn {
	struct door		*d;
	struct bufferevent	*bev;		/* evhttp's, on the socket */
	struct evbuffer		*raw;		/* read, not yet let through */
	struct evbuffer		*tmp;
	struct evbuffer_cb_entry *incb;		/* takes the socket's bytes */
	struct evbuffer_cb_entry *outcb;	/* an answer begun: hook */
	int			 adding;	/* the door adds: not fresh */
	bufferevent_data_cb	 h_read, h_write;
	bufferevent_event_cb	 h_event;
	void			*h_arg;		/* the evhttp_connection */
	struct event		 hook;		/* takes the callbacks over */
	struct event		 deadline;	/* armed: at or before due */
	long long		 due;		/* ns, monotonic; the deadline */
	enum dstate		 st;
	uint64_t		 left;
	size_t			 off;		/* raw's first bytes, to let through */
	size_t			 scanned;	/* head bytes searched so far */
	int			 busy;		/* a request has begun */
	int			 handed;	/* evhttp holds a whole request */
	int			 refused;	/* over the cap */
	int			 hooked;
	int			 tls;		/* the handshake is the first bytes */
	int			 idle;		/* on d->idle */
	TAILQ_ENTRY(dconn)	 idle_entry;
	const char		*why;		/* the door closed it: why */
	int			*gone;		/* set when freed: door_read_cb */
	uint16_t		 peer_port;	/* the client's, for debug lines */
};

/* A request's first byte came: it is in progress, under its deadline. */
void	door_begin(struct dconn *c);
/* The request's last byte went through: evhttp holds it. */
void	door_end(struct dconn *c);
/*
 * The door ends the connection with what (BEV_EVENT_*), logging why once
 * (door_closed_cb); c is gone when this returns.
 */
void	door_close(struct dconn *c, short what, const char *why);
/*
 * Take evhttp's callbacks over and go on with what waits (event_assign's
 * callback; door_evict calls it for a connection not yet taken over).
 */
void	door_hook_cb(evutil_socket_t fd, short ev, void *arg);

#endif
