/*
 * door-head.c: a request's head, as the front door reads it
 * (door-head.h).  Pure.
 *
 * The rules are RFC 9112's for a server that does not want to be the
 * weak link behind a lenient proxy: a message whose length two parties
 * could read differently is refused, not guessed at (more than one
 * Content-Length, even equal; a Transfer-Encoding other than exactly
 * "chunked"; both; a header folded over lines; a header name with white
 * space before its colon).
 *
 * And whatever libevent 2.1.12's parser would refuse with its own HTML
 * page is refused here first, as JSON.  Its refusals, from http.c
 * (evhttp_parse_request_line, evhttp_uri_parse_with_flags,
 * evhttp_parse_headers_, evhttp_get_body), and where each is met:
 *
 *   request line over max_headers_size   the door's 16 KiB head (431)
 *   shorter than "GET / HTTP/1.0", no    the request line's shape: two
 *   space, an empty target, a version    spaces, a non-empty target,
 *   not HTTP/x.y with x <= 1             HTTP/1.0 or 1.1 only
 *   an unknown method (later: 501)       known_method (501)
 *   a target its URI parser refuses      target_ok, its rules again
 *   NUL (its C strings end there)        no NUL anywhere in the head
 *   headers over max_headers_size        the door's 16 KiB head (431)
 *   a continuation line                  no folding at all
 *   a line without ':'                   a name, then ':'
 *   CR in a name; CR in a value not      names of token characters;
 *   followed by SP or HT                 no CR but before LF anywhere
 *   Content-Length not a number          digits only, one at most
 *   Expect other than 100-continue on    the same rule, 417
 *   an HTTP/1.1 request with a body
 *   Content-Length over the body limit   door.c, from the head (413)
 *
 * What cannot be known from the head is in the manual's CAVEATS: a
 * chunked body growing past the limit (its 413).
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "door-head.h"

/* Refuse with status, code and detail. */
static int
refuse(struct door_head *h, int status, const char *code, const char *detail)
{
	h->code = code;
	h->detail = detail;
	return status;
}

/*
 * The token characters of RFC 9110 (here: of header names), as a table:
 * every request's every header name is read through it.
 */
#define T(c)	[(unsigned char)(c)] = 1
static const unsigned char tchar[256] = {
	T('!'), T('#'), T('$'), T('%'), T('&'), T('\''), T('*'), T('+'),
	T('-'), T('.'), T('^'), T('_'), T('`'), T('|'), T('~'),
	T('0'), T('1'), T('2'), T('3'), T('4'), T('5'), T('6'), T('7'),
	T('8'), T('9'),
	T('A'), T('B'), T('C'), T('D'), T('E'), T('F'), T('G'), T('H'),
	T('I'), T('J'), T('K'), T('L'), T('M'), T('N'), T('O'), T('P'),
	T('Q'), T('R'), T('S'), T('T'), T('U'), T('V'), T('W'), T('X'),
	T('Y'), T('Z'),
	T('a'), T('b'), T('c'), T('d'), T('e'), T('f'), T('g'), T('h'),
	T('i'), T('j'), T('k'), T('l'), T('m'), T('n'), T('o'), T('p'),
	T('q'), T('r'), T('s'), T('t'), T('u'), T('v'), T('w'), T('x'),
	T('y'), T('z'),
};
#undef T

/*
 * 1 for a method libevent 2.1's server knows; any other it would answer
 * itself (501, as HTML).
 */
static int
known_method(const char *m)
{
	static const char *const known[] = { "GET", "POST", "HEAD", "PUT",
	    "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH" };
	size_t	 i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(m, known[i]) == 0)
			return 1;
	return 0;
}

/*
 * libevent's uri_chars table: RFC 3986's unreserved characters, ALPHA
 * DIGIT - . _ ~ (ASCII only).
 */
