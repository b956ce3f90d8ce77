/*
 * door-idle.c: the front door's idle lists and eviction at the cap
 * (door-idle.h).  Loop thread only.
 *
 * A connection with no request (none begun, none held by evhttp) is idle:
 * a keep-alive connection between requests, a new one before its first
 * byte, a TLS one before its client's hello.  Each listener keeps its
 * idle connections in the order they became idle, and when a new
 * connection finds the listener at its cap (door.c's door_bevcb), the
 * first, idle longest, is closed to admit it (nginx's reusable
 * connections): idle keep-alive connections never keep a working client
 * out, and a connection with a request in progress is never closed for
 * this.  With none idle the new connection is closed at once.
 */
#include <sys/queue.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>

#include "door-idle.h"
#include "door-int.h"
#include "metrics.h"

/*
 * The connection has no request: none begun, none held by evhttp.  It
 * goes to the end of its listener's idle list, whose first is closed
 * first when a new connection finds the listener full.
 */
void
door_idle_enter(struct dconn *c)
{
	if (c->idle || c->busy || c->handed || c->st == D_REFUSED)
		return;
	TAILQ_INSERT_TAIL(&c->d->idle, c, idle_entry);
	c->idle = 1;
}

/* A request begins (or the connection ends): not idle any more. */
void
door_idle_leave(struct dconn *c)
{
	if (!c->idle)
		return;
	TAILQ_REMOVE(&c->d->idle, c, idle_entry);
	c->idle = 0;
}

/*
 * A TLS connection whose client has not sent its hello yet: as idle as a
 * plain one that has sent nothing.
 */
static int
door_tls_unstarted(const struct dconn *c)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(c->bev);

	return ssl != NULL && SSL_get_state(ssl) == TLS_ST_BEFORE;
}

/*
 * The listener is full: close the connection idle longest to admit a new
 * one (nginx's reusable connections), so that idle keep-alive connections
 * never keep a working client out.  A connection with a request begun or
 * held by evhttp is never closed for this.  0 when none is idle.
 */
int
door_evict(struct door *d)
{
	struct dconn	*c;

	while ((c = TAILQ_FIRST(&d->idle)) != NULL) {
		/*
		 * Accepted earlier in this turn's burst (evhttp has set it
		 * up whole): the hook takes it over now, so it ends as any
		 * other connection does.
		 */
		if (!c->hooked) {
			door_hook_cb(-1, 0, c);
			if (!c->hooked)
				return 0;
			continue;
		}
		/* A handshake under way is a request begun. */
		if (c->tls && c->busy && !door_tls_unstarted(c)) {
			door_idle_leave(c);
			continue;
		}
		metrics_door(DOOR_EVICTED);
		door_close(c, BEV_EVENT_READING | BEV_EVENT_EOF,
		    "idle longest, closed for a new connection");
		return 1;
	}
	return 0;
}
