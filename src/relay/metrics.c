/*
 * metrics.c: the relay's counters and gauges, as Prometheus text format
 * 0.0.4.  Loop thread only, so plain integers suffice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "treaty.h"
#include "metrics.h"
#include "substate.h"
#include "util.h"

static const char *const route_names[ROUTE_MAX] = {
	"events", "healthz", "metrics", "inbox", "admin", "other"
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
static unsigned long long	 attempts_unrecorded;
static long long		 gauges[GAUGE_MAX];

/*
 * The two histograms of a subscriber (SPEC 17), buckets in milliseconds
 * (Prometheus le="..." in seconds): one attempt's HTTP exchange, up to
 * the delivery timeout's order; and an event's wait from its store in
 * WORK to its 2xx, up to a day, as it shows outages.
 */
#define NLAT	14
struct histo_def {
	const char	*name;
	const char	*help;
	long long	 le_ms[NLAT];
};
static const struct histo_def histo_defs[3] = {
	{ "treaty_relay_delivery_duration_seconds",
	  "One delivery attempt's HTTP exchange.",
	  { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
	    60000, 300000 } },
	{ "treaty_relay_delivery_latency_seconds",
	  "From an event's store in WORK to its delivery (2xx).",
	  { 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 900000,
	    3600000, 14400000, 86400000 } },
	/* Ordered subscribers only (SPEC 18): shown once one has waited. */
	{ "treaty_relay_ordered_wait_seconds",
	  "How long an ordered subscriber's event waited for its key.",
	  { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 30000, 300000,
	    3600000 } }
};
enum { HISTO_DURATION, HISTO_LATENCY, HISTO_ORDERED, NHISTO };
struct histo {
	unsigned long long	 le[NLAT + 1];	/* last: +Inf */
	unsigned long long	 count;
	double			 sum;		/* seconds */
};

/*
 * Subscribers and inboxes have a slot each, found by name, that outlives
 * a reload: a subscriber removed and added again goes on counting where
 * it left off (Prometheus counters never go down), and a removed one is
 * no longer shown.
 */
#define METRICS_NAME_MAX	64
struct sub_metrics {
	char			 name[METRICS_NAME_MAX + 1];
	int			 active;
	unsigned long long	 outcomes[DELIVERY_OUTCOME_MAX];
	unsigned long long	 dropped[DROP_REASON_MAX];
	unsigned long long	 redeliveries;
	struct histo		 h[NHISTO];
	long long		 in_flight;
};
static struct sub_metrics	*subs;
static int			 nsubs;
static const char *const outcome_names[DELIVERY_OUTCOME_MAX] = {
	"delivered", "retry", "dropped"
};
static const char *const drop_names[DROP_REASON_MAX] = {
	"rejected", "invalid", "max_deliver"
};

struct inbox_metrics {
	char			 name[METRICS_NAME_MAX + 1];
	int			 active;
	unsigned long long	 counts[INBOX_COUNTER_MAX];
	long long		 waiting;
};
static struct inbox_metrics	*inboxes;
static int			 ninboxes;
static unsigned long long	 reloads[2];	/* ok, error */
static unsigned long long	 door_counts[DOOR_COUNTER_MAX];
/*
 * Events refused 429, by producer name: shown once there is one, while
 * that producer is configured (removed, kept: added again, it goes on).
 */
