/*
 * query.h: reading a request: its query parameters and its headers, for
 * the handlers.  Pure over evhttp's header lists: any thread, unit-tested
 * (test/unit/t-http.c).
 */
#ifndef QUERY_H
#define QUERY_H

struct evkeyvalq;

/*
 * An integer query parameter: key's value in [lo, hi], -1 when absent, -2
 * when not a number in range.
 */
long long	query_int(const struct evkeyvalq *q, const char *key,
		    long long lo, long long hi);
/* A boolean one: 1 (true, 1, or the key alone), 0 (absent, false, 0), -2. */
int		query_bool(const struct evkeyvalq *q, const char *key);
/*
 * A header's value, its name compared without case, or NULL: the answer
 * of evhttp_find_header.  name starts with a letter and has two bytes at
 * least.
 */
const char	*query_header(const struct evkeyvalq *h, const char *name);

#endif
