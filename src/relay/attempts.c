/*
 * attempts.c: the records of delivery attempts (attempts.h).  Loop
 * thread only.
 *
 * {"time","eventId","sequence","attempt","status","error","ms","instance"}
 * and, when there is one, "probe", "replay", "trace".  time is when the
 * attempt started (RFC 3339, ms), ms the HTTP exchange (null when nothing
 * was sent: no address, a refused one), status null when no answer came
 * (error says why).  A record is made for every attempt, so the usual one
 * is written by hand (a fifth of what yajl's generator and a full time
 * formatting cost: docs/BENCHMARKS.md), and only an id or error that
 * needs escaping goes through yajl.
 */
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "treaty.h"
#include "attempts.h"
#include "config.h"
#include "json.h"
#include "metrics.h"
#include "store-pub.h"
#include "store-wire.h"
#include "util.h"

/*
 * A record written by hand, the usual case (record_plain): ids and errors
 * up to about 3 KiB of printable ASCII; anything else goes through yajl.
 */
#define RECORD_PLAIN_MAX	4096

static struct {
	const struct config	*cfg;
	char			 instance[NAME_MAX_LEN + 1];
	yajl_gen		 g;		/* reused: cleared per record */
} at;

void
attempts_init(const struct config *cfg, const char *instance)
{
	at.cfg = cfg;
	snprintf(at.instance, sizeof(at.instance), "%s", instance);
}

/* The decimal digits of v at o; the end. */
static char *
put_u64(char *o, uint64_t v)
{
	char	 d[20];
	int	 n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*o++ = d[--n];
	return o;
}

/*
 * s as a JSON string at o (quoted), when every byte is printable ASCII
 * (the usual id and error): the end, or NULL for the general path.
 */
