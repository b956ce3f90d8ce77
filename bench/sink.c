/*
 * sink: a small libevent HTTP server for the benchmarks that stores
 * nothing.  One thread, one event_base.
 *
 *   sink [-H] [-b backlog] [-n count [-p prefix]] port [status]
 *
 * Plain (bench/run.sh): answer every request with status (default 202)
 * and a small JSON body; the HTTP ceiling of the ingest benchmark.
 *
 * -n count (bench/deliver.sh): a delivery target.  The "t" in each body
 * (the publisher's CLOCK_REALTIME in nanoseconds, see bench/load.c) gives
 * the publish-to-receipt latency; each ce-id is remembered, so that a
 * redelivery counts as a duplicate and not as a second event.  Once count
 * distinct ids have arrived, print one stats line and exit 0.  SIGINT or
 * SIGTERM before that prints the same line, then ends us as the signal
 * would.
 *
 * -H: hold every request open and never answer, so that the relay keeps
 * its deliveries in flight (its memory with many of them).  SIGINT or
 * SIGTERM prints how many are held.
 *
 * -p prefix (with -n): only events whose ce-id begins with prefix are
 * counted and timed; the others (a replay's, bench/deliver.sh phase e) are
 * counted apart, with their rate from the first to the last (other=,
 * other_per_s=).
 *
 * -b backlog: the listen(2) backlog, libevent's 128 by default.  A client
 * that opens connections in bursts overflows a short one, and each SYN
 * the kernel drops costs that connection a 1 s retransmission.  The stats
 * line counts accepted connections (conns=) to show such churn.
 */
#include <sys/resource.h>
#include <netinet/in.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "bench.h"

static struct {
	struct event_base	*base;
	int			 status;
	int			 hold;
	long			 expect;	/* 0: plain mode */
	int			 done;
	long			 conns;		/* accepted connections */
	/* counting mode */
	long			 received;
	long			 distinct;
	long			 no_t;		/* bodies without a usable "t" */
	long long		 first_ns;
	long long		 last_ns;
	long long		*lat;		/* ns, first receipt of each id */
	size_t			 nlat;
	size_t			 latcap;
	char			**ids;		/* open addressing, power of 2 */
	size_t			 idcap;
	long			 held;		/* hold mode: requests */
	const char		*prefix;	/* -p: the ids counted */
	long			 other;		/* the rest */
	long long		 other_first_ns, other_last_ns;
	int			 sig;		/* the signal that stopped us */
} sk = { .status = 202 };




/* FNV-1a, enough to spread "<prefix>-<n>" ids. */
static size_t
id_hash(const char *s)
{
	uint64_t	 h = 1469598103934665603ULL;

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

/* Remember id; 1 when new, 0 when seen before. */
static int
id_add(const char *id)
{
	char	**old;
	size_t	  i, j, oldcap;

	if ((size_t)sk.distinct * 2 >= sk.idcap) {
		/* Grow before the table is half full: probes stay short. */
		old = sk.ids;
		oldcap = sk.idcap;
		sk.idcap = oldcap ? oldcap * 2 : 1 << 16;
		sk.ids = must(calloc(sk.idcap, sizeof(*sk.ids)));
		for (i = 0; i < oldcap; i++) {
			if (old[i] == NULL)
				continue;
			for (j = id_hash(old[i]) & (sk.idcap - 1); sk.ids[j];
			    j = (j + 1) & (sk.idcap - 1))
				;
			sk.ids[j] = old[i];
		}
		free(old);
	}
	for (j = id_hash(id) & (sk.idcap - 1); sk.ids[j] != NULL;
	    j = (j + 1) & (sk.idcap - 1))
		if (strcmp(sk.ids[j], id) == 0)
			return 0;
	sk.ids[j] = must(strdup(id));
	return 1;
}

/* One key=value line that bench/deliver.sh can pick apart. */
static void
sink_stats(void)
{
	double	 secs = 0;

	if (sk.hold) {
		printf("sink: held=%ld conns=%ld cpu_s=%.2f\n", sk.held,
		    sk.conns, cpu_s());
		fflush(stdout);
		return;
	}
	if (sk.received > 0)
		secs = (double)(sk.last_ns - sk.first_ns) / 1e9;
	qsort(sk.lat, sk.nlat, sizeof(*sk.lat), ll_cmp);
	printf("sink: received=%ld distinct=%ld duplicates=%ld complete=%s "
	    "first_to_last_s=%.3f deliveries_per_s=%.0f "
	    "p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f no_t=%ld "
	    "conns=%ld cpu_s=%.2f other=%ld other_per_s=%.0f\n",
	    sk.received, sk.distinct, sk.received - sk.distinct,
	    sk.distinct >= sk.expect ? "yes" : "no", secs,
	    secs > 0 ? (double)(sk.distinct - 1) / secs : 0,
	    pct_ms(sk.lat, sk.nlat, 50), pct_ms(sk.lat, sk.nlat, 90),
	    pct_ms(sk.lat, sk.nlat, 99),
	    sk.nlat ? (double)sk.lat[sk.nlat - 1] / 1e6 : 0, sk.no_t,
	    sk.conns, cpu_s(), sk.other, sk.other > 1 ? (double)(sk.other - 1) /
	    ((double)(sk.other_last_ns - sk.other_first_ns) / 1e9) : 0);
	fflush(stdout);
}

/* The "t" of a body such as {"t":1234,...}, or -1. */
static long long
body_t(struct evbuffer *b)
{
	size_t		 len = evbuffer_get_length(b), n;
	const char	*p, *k;
	char		 num[24], *end;
	long long	 t;

	if (len == 0 || (p = (const char *)evbuffer_pullup(b, -1)) == NULL)
		return -1;
	if ((k = memmem(p, len, "\"t\":", 4)) == NULL)
		return -1;
	k += 4;
	/* The body is not NUL-terminated: copy the number out first. */
	n = len - (size_t)(k - p);
	if (n > sizeof(num) - 1)
		n = sizeof(num) - 1;
	memcpy(num, k, n);
	num[n] = '\0';
	t = strtoll(num, &end, 10);
	return end == num ? -1 : t;
}

/* Counting mode: note one delivery. */
static void
sink_count(struct evhttp_request *req, long long now)
{
	const char	*id;
	long long	 t;

	id = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "ce-id");
	if (sk.prefix != NULL && (id == NULL ||
	    strncmp(id, sk.prefix, strlen(sk.prefix)) != 0)) {
		/* Not one of ours: counted apart (duplicates too). */
		if (sk.other++ == 0)
			sk.other_first_ns = now;
		sk.other_last_ns = now;
		return;
	}
	sk.received++;
	if (sk.first_ns == 0)
		sk.first_ns = now;
	sk.last_ns = now;
	if (!id_add(id != NULL ? id : ""))
		return;			/* a redelivery */
	sk.distinct++;
	t = body_t(evhttp_request_get_input_buffer(req));
	if (t <= 0) {
		sk.no_t++;
		return;
	}
	if (sk.nlat == sk.latcap) {
		sk.latcap = sk.latcap ? sk.latcap * 2 : 65536;
		sk.lat = must(realloc(sk.lat, sk.latcap * sizeof(*sk.lat)));
	}
	sk.lat[sk.nlat++] = now - t;
}

