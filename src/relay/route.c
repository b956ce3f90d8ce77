/*
 * route.c: finding a request's route in a table (route.h).  Pure: any
 * thread.
 */
#include <string.h>

#include "route.h"

/* The route of a path; see route.h. */
const struct route_def *
route_find(const struct route_def *table, int listener, const char *path,
    size_t len, const char **rest)
{
	const struct route_def	*r;
	size_t			 n;

	for (r = table; r->path != NULL; r++) {
		if (!(r->on & listener))
			continue;
		n = strlen(r->path);
		if (r->prefix ? len >= n && memcmp(path, r->path, n) == 0 :
		    len == n && memcmp(path, r->path, n) == 0) {
			*rest = path + n;
			return r;
		}
	}
	*rest = path;
	return NULL;
}
