/*
 * t-door-head.c: the front door's reading of a request head
 * (src/relay/door-head.c): method, path, Authorization, framing, and the
 * rules against smuggling (SPEC 13).
 */
#include <stdio.h>
#include <string.h>

#include "../../src/relay/door-head.h"
#include "harness.h"

static int
parse(const char *head, struct door_head *h)
{
	return door_head_parse(head, strlen(head), h);
}

static void
ok_heads(void)
{
	struct door_head h;

	T_EQ_INT(parse("POST /v1/events/evt.a.b.c.d?x=1 HTTP/1.1\r\nHost: x\r\n"
	    "Authorization: Bearer t\r\nContent-Length: 12\r\n\r\n", &h), 0);
	T_EQ_STR(h.method, "POST");
	T_EQ_INT((int)h.pathlen, 22);
	T_ASSERT(strncmp(h.path, "/v1/events/evt.a.b.c.d", 22) == 0);
	T_EQ_INT((int)h.authlen, 8);
	T_EQ_INT(h.framing, DOOR_LENGTH);
	T_EQ_INT((int)h.length, 12);
	T_EQ_INT(parse("GET /healthz HTTP/1.1\n\n", &h), 0);
	T_EQ_INT(h.framing, DOOR_NO_BODY);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n",
	    &h), 0);
	T_EQ_INT(h.framing, DOOR_CHUNKED);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &h), 0);
	T_EQ_INT(h.framing, DOOR_NO_BODY);
}

static void
smuggling(void)
{
	static const char *const bad[] = {
		"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length : 3\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 3x\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length:\r\n\r\n",
		"POST /x HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
		"POST /x HTTP/1.1\r\n: novalue\r\n\r\n",
		"GARBAGE\r\n\r\n",
		"GET /x\r\n\r\n",
		"GET /x HTTP/2.0\r\n\r\n",
		"GET /x HTTP/1.1 \r\n\r\n",
		"GET /x HTTP/1.12\r\n\r\n",
		"GET /x HTTX/1.1\r\n\r\n",
		"HEAD /x HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
		"HEAD /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"TRACE /x HTTP/1.1\r\nContent-Length: 1\r\n\r\n",
		"POST /x HTTP/1.1\r\nAuthorization: Bearer a\r\n"
		    "authorization: Bearer b\r\n\r\n",
	};
	struct door_head h;
	size_t		 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		T_EQ_INT(parse(bad[i], &h), 400);
		T_EQ_STR(h.code, "bad_request");
	}
}

static void
methods(void)
{
	struct door_head h;

	T_EQ_INT(parse("FOO /x HTTP/1.1\r\n\r\n", &h), 501);
	T_EQ_STR(h.code, "not_implemented");
	T_EQ_INT(parse("get /x HTTP/1.1\r\n\r\n", &h), 501);
	T_EQ_INT(parse("PATCH /x HTTP/1.0\r\n\r\n", &h), 0);
	T_EQ_INT(parse("DELETE /x HTTP/1.1\r\n\r\n", &h), 0);
}

static void
limits(void)
{
	char		 head[DOOR_HEAD_MAX];
	struct door_head h;
	size_t		 n;
	int		 i;

	n = (size_t)snprintf(head, sizeof(head), "GET / HTTP/1.1\r\n");
	for (i = 0; i < DOOR_HEADERS_MAX; i++)
		n += (size_t)snprintf(head + n, sizeof(head) - n, "X%d: y\r\n", i);
	snprintf(head + n, sizeof(head) - n, "\r\n");
	T_EQ_INT(parse(head, &h), 0);
	snprintf(head + n, sizeof(head) - n, "Y: z\r\n\r\n");
	T_EQ_INT(parse(head, &h), 431);
	T_EQ_STR(h.code, "headers_too_large");
}

static void
chunk_sizes(void)
{
	T_EQ_INT((int)door_chunk_size("1a", 2), 26);
	T_EQ_INT((int)door_chunk_size("0", 1), 0);
	T_EQ_INT((int)door_chunk_size("FF;ext=1", 8), 255);
	T_EQ_INT((int)door_chunk_size("", 0), -1);
	T_EQ_INT((int)door_chunk_size("g", 1), -1);
	T_EQ_INT((int)door_chunk_size("1234567890abcdef", 16), -1);
}

/*
 * Every byte in a header name: accepted exactly when RFC 9110 makes it a
 * token character, written here from the RFC's list.
 */
static void
name_bytes(void)
{
	struct door_head h;
	char		 head[128];
	int		 c, want, bad = 0;

	for (c = 1; c < 256; c++) {
		if (c == ':' || c == '\n' || c == '\r')
			continue;	/* they end the name or the line */
		want = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') ||
		    (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
		snprintf(head, sizeof(head), "GET /x HTTP/1.1\r\nX%cY: v\r\n"
		    "\r\n", c);
		bad += (parse(head, &h) == 0) != want;
	}
	T_EQ_INT(bad, 0);
	/* Which of the two refusals a bad header line gets. */
	T_EQ_INT(parse("GET /x HTTP/1.1\r\nX Y: v\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "a header name with a character it may not have");
	T_EQ_INT(parse("GET /x HTTP/1.1\r\nX Y v\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "a header line without a name");
	T_EQ_INT(parse("GET /x HTTP/1.1\r\n: v\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "a header line without a name");
	T_EQ_INT(parse("GET /x HTTP/1.1\r\nXY\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "a header line without a name");
}

static const struct t_case cases[] = {
	{ "heads that go through", ok_heads },
	{ "ambiguous framing is refused", smuggling },
	{ "HTTP/1.x only, known methods", methods },
	{ "header line limit", limits },
	{ "chunk sizes", chunk_sizes },
	{ "every byte in a header name", name_bytes },
};

int
main(void)
{
	return t_run("door-head", cases, T_NCASES(cases)) ? 1 : 0;
}
