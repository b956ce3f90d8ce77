/*
 * jspub: the storage ceiling of the batch benchmark (bench/run.sh): how
 * fast this machine's nats-server stores the messages a relay would store,
 * with nobody in between.  A benchmark tool, not part of the relay: it
 * uses nats.c's own threads and asynchronous JetStream publishes freely.
 *
 *   jspub URL COUNT [INFLIGHT]
 *
 * Makes a stream CEIL on "ceil.>" (file storage), then publishes COUNT
 * messages with the headers a relay writes for a 256-byte event
 * (ce-specversion, ce-id, ce-source, ce-type, content-type,
 * Treaty-Producer, a unique Nats-Msg-Id) through js_PublishMsgAsync with
 * INFLIGHT (default 4096) unacknowledged at most, waits for every
 * acknowledgement and prints "msgs=N seconds=S msgs_per_s=R errors=E".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

static volatile int	 errors;

/* A publish JetStream refused or timed out. */
static void
ack_err(jsCtx *js, jsPubAckErr *pae, void *arg)
{
	(void)js;
	(void)pae;
	(void)arg;
	errors++;
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	natsConnection	*nc = NULL;
	jsCtx		*js = NULL;
	jsOptions	 jo;
	jsStreamConfig	 sc;
	jsErrCode	 jerr = 0;
	const char	*subjects[] = { "ceil.>" };
	char		 payload[256], id[64], msgid[80];
	long		 n, inflight = 4096, i;
	double		 t0, t;
	natsStatus	 s;

	if (argc < 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: jspub URL COUNT [INFLIGHT]\n");
		return 2;
	}
	if (argc > 3)
		inflight = atol(argv[3]);
	memset(payload, 'b', sizeof(payload));
	if ((s = natsConnection_ConnectTo(&nc, argv[1])) != NATS_OK) {
		fprintf(stderr, "jspub: connect: %s\n", natsStatus_GetText(s));
		return 1;
	}
	jsOptions_Init(&jo);
	jo.PublishAsync.MaxPending = inflight;
	jo.PublishAsync.ErrHandler = ack_err;
	if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK)
		goto fail;
	jsStreamConfig_Init(&sc);
	sc.Name = "CEIL";
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	if ((s = js_AddStream(NULL, js, &sc, NULL, &jerr)) != NATS_OK)
		goto fail;
	t0 = now_s();
	for (i = 0; i < n; i++) {
		natsMsg	*m = NULL;

		snprintf(id, sizeof(id), "c-%ld", i);
		snprintf(msgid, sizeof(msgid), "bench:%s", id);
		s = natsMsg_Create(&m, "ceil.bench.shop.order.created", NULL,
		    payload, sizeof(payload));
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "ce-specversion", "1.0");
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "ce-id", id);
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "ce-source", "/bench");
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "ce-type",
			    "dev.shop.order.created.v1");
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "content-type",
			    "application/octet-stream");
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "Treaty-Producer", "bench");
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "Nats-Msg-Id", msgid);
		if (s == NATS_OK)
			s = js_PublishMsgAsync(js, &m, NULL);
		natsMsg_Destroy(m);	/* NULL when the library took it */
		if (s != NATS_OK)
			goto fail;
	}
	if ((s = js_PublishAsyncComplete(js, NULL)) != NATS_OK)
		goto fail;
	t = now_s() - t0;
	printf("msgs=%ld seconds=%.3f msgs_per_s=%.0f errors=%d\n", n, t,
	    n / t, errors);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(2000);
	return 0;
fail:
	fprintf(stderr, "jspub: %s (%d)\n", natsStatus_GetText(s), (int)jerr);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(2000);
	return 1;
}
