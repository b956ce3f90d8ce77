/*
 * jsget: read what JetStream holds, for the live tests.  A test tool, not
 * part of the relay: it uses nats.c's synchronous calls freely.
 *
 *   jsget URL msg STREAM SEQ         headers, a blank line, then the payload
 *   jsget URL last STREAM SUBJECT    the same for the last message on SUBJECT
 *   jsget URL count STREAM           number of messages in STREAM
 *   jsget URL info STREAM            key=value lines of the stream's config
 *   jsget URL mkmem STREAM SUBJECT   create STREAM with memory storage
 *
 * Exit 0, or 1 with a message (3 when the message or stream is not found).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nats/nats.h>

/* Print a message's headers (sorted as stored) and payload. */
static void
print_msg(natsMsg *m)
{
	const char	**keys = NULL;
	int		  n = 0, i, j;

	if (natsMsgHeader_Keys(m, &keys, &n) == NATS_OK) {
		for (i = 0; i < n; i++) {
			const char	**vals = NULL;
			int		  nv = 0;

			if (natsMsgHeader_Values(m, keys[i], &vals, &nv) != NATS_OK)
				continue;
			for (j = 0; j < nv; j++)
				printf("%s: %s\n", keys[i], vals[j]);
			free((void *)vals);
		}
		free((void *)keys);
	}
	printf("subject: %s\n\n", natsMsg_GetSubject(m));
	fwrite(natsMsg_GetData(m), 1, natsMsg_GetDataLength(m), stdout);
}

int
main(int argc, char **argv)
{
	natsConnection	*nc = NULL;
	jsCtx		*js = NULL;
	natsMsg		*m = NULL;
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	int		 rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: jsget URL msg|last|count|info STREAM [ARG]\n");
		return 2;
	}
	if ((s = natsConnection_ConnectTo(&nc, argv[1])) != NATS_OK ||
	    (s = natsConnection_JetStream(&js, nc, NULL)) != NATS_OK) {
		fprintf(stderr, "jsget: %s\n", natsStatus_GetText(s));
		return 1;
	}
	if (strcmp(argv[2], "msg") == 0 && argc == 5)
		s = js_GetMsg(&m, js, argv[3], strtoull(argv[4], NULL, 10),
		    NULL, &code);
	else if (strcmp(argv[2], "last") == 0 && argc == 5)
		s = js_GetLastMsg(&m, js, argv[3], argv[4], NULL, &code);
	else if (strcmp(argv[2], "mkmem") == 0 && argc == 5) {
		jsStreamConfig	 sc;
		const char	*subj[1] = { argv[4] };

		jsStreamConfig_Init(&sc);
		sc.Name = argv[3];
		sc.Subjects = subj;
		sc.SubjectsLen = 1;
		sc.Storage = js_MemoryStorage;
		s = js_AddStream(&si, js, &sc, NULL, &code);
		if (s == NATS_OK) {
			printf("created %s\n", argv[3]);
			goto out;
		}
	} else if ((strcmp(argv[2], "count") == 0 ||
	    strcmp(argv[2], "info") == 0) && argc == 4)
		s = js_GetStreamInfo(&si, js, argv[3], NULL, &code);
	else {
		fprintf(stderr, "jsget: bad arguments\n");
		rc = 2;
		goto out;
	}
	if (s != NATS_OK) {
		fprintf(stderr, "jsget: %s (code %d)\n", natsStatus_GetText(s),
		    (int)code);
		rc = s == NATS_NOT_FOUND || code == 10037 || code == 10059 ? 3 : 1;
		goto out;
	}
	if (m != NULL)
		print_msg(m);
	else if (strcmp(argv[2], "count") == 0)
		printf("%llu\n", (unsigned long long)si->State.Msgs);
	else {
		jsStreamConfig	*c = si->Config;
		int		 i;

		printf("name=%s\n", c->Name);
		for (i = 0; i < c->SubjectsLen; i++)
			printf("subject=%s\n", c->Subjects[i]);
		printf("storage=%s\n", c->Storage == js_FileStorage ? "file" :
		    "memory");
		printf("max_age_s=%lld\n", (long long)(c->MaxAge / 1000000000LL));
		printf("duplicates_s=%lld\n",
		    (long long)(c->Duplicates / 1000000000LL));
		printf("replicas=%lld\n", (long long)c->Replicas);
		printf("allow_rollup=%s\n", c->AllowRollup ? "true" : "false");
	}
out:
	natsMsg_Destroy(m);
	jsStreamInfo_Destroy(si);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	/*
	 * Wait for nats.c's threads: nats_Close leaves them running past
	 * main, and under AddressSanitizer one then died at exit now and
	 * then ("AddressSanitizer:DEADLYSIGNAL" and nothing else).
	 */
	nats_CloseAndWait(2000);
	return rc;
}
