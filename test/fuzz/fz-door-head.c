/*
 * fz-door-head: fuzz target for what the front door reads before evhttp
 * sees a request (src/relay/door-head.c): a whole head, its framing
 * headers and Authorization, and a chunk-size line.  The parser reads
 * exactly len bytes of a buffer with no NUL after it, as the door hands it
 * a piece of its connection buffer.  libFuzzer entry point; replay.c runs
 * it over test/fuzz/corpus/door-head in make check.
 *
 * Input: the first byte picks what to feed (even: a head, odd: a chunk-size
 * line), the rest is the data.
 *
 * A head the door lets through must be one libevent 2.1 takes too: its
 * request target is given to libevent's own URI parser (for CONNECT, its
 * authority parser through "//" + target), which must not refuse it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "../../src/relay/door-head.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort when libevent refuses the target of a head the door passed. */
static void
target_as_libevent(const struct door_head *h, const char *end)
{
	const char		*sp = memchr(h->path, ' ', (size_t)(end -
				    h->path));
	struct evhttp_uri	*u;
	char			*t;
	size_t			 n;
	int			 connect = strcmp(h->method, "CONNECT") == 0;

	if (sp == NULL)
		abort();
	n = (size_t)(sp - h->path);
	if ((t = malloc(n + 3)) == NULL)
		return;
	memcpy(t, "//", connect ? 2 : 0);
	memcpy(t + (connect ? 2 : 0), h->path, n);
	t[n + (connect ? 2 : 0)] = '\0';
	if ((u = evhttp_uri_parse_with_flags(t, EVHTTP_URI_NONCONFORMANT)) ==
	    NULL)
		abort();
	evhttp_uri_free(u);
	free(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct door_head	 h;
	char			*copy;
	int			 st;

	if (size < 1)
		return 0;
	/* An exact copy: ASan sees any read past its end. */
	if ((copy = malloc(size - 1 > 0 ? size - 1 : 1)) == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] % 2 == 0) {
		memset(&h, 0, sizeof(h));
		st = door_head_parse(copy, size - 1, &h);
		if (st == 0 && (h.path == NULL || h.path < copy ||
		    h.path + h.pathlen > copy + size - 1))
			abort();
		if (st == 0 && h.auth != NULL && (h.auth < copy ||
		    h.auth + h.authlen > copy + size - 1))
			abort();
		if (st != 0 && st != 400 && st != 417 && st != 431 &&
		    st != 501)
			abort();
		if (st == 0)
			target_as_libevent(&h, copy + size - 1);
		if (st != 0 && h.code == NULL)
			abort();
	} else
		(void)door_chunk_size(copy, size - 1);
	free(copy);
	return 0;
}
