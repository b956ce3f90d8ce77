/*
 * load: the publisher of the delivery benchmark (bench/deliver.sh).  One
 * thread, one event_base, non-blocking.
 *
 *   load [-p port] [-n count] [-r rate] [-c conns] [-s subject]
 *        [-i idprefix] [-b bodysize] [-k keys]
 *
 * POSTs count binary-mode CloudEvents to the relay at
 * http://127.0.0.1:port/v1/events/subject with the token in BENCH_TOKEN.
 * Every ce-id is unique (idprefix-seq), and every body carries its send
 * time as CLOCK_REALTIME nanoseconds, {"t":...,"pad":"..."}, padded to
 * bodysize bytes, so that bench/sink can measure publish-to-receipt.
 *
 * Each connection has one request outstanding at a time.  With -r 0 (the
 * default) every connection sends its next request from the completion
 * callback of the last; with -r rate a 1 ms timer (on the precise clock)
 * sends what is due on an absolute schedule (event k at start + k / rate),
 * so a late tick is made up at the next one instead of drifting.
 *
 * With -k keys, event seq carries ce-partitionkey key-<seq % keys> (the
 * ordering key of an ordered subscriber, SPEC 18).
 *
 * Prints one key=value line: sent, 202s, other statuses, errors, elapsed,
 * achieved rate, the relay's answer time p50/p99 and, at a fixed rate,
 * how far behind its schedule the sender fell at worst.
 */
#include <sys/resource.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "bench.h"

#define MAX_STATUS	600

struct conn {
	struct evhttp_connection *evcon;
	long long		 start;		/* monotonic ns of the request */
	int			 busy;
};

static struct {
	struct event_base	*base;
	struct conn		*conns;
	int			 nconns;
	long			 count;
	double			 rate;
	long			 sent;
	long			 completed;
	long			 status[MAX_STATUS];	/* [0]: no answer */
	long long		 t0;		/* monotonic ns of the start */
	long long		 tend;
	long long		 max_lag;	/* ns behind schedule, worst */
	long long		*lat;		/* answer times, ns */
	char			 host[32];
	char			 path[128];
	char			 auth[256];
	char			 type[128];
	char			 idprefix[64];
	char			*pad;
	size_t			 bodysize;
	long			 keys;		/* -k: partition keys, 0: none */
	int			 sig;		/* the signal that stopped us */
} ld;





/* Events due by now on the absolute schedule (all of them at -r 0). */
static long
load_due(void)
{
	double	 due;

	if (ld.rate <= 0)
		return ld.count;
	due = (double)(clock_ns(CLOCK_MONOTONIC) - ld.t0) / 1e9 * ld.rate + 1;
	return due >= (double)ld.count ? ld.count : (long)due;
}

static void	load_done_cb(struct evhttp_request *, void *);