static int
uri_unreserved(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

/* RFC 3986's sub-delims, as libevent's SUBDELIMS. */
static int
uri_subdelim(char c)
{
	return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

/* A hexadecimal digit (EVUTIL_ISXDIGIT_). */
static int
uri_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/*
 * A request target as libevent's C string: t[i], or NUL past its end
 * (its parser reads a little past a part's end, into the next one).
 */
struct target {
	const char	*t;
	size_t		 n;
};

/* The target's byte i, as libevent's string has it. */
static char
tc(const struct target *t, size_t i)
{
	return i < t->n ? t->t[i] : '\0';
}

/*
 * The first of the (one to three) chars in t from i on, or t's length.
 * Every request's target is read this way: no strchr per byte.
 */
static size_t
t_find(const struct target *t, size_t i, const char *chars)
{
	char	 c;

	for (; i < t->n; i++) {
		c = t->t[i];
		if (c == chars[0] || (chars[1] != '\0' && (c == chars[1] ||
		    (chars[2] != '\0' && c == chars[2]))))
			break;
	}
	return i;
}

/* libevent's bracket_addr_ok on [s, e): an IPv6 literal or IPvFuture. */
static int
t_bracket_ok(const struct target *t, size_t s, size_t e)
{
	char	 buf[64];
	struct in6_addr a;

	if (s + 3 > e || tc(t, s) != '[' || tc(t, e - 1) != ']')
		return 0;
	if (tc(t, s + 1) == 'v') {
		/* "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
		s += 2;
		e--;
		if (!uri_hex(tc(t, s)))
			return 0;
		while (s < e && tc(t, s) != '.')
			if (!uri_hex(tc(t, s++)))
				return 0;
		if (tc(t, s) != '.')
			return 0;
		for (s++; s < e; s++)
			if (!uri_unreserved(tc(t, s)) &&
			    !uri_subdelim(tc(t, s)) && tc(t, s) != ':')
				return 0;
		return 1;
	}
	if (e - s - 2 >= sizeof(buf))
		return 0;
	memcpy(buf, t->t + s + 1, e - s - 2);
	buf[e - s - 2] = '\0';
	/* evutil_inet_pton is the system's inet_pton where there is one. */
	return inet_pton(AF_INET6, buf, &a) == 1;
}

/*
 * libevent's parse_authority on [s, e): userinfo "@", a host (reg-name
 * or bracketed literal), ":" port up to 65535.
 */
static int
t_authority_ok(const struct target *t, size_t s, size_t e)
{
	size_t	 at, cp, p;
	long	 port = 0;

	if (s == e)
		return 1;
	/*
	 * libevent's strchr finds the first '@' of the rest of the string:
	 * one at or past e means no userinfo.
	 */
	at = t_find(t, s, "@");
	if (at < e) {
		for (p = s; p < at;) {
			if (uri_unreserved(tc(t, p)) ||
			    uri_subdelim(tc(t, p)) || tc(t, p) == ':')
				p++;
			else if (tc(t, p) == '%' && p + 2 < at &&
			    uri_hex(tc(t, p + 1)) && uri_hex(tc(t, p + 2)))
				p += 3;
			else
				return 0;
		}
		cp = at + 1;
	} else
		cp = s;
	for (p = e; p > cp && tc(t, p - 1) >= '0' && tc(t, p - 1) <= '9';
	    p--)
		;
	if (p > cp && tc(t, p - 1) == ':') {
		for (at = p; at < e; at++)
			if ((port = port * 10 + (tc(t, at) - '0')) > 65535)
				return 0;
		e = p - 1;
	}
	if (tc(t, cp) == '[' && e >= cp + 2 && tc(t, e - 1) == ']')
		return t_bracket_ok(t, cp, e);
	for (p = cp; p < e;) {
		if (uri_unreserved(tc(t, p)) || uri_subdelim(tc(t, p)))
			p++;
		else if (tc(t, p) == '%' && uri_hex(tc(t, p + 1)) &&
		    uri_hex(tc(t, p + 2)))
			p += 3;
		else
			return 0;
	}
	return 1;
}

/*
 * 1 when libevent 2.1.12 parses the request target: for CONNECT its
 * authority (evhttp_uri_parse_authority), else the URI as
 * evhttp_uri_parse_with_flags does with EVHTTP_URI_NONCONFORMANT (any
 * path, query and fragment characters; a scheme, an authority after
 * "//", and no ':' in a first path segment without a scheme).
 */
static int
target_ok(const char *method, const char *s, size_t n)
{
	const struct target	 tt = { s, n }, *t = &tt;
	const char		*p;
	size_t			 i = 0, colon, e;
	int			 scheme = 0;

	if (strcmp(method, "CONNECT") == 0)
		return t_authority_ok(t, 0, t_find(t, 0, "?#/"));
	colon = (p = memchr(s, ':', n)) != NULL ? (size_t)(p - s) : n;
	if (colon < n && colon > 0 && ((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= 'A' && s[0] <= 'Z'))) {
		/* ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
		for (i = 1; i < colon; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') ||
			    (s[i] >= 'A' && s[i] <= 'Z') ||
			    (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
			    s[i] == '-' || s[i] == '.'))
				break;
		scheme = i == colon;
	}
	i = scheme ? colon + 1 : 0;
	if (tc(t, i) == '/' && tc(t, i + 1) == '/') {
		e = t_find(t, i + 2, "?#/");
		/* The path then starts with '/', or is empty. */
		return t_authority_ok(t, i + 2, e);
	}
	if (scheme)
		return 1;
	/* No scheme: the path's first segment has no ':'. */
	for (i = 0; i < n && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++)
		if (s[i] == ':')
			return 0;
	return 1;
}

/* Parse a head; see door-head.h. */
int
door_head_parse(const char *head, size_t len, struct door_head *h)
{
	const char	*p = head, *end = head + len, *nl, *le, *colon, *v, *sp;
	const char	*expect = NULL;
	size_t		 n, vlen, expectlen = 0;
	int		 lines = 0, ncl = 0, nte = 0, te_ok = 1, minor;
	uint64_t	 cl = 0;

	memset(h, 0, sizeof(*h));
	/*
	 * libevent reads a line up to LF (a CR before it dropped) into a C
	 * string: a NUL ends a method, target or header early, and a CR
	 * left inside a header value fails the request.  Both are refused
	 * anywhere in the head, so every line the door reads is evhttp's.
	 */
	if (memchr(head, '\0', len) != NULL)
		return refuse(h, 400, "bad_request", "a NUL byte in the head");
	for (v = head; (v = memchr(v, '\r', (size_t)(end - v))) != NULL; v++)
		if (v + 1 == end || v[1] != '\n')
			return refuse(h, 400, "bad_request", "a CR not "
			    "followed by LF");
	/* The request line: METHOD SP target SP version. */
	if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
		return refuse(h, 400, "bad_request", "no request line");
	le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
	if ((sp = memchr(p, ' ', (size_t)(le - p))) == NULL ||
	    (size_t)(sp - p) >= sizeof(h->method) || sp == p)
		return refuse(h, 400, "bad_request", "not a request line");
	memcpy(h->method, p, (size_t)(sp - p));
	h->path = sp + 1;
	if ((sp = memchr(h->path, ' ', (size_t)(le - h->path))) == NULL)
		return refuse(h, 400, "bad_request", "not a request line");
	h->pathlen = (size_t)(sp - h->path);
	/* HTTP/1.0 and 1.1 only: what evhttp would refuse, refused here. */
	if (le - (sp + 1) != 8 || memcmp(sp + 1, "HTTP/1.", 7) != 0 ||
	    (sp[8] != '0' && sp[8] != '1'))
		return refuse(h, 400, "bad_request", "not an HTTP/1.1 request "
		    "line");
	minor = sp[8] - '0';
	if (h->pathlen == 0)
		return refuse(h, 400, "bad_request", "an empty request target");
	if (!known_method(h->method))
		return refuse(h, 501, "not_implemented", "an unknown method");
	if (!target_ok(h->method, h->path, h->pathlen))
		return refuse(h, 400, "bad_request", "a request target that is "
		    "not a URI");
	if ((v = memchr(h->path, '?', h->pathlen)) != NULL)
		h->pathlen = (size_t)(v - h->path);
	for (p = nl + 1; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
		if (le == p)
			break;			/* the empty line */
		if (++lines > DOOR_HEADERS_MAX)
			return refuse(h, 431, "headers_too_large", "more than "
			    API_STR(DOOR_HEADERS_MAX) " header lines");
		if (*p == ' ' || *p == '\t')
			return refuse(h, 400, "bad_request", "a header folded "
			    "over lines");
		/* The name, up to the first byte that is not a token's. */
		for (colon = p; colon < le && tchar[(unsigned char)*colon];
		    colon++)
			;
		if (colon == le || *colon != ':') {
			if (memchr(colon, ':', (size_t)(le - colon)) != NULL)
				return refuse(h, 400, "bad_request", "a header "
				    "name with a character it may not have");
			colon = NULL;
		}
		if (colon == NULL || colon == p)
			return refuse(h, 400, "bad_request", "a header line "
			    "without a name");
		n = (size_t)(colon - p);
		/*
		 * The value as evhttp will have it: libevent skips spaces
		 * only before it (a tab stays, so "\tchunked" is no chunked
		 * for evhttp) and spaces and tabs after it.
		 */
		for (v = colon + 1; v < le && *v == ' '; v++)
			;
		vlen = (size_t)(le - v);
		while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
			vlen--;
		if (n == 14 && strncasecmp(p, "Content-Length", n) == 0) {
			size_t	 i;

			ncl++;
			for (i = 0, cl = 0; i < vlen; i++) {
				if (v[i] < '0' || v[i] > '9')
					return refuse(h, 400, "bad_request",
					    "Content-Length is not a number");
				/* Past 2^60: more than any limit anyway. */
				if (cl < (1ULL << 60))
					cl = cl * 10 + (uint64_t)(v[i] - '0');
			}
			if (vlen == 0)
				return refuse(h, 400, "bad_request",
				    "Content-Length is empty");
		} else if (n == 17 &&
		    strncasecmp(p, "Transfer-Encoding", n) == 0) {
			nte++;
			if (vlen != 7 || strncasecmp(v, "chunked", 7) != 0)
				te_ok = 0;
		} else if (n == 13 && strncasecmp(p, "Authorization", n) == 0) {
			/*
			 * One only: the door would check the last and evhttp
			 * hand ingest the first, and a proxy in front either.
			 */
			if (h->auth != NULL)
				return refuse(h, 400, "bad_request", "more "
				    "than one Authorization");
			h->auth = v;
			h->authlen = vlen;
		} else if (n == 6 && strncasecmp(p, "Expect", n) == 0 &&
		    expect == NULL) {
			expect = v;		/* evhttp reads the first */
			expectlen = vlen;
		}
	}
	if (ncl > 1)
		return refuse(h, 400, "bad_request", "more than one "
		    "Content-Length");
	if (nte > 1 || (nte == 1 && !te_ok))
		return refuse(h, 400, "bad_request", "a Transfer-Encoding "
		    "other than chunked");
	if (nte == 1 && ncl == 1)
		return refuse(h, 400, "bad_request", "both Content-Length and "
		    "Transfer-Encoding");
	/*
	 * evhttp reads no body for HEAD and TRACE: one announced would be
	 * read as the next request by evhttp but not by the door.
	 */
	if ((nte == 1 || cl > 0) && (strcmp(h->method, "HEAD") == 0 ||
	    strcmp(h->method, "TRACE") == 0))
		return refuse(h, 400, "bad_request", "a body on a request "
		    "that has none");
	/*
	 * evhttp answers 417 itself to an Expect other than 100-continue,
	 * on an HTTP/1.1 request with a body (and only there).
	 */
	if (expect != NULL && minor == 1 && (nte == 1 || cl > 0) &&
	    (expectlen != 12 || strncasecmp(expect, "100-continue", 12) != 0))
		return refuse(h, 417, "expectation_failed", "an Expect other "
		    "than 100-continue");
	if (nte == 1)
		h->framing = DOOR_CHUNKED;
	else if (ncl == 1 && cl > 0) {
		h->framing = DOOR_LENGTH;
		h->length = cl;
	}
	return 0;
}

/* A chunk-size line; see door-head.h. */
int64_t
door_chunk_size(const char *line, size_t len)
{
	int64_t	 size = 0;
	size_t	 i;
	int	 c, digits = 0;

	for (i = 0; i < len && line[i] != ';' && line[i] != ' ' &&
	    line[i] != '\t'; i++) {
		c = (unsigned char)line[i];
		if (c >= '0' && c <= '9')
			c -= '0';
		else if (c >= 'a' && c <= 'f')
			c -= 'a' - 10;
		else if (c >= 'A' && c <= 'F')
			c -= 'A' - 10;
		else
			return -1;
		if (++digits > 15)
			return -1;
		size = size * 16 + c;
	}
	return digits > 0 ? size : -1;
}