/* evhttp: a connection was accepted; its bufferevent, as evhttp's own. */
static struct bufferevent *
sink_bev_cb(struct event_base *base, void *arg)
{
	(void)arg;
	sk.conns++;
	return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
}

/* Every request: count, hold or answer. */
static void
sink_cb(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*b;
	struct timeval	 linger = { 0, 300000 };

	(void)arg;
	if (sk.hold) {
		/*
		 * Never answered.  evhttp stops reading a connection while its
		 * request is pending, so a peer that gives up goes unnoticed:
		 * held counts requests received, not connections still open.
		 */
		sk.held++;
		return;
	}
	if (sk.expect > 0 && !sk.done) {
		sink_count(req, clock_ns(CLOCK_REALTIME));
		if (sk.distinct >= sk.expect) {
			sk.done = 1;
			sink_stats();
			/* Let the last answers reach the relay before exiting. */
			event_base_loopexit(sk.base, &linger);
		}
	}
	if (sk.status == 204) {
		evhttp_send_reply(req, sk.status, NULL, NULL);
		return;
	}
	b = evbuffer_new();
	evbuffer_add_printf(b, "{\"id\":\"x\",\"duplicate\":false}");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, sk.status, NULL, b);
	evbuffer_free(b);
}

/* SIGINT, SIGTERM: report what arrived so far, then stop. */
static void
sink_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	if (!sk.done)
		sink_stats();
	sk.sig = (int)sig;
	event_base_loopbreak(sk.base);
}

/* How to call us; exit 2. */
static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: sink [-H] [-b backlog] [-n count [-p prefix]] "
	    "port [status]\n");
	exit(2);
}

/* Options, the listener with its backlog, then the loop. */
int
main(int argc, char **argv)
{
	struct evhttp		*http;
	struct evconnlistener	*lev;
	struct event		*sigint, *sigterm;
	struct sockaddr_in	 sin;
	int			 ch, port, backlog = -1;

	while ((ch = getopt(argc, argv, "b:Hn:p:")) != -1) {
		switch (ch) {
		case 'b':
			if ((backlog = atoi(optarg)) < 1)
				usage();
			break;
		case 'H':
			sk.hold = 1;
			break;
		case 'p':
			sk.prefix = optarg;
			break;
		case 'n':
			if ((sk.expect = atol(optarg)) <= 0)
				usage();
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2 || (sk.hold && sk.expect))
		usage();
	if ((port = atoi(argv[0])) < 1 || port > 65535)
		usage();
	if (argc > 1)
		sk.status = atoi(argv[1]);
	/* A relay that gives up on a connection must not kill us mid-write. */
	signal(SIGPIPE, SIG_IGN);
	sk.base = event_base_new();
	http = evhttp_new(sk.base);
	evhttp_set_max_body_size(http, 1024 * 1024);
	if (sk.hold)
		evhttp_set_timeout(http, 3600);	/* the relay decides */
	evhttp_set_gencb(http, sink_cb, NULL);
	evhttp_set_bevcb(http, sink_bev_cb, NULL);
	/* Our own listener: evhttp_bind_socket has no say in the backlog. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lev = evconnlistener_new_bind(sk.base, NULL, NULL,
	    LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
	    backlog, (struct sockaddr *)&sin, sizeof(sin));
	if (lev == NULL) {
		perror("bind");
		return 1;
	}
	if (evhttp_bind_listener(http, lev) == NULL) {
		fprintf(stderr, "sink: cannot listen\n");
		return 1;
	}
	if (sk.hold || sk.expect) {
		sigint = evsignal_new(sk.base, SIGINT, sink_signal_cb, NULL);
		sigterm = evsignal_new(sk.base, SIGTERM, sink_signal_cb, NULL);
		evsignal_add(sigint, NULL);
		evsignal_add(sigterm, NULL);
	}
	event_base_dispatch(sk.base);
	if (sk.sig != 0) {
		/*
		 * Die of the signal, as an uncaught one would: a shell running
		 * us in the foreground stops its script only if we do.
		 */
		signal(sk.sig, SIG_DFL);
		raise(sk.sig);
	}
	return sk.expect && !sk.done ? 1 : 0;
}
