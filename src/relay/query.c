/*
 * query.c: a request's query parameters and headers (query.h).  Pure:
 * any thread.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "query.h"

/* An integer query parameter in [lo, hi]; -1 when absent, -2 when bad. */
long long
query_int(const struct evkeyvalq *q, const char *key, long long lo,
    long long hi)
{
	const char	*v = evhttp_find_header(q, key);
	char		*end;
	long long	 n;

	if (v == NULL)
		return -1;
	if (*v < '0' || *v > '9')
		return -2;
	n = strtoll(v, &end, 10);
	return *end != '\0' || n < lo || n > hi ? -2 : n;
}

/* A boolean query parameter: 1, 0 (absent or false), -2 when bad. */
int
query_bool(const struct evkeyvalq *q, const char *key)
{
	const char	*v = evhttp_find_header(q, key);

	if (v == NULL || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || *v == '\0')
		return 1;
	return -2;
}

/*
 * A header by name; see query.h.  evhttp_find_header runs its strcasecmp
 * on every header before the one asked for (about 70 instructions each,
 * for every request).  Names here differ in their first two bytes far
 * more often than not, so those come first: equal without case is equal
 * with bit 0x20 set, and a key whose first byte passes is a letter, so it
 * has a second byte (maybe its NUL).  glibc's strcasecmp is ASCII's in
 * the C locale, the only one the relay runs in, and several times
 * faster than libevent's byte-by-byte evutil_ascii_strcasecmp.
 */
const char *
query_header(const struct evkeyvalq *h, const char *name)
{
	const struct evkeyval	*kv;
	unsigned char		 c0 = (unsigned char)name[0] | 0x20;
	unsigned char		 c1 = (unsigned char)name[1] | 0x20;

	TAILQ_FOREACH(kv, h, next)
		if (((unsigned char)kv->key[0] | 0x20) == c0 &&
		    ((unsigned char)kv->key[1] | 0x20) == c1 &&
		    strcasecmp(kv->key, name) == 0)
			return kv->value;
	return NULL;
}
