/*
 * metrics.h: counters and gauges, rendered as Prometheus text.  Loop
 * thread only.
 */
#ifndef METRICS_H
#define METRICS_H

struct evbuffer;

enum route {
	ROUTE_EVENTS,
	ROUTE_HEALTHZ,
	ROUTE_METRICS,
	ROUTE_OTHER,
	ROUTE_MAX
};

enum stream_id {
	STREAM_WORK,
	STREAM_AUDIT,
	STREAM_MAX
};

enum pubfail {
	PUBFAIL_TIMEOUT,	/* no acknowledgement within the timeout */
	PUBFAIL_NATS,		/* nats.c or JetStream returned an error */
	PUBFAIL_NOT_READY,	/* not connected, or streams not ready */
	PUBFAIL_OVERLOAD,	/* too many publishes in flight */
	PUBFAIL_MAX
};

enum gauge {
	GAUGE_NATS_CONNECTED,
	GAUGE_STREAMS_READY,
	GAUGE_PUBLISHES_IN_FLIGHT,
	GAUGE_MAX
};

enum delivery_outcome {
	DELIVERY_OK,		/* 2xx, acknowledged */
	DELIVERY_RETRY,		/* failed; JetStream redelivers later */
	DELIVERY_DROPPED,	/* terminated: never delivered to it */
	DELIVERY_OUTCOME_MAX
};

enum drop_reason {
	DROP_REJECTED,		/* the subscriber answered another 4xx */
	DROP_INVALID,		/* the stored message is not an event */
	DROP_EXHAUSTED,		/* maxDeliver attempts failed */
	DROP_REASON_MAX
};

/* Subscriber names for the per-subscriber metrics (index = config order). */
void	metrics_subscribers(const char *const *names, int n);
/* One attempt's outcome; ms < 0 when no request was sent (no latency). */
void	metrics_delivery(int sub, enum delivery_outcome o, long long ms,
	    int redelivery);
void	metrics_dropped(int sub, enum drop_reason why);
void	metrics_in_flight(int sub, int delta);
void	metrics_request(enum route route, int status);
void	metrics_stored(enum stream_id stream, int duplicate);
void	metrics_publish_failure(enum pubfail why);
void	metrics_reconnect(void);
void	metrics_gauge(enum gauge g, long long value);
/* Append the whole exposition to out. */
void	metrics_render(struct evbuffer *out);

#endif