struct limited_metrics {
	char			 name[METRICS_NAME_MAX + 1];
	int			 active;	/* configured: shown */
	unsigned long long	 n;
};
static struct limited_metrics	*limited;
static int			 nlimited;
/* JetStream's figures per subscriber, push and pull (SPEC 15). */
struct status_metrics {
	char			 name[METRICS_NAME_MAX + 1];
	int			 active;	/* known: shown */
	long long		 pending, in_flight;
	int64_t			 oldest_ns;	/* Unix ns; 0: none pending */
};
static struct status_metrics	*statuses;
static int			 nstatuses;
static long long		 loaded_at;	/* Unix seconds */
static long long		 tls_expiry = -1;	/* Unix seconds; -1: no TLS */
static const struct {
	const char	*name, *help;
} inbox_counters[INBOX_COUNTER_MAX] = {
	{ "treaty_relay_inbox_leases_total", "Events handed out under a "
	  "lease, by inbox." },
	{ "treaty_relay_inbox_taken_total", "Events handed out by a "
	  "destructive fetch (acknowledged at once), by inbox." },
	{ "treaty_relay_inbox_acks_total", "Leases acknowledged, by inbox." },
	{ "treaty_relay_inbox_redeliveries_total", "Events handed out again "
	  "after a lease expired or was released, by inbox." },
	{ "treaty_relay_inbox_extends_total", "Leases extended, by inbox." },
	{ "treaty_relay_inbox_releases_total", "Leases released, by inbox." },
	{ "treaty_relay_inbox_dropped_total", "Events whose leases ran out "
	  "maxDeliver times (recorded in AUDIT), by inbox." },
};

/*
 * The slot called name in *slots (n of them, each size bytes, the name
 * its first member and "active" its second), added when there is none.
 */
static int
slot_find(void **slots, int *n, size_t size, const char *name)
{
	char	*p;
	int	 i;

	for (i = 0; i < *n; i++) {
		p = (char *)*slots + (size_t)i * size;
		if (strcmp(p, name) == 0)
			break;
	}
	if (i == *n) {
		*slots = xrealloc(*slots, (size_t)(*n + 1) * size);
		p = (char *)*slots + (size_t)i * size;
		memset(p, 0, size);
		snprintf(p, METRICS_NAME_MAX + 1, "%s", name);
		(*n)++;
	}
	return i;
}

/* Hide every producer's rate-limited count; see metrics.h. */
void
metrics_producers_reset(void)
{
	int	 i;

	for (i = 0; i < nlimited; i++)
		limited[i].active = 0;
}

/* Show it again for a producer still configured; see metrics.h. */
void
metrics_producer_kept(const char *name)
{
	int	 i;

	for (i = 0; i < nlimited; i++)
		if (strcmp(limited[i].name, name) == 0)
			limited[i].active = 1;
}

/* An inbox's slot, shown from now on. */
int
metrics_inbox_add(const char *name)
{
	void	*v = inboxes;
	int	 i = slot_find(&v, &ninboxes, sizeof(*inboxes), name);

	inboxes = v;
	inboxes[i].active = 1;
	return i;
}

/* A removed inbox's slot: no longer shown (its counts are kept). */
void
metrics_inbox_gone(int inbox)
{
	if (inbox >= 0 && inbox < ninboxes)
		inboxes[inbox].active = 0;
}

/* Count inbox events. */
void
metrics_inbox(int inbox, enum inbox_counter c, unsigned n)
{
	if (inbox >= 0 && inbox < ninboxes && c < INBOX_COUNTER_MAX)
		inboxes[inbox].counts[c] += n;
}

/* Long-polls waiting. */
void
metrics_inbox_waiting(int inbox, int delta)
{
	if (inbox >= 0 && inbox < ninboxes)
		inboxes[inbox].waiting += delta;
}

/* The inbox metrics. */
static void
render_inboxes(struct evbuffer *out)
{
	int	 i, c;

	for (i = 0; i < ninboxes && !inboxes[i].active; i++)
		;
	if (i == ninboxes)
		return;
	for (c = 0; c < INBOX_COUNTER_MAX; c++) {
		evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s counter\n",
		    inbox_counters[c].name, inbox_counters[c].help,
		    inbox_counters[c].name);
		for (i = 0; i < ninboxes; i++)
			if (inboxes[i].active)
				evbuffer_add_printf(out,
				    "%s{inbox=\"%s\"} %llu\n",
				    inbox_counters[c].name, inboxes[i].name,
				    inboxes[i].counts[c]);
	}
	evbuffer_add_printf(out, "# HELP treaty_relay_inbox_long_polls "
	    "Inbox requests waiting for events.\n"
	    "# TYPE treaty_relay_inbox_long_polls gauge\n");
	for (i = 0; i < ninboxes; i++)
		if (inboxes[i].active)
			evbuffer_add_printf(out,
			    "treaty_relay_inbox_long_polls{inbox=\"%s\"} "
			    "%lld\n", inboxes[i].name, inboxes[i].waiting);
}