static char *
put_plain(char *o, const char *s, size_t room)
{
	char	*end = o + room;

	if (s == NULL) {
		memcpy(o, "null", 4);
		return o + 4;
	}
	*o++ = '"';
	for (; *s != '\0'; s++) {
		if (end - o < 3 || *s < 0x20 || *s > 0x7e)
			return NULL;
		if (*s == '"' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o++ = '"';
	return o;
}

/*
 * The time as RFC 3339 with milliseconds: the second's text is made once
 * a second (treaty_rfc3339_format is the cost of a whole record).
 */
static char *
put_time(char *o, int64_t ns)
{
	static int64_t	 sec = -1;
	static char	 prefix[TREATY_RFC3339_MAX];
	static size_t	 plen;
	int64_t		 s = ns / NS_PER_S;
	long		 ms = (long)(ns % NS_PER_S / 1000000);

	if (s != sec) {
		if (treaty_rfc3339_format(s, 0, 0, prefix, sizeof(prefix)) < 0)
			prefix[0] = '\0';
		plen = strlen(prefix);
		if (plen > 0 && prefix[plen - 1] == 'Z')
			plen--;			/* the fraction goes first */
		sec = s;
	}
	*o++ = '"';
	memcpy(o, prefix, plen);
	o += plen;
	*o++ = '.';
	*o++ = (char)('0' + ms / 100);
	*o++ = (char)('0' + ms / 10 % 10);
	*o++ = (char)('0' + ms % 10);
	*o++ = 'Z';
	*o++ = '"';
	return o;
}

/* The record by hand, the usual way; 0, or -1 for the general path. */
static int
record_plain(const struct attempt *a, char *buf, size_t cap, size_t *len)
{
	char	*o = buf, *end = buf + cap;

#define LIT(s)	(memcpy(o, s, sizeof(s) - 1), o += sizeof(s) - 1)
	LIT("{\"time\":");
	o = put_time(o, a->time_ns);
	LIT(",\"eventId\":");
	if ((o = put_plain(o, a->event_id, (size_t)(end - o) - 256)) == NULL)
		return -1;
	LIT(",\"sequence\":");
	o = put_u64(o, a->sequence);
	LIT(",\"attempt\":");
	o = put_u64(o, a->attempt);
	LIT(",\"status\":");
	if (a->status > 0)
		o = put_u64(o, (uint64_t)a->status);
	else
		LIT("null");
	LIT(",\"error\":");
	if ((o = put_plain(o, a->error, (size_t)(end - o) - 160)) == NULL)
		return -1;
	LIT(",\"ms\":");
	if (a->ms >= 0)
		o = put_u64(o, (uint64_t)a->ms);
	else
		LIT("null");
	LIT(",\"instance\":\"");
	memcpy(o, at.instance, strlen(at.instance));
	o += strlen(at.instance);
	*o++ = '"';
	if (a->probe > 0) {
		LIT(",\"probe\":");
		o = put_u64(o, (uint64_t)a->probe);
	}
	if (a->replay != NULL) {
		LIT(",\"replay\":\"");
		memcpy(o, a->replay, strlen(a->replay));
		o += strlen(a->replay);
		*o++ = '"';
	}
	if (a->trace != NULL) {
		LIT(",\"trace\":\"");
		memcpy(o, a->trace, strlen(a->trace));
		o += strlen(a->trace);
		*o++ = '"';
	}
	*o++ = '}';
#undef LIT
	*len = (size_t)(o - buf);
	return 0;
}

/* The record through yajl: ids and errors that need escaping. */
static void
record_gen(const struct attempt *a, const unsigned char **buf, size_t *len)
{
	char	 t[TREATY_RFC3339_MAX];

	if (at.g == NULL)
		at.g = yajl_gen_alloc(NULL);
	yajl_gen_clear(at.g);
	yajl_gen_reset(at.g, NULL);
	if (treaty_rfc3339_format(a->time_ns / NS_PER_S,
	    (long)(a->time_ns % NS_PER_S), 3, t, sizeof(t)) < 0)
		t[0] = '\0';
	yajl_gen_map_open(at.g);
	json_gen_str(at.g, "time");
	json_gen_str(at.g, t);
	json_gen_str(at.g, "eventId");
	json_gen_str_or_null(at.g, a->event_id);
	json_gen_str(at.g, "sequence");
	yajl_gen_integer(at.g, (long long)a->sequence);
	json_gen_str(at.g, "attempt");
	yajl_gen_integer(at.g, (long long)a->attempt);
	json_gen_str(at.g, "status");
	if (a->status > 0)
		yajl_gen_integer(at.g, a->status);
	else
		yajl_gen_null(at.g);
	json_gen_str(at.g, "error");
	json_gen_str_or_null(at.g, a->error);
	json_gen_str(at.g, "ms");
	if (a->ms >= 0)
		yajl_gen_integer(at.g, a->ms);
	else
		yajl_gen_null(at.g);
	json_gen_str(at.g, "instance");
	json_gen_str(at.g, at.instance);
	if (a->probe > 0) {
		json_gen_str(at.g, "probe");
		yajl_gen_integer(at.g, a->probe);
	}
	if (a->replay != NULL) {
		json_gen_str(at.g, "replay");
		json_gen_str(at.g, a->replay);
	}
	if (a->trace != NULL) {
		json_gen_str(at.g, "trace");
		json_gen_str(at.g, a->trace);
	}
	yajl_gen_map_close(at.g);
	yajl_gen_get_buf(at.g, buf, len);
}

void
attempts_record(const struct attempt *a)
{
	static char		 plain[RECORD_PLAIN_MAX];
	const unsigned char	*buf;
	size_t			 len;
	char			 subject[sizeof(STORE_ATTEMPTS_PREFIX) +
				    NAME_MAX_LEN];

	if (at.cfg == NULL || at.cfg->attempts_per_subscriber == 0)
		return;
	if (record_plain(a, plain, sizeof(plain), &len) == 0)
		buf = (const unsigned char *)plain;
	else
		record_gen(a, &buf, &len);
	snprintf(subject, sizeof(subject), STORE_ATTEMPTS_PREFIX "%s",
	    a->subscriber);
	if (store_publish_nowait(subject, buf, len) == -1)
		metrics_attempt_unrecorded();
}

void
attempts_free(void)
{
	if (at.g != NULL)
		yajl_gen_free(at.g);
	at.g = NULL;
}
