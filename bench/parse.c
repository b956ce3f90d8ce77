/*
 * parse: what reading a structured-mode event costs the relay
 * (cevent_from_structured: json_scan, the UTF-8 check, yajl's tree,
 * the duplicate keys and the attributes' checks), alone and as the 100
 * events of a batch found by json_array_split, as ingest does them.  Each
 * event carries 256 bytes of JSON data.  Prints nanoseconds per event; for
 * instructions, run it under callgrind with two counts and take the
 * difference.
 *
 *   parse [-n events]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cevent.h"
#include "json.h"

#define BATCH	100

/* Monotonic nanoseconds. */
static long long
ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One event as a producer would send it, with id i. */
static size_t
event(char *buf, size_t sz, long i)
{
	char	 data[257];

	memset(data, 'x', 256);
	memcpy(data, "{\"order\":\"", 10);
	memcpy(data + 254, "\"}", 2);
	data[256] = '\0';
	return (size_t)snprintf(buf, sz, "{\"specversion\":\"1.0\","
	    "\"id\":\"ord-%ld\",\"source\":\"/shop/orders\","
	    "\"type\":\"dev.shop.order.created.v1\","
	    "\"time\":\"2026-12-03T10:00:00Z\","
	    "\"datacontenttype\":\"application/json\",\"data\":%s}", i, data);
}

/* Parse one text as an event; exit on a refusal (the bench is wrong). */
static void
parse(const char *s, size_t len)
{
	struct cevent	 ev;

	if (cevent_from_structured(&ev, s, len) != 0) {
		fprintf(stderr, "parse: refused: %s\n", ev.detail);
		exit(1);
	}
	cevent_free(&ev);
}

int
main(int argc, char **argv)
{
	struct json_span	 el[BATCH];
	char			 one[1024], *batch;
	size_t			 len, blen = 0;
	long			 n = 100000, i, k;
	long long		 t0, t1;
	int			 ch;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		if (ch != 'n' || (n = atol(optarg)) < BATCH) {
			fprintf(stderr, "usage: parse [-n events >= %d]\n",
			    BATCH);
			return 2;
		}
	}
	len = event(one, sizeof(one), 1);
	batch = malloc(BATCH * sizeof(one) + 2);
	batch[blen++] = '[';
	for (i = 0; i < BATCH; i++) {
		if (i > 0)
			batch[blen++] = ',';
		blen += event(batch + blen, sizeof(one), i);
	}
	batch[blen++] = ']';

	t0 = ns();
	for (i = 0; i < n; i++)
		parse(one, len);
	t1 = ns();
	printf("{\"single_ns_per_event\":%.0f,", (double)(t1 - t0) / n);
	t0 = ns();
	for (i = 0; i < n / BATCH; i++) {
		if (json_array_split(batch, blen, el, BATCH) != BATCH)
			return 1;
		for (k = 0; k < BATCH; k++)
			parse(batch + el[k].off, el[k].len);
	}
	t1 = ns();
	printf("\"batch_ns_per_event\":%.0f,\"event_bytes\":%zu}\n",
	    (double)(t1 - t0) / (n / BATCH * BATCH), len);
	free(batch);
	return 0;
}
