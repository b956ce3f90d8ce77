/*
 * t-door-head.c: the front door's reading of a request head
 * (src/relay/door-head.c): method, path, Authorization, framing, the
 * rules against smuggling (SPEC 13), and every head libevent 2.1's own
 * parser would refuse (its HTML answers), refused here first; request
 * targets against libevent's own URI parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

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

/* door_head_parse on len bytes of head (NUL bytes included). */
static int
parsen(const char *head, size_t len, struct door_head *h)
{
	return door_head_parse(head, len, h);
}

/*
 * NUL anywhere (libevent's C strings end there: a target, a name or a
 * value cut short), and a CR not followed by LF anywhere (libevent keeps
 * it in the line, and fails a header value with one): 400 bad_request.
 */
static void
stray_bytes(void)
{
	static const struct {
		const char	*head;
		size_t		 len;
	} bad[] = {
#define B(s)	{ s, sizeof(s) - 1 }
		B("GET /a\0b HTTP/1.1\r\n\r\n"),
		B("GET /a HTTP/1.1\r\nX: a\0b\r\n\r\n"),
		B("GET /a HTTP/1.1\r\nX\0Y: v\r\n\r\n"),
		B("GE\0T /a HTTP/1.1\r\n\r\n"),
		B("GET /a HTTP/1.1\r\n\r\n\0"),
		B("GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n"),
		B("GET /a HTTP/1.1\r\nX: a\r b\r\n\r\n"),	/* folded */
		B("GET /a HTTP/1.1\r\nX: a\r\r\n\r\n"),
		B("GET /a HTTP/1.1\r\nX: \r\r\n\r\n"),
		B("GET /a\rb HTTP/1.1\r\n\r\n"),
		B("GET /a HTTP/1.1\r\r\n\r\n"),
		B("GET /a HTTP/1.1\r\nX: a\r\n\r\r\n"),
		B("GET /a HTTP/1.1\r\nX: a\r\n\r"),
		B("GET /a HTTP/1.1\r\n\r\r\n"),
#undef B
	};
	struct door_head h;
	size_t		 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		if (!T_EQ_INT(parsen(bad[i].head, bad[i].len, &h), 400))
			t_fail(__FILE__, __LINE__, "  case %zu passed", i);
		T_EQ_STR(h.code, "bad_request");
	}
	T_EQ_INT(parsen("GET /a\0 HTTP/1.1\r\n\r\n", 20, &h), 400);
	T_EQ_STR(h.detail, "a NUL byte in the head");
	T_EQ_INT(parse("GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "a CR not followed by LF");
	/* CRLF and LF line ends alike, a CR only before LF. */
	T_EQ_INT(parse("GET /a HTTP/1.1\r\nX: a\nY: b\r\n\n", &h), 0);
}

/*
 * The request line as libevent reads it: its first space ends the
 * method, its last the target, so a target must be there (it also wants
 * the line at least as long as "GET / HTTP/1.0").
 */
static void
request_lines(void)
{
	struct door_head h;

	T_EQ_INT(parse("GET  HTTP/1.1\r\n\r\n", &h), 400);
	T_EQ_STR(h.detail, "an empty request target");
	T_EQ_INT(parse("GET / HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("GET * HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("OPTIONS * HTTP/1.1\r\n\r\n", &h), 0);
}

/*
 * Request targets libevent's URI parser refuses (evhttp_uri_parse_with_
 * flags with EVHTTP_URI_NONCONFORMANT; for CONNECT its authority
 * parser): refused, and those it takes, taken.
 */
static void
targets(void)
{
	static const char *const bad[] = {
		/* No scheme, and a ':' in the first segment. */
		"9:/x", ":x", "_a:b", "a_b:c", "9a:b?x#y",
		"//h^st/", "//host:65536/", "//host:99999999999/",
		"//us^er@host/", "//user@ho@st/", "//[::1/", "//[zz]/",
		"//[v1]/", "//[v.x]/", "//[vg.x]/", "//[v1.x^]/",
		"//ho%4/", "//ho%zz/", "http://h^/", "http://h:70000/x",
		"http://[]/", "//[/",
	};
	static const char *const good[] = {
		"/", "/v1/events/evt.a.b.c.d", "/a:b", "/a?b:c", "a/b:c",
		"*", "a", "x?y#z", "/%zz^`{}|\\\"<>",	/* any path bytes */
		"a:b", "a:b?x#y", "http:x", "http://host/p",
		"http://host:8080/p?q#f",
		"https://user:pw@host:/p", "//host", "//", "//:0",
		"//[::1]:80/", "//[v1f.a:b]/", "//h%41/", "//u%41@h/",
		"HTTP+x-y.z:anything", "//host?x", "//host#x",
		"//host:65535", "a?:", "?a:b", "#:",
	};
	struct door_head h;
	char		 head[256];
	size_t		 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		snprintf(head, sizeof(head), "GET %s HTTP/1.1\r\n\r\n", bad[i]);
		if (!T_EQ_INT(parse(head, &h), 400))
			t_fail(__FILE__, __LINE__, "  %s passed", bad[i]);
		else
			T_EQ_STR(h.detail, "a request target that is not a "
			    "URI");
		if (evhttp_uri_parse_with_flags(bad[i],
		    EVHTTP_URI_NONCONFORMANT) != NULL)
			t_fail(__FILE__, __LINE__, "  libevent takes %s",
			    bad[i]);
	}
	for (i = 0; i < T_NCASES(good); i++) {
		struct evhttp_uri	*u;

		snprintf(head, sizeof(head), "GET %s HTTP/1.1\r\n\r\n",
		    good[i]);
		if (!T_EQ_INT(parse(head, &h), 0))
			t_fail(__FILE__, __LINE__, "  %s refused", good[i]);
		u = evhttp_uri_parse_with_flags(good[i],
		    EVHTTP_URI_NONCONFORMANT);
		if (u == NULL)
			t_fail(__FILE__, __LINE__, "  libevent refuses %s",
			    good[i]);
		else
			evhttp_uri_free(u);
	}
	/* CONNECT: only the authority is read, up to / ? or #. */
	T_EQ_INT(parse("CONNECT host:443 HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("CONNECT a:b/x:y HTTP/1.1\r\n\r\n", &h), 400);
	T_EQ_INT(parse("CONNECT a:1/x:y HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("CONNECT h:70000 HTTP/1.1\r\n\r\n", &h), 400);
	T_EQ_INT(parse("CONNECT /anything HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("CONNECT [::1]:1 HTTP/1.1\r\n\r\n", &h), 0);
	T_EQ_INT(parse("CONNECT h^ HTTP/1.1\r\n\r\n", &h), 400);
}

/*
 * Every target of up to five bytes over the characters libevent's URI
 * parser treats apart: the door's verdict is libevent's (for CONNECT,
 * libevent's authority parser, reached here through "//" + target).
 */
static void
targets_as_libevent(void)
{
	static const char	 alpha[] = "/:@[]?#%a1v.^_";
	const size_t		 na = sizeof(alpha) - 1;
	struct door_head	 h;
	struct evhttp_uri	*u;
	char			 t[8], uri[16], head[64];
	size_t			 len, i, k, total, bad = 0;
	int			 door, lib, connect;

	for (len = 1; len <= 5; len++) {
		for (total = 1, i = 0; i < len; i++)
			total *= na;
		for (k = 0; k < total; k++) {
			size_t	 x = k;

			for (i = 0; i < len; i++, x /= na)
				t[i] = alpha[x % na];
			t[len] = '\0';
			for (connect = 0; connect < 2; connect++) {
				snprintf(head, sizeof(head), "%s %s HTTP/1.1"
				    "\r\n\r\n", connect ? "CONNECT" : "GET",
				    t);
				door = parse(head, &h) == 0;
				snprintf(uri, sizeof(uri), "%s%s",
				    connect ? "//" : "", t);
				u = evhttp_uri_parse_with_flags(uri,
				    EVHTTP_URI_NONCONFORMANT);
				lib = u != NULL;
				if (u != NULL)
					evhttp_uri_free(u);
				if (door != lib && bad++ < 5)
					t_fail(__FILE__, __LINE__, "  %s %s: "
					    "door %d, libevent %d", connect ?
					    "CONNECT" : "GET", t, door, lib);
			}
		}
	}
	T_EQ_INT(bad, 0);
}

/*
 * Header values as evhttp reads them: spaces skipped before (not tabs),
 * spaces and tabs after; a Transfer-Encoding or Content-Length evhttp
 * would read otherwise is refused rather than read two ways.
 */
static void
values_as_evhttp(void)
{
	struct door_head h;

	T_EQ_INT(parse("POST /x HTTP/1.1\r\nTransfer-Encoding:\tchunked\r\n"
	    "\r\n", &h), 400);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nContent-Length:\t5\r\n\r\n", &h),
	    400);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nContent-Length:  5 \t\r\n\r\n",
	    &h), 0);
	T_EQ_INT((int)h.length, 5);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n"
	    "\r\n", &h), 0);
	T_EQ_INT(h.framing, DOOR_CHUNKED);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nAuthorization:\tBearer t\r\n\r\n",
	    &h), 0);
	T_EQ_INT((int)h.authlen, 9);		/* the tab is evhttp's too */
}

