/*
 * trace.h: W3C Trace Context's traceparent (SPEC 17's tracing), read and
 * made.  Pure, any thread (test/unit/t-trace.c).
 *
 *   traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>
 *
 * Lower-case hex only; neither id all zeros; version ff is invalid; a
 * version other than 00 may carry more after a '-', which a reader of
 * version 00 ignores (the W3C recommendation's rule for later versions).
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdint.h>

#define TRACE_ID_HEX		32
#define TRACE_SPAN_HEX		16
#define TRACEPARENT_LEN		55	/* version 00's whole length */
#define TRACESTATE_MAX		512	/* kept: W3C's 32 members' worth */

struct trace {
	char	 id[TRACE_ID_HEX + 1];
	char	 parent[TRACE_SPAN_HEX + 1];
	char	 flags[3];
};

/* s as a traceparent into t: 0, or -1 when it is not a valid one. */
int	trace_parse(const char *s, struct trace *t);
/*
 * The traceparent of a child of t whose span id is span (8 bytes, not all
 * zero), version 00, into out (TRACEPARENT_LEN + 1 bytes).
 */
void	trace_child(const struct trace *t, const uint8_t span[8],
	    char out[TRACEPARENT_LEN + 1]);

#endif