/* A push subscriber's slot, shown from now on. */
int
metrics_subscriber_add(const char *name)
{
	void	*v = subs;
	int	 i = slot_find(&v, &nsubs, sizeof(*subs), name);

	subs = v;
	subs[i].active = 1;
	return i;
}

/* A removed subscriber's slot: no longer shown (its counts are kept). */
void
metrics_subscriber_gone(int sub)
{
	if (sub >= 0 && sub < nsubs)
		subs[sub].active = 0;
}

/* A front door counter. */
void
metrics_door(enum door_counter c)
{
	if (c < DOOR_COUNTER_MAX)
		door_counts[c]++;
}

/* One event refused for its producer's rate. */
void
metrics_rate_limited(const char *producer)
{
	void	*v = limited;
	int	 i = slot_find(&v, &nlimited, sizeof(*limited), producer);

	limited = v;
	limited[i].active = 1;
	limited[i].n++;
}

/* A subscriber's figures from JetStream; see metrics.h. */
void
metrics_subscriber_status(const char *name, int known, long long pending,
    long long in_flight, int64_t oldest_ns)
{
	void	*v = statuses;
	int	 i = slot_find(&v, &nstatuses, sizeof(*statuses), name);

	statuses = v;
	statuses[i].active = known;
	statuses[i].pending = pending;
	statuses[i].in_flight = in_flight;
	statuses[i].oldest_ns = oldest_ns;
}

/* Drops since the start, push or pull; see metrics.h. */
unsigned long long
metrics_dropped_count(const char *name)
{
	unsigned long long	 n = 0;
	int			 i, r;

	for (i = 0; i < nsubs; i++)
		if (strcmp(subs[i].name, name) == 0)
			for (r = 0; r < DROP_REASON_MAX; r++)
				n += subs[i].dropped[r];
	for (i = 0; i < ninboxes; i++)
		if (strcmp(inboxes[i].name, name) == 0)
			n += inboxes[i].counts[INBOX_DROPPED];
	return n;
}

/* 1 while a subscriber of that name is configured (push or pull). */
static int
configured(const char *name)
{
	int	 i;

	for (i = 0; i < nsubs; i++)
		if (subs[i].active && strcmp(subs[i].name, name) == 0)
			return 1;
	for (i = 0; i < ninboxes; i++)
		if (inboxes[i].active && strcmp(inboxes[i].name, name) == 0)
			return 1;
	return 0;
}

/*
 * The subscribers' figures from JetStream, those known and of a
 * subscriber still configured (a reload that removes one takes its
 * gauges away at once, as its other metrics).
 */
static void
render_statuses(struct evbuffer *out)
{
	static const char *const names[3] = {
		"treaty_relay_subscriber_pending",
		"treaty_relay_subscriber_in_flight",
		"treaty_relay_subscriber_oldest_pending_age_seconds"
	};
	static const char *const helps[3] = {
		"Events stored for the subscriber and not yet handed out, "
		"across all instances (JetStream's consumer info).",
		"Events handed out to the subscriber and not acknowledged, "
		"across all instances (JetStream's consumer info).",
		"Age of the oldest event not yet acknowledged by the "
		"subscriber, handed out or not, across all instances; 0 when "
		"none is pending."
	};
	struct timespec	 ts;
	long long	 now, age;
	int		 g, i;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (long long)ts.tv_sec * NS_PER_S + ts.tv_nsec;
	for (g = 0; g < 3; g++) {
		evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s gauge\n",
		    names[g], helps[g], names[g]);
		for (i = 0; i < nstatuses; i++) {
			if (!statuses[i].active ||
			    !configured(statuses[i].name))
				continue;
			if (g < 2) {
				evbuffer_add_printf(out,
				    "%s{subscriber=\"%s\"} %lld\n", names[g],
				    statuses[i].name, g == 0 ?
				    statuses[i].pending : statuses[i].in_flight);
				continue;
			}
			/*
			 * Aged now, not when JetStream answered: it grows
			 * between refreshes as the event waits.  NATS's clock
			 * stamped the event; one a little ahead of ours
			 * reads 0, not a negative age.
			 */
			age = statuses[i].oldest_ns > 0 && now >
			    statuses[i].oldest_ns ? now -
			    statuses[i].oldest_ns : 0;
			evbuffer_add_printf(out, "%s{subscriber=\"%s\"} "
			    "%lld.%03lld\n", names[g], statuses[i].name,
			    age / NS_PER_S, age % NS_PER_S / NS_PER_MS);
		}
	}
}

