/*
 * metrics.c: the relay's counters and gauges, as Prometheus text format
 * 0.0.4.  Loop thread only, so plain integers suffice.
 */
#include <stdio.h>

#include <event2/buffer.h>

#include "treaty.h"
#include "metrics.h"

static const char *const route_names[ROUTE_MAX] = {
	"events", "healthz", "metrics", "other"
};
static const char *const stream_names[STREAM_MAX] = { "WORK", "AUDIT" };
static const char *const pubfail_names[PUBFAIL_MAX] = {
	"timeout", "nats", "not_ready", "overload"
};

/* HTTP statuses are 100-599: one counter per route and status. */
static unsigned long long	 requests[ROUTE_MAX][600];
static unsigned long long	 stored[STREAM_MAX];
static unsigned long long	 duplicates[STREAM_MAX];
static unsigned long long	 pubfails[PUBFAIL_MAX];
static unsigned long long	 reconnects;
static long long		 gauges[GAUGE_MAX];

/* Count one answered request. */
void
metrics_request(enum route route, int status)
{
	if (route < ROUTE_MAX && status >= 100 && status < 600)
		requests[route][status]++;
}

/* Count one event JetStream acknowledged. */
void
metrics_stored(enum stream_id stream, int duplicate)
{
	if (stream >= STREAM_MAX)
		return;
	if (duplicate)
		duplicates[stream]++;
	else
		stored[stream]++;
}

/* Count one publish answered 503. */
void
metrics_publish_failure(enum pubfail why)
{
	if (why < PUBFAIL_MAX)
		pubfails[why]++;
}

/* Count one NATS reconnection. */
void
metrics_reconnect(void)
{
	reconnects++;
}

/* Set a gauge. */
void
metrics_gauge(enum gauge g, long long value)
{
	if (g < GAUGE_MAX)
		gauges[g] = value;
}

/* One counter with one label, a sample per label value. */
static void
render_labelled(struct evbuffer *out, const char *name, const char *help,
    const char *label, const char *const *values,
    const unsigned long long *counts, int n)
{
	int	 i;

	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s counter\n", name,
	    help, name);
	for (i = 0; i < n; i++)
		evbuffer_add_printf(out, "%s{%s=\"%s\"} %llu\n", name, label,
		    values[i], counts[i]);
}

/* Render every metric. */
void
metrics_render(struct evbuffer *out)
{
	int	 r, s;

	evbuffer_add_printf(out,
	    "# HELP treaty_relay_build_info Build information.\n"
	    "# TYPE treaty_relay_build_info gauge\n"
	    "treaty_relay_build_info{version=\"%s\"} 1\n", TREATY_VERSION);
	evbuffer_add_printf(out,
	    "# HELP treaty_relay_http_requests_total HTTP requests answered, "
	    "by route and status.\n"
	    "# TYPE treaty_relay_http_requests_total counter\n");
	for (r = 0; r < ROUTE_MAX; r++)
		for (s = 100; s < 600; s++)
			if (requests[r][s] != 0)
				evbuffer_add_printf(out,
				    "treaty_relay_http_requests_total{route=\"%s\","
				    "status=\"%d\"} %llu\n", route_names[r], s,
				    requests[r][s]);
	render_labelled(out, "treaty_relay_events_stored_total",
	    "Events JetStream stored.", "stream", stream_names, stored,
	    STREAM_MAX);
	render_labelled(out, "treaty_relay_events_duplicate_total",
	    "Events JetStream reported as duplicates.", "stream",
	    stream_names, duplicates, STREAM_MAX);
	render_labelled(out, "treaty_relay_publish_failures_total",
	    "Events answered 503, by reason.", "reason", pubfail_names,
	    pubfails, PUBFAIL_MAX);
	evbuffer_add_printf(out,
	    "# HELP treaty_relay_publishes_in_flight Publishes waiting for "
	    "JetStream.\n"
	    "# TYPE treaty_relay_publishes_in_flight gauge\n"
	    "treaty_relay_publishes_in_flight %lld\n"
	    "# HELP treaty_relay_nats_connected 1 when connected to NATS.\n"
	    "# TYPE treaty_relay_nats_connected gauge\n"
	    "treaty_relay_nats_connected %lld\n"
	    "# HELP treaty_relay_streams_ready 1 when WORK and AUDIT exist "
	    "with the configured settings.\n"
	    "# TYPE treaty_relay_streams_ready gauge\n"
	    "treaty_relay_streams_ready %lld\n"
	    "# HELP treaty_relay_nats_reconnects_total NATS reconnections.\n"
	    "# TYPE treaty_relay_nats_reconnects_total counter\n"
	    "treaty_relay_nats_reconnects_total %llu\n",
	    gauges[GAUGE_PUBLISHES_IN_FLIGHT], gauges[GAUGE_NATS_CONNECTED],
	    gauges[GAUGE_STREAMS_READY], reconnects);
}
