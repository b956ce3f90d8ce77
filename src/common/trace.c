/*
 * trace.c: W3C traceparent (trace.h).  Pure.
 */
#include <stdio.h>
#include <string.h>

#include "trace.h"

/* n lower-case hex digits at s: 1, and whether any is not '0'. */
static int
hex_run(const char *s, size_t n, int *nonzero)
{
	size_t	 i;

	*nonzero = 0;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
		if (s[i] != '0')
			*nonzero = 1;
	}
	return 1;
}

int
trace_parse(const char *s, struct trace *t)
{
	size_t	 len;
	int	 nz;

	if (s == NULL || (len = strlen(s)) < TRACEPARENT_LEN)
		return -1;
	/* Version: two hex digits, not ff; 00 is exactly 55 characters. */
	if (!hex_run(s, 2, &nz) || strncmp(s, "ff", 2) == 0 || s[2] != '-')
		return -1;
	if (strncmp(s, "00", 2) == 0 ? len != TRACEPARENT_LEN :
	    len > TRACEPARENT_LEN && s[TRACEPARENT_LEN] != '-')
		return -1;
	if (!hex_run(s + 3, TRACE_ID_HEX, &nz) || !nz || s[35] != '-' ||
	    !hex_run(s + 36, TRACE_SPAN_HEX, &nz) || !nz || s[52] != '-' ||
	    !hex_run(s + 53, 2, &nz))
		return -1;
	memcpy(t->id, s + 3, TRACE_ID_HEX);
	t->id[TRACE_ID_HEX] = '\0';
	memcpy(t->parent, s + 36, TRACE_SPAN_HEX);
	t->parent[TRACE_SPAN_HEX] = '\0';
	memcpy(t->flags, s + 53, 2);
	t->flags[2] = '\0';
	return 0;
}

void
trace_child(const struct trace *t, const uint8_t span[8],
    char out[TRACEPARENT_LEN + 1])
{
	snprintf(out, TRACEPARENT_LEN + 1,
	    "00-%s-%02x%02x%02x%02x%02x%02x%02x%02x-%s", t->id, span[0],
	    span[1], span[2], span[3], span[4], span[5], span[6], span[7],
	    t->flags);
}
