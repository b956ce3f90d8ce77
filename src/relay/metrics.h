/*
 * metrics.h: counters and gauges, rendered as Prometheus text.  Loop
 * thread only.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

enum route {
	ROUTE_EVENTS,
	ROUTE_HEALTHZ,
	ROUTE_METRICS,
	ROUTE_INBOX,
	ROUTE_ADMIN,
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
	GAUGE_CONNECTIONS,	/* open on the main listener */
	GAUGE_CONNECTIONS_MAX,	/* its cap, as lowered to the descriptors */
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

/*
 * A push subscriber's index for the calls below, by name: the same index
 * for the same name after a reload.  A removed subscriber's metrics are
 * no longer shown; added again, they go on from where they were.
 */
int	metrics_subscriber_add(const char *name);
void	metrics_subscriber_gone(int sub);
/* One attempt's outcome; ms < 0 when no request was sent (no latency). */
void	metrics_delivery(int sub, enum delivery_outcome o, long long ms,
	    int redelivery);
void	metrics_dropped(int sub, enum drop_reason why);
void	metrics_in_flight(int sub, int delta);
void	metrics_request(enum route route, int status);
void	metrics_stored(enum stream_id stream, int duplicate);
void	metrics_publish_failure(enum pubfail why);
void	metrics_publish_failures(enum pubfail why, size_t n);
/*
 * An event delivered (2xx) ms after WORK stored it: the server's clock
 * against ours, so a negative wait counts as 0.
 */
void	metrics_latency(int sub, long long ms);
/*
 * An ordered subscriber's event passed its key ms after it came to this
 * instance (0: at once): what it waited for the events of its key before
 * it, or for a new holder's recovery.
 */
void	metrics_ordered_wait(int sub, long long ms);
void	metrics_reconnect(void);
void	metrics_attempt_unrecorded(void);
void	metrics_gauge(enum gauge g, long long value);
enum inbox_counter {
	INBOX_LEASED,		/* events handed out under a lease */
	INBOX_TAKEN,		/* events handed out by a destructive fetch */
	INBOX_ACKED,		/* leases acknowledged (DELETE 204) */
	INBOX_REDELIVERED,	/* handed out again after a lease ended */
	INBOX_EXTENDED,
	INBOX_RELEASED,
	INBOX_DROPPED,		/* leases ran out maxDeliver times */
	INBOX_COUNTER_MAX
};

/* An inbox's index, by name; see metrics_subscriber_add. */
int	metrics_inbox_add(const char *name);
void	metrics_inbox_gone(int inbox);
void	metrics_inbox(int inbox, enum inbox_counter c, unsigned n);
/* Long-polls waiting on an inbox. */
void	metrics_inbox_waiting(int inbox, int delta);
/* The front door's counters (SPEC 13). */
enum door_counter {
	DOOR_REFUSED,		/* connections over the cap, closed at once */
	DOOR_TIMED_OUT,		/* requests not whole by the deadline */
	DOOR_EVICTED,		/* idle connections closed for new ones */
	DOOR_COUNTER_MAX
};
void	metrics_door(enum door_counter c);
/* One event refused 429 for its producer's rate. */
void	metrics_rate_limited(const char *producer);
/*
 * At a reload, the producers still configured: reset, then each one kept.
 * The rate-limited counts of the others are no longer shown (kept, in
 * case they come back).
 */
void	metrics_producers_reset(void);
void	metrics_producer_kept(const char *name);
/* A configuration reload's result (SIGHUP). */
void	metrics_reload(int ok);
/* When the configuration in use was read, Unix seconds. */
void	metrics_config_loaded(long long when);
/*
 * When the certificate the main listener serves expires, Unix seconds
 * (at start and at each reload); -1 (no TLS) leaves the gauge out.
 */
void	metrics_tls_expiry(long long when);
/*
 * A subscriber's figures from JetStream (SPEC 15), push or pull, by name:
 * known 0 takes its gauges out of the exposition until they are known
 * again (JetStream has not answered for a while).  oldest_ns is when its
 * oldest unacknowledged event was stored (Unix ns), 0 when none is: the
 * age gauge is worked out from it when /metrics is read.
 */
void	metrics_subscriber_status(const char *name, int known,
	    long long pending, long long in_flight, int64_t oldest_ns);
/* Events dropped for the subscriber called name since the start. */
unsigned long long metrics_dropped_count(const char *name);
/* Append the whole exposition to out. */
void	metrics_render(struct evbuffer *out);

#endif