/* A reload's outcome. */
void
metrics_reload(int ok)
{
	reloads[ok ? 0 : 1]++;
}

/* When the configuration in use was read (Unix seconds). */
void
metrics_config_loaded(long long when)
{
	loaded_at = when;
}

/* When the served certificate expires (Unix seconds), or -1. */
void
metrics_tls_expiry(long long when)
{
	tls_expiry = when;
}

/* One observation of ms into h. */
static void
histo_add(struct histo *h, const struct histo_def *d, long long ms)
{
	size_t	 b;

	for (b = 0; b < NLAT && ms > d->le_ms[b]; b++)
		;
	h->le[b]++;
	h->count++;
	h->sum += (double)ms / 1000.0;
}

/* Count one delivery attempt and its duration. */
void
metrics_delivery(int sub, enum delivery_outcome o, long long ms,
    int redelivery)
{
	if (sub < 0 || sub >= nsubs || o >= DELIVERY_OUTCOME_MAX)
		return;
	subs[sub].outcomes[o]++;
	if (redelivery)
		subs[sub].redeliveries++;
	if (ms >= 0)		/* else no request was sent */
		histo_add(&subs[sub].h[HISTO_DURATION],
		    &histo_defs[HISTO_DURATION], ms);
}

/* An event delivered ms after it was stored; see metrics.h. */
void
metrics_latency(int sub, long long ms)
{
	if (sub >= 0 && sub < nsubs)
		histo_add(&subs[sub].h[HISTO_LATENCY],
		    &histo_defs[HISTO_LATENCY], ms < 0 ? 0 : ms);
}

/* An ordered event passed its key after ms; see metrics.h. */
void
metrics_ordered_wait(int sub, long long ms)
{
	if (sub >= 0 && sub < nsubs)
		histo_add(&subs[sub].h[HISTO_ORDERED],
		    &histo_defs[HISTO_ORDERED], ms < 0 ? 0 : ms);
}

/* Count one event a subscriber will never get. */
void
metrics_dropped(int sub, enum drop_reason why)
{
	if (sub >= 0 && sub < nsubs && why < DROP_REASON_MAX)
		subs[sub].dropped[why]++;
}

/* Deliveries in flight to a subscriber. */
void
metrics_in_flight(int sub, int delta)
{
	if (sub >= 0 && sub < nsubs)
		subs[sub].in_flight += delta;
}

/* One subscriber's histogram h, as d says. */
static void
render_histo(struct evbuffer *out, const struct histo_def *d,
    const char *name, const struct histo *h)
{
	unsigned long long	 cum = 0;
	size_t			 b;

	for (b = 0; b <= NLAT; b++) {
		cum += h->le[b];
		if (b < NLAT)
			evbuffer_add_printf(out, "%s_bucket{subscriber=\"%s\","
			    "le=\"%g\"} %llu\n", d->name, name,
			    (double)d->le_ms[b] / 1000.0, cum);
		else
			evbuffer_add_printf(out, "%s_bucket{subscriber=\"%s\","
			    "le=\"+Inf\"} %llu\n", d->name, name, cum);
	}
	evbuffer_add_printf(out, "%s_sum{subscriber=\"%s\"} %.3f\n"
	    "%s_count{subscriber=\"%s\"} %llu\n", d->name, name, h->sum,
	    d->name, name, h->count);
}

