/*
 * door-head.h: what the front door (door.c) reads in a request's head
 * before evhttp sees it: the method, the path, the Authorization value and
 * the body's framing; the framing rules against request smuggling (SPEC
 * 13).  Pure: any thread, unit-tested (test/unit/t-door-head.c) and fuzzed
 * (test/fuzz/fz-door-head.c).
 */
#ifndef DOOR_HEAD_H
#define DOOR_HEAD_H

#include <stddef.h>
#include <stdint.h>

/* A request line and its headers: bytes, and header lines. */
#define DOOR_HEAD_MAX_KIB	16
#define DOOR_HEAD_MAX		(DOOR_HEAD_MAX_KIB * 1024)
#define DOOR_HEADERS_MAX	100

enum door_framing {
	DOOR_NO_BODY,
	DOOR_LENGTH,		/* Content-Length: length */
	DOOR_CHUNKED		/* Transfer-Encoding: chunked */
};

struct door_head {
	char			 method[16];
	const char		*path;		/* into the head; pathlen bytes */
	size_t			 pathlen;
	const char		*auth;		/* Authorization's value, or NULL */
	size_t			 authlen;
	enum door_framing	 framing;
	uint64_t		 length;
	const char		*code;		/* when refused: the error code */
	const char		*detail;
};

/*
 * Read a complete head (len bytes, up to and including its empty line).
 * 0 when it may go on to evhttp; else the status to answer (400 for
 * ambiguous framing: more than one Content-Length, a Transfer-Encoding
 * other than exactly chunked, both, a folded or malformed header line, a
 * request line that is not HTTP/1.0 or 1.1, and for anything else
 * libevent 2.1's parser would refuse: a NUL, a CR not before LF, an
 * empty or unparseable request target; 417 for an Expect other than
 * 100-continue on an HTTP/1.1 request with a body; 431 for too many
 * header lines; 501 for a method libevent does not know), with h->code
 * and h->detail set.
 */
int	door_head_parse(const char *head, size_t len, struct door_head *h);
/*
 * A chunk-size line (without its line end): the size, or -1 when it is
 * not one (hex digits, then optional extensions after ';').
 */
int64_t	door_chunk_size(const char *line, size_t len);

#endif
