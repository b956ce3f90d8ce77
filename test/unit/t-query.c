/*
 * t-http.c: query_header (src/relay/query.c), the relay's header look-up,
 * gives evhttp_find_header's answer for every name asked of every list:
 * any case, names sharing their first bytes, prefixes and extensions of
 * a name, one-letter keys, repeated keys (the first wins), an empty list.
 */
#include <stdio.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "../../src/relay/query.h"
#include "harness.h"

static const char *const keys[] = {
	"Host", "Authorization", "ce-specversion", "CE-ID", "ce-source",
	"ce-type", "Content-Type", "content-type", "C", "c", "co", "Co-x",
	"@a", "`a", "Content-Length", "Transfer-Encoding", "X-1",
};

static const char *const names[] = {
	"Host", "host", "HOST", "Authorization", "authorization",
	"Content-Type", "content-type", "CONTENT-TYPE", "Content-Typ",
	"Content-Types", "ce-id", "Ce-Id", "ce-type", "ce-time", "co", "CO",
	"Co-x", "co-X", "Content-Length", "Transfer-Encoding", "Expect",
	"Connection", "X-1", "x-1", "X-2", "Cf",
};

/* Every name against the list of keys[0..n). */
static int
agree(size_t n)
{
	struct evkeyvalq	 h;
	char			 value[16];
	size_t			 i;
	int			 ok = 1;

	TAILQ_INIT(&h);
	for (i = 0; i < n; i++) {
		snprintf(value, sizeof(value), "v%zu", i);
		evhttp_add_header(&h, keys[i], value);
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char	*want = evhttp_find_header(&h, names[i]);
		const char	*got = query_header(&h, names[i]);

		if (want != got) {
			t_fail(__FILE__, __LINE__, "%zu keys, %s: %s, want %s",
			    n, names[i], got ? got : "(none)",
			    want ? want : "(none)");
			ok = 0;
		}
	}
	evhttp_clear_headers(&h);
	return ok;
}

/* Every prefix of the list, so each key is sometimes the last. */
static void
same_answers(void)
{
	size_t	 n;

	for (n = 0; n <= sizeof(keys) / sizeof(keys[0]); n++)
		if (!agree(n))
			return;
}

/* The cases the look-up's first-bytes test must not get wrong. */
static void
cases_that_matter(void)
{
	struct evkeyvalq	 h;

	TAILQ_INIT(&h);
	evhttp_add_header(&h, "ce-type", "a");
	evhttp_add_header(&h, "CONTENT-type", "b");
	evhttp_add_header(&h, "Content-Type", "c");
	evhttp_add_header(&h, "C", "d");
	T_EQ_STR(query_header(&h, "content-type"), "b");
	T_EQ_STR(query_header(&h, "CE-TYPE"), "a");
	T_ASSERT(query_header(&h, "Ce") == NULL);
	T_ASSERT(query_header(&h, "Content-Typ") == NULL);
	T_ASSERT(query_header(&h, "Authorization") == NULL);
	evhttp_clear_headers(&h);
}

static const struct t_case cases[] = {
	{ "the answers of evhttp_find_header", same_answers },
	{ "case, shared first bytes, prefixes", cases_that_matter },
};

int
main(void)
{
	return (t_run("http", cases, T_NCASES(cases)) ? 1 : 0);
}