/*
 * Expect: evhttp answers 417 to anything but 100-continue (any case),
 * in its first Expect, on an HTTP/1.1 request with a body; the door
 * answers it first.
 */
static void
expect(void)
{
	struct door_head h;

	T_EQ_INT(parse("POST /x HTTP/1.1\r\nExpect: nope\r\n"
	    "Content-Length: 5\r\n\r\n", &h), 417);
	T_EQ_STR(h.code, "expectation_failed");
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nexpect: 100-continue-x\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", &h), 417);
	T_EQ_INT(parse("PUT /x HTTP/1.1\r\nExpect:\t100-continue\r\n"
	    "Content-Length: 5\r\n\r\n", &h), 417);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nExpect: nope\r\n"
	    "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n", &h), 417);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nExpect: 100-Continue \r\n"
	    "Content-Length: 5\r\n\r\n", &h), 0);
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nExpect: 100-continue\r\n"
	    "Expect: nope\r\nContent-Length: 5\r\n\r\n", &h), 0);
	/* No body, or HTTP/1.0: evhttp does not look. */
	T_EQ_INT(parse("POST /x HTTP/1.1\r\nExpect: nope\r\n"
	    "Content-Length: 0\r\n\r\n", &h), 0);
	T_EQ_INT(parse("GET /x HTTP/1.1\r\nExpect: nope\r\n\r\n", &h), 0);
	T_EQ_INT(parse("POST /x HTTP/1.0\r\nExpect: nope\r\n"
	    "Content-Length: 5\r\n\r\n", &h), 0);
}

static const struct t_case cases[] = {
	{ "heads that go through", ok_heads },
	{ "ambiguous framing is refused", smuggling },
	{ "HTTP/1.x only, known methods", methods },
	{ "header line limit", limits },
	{ "chunk sizes", chunk_sizes },
	{ "every byte in a header name", name_bytes },
	{ "NUL anywhere, CR but before LF anywhere", stray_bytes },
	{ "request lines as libevent reads them", request_lines },
	{ "request targets libevent refuses", targets },
	{ "every short target judged as libevent does", targets_as_libevent },
	{ "header values as evhttp reads them", values_as_evhttp },
	{ "Expect other than 100-continue: 417", expect },
};

int
main(void)
{
	return t_run("door-head", cases, T_NCASES(cases)) ? 1 : 0;
}
