/*
 * attempts.c: the records of delivery attempts (attempts.h).  Loop
 * thread only.
 *
 * {"time","eventId","sequence","attempt","status","error","ms","instance"}
 * and, when there is one, "probe", "replay", "trace".  time is when the
 * attempt started (RFC 3339, ms), ms the HTTP exchange (null when nothing
 * was sent: no address, a refused one), status null when no answer came
 * (error says why).
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

void
attempts_record(const struct attempt *a)
{
	const unsigned char	*buf;
	size_t			 len;
	char			 subject[sizeof(STORE_ATTEMPTS_PREFIX) +
				    NAME_MAX_LEN];
	char			 t[TREATY_RFC3339_MAX];

	if (at.cfg == NULL || at.cfg->attempts_per_subscriber == 0)
		return;
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
	yajl_gen_get_buf(at.g, &buf, &len);
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
