/*
 * jslat: the floor under publish-to-receipt (issue 13): how long this
 * machine's nats-server takes to hand a stored event to a consumer, with
 * no relay and no HTTP in between.  A benchmark tool, not part of the
 * relay: it uses nats.c's own threads freely.
 *
 *   jslat URL push|pull RATE SECONDS
 *
 * Makes a stream LAT<mode> on "lat<mode>.x" (file storage) and a durable
 * consumer with explicit acks and 64 unacknowledged at most, as the relay
 * does for a push subscriber: "push" delivers to a queue group, as the
 * relay's instances share one; "pull" keeps requests for up to 64
 * messages outstanding.  Publishes RATE 256-byte messages a second for
 * SECONDS (asynchronous JetStream publishes, each carrying its send time),
 * acknowledges each on receipt, and prints the time from publish to
 * receipt: "mode=.. n=.. got=.. p50=.. p90=.. p99=.. p999=.. max=.. (ms)".
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

#define MAX_SAMPLES	1000000
#define PULL_BATCH	64

static int64_t		 lat[MAX_SAMPLES];
static atomic_int	 nlat, since_request;
static natsConnection	*nc;
static char		 next_subject[128];
static int		 pull;

static int64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Ask for n more messages, waiting up to 2 s for them. */
static void
pull_more(int n)
{
	char	 body[96];

	snprintf(body, sizeof(body), "{\"batch\":%d,\"expires\":2000000000}",
	    n);
	natsConnection_PublishRequestString(nc, next_subject, "jslat.inbox",
	    body);
}

/* A delivered message (or, pulling, a status: a request that expired). */
static void
on_msg(natsConnection *c, natsSubscription *sub, natsMsg *m, void *arg)
{
	int64_t	 sent;
	int	 i;

	(void)c;
	(void)sub;
	(void)arg;
	if (natsMsg_GetDataLength(m) < (int)sizeof(sent)) {
		if (pull)
			pull_more(PULL_BATCH);
		natsMsg_Destroy(m);
		return;
	}
	memcpy(&sent, natsMsg_GetData(m), sizeof(sent));
	if ((i = atomic_fetch_add(&nlat, 1)) < MAX_SAMPLES)
		lat[i] = now_ns() - sent;
	natsConnection_PublishString(nc, natsMsg_GetReply(m), "+ACK");
	/* Half the batch in: ask for as many again, so some are always asked. */
	if (pull && atomic_fetch_add(&since_request, 1) + 1 >= PULL_BATCH / 2) {
		atomic_store(&since_request, 0);
		pull_more(PULL_BATCH / 2);
	}
	natsMsg_Destroy(m);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	jsCtx			*js = NULL;
	jsOptions		 jo;
	jsStreamConfig		 sc;
	jsConsumerConfig	 cc;
	natsSubscription	*sub = NULL;
	jsErrCode		 jerr = 0;
	char			 stream[16], subject[16], payload[256];
	const char		*subjects[1] = { subject };
	int64_t			 start, period, due, d, sent;
	long			 rate, secs, n, i, k, got;
	natsStatus		 s;

	if (argc != 5 || (strcmp(argv[2], "push") != 0 &&
	    strcmp(argv[2], "pull") != 0) || (rate = atol(argv[3])) <= 0 ||
	    (secs = atol(argv[4])) <= 0) {
		fprintf(stderr, "usage: jslat URL push|pull RATE SECONDS\n");
		return 2;
	}
	pull = strcmp(argv[2], "pull") == 0;
	n = rate * secs;
	snprintf(stream, sizeof(stream), "LAT%d", pull);
	snprintf(subject, sizeof(subject), "lat%d.x", pull);
	if ((s = natsConnection_ConnectTo(&nc, argv[1])) != NATS_OK ||
	    (s = jsOptions_Init(&jo)) != NATS_OK)
		goto fail;
	jo.PublishAsync.MaxPending = 4096;
	if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK)
		goto fail;
	jsStreamConfig_Init(&sc);
	sc.Name = stream;
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	if ((s = js_AddStream(NULL, js, &sc, NULL, &jerr)) != NATS_OK)
		goto fail;
	jsConsumerConfig_Init(&cc);
	cc.Durable = "C";
	cc.AckPolicy = js_AckExplicit;
	cc.MaxAckPending = 64;
	cc.AckWait = 30 * 1000000000LL;
	if (!pull) {
		cc.DeliverSubject = "jslat.deliver";
		cc.DeliverGroup = "g";
		s = natsConnection_QueueSubscribe(&sub, nc, "jslat.deliver",
		    "g", on_msg, NULL);
	} else
		s = natsConnection_Subscribe(&sub, nc, "jslat.inbox", on_msg,
		    NULL);
	if (s != NATS_OK ||
	    (s = natsSubscription_SetPendingLimits(sub, -1, -1)) != NATS_OK ||
	    (s = js_AddConsumer(NULL, js, stream, &cc, NULL, &jerr)) != NATS_OK)
		goto fail;
	snprintf(next_subject, sizeof(next_subject),
	    "$JS.API.CONSUMER.MSG.NEXT.%s.C", stream);
	if (pull)
		pull_more(PULL_BATCH);
	memset(payload, 'x', sizeof(payload));
	start = now_ns();
	period = 1000000000LL / rate;
	for (i = 0; i < n; i++) {
		due = start + i * period;
		while ((d = due - now_ns()) > 0) {
			struct timespec	 ts = { d / 1000000000LL,
			    d % 1000000000LL };

			nanosleep(&ts, NULL);
		}
		sent = now_ns();
		memcpy(payload, &sent, sizeof(sent));
		js_PublishAsync(js, subject, payload, sizeof(payload), NULL);
	}
	/* Everything received, or 10 s more. */
	for (k = 0; k < 1000 && atomic_load(&nlat) < n; k++) {
		struct timespec	 ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	got = atomic_load(&nlat) < MAX_SAMPLES ? atomic_load(&nlat) :
	    MAX_SAMPLES;
	if (got == 0) {
		fprintf(stderr, "jslat: nothing received\n");
		return 1;
	}
	qsort(lat, (size_t)got, sizeof(lat[0]), cmp_i64);
	printf("mode=%s n=%ld got=%ld p50=%.2f p90=%.2f p99=%.2f p999=%.2f "
	    "max=%.2f (ms)\n", argv[2], n, got, lat[got / 2] / 1e6,
	    lat[got * 9 / 10] / 1e6, lat[got * 99 / 100] / 1e6,
	    lat[got * 999 / 1000] / 1e6, lat[got - 1] / 1e6);
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(2000);
	return got == n ? 0 : 1;
fail:
	fprintf(stderr, "jslat: %s (JetStream error %d)\n",
	    natsStatus_GetText(s), (int)jerr);
	return 1;
}
