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
 */
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

/* Parse a head; see door-head.h. */
int
door_head_parse(const char *head, size_t len, struct door_head *h)
{
	const char	*p = head, *end = head + len, *nl, *le, *colon, *v, *sp;
	size_t		 n, vlen;
	int		 lines = 0, ncl = 0, nte = 0, te_ok = 1;
	uint64_t	 cl = 0;

	memset(h, 0, sizeof(*h));
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
	if (!known_method(h->method))
		return refuse(h, 501, "not_implemented", "an unknown method");
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
		for (v = colon + 1; v < le && (*v == ' ' || *v == '\t'); v++)
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
