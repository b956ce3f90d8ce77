/*
 * route.h: a route of the relay's listeners, as http.c's table declares
 * it: the path it serves, its handler, its label in /metrics, and the
 * checks the front door (door.c) makes for it from a request's head
 * alone.  The door gets the table from http.c, so it calls up into no
 * handler it knows by name.  Loop thread only.
 */
#ifndef ROUTE_H
#define ROUTE_H

#include <stddef.h>

#include "metrics.h"
#include "reply.h"

struct evhttp_request;

#define ROUTE_ON_MAIN		0x1	/* served on the main listener */
#define ROUTE_ON_CONTROL	0x2	/* ... and on the control one */

struct route_def {
	const char	*path;		/* the path, or its prefix */
	int		 prefix;	/* path is a prefix (the rest: an arg) */
	enum route	 metric;	/* its label in /metrics */
	int		 on;		/* ROUTE_ON_* */
	/* Answer the request; rest: the path after a prefix. */
	void		(*handle)(struct evhttp_request *req, const char *rest);
	/*
	 * The checks that come before 413 on this route, made by the door
	 * from the head alone before a body over 64 KiB (or a chunked one)
	 * is read: method, the rest of the path (restlen bytes, not
	 * NUL-terminated), the Authorization value (NULL: none).
	 * REFUSAL_NONE lets the body be read.  With retry_after (a body
	 * refused unread anyway) the producer's rate is checked too, and
	 * *retry_after set for REFUSAL_RATE_LIMITED; without, the handler
	 * takes the request's token when it reads it.  NULL: no body over
	 * 64 KiB on this route (413 at once).
	 */
	enum refusal	(*precheck)(const char *method, const char *rest,
			    size_t restlen, const char *auth,
			    long long *retry_after);
	/* A method the door does not know: 405 on this route, not 501. */
	int		 known_methods_only;
	/* Only GET and HEAD: any other method is 405 before the handler. */
	int		 get_only;
};

/*
 * The route of path in table (ended by a NULL path) served on listener
 * (ROUTE_ON_*), and the rest of the path after its prefix; NULL when none.
 */
const struct route_def	*route_find(const struct route_def *table,
			    int listener, const char *path, size_t len,
			    const char **rest);

#endif