/* Send the next event on c. */
static void
load_send(struct conn *c)
{
	struct evhttp_request	*req;
	struct evkeyvalq	*oh;
	struct evbuffer		*b;
	char			 id[96], key[32];
	long long		 sched, now;
	long			 seq = ld.sent++;

	c->busy = 1;
	req = must(evhttp_request_new(load_done_cb, c));
	oh = evhttp_request_get_output_headers(req);
	snprintf(id, sizeof(id), "%s-%ld", ld.idprefix, seq);
	evhttp_add_header(oh, "Host", ld.host);
	evhttp_add_header(oh, "Authorization", ld.auth);
	evhttp_add_header(oh, "ce-specversion", "1.0");
	evhttp_add_header(oh, "ce-id", id);
	evhttp_add_header(oh, "ce-source", "/bench/load");
	evhttp_add_header(oh, "ce-type", ld.type);
	evhttp_add_header(oh, "Content-Type", "application/json");
	if (ld.keys > 0) {
		snprintf(key, sizeof(key), "key-%ld", seq % ld.keys);
		evhttp_add_header(oh, "ce-partitionkey", key);
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (ld.rate > 0) {
		sched = ld.t0 + (long long)((double)seq * 1e9 / ld.rate);
		if (now - sched > ld.max_lag)
			ld.max_lag = now - sched;
	}
	c->start = now;
	b = evhttp_request_get_output_buffer(req);
	/* The time last, as close to the write as we can put it. */
	evbuffer_add_printf(b, "{\"t\":%lld,\"pad\":\"%s\"}", clock_ns(CLOCK_REALTIME),
	    ld.pad);
	if (evhttp_make_request(c->evcon, req, EVHTTP_REQ_POST, ld.path) == -1) {
		/* Not even started (out of memory): count it, go on. */
		fprintf(stderr, "load: cannot make request %ld\n", seq);
		c->busy = 0;
		ld.status[0]++;
		ld.completed++;
	}
}

/* Keep the idle connections busy with whatever is due. */
static void
load_pump(void)
{
	long	 due = load_due();
	int	 i;

	for (i = 0; i < ld.nconns && ld.sent < due; i++)
		if (!ld.conns[i].busy)
			load_send(&ld.conns[i]);
}

/* An answer, or NULL when the request failed. */
static void
load_done_cb(struct evhttp_request *req, void *arg)
{
	struct conn	*c = arg;
	int		 code = req ? evhttp_request_get_response_code(req) : 0;
	long long	 now = clock_ns(CLOCK_MONOTONIC);

	ld.lat[ld.completed] = now - c->start;
	ld.completed++;
	ld.status[code > 0 && code < MAX_STATUS ? code : 0]++;
	c->busy = 0;
	if (ld.completed >= ld.count) {
		ld.tend = now;
		event_base_loopbreak(ld.base);
		return;
	}
	if (ld.sent < load_due())
		load_send(c);
}

/* Every millisecond at a fixed rate: send what became due. */
static void
load_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	load_pump();
}

/* SIGINT, SIGTERM: report what happened so far. */
static void
load_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	ld.sig = (int)sig;
	ld.tend = clock_ns(CLOCK_MONOTONIC);
	event_base_loopbreak(ld.base);
}

/* The ce-type that goes with subject: dev.<product>.<entity>.<verb>.v1. */
static int
type_for(const char *subject)
{
	const char	*tok[5];
	const char	*p = subject;
	int		 n = 0;

	tok[n++] = p;
	while ((p = strchr(p, '.')) != NULL && n < 5)
		tok[n++] = ++p;
	if (n != 5 || p != NULL)
		return -1;
	snprintf(ld.type, sizeof(ld.type), "dev.%s.v1", tok[2]);
	return 0;
}

/* How to call us; exit 2. */
static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: load [-p port] [-n count] [-r rate] "
	    "[-c conns] [-s subject] [-i idprefix] [-b bodysize] [-k keys]\n");
	exit(2);
}