/* The delivery metrics of the subscribers configured now. */
static void
render_deliveries(struct evbuffer *out)
{
	const struct sub_metrics	*m;
	int				 i, o;

	for (i = 0; i < nsubs && !subs[i].active; i++)
		;
	if (i == nsubs)
		return;
	evbuffer_add_printf(out, "# HELP treaty_relay_deliveries_total "
	    "Delivery attempts, by subscriber and outcome.\n"
	    "# TYPE treaty_relay_deliveries_total counter\n");
	for (m = subs; m < subs + nsubs; m++)
		for (o = 0; m->active && o < DELIVERY_OUTCOME_MAX; o++)
			evbuffer_add_printf(out, "treaty_relay_deliveries_total"
			    "{subscriber=\"%s\",outcome=\"%s\"} %llu\n",
			    m->name, outcome_names[o], m->outcomes[o]);
	evbuffer_add_printf(out, "# HELP "
	    "treaty_relay_deliveries_terminated_total Events a subscriber "
	    "will never get, by reason (recorded in AUDIT).\n"
	    "# TYPE treaty_relay_deliveries_terminated_total counter\n");
	for (m = subs; m < subs + nsubs; m++)
		for (o = 0; m->active && o < DROP_REASON_MAX; o++)
			evbuffer_add_printf(out,
			    "treaty_relay_deliveries_terminated_total"
			    "{subscriber=\"%s\",reason=\"%s\"} %llu\n",
			    m->name, drop_names[o], m->dropped[o]);
	evbuffer_add_printf(out, "# HELP treaty_relay_redeliveries_total "
	    "Attempts after the first.\n"
	    "# TYPE treaty_relay_redeliveries_total counter\n");
	for (m = subs; m < subs + nsubs; m++)
		if (m->active)
			evbuffer_add_printf(out,
			    "treaty_relay_redeliveries_total"
			    "{subscriber=\"%s\"} %llu\n", m->name,
			    m->redeliveries);
	evbuffer_add_printf(out, "# HELP treaty_relay_deliveries_in_flight "
	    "Deliveries under way.\n"
	    "# TYPE treaty_relay_deliveries_in_flight gauge\n");
	for (m = subs; m < subs + nsubs; m++)
		if (m->active)
			evbuffer_add_printf(out,
			    "treaty_relay_deliveries_in_flight"
			    "{subscriber=\"%s\"} %lld\n", m->name,
			    m->in_flight);
	for (o = 0; o < NHISTO; o++) {
		evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s histogram\n",
		    histo_defs[o].name, histo_defs[o].help, histo_defs[o].name);
		for (m = subs; m < subs + nsubs; m++)
			if (m->active && (o != HISTO_ORDERED ||
			    m->h[o].count > 0))
				render_histo(out, &histo_defs[o], m->name,
				    &m->h[o]);
	}
}

/* One subscriber's state samples: 1 for its state, 0 for the others. */
static void
render_state(struct evbuffer *out, const char *name)
{
	enum substate	 cur = substate_get(name);
	int		 st;

	for (st = 0; st < SUBSTATE_N; st++)
		evbuffer_add_printf(out, "treaty_relay_subscriber_state"
		    "{subscriber=\"%s\",state=\"%s\"} %d\n", name,
		    substate_text((enum substate)st), cur == (enum substate)st);
}

/* Every running subscriber's state (SPEC 17), push and pull. */
static void
render_states(struct evbuffer *out)
{
	const struct sub_metrics	*m;
	int				 i;

	evbuffer_add_printf(out, "# HELP treaty_relay_subscriber_state "
	    "A subscriber's state: 1 for the one it is in.\n"
	    "# TYPE treaty_relay_subscriber_state gauge\n");
	for (m = subs; m < subs + nsubs; m++)
		if (m->active)
			render_state(out, m->name);
	for (i = 0; i < ninboxes; i++)
		if (inboxes[i].active)
			render_state(out, inboxes[i].name);
}

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
	metrics_publish_failures(why, 1);
}

/* Count n publishes that failed the same way (a refused batch). */
void
metrics_publish_failures(enum pubfail why, size_t n)
{
	if (why < PUBFAIL_MAX)
		pubfails[why] += n;
}

/* Count one attempt not recorded in ATTEMPTS. */
void
metrics_attempt_unrecorded(void)
{
	attempts_unrecorded++;
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
	    "treaty_relay_nats_reconnects_total %llu\n"
	    "# HELP treaty_relay_attempts_unrecorded_total Delivery attempts "
	    "not recorded in ATTEMPTS (NATS away or behind).\n"
	    "# TYPE treaty_relay_attempts_unrecorded_total counter\n"
	    "treaty_relay_attempts_unrecorded_total %llu\n",
	    gauges[GAUGE_PUBLISHES_IN_FLIGHT], gauges[GAUGE_NATS_CONNECTED],
	    gauges[GAUGE_STREAMS_READY], reconnects, attempts_unrecorded);
	evbuffer_add_printf(out,
	    "# HELP treaty_relay_config_reloads_total Configuration reloads "
	    "(SIGHUP), by result.\n"
	    "# TYPE treaty_relay_config_reloads_total counter\n"
	    "treaty_relay_config_reloads_total{result=\"ok\"} %llu\n"
	    "treaty_relay_config_reloads_total{result=\"error\"} %llu\n"
	    "# HELP treaty_relay_config_loaded_timestamp_seconds When the "
	    "configuration in use was read.\n"
	    "# TYPE treaty_relay_config_loaded_timestamp_seconds gauge\n"
	    "treaty_relay_config_loaded_timestamp_seconds %lld\n",
	    reloads[0], reloads[1], loaded_at);
	if (tls_expiry >= 0)
		evbuffer_add_printf(out,
		    "# HELP treaty_relay_tls_certificate_expiry_timestamp_seconds "
		    "When the certificate the main listener serves expires "
		    "(its notAfter).\n"
		    "# TYPE treaty_relay_tls_certificate_expiry_timestamp_seconds "
		    "gauge\n"
		    "treaty_relay_tls_certificate_expiry_timestamp_seconds %lld\n",
		    tls_expiry);
	evbuffer_add_printf(out,
	    "# HELP treaty_relay_connections Connections open on the main "
	    "listener.\n"
	    "# TYPE treaty_relay_connections gauge\n"
	    "treaty_relay_connections %lld\n"
	    "# HELP treaty_relay_connections_max The main listener's "
	    "connection cap: TREATY_RELAY_MAX_CONNECTIONS, or less when the "
	    "descriptor limit cannot hold it.\n"
	    "# TYPE treaty_relay_connections_max gauge\n"
	    "treaty_relay_connections_max %lld\n"
	    "# HELP treaty_relay_connections_refused_total Connections closed "
	    "at once: over the cap (or the control listener's reserve) with "
	    "none idle to close instead.\n"
	    "# TYPE treaty_relay_connections_refused_total counter\n"
	    "treaty_relay_connections_refused_total %llu\n"
	    "# HELP treaty_relay_connections_evicted_total Idle connections "
	    "closed to admit a new one at the cap (either listener).\n"
	    "# TYPE treaty_relay_connections_evicted_total counter\n"
	    "treaty_relay_connections_evicted_total %llu\n"
	    "# HELP treaty_relay_requests_timed_out_total Connections closed "
	    "because a request was not whole within "
	    "TREATY_RELAY_REQUEST_TIMEOUT_SECONDS of its first byte.\n"
	    "# TYPE treaty_relay_requests_timed_out_total counter\n"
	    "treaty_relay_requests_timed_out_total %llu\n",
	    gauges[GAUGE_CONNECTIONS], gauges[GAUGE_CONNECTIONS_MAX],
	    door_counts[DOOR_REFUSED], door_counts[DOOR_EVICTED],
	    door_counts[DOOR_TIMED_OUT]);
	evbuffer_add_printf(out, "# HELP treaty_relay_rate_limited_total Events "
	    "refused 429 for their producer's rate, by producer.\n"
	    "# TYPE treaty_relay_rate_limited_total counter\n");
	for (r = 0; r < nlimited; r++)
		if (limited[r].active)
			evbuffer_add_printf(out,
			    "treaty_relay_rate_limited_total{producer=\"%s\"} "
			    "%llu\n", limited[r].name, limited[r].n);
	render_deliveries(out);
	render_inboxes(out);
	render_states(out);
	render_statuses(out);
}