/* Options, connections, the run, then one stats line. */
int
main(int argc, char **argv)
{
	struct event	*tick = NULL, *sigint, *sigterm;
	struct event_config	*cfg;
	struct timeval	 ms = { 0, 1000 };
	const char	*token, *subject = "evt.bench.shop.order.created";
	double		 secs;
	size_t		 fixed;
	long		 other = 0;
	int		 ch, i, port = 8080;

	ld.count = 50000;
	ld.nconns = 32;
	ld.bodysize = 256;
	snprintf(ld.idprefix, sizeof(ld.idprefix), "load-%ld-%d",
	    (long)time(NULL), (int)getpid());
	while ((ch = getopt(argc, argv, "b:c:i:k:n:p:r:s:")) != -1) {
		switch (ch) {
		case 'b':
			ld.bodysize = (size_t)atol(optarg);
			break;
		case 'c':
			if ((ld.nconns = atoi(optarg)) < 1)
				usage();
			break;
		case 'i':
			snprintf(ld.idprefix, sizeof(ld.idprefix), "%s", optarg);
			break;
		case 'k':
			if ((ld.keys = atol(optarg)) < 1)
				usage();
			break;
		case 'n':
			if ((ld.count = atol(optarg)) < 1)
				usage();
			break;
		case 'p':
			if ((port = atoi(optarg)) < 1 || port > 65535)
				usage();
			break;
		case 'r':
			if ((ld.rate = atof(optarg)) < 0)
				usage();
			break;
		case 's':
			subject = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (type_for(subject) == -1) {
		fprintf(stderr, "load: %s is not a five-token subject\n",
		    subject);
		return 2;
	}
	if ((token = getenv("BENCH_TOKEN")) == NULL || *token == '\0') {
		fprintf(stderr, "load: BENCH_TOKEN is not set\n");
		return 2;
	}
	snprintf(ld.auth, sizeof(ld.auth), "Bearer %s", token);
	snprintf(ld.host, sizeof(ld.host), "127.0.0.1:%d", port);
	snprintf(ld.path, sizeof(ld.path), "/v1/events/%s", subject);
	/* {"t":<19 digits>,"pad":""} is 30 bytes; pad the rest. */
	fixed = 30;
	ld.bodysize = ld.bodysize > fixed ? ld.bodysize - fixed : 0;
	ld.pad = must(malloc(ld.bodysize + 1));
	memset(ld.pad, 'p', ld.bodysize);
	ld.pad[ld.bodysize] = '\0';
	ld.lat = must(calloc((size_t)ld.count, sizeof(*ld.lat)));

	signal(SIGPIPE, SIG_IGN);
	/*
	 * libevent's timers run on CLOCK_MONOTONIC_COARSE unless asked: one
	 * jiffy (4 ms on the 250 Hz kernels we measure on), so the "1 ms"
	 * tick would send 8-16 events at once every 4-8 ms.
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) != 0 ||
	    (ld.base = event_base_new_with_config(cfg)) == NULL) {
		fprintf(stderr, "load: cannot make an event base\n");
		return 1;
	}
	event_config_free(cfg);
	ld.conns = must(calloc((size_t)ld.nconns, sizeof(*ld.conns)));
	for (i = 0; i < ld.nconns; i++) {
		ld.conns[i].evcon = evhttp_connection_base_new(ld.base, NULL,
		    "127.0.0.1", (ev_uint16_t)port);
		if (ld.conns[i].evcon == NULL) {
			fprintf(stderr, "load: cannot make a connection\n");
			return 1;
		}
		evhttp_connection_set_timeout(ld.conns[i].evcon, 30);
	}
	sigint = evsignal_new(ld.base, SIGINT, load_signal_cb, NULL);
	sigterm = evsignal_new(ld.base, SIGTERM, load_signal_cb, NULL);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	if (ld.rate > 0) {
		tick = event_new(ld.base, -1, EV_PERSIST, load_tick_cb, NULL);
		evtimer_add(tick, &ms);
	}
	ld.t0 = clock_ns(CLOCK_MONOTONIC);
	load_pump();
	event_base_dispatch(ld.base);

	secs = (double)(ld.tend - ld.t0) / 1e9;
	qsort(ld.lat, (size_t)ld.completed, sizeof(*ld.lat), ll_cmp);
	for (i = 1; i < MAX_STATUS; i++)
		if (i != 202)
			other += ld.status[i];
	printf("load: sent=%ld accepted=%ld other=%ld errors=%ld "
	    "elapsed_s=%.3f rate=%.0f answer_p50_ms=%.2f answer_p99_ms=%.2f "
	    "cpu_s=%.2f", ld.sent, ld.status[202], other, ld.status[0], secs,
	    secs > 0 ? (double)ld.completed / secs : 0,
	    pct_ms(ld.lat, (size_t)ld.completed, 50),
	    pct_ms(ld.lat, (size_t)ld.completed, 99), cpu_s());
	if (ld.rate > 0)
		printf(" target_rate=%.0f max_lag_ms=%.1f", ld.rate,
		    (double)ld.max_lag / 1e6);
	for (i = 1; i < MAX_STATUS; i++)
		if (i != 202 && ld.status[i] > 0)
			printf(" status_%d=%ld", i, ld.status[i]);
	printf("\n");
	fflush(stdout);
	if (ld.sig != 0) {
		/* Die of it: a shell stops its script only if we do. */
		signal(ld.sig, SIG_DFL);
		raise(ld.sig);
	}

	if (tick != NULL)
		event_free(tick);
	event_free(sigint);
	event_free(sigterm);
	for (i = 0; i < ld.nconns; i++)
		evhttp_connection_free(ld.conns[i].evcon);
	event_base_free(ld.base);
	free(ld.conns);
	free(ld.lat);
	free(ld.pad);
	return ld.completed == ld.count && ld.status[202] == ld.count ? 0 : 1;
}
