/*
 * store-admin.c: the JetStream API calls that wait for a reply: streams
 * and consumers made or brought up to date, a message read from WORK by
 * sequence, a peek's direct gets, the subscribers' figures, drop records
 * read from AUDIT, and the consumers no subscriber owns listed and
 * deleted.
 *
 * WORKER THREAD ONLY.  These calls block until JetStream answers, and the
 * loop is what reads the answer, so they never run on the loop: each is
 * the work of a bridge job (bridge.h), whose done function runs back on
 * the loop in the file that asked.  A function here reads nothing but its
 * job, which carries copies of every setting it needs, and the JetStream
 * context (store_conn.js, made before the worker can use it and destroyed
 * after it has been joined); it writes only its job.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "treaty.h"
#include "store-int.h"
#include "util.h"

/*
 * The outcome of a JetStream management call: 0, -1 for a definite
 * failure, or STORE_CHECK_TRANSIENT when there was no answer (a timeout is
 * not a "no": the stream or consumer may well be there).
 */
int
store_admin_api_result(natsStatus s, jsErrCode code, const char *what,
    const char *name, char *detail, size_t dlen)
{
	const char	*e;

	if (s == NATS_OK)
		return 0;
	e = nats_GetLastError(NULL);
	snprintf(detail, dlen, "%s %s: %s (code %d)", what, name,
	    e != NULL && e[0] != '\0' ? e : natsStatus_GetText(s), (int)code);
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS ||
	    s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED ?
	    STORE_CHECK_TRANSIENT : -1;
}

/* A stream's configuration with the settings of SPEC 2. */
static void
stream_config(jsStreamConfig *sc, const struct store_check_job *cj,
    const char *name, const char **subj, int64_t max_age_ns)
{
	jsStreamConfig_Init(sc);
	sc->Name = name;
	sc->Subjects = subj;
	sc->SubjectsLen = 1;
	sc->Storage = js_FileStorage;
	sc->Retention = js_LimitsPolicy;
	sc->MaxAge = max_age_ns;
	sc->Duplicates = cj->duplicates_ns;
	sc->Replicas = cj->replicas;
	/* Peeking into an inbox reads WORK with direct gets. */
	sc->AllowDirect = strcmp(name, STORE_WORK) == 0;
	/*
	 * A replay's progress records roll up (Nats-Rollup: sub): only the
	 * newest per instance is ever read, and a long replay wrote one a
	 * second, kept for AUDIT's whole age.
	 */
	sc->AllowRollup = strcmp(name, STORE_AUDIT) == 0;
	/*
	 * ATTEMPTS (SPEC 17): the newest records of each subscriber, a
	 * day's at most; read back with a subject's consumer, and by `nats
	 * stream get` with direct gets.
	 */
	if (strcmp(name, STORE_ATTEMPTS) == 0) {
		sc->MaxMsgsPerSubject = cj->attempts_keep;
		sc->AllowDirect = true;
		/*
		 * In memory: a record per delivery attempt costs nats-server
		 * half as much there as in a file (docs/BENCHMARKS.md), and
		 * the records are a day's diagnostics, bounded here.
		 */
		sc->Storage = js_MemoryStorage;
		sc->MaxBytes = STORE_ATTEMPTS_MAX_BYTES;
		/* Records carry no Nats-Msg-Id: the window is JetStream's least. */
		sc->Duplicates = STORE_ATTEMPTS_DUPLICATES_NS;
	}
}

/* Whether an existing stream differs from what we want. */
static int
stream_differs(const jsStreamConfig *have, const jsStreamConfig *want)
{
	return have->SubjectsLen != 1 ||
	    strcmp(have->Subjects[0], want->Subjects[0]) != 0 ||
	    have->MaxAge != want->MaxAge ||
	    have->Duplicates != want->Duplicates ||
	    have->Replicas != want->Replicas ||
	    have->Retention != want->Retention ||
	    have->AllowDirect != want->AllowDirect ||
	    have->AllowRollup != want->AllowRollup ||
	    (strcmp(want->Name, STORE_ATTEMPTS) == 0 &&
	    (have->MaxMsgsPerSubject != want->MaxMsgsPerSubject ||
	    have->MaxBytes != want->MaxBytes));
}

/* Create one stream, or update it when its settings differ. */
static int
stream_ensure(const struct store_check_job *cj, const char *name,
    const char *subject, int64_t max_age_ns, char *detail, size_t dlen)
{
	jsStreamConfig	 want;
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	const char	*subj[1] = { subject };
	const char	*what = "get";

	stream_config(&want, cj, name, subj, max_age_ns);
	s = js_GetStreamInfo(&si, store_conn.js, name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
		what = "create";
		s = js_AddStream(&si, store_conn.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", name);
	} else if (s == NATS_OK && si->Config->Storage != want.Storage) {
		snprintf(detail, dlen, "stream %s has %s storage, which "
		    "cannot be changed in place", name, si->Config->Storage ==
		    js_MemoryStorage ? "memory" : "file");
		jsStreamInfo_Destroy(si);
		return -1;
	} else if (s == NATS_OK && stream_differs(si->Config, &want)) {
		jsStreamInfo_Destroy(si);
		si = NULL;
		what = "update";
		s = js_UpdateStream(&si, store_conn.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "updated %s", name);
	}
	jsStreamInfo_Destroy(si);
	return store_admin_api_result(s, code, what, name, detail, dlen);
}

/* Two optional strings are the same (both absent, or equal). */
static int
str_same(const char *a, const char *b)
{
	if (a == NULL || *a == '\0')
		return b == NULL || *b == '\0';
	return b != NULL && strcmp(a, b) == 0;
}

/* Whether an existing consumer differs from what we want. */
static int
consumer_differs(const jsConsumerConfig *have, const jsConsumerConfig *want)
{
	return have->MaxDeliver != want->MaxDeliver ||
	    have->MaxAckPending != want->MaxAckPending ||
	    have->AckWait != want->AckWait ||
	    have->FilterSubject == NULL ||
	    strcmp(have->FilterSubject, want->FilterSubject) != 0 ||
	    !str_same(have->DeliverSubject, want->DeliverSubject) ||
	    !str_same(have->DeliverGroup, want->DeliverGroup);
}

/*
 * Where a consumer about to be made starts (deliverFrom, SPEC 3), into
 * want: all is JetStream's deliver all; new and a time become a start
 * sequence, WORK's next one or the first stored at that time (as
 * JetStream reads a start time: store_replay_seq_at).  A start sequence
 * rather than deliver new or by start time, because nats-server 2.9
 * refuses every later update of a consumer made with a start time (even
 * to the same time), and a consumer's start sequence stays in its
 * configuration, where the oldest pending event is looked for
 * (store_admin_figures).  0, or -1 with detail.
 */
static int
consumer_start(const struct store_consumer_copy *c, jsConsumerConfig *want,
    char *detail, size_t dlen)
{
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	uint64_t	 seq = 0;
	natsStatus	 s;
	char		 err[128];

	if (c->from == SUB_FROM_ALL ||
	    (c->from == SUB_FROM_TIME && c->from_ns <= 0)) {
		want->DeliverPolicy = js_DeliverAll;
		return 0;
	}
	if (c->from == SUB_FROM_NEW) {
		s = js_GetStreamInfo(&si, store_conn.js, STORE_WORK, NULL, &code);
		if (s == NATS_OK)
			seq = si->State.LastSeq + 1;
		jsStreamInfo_Destroy(si);
		if (s != NATS_OK) {
			store_admin_api_result(s, code, "start of", c->name,
			    detail, dlen);
			return -1;
		}
	} else if (store_replay_seq_at(c->from_ns, c->filter, &seq, err,
	    sizeof(err)) != NATS_OK) {
		snprintf(detail, dlen, "start of %s: %s", c->name, err);
		return -1;
	}
	want->DeliverPolicy = js_DeliverByStartSequence;
	want->OptStartSeq = seq;
	return 0;
}

/* WORK's consumers as one listing shows them, sorted by name. */
struct listing {
	struct store_cinfo	*list;
	int			 n;
};
/* Pages of a listing at most: 256 consumers each. */
#define LISTING_PAGES_MAX	400

/* qsort and bsearch order of a listing: by name. */
static int
cinfo_cmp(const void *a, const void *b)
{
	const struct store_cinfo *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * WORK's consumers with their state, into l (worker thread: each page is
 * a request that waits for JetStream's answer): one listing (a page per
 * 256 consumers) instead of a request per consumer, which with a
 * thousand subscribers kept the worker and nats-server busy a third of
 * the time for figures alone.  Read with yajl (store-wire.c), not with
 * js_Consumers: nats.c 3.4's parser took 80 MB for 300 consumers, and
 * the heap stayed that large.  0, or -1 when JetStream did not answer.
 */
static int
work_consumers(struct listing *l)
{
	natsMsg		*resp;
	char		 body[48];
	int64_t		 offset = 0, total = 0, limit = 0;
	int		 cap = 0, code, page, rc;

	memset(l, 0, sizeof(*l));
	for (page = 0; page < LISTING_PAGES_MAX; page++) {
		snprintf(body, sizeof(body), "{\"offset\":%lld}",
		    (long long)offset);
		resp = NULL;
		if (natsConnection_Request(&resp, store_conn.nc,
		    "$JS.API.CONSUMER.LIST." STORE_WORK, body, (int)strlen(body),
		    STORE_API_WAIT_MS) != NATS_OK) {
			store_cinfo_free(l->list, l->n);
			memset(l, 0, sizeof(*l));
			return -1;
		}
		rc = store_wire_consumer_page(natsMsg_GetData(resp),
		    (size_t)natsMsg_GetDataLength(resp), &l->list, &l->n, &cap,
		    &total, &limit, &code);
		natsMsg_Destroy(resp);
		if (rc == -1) {
			store_cinfo_free(l->list, l->n);
			memset(l, 0, sizeof(*l));
			return -1;
		}
		offset += limit;
		if (limit <= 0 || offset >= total)
			break;
	}
	if (l->n > 0)
		qsort(l->list, (size_t)l->n, sizeof(*l->list), cinfo_cmp);
	return 0;
}

/* The consumer called name in a listing, or NULL. */
static const struct store_cinfo *
info_find(const struct listing *l, const char *name)
{
	struct store_cinfo	 key;

	if (l->n == 0)
		return NULL;
	key.name = (char *)(uintptr_t)name;
	return bsearch(&key, l->list, (size_t)l->n, sizeof(*l->list),
	    cinfo_cmp);
}

/* The configuration c's consumer should have, but where it starts. */
static void
consumer_want(const struct store_consumer_copy *c, jsConsumerConfig *want)
{
	jsConsumerConfig_Init(want);
	want->Durable = c->name;
	want->DeliverSubject = c->deliver;	/* NULL: a pull consumer */
	/* The delivery group is the consumer: one instance gets each. */
	want->DeliverGroup = c->deliver != NULL ? c->name : NULL;
	want->AckPolicy = js_AckExplicit;
	want->AckWait = (int64_t)c->ack_wait_s * NS_PER_S;
	want->MaxDeliver = c->max_deliver;
	want->MaxAckPending = c->max_ack_pending;
	want->FilterSubject = c->filter;
}

/*
 * 1 when JetStream's consumer, as a listing showed it (ci), is what c
 * wants (consumer_differs's settings, and its kind): nothing to do.
 */
static int
consumer_fine(const struct store_consumer_copy *c,
    const struct store_cinfo *ci)
{
	return ci != NULL && (ci->deliver[0] != '\0') == (c->deliver != NULL) &&
	    ci->max_deliver == c->max_deliver &&
	    ci->max_ack_pending == c->max_ack_pending &&
	    ci->ack_wait_ns == (int64_t)c->ack_wait_s * NS_PER_S &&
	    strcmp(ci->filter, c->filter) == 0 &&
	    str_same(ci->deliver, c->deliver) &&
	    str_same(ci->group, c->deliver != NULL ? c->name : NULL);
}

/*
 * Create one consumer on WORK, or update it when its settings differ.
 * One of the other kind (the subscriber was push and is pull now, or the
 * reverse, across a restart) cannot be updated, and is not deleted: its
 * events would be delivered again from the start.  c->wrong_kind says so.
 * Where a consumer JetStream has starts is its own: an update keeps it.
 */
int
store_admin_consumer_ensure(struct store_consumer_copy *c, char *detail,
    size_t dlen)
{
	jsConsumerConfig	 want;
	jsConsumerInfo		*ci = NULL;
	jsErrCode		 code = 0;
	natsStatus		 s;
	const char		*what = "get";

	consumer_want(c, &want);
	s = js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, c->name, NULL,
	    &code);
	c->wrong_kind = s == NATS_OK && ci->Config != NULL &&
	    (ci->Config->DeliverSubject != NULL &&
	    ci->Config->DeliverSubject[0] != '\0') != (c->deliver != NULL);
	if (c->wrong_kind) {
		snprintf(detail, dlen, "%s is a %s consumer in JetStream and "
		    "the subscriber is %s: give the subscriber a new name, or "
		    "delete %s", c->name, c->deliver != NULL ? "pull" : "push",
		    c->deliver != NULL ? "push" : "pull", c->name);
		jsConsumerInfo_Destroy(ci);
		return -1;
	}
	if (s == NATS_OK && ci->Config != NULL) {
		/* Where it started cannot change: an update says the same. */
		want.DeliverPolicy = ci->Config->DeliverPolicy;
		want.OptStartSeq = ci->Config->OptStartSeq;
		want.OptStartTime = ci->Config->OptStartTime;
	}
	if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr) {
		what = "create";
		if (consumer_start(c, &want, detail, dlen) != 0)
			return -1;
		s = js_AddConsumer(&ci, store_conn.js, STORE_WORK, &want, NULL,
		    &code);
		if (s == NATS_OK && want.OptStartSeq > 0)
			snprintf(detail, dlen, "created %s from sequence %llu",
			    c->name, (unsigned long long)want.OptStartSeq);
		else if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", c->name);
	} else if (s == NATS_OK && consumer_differs(ci->Config, &want)) {
		jsConsumerInfo_Destroy(ci);
		ci = NULL;
		what = "update";
		s = js_UpdateConsumer(&ci, store_conn.js, STORE_WORK, &want,
		    NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "updated %s", c->name);
	}
	jsConsumerInfo_Destroy(ci);
	return store_admin_api_result(s, code, what, c->name, detail, dlen);
}

/* The stream check: WORK and AUDIT as configured. */
void
store_admin_check(struct bridge_job *job)
{
	struct store_check_job *cj = BRIDGE_CONTAINER(job,
	    struct store_check_job, job);
	char		 d1[128] = "", d2[128] = "", d3[128] = "";
	char		 d4[128] = "";

	cj->result = stream_ensure(cj, STORE_WORK, "evt.>",
	    cj->work_max_age_ns, d1, sizeof(d1));
	if (cj->result == 0)
		cj->result = stream_ensure(cj, STORE_AUDIT, "audit.>",
		    cj->audit_max_age_ns, d2, sizeof(d2));
	if (cj->result == 0)
		cj->result = store_admin_kv_bucket(cj->replicas, d3,
		    sizeof(d3));
	/*
	 * None kept: an ATTEMPTS made earlier stays as it was.  Never a
	 * condition of ingest: a failure is said apart (attempts_err), and
	 * records go nowhere meanwhile.
	 */
	if (cj->result == 0 && cj->attempts_keep > 0 &&
	    stream_ensure(cj, STORE_ATTEMPTS, "attempts.>",
	    STORE_ATTEMPTS_MAX_AGE_NS, d4, sizeof(d4)) != 0) {
		snprintf(cj->attempts_err, sizeof(cj->attempts_err), "%s", d4);
		d4[0] = '\0';
	}
	snprintf(cj->detail, sizeof(cj->detail), "%s%s%s%s%s%s%s", d1,
	    d1[0] && d2[0] ? "; " : "", d2, (d1[0] || d2[0]) && d3[0] ?
	    "; " : "", d3, (d1[0] || d2[0] || d3[0]) && d4[0] ? "; " : "",
	    d4);
}

/*
 * The consumer check, a job of its own after the streams: one that cannot
 * be made, or gets no answer, is logged and retried with the next check;
 * it never holds up ingest.  One listing of WORK's consumers first: only
 * those missing or different are asked about one by one.
 */
void
store_admin_consumers(struct bridge_job *job)
{
	struct store_consumers_job *kj = BRIDGE_CONTAINER(job,
	    struct store_consumers_job, job);
	struct listing		 l;
	int			 listed = kj->nconsumers > 1 &&
				    work_consumers(&l) == 0;
	char			 d[256];
	size_t			 len;
	int			 i;

	for (i = 0; i < kj->nconsumers; i++) {
		if (listed && consumer_fine(&kj->consumers[i],
		    info_find(&l, kj->consumers[i].name)))
			continue;
		d[0] = '\0';
		if (store_admin_consumer_ensure(&kj->consumers[i], d,
		    sizeof(d)) != 0)
			kj->failed = 1;
		len = strlen(kj->detail);
		if (d[0] != '\0' && len < sizeof(kj->detail) - 2)
			snprintf(kj->detail + len, sizeof(kj->detail) - len,
			    "%s%s", len ? "; " : "", d);
	}
	if (listed)
		store_cinfo_free(l.list, l.n);
}

/*
 * A message of WORK by its sequence (a gave-up event's, whose advisory
 * comes once): tried GETMSG_TRIES times, GETMSG_PAUSE_MS apart on this
 * worker thread, so that a stream leader's change or a moment without
 * NATS does not lose the drop's record; not again when it is not there.
 */
#define GETMSG_TRIES	 4
#define GETMSG_PAUSE_MS	 500
void
store_admin_getmsg(struct bridge_job *job)
{
	struct store_getmsg_job *gj = BRIDGE_CONTAINER(job,
	    struct store_getmsg_job, job);
	struct timespec	 pause = { 0, GETMSG_PAUSE_MS * NS_PER_MS };
	jsErrCode	 jerr = 0;
	natsStatus	 s = NATS_ERR;
	int		 i;

	for (i = 0; i < GETMSG_TRIES; i++) {
		if (i > 0)
			nanosleep(&pause, NULL);
		jerr = 0;
		s = js_GetMsg(&gj->msg, store_conn.js, STORE_WORK, gj->seq,
		    NULL, &jerr);
		/* Found, gone for good, or the relay closed NATS (stopping). */
		if (s == NATS_OK || s == NATS_NOT_FOUND ||
		    jerr == JSNoMessageFoundErr || s == NATS_CONNECTION_CLOSED)
			break;
	}
	if (s != NATS_OK) {
		gj->msg = NULL;
		snprintf(gj->err, sizeof(gj->err), "%s (%d)",
		    natsStatus_GetText(s), (int)jerr);
	}
}

/*
 * A peek: the messages after the last one the consumer delivered that
 * match its filter, by direct gets (no consumer state changes).
 */
void
store_admin_peek(struct bridge_job *job)
{
	struct store_peek *p = BRIDGE_CONTAINER(job, struct store_peek, job);
	jsConsumerInfo	*ci = NULL;
	jsDirectGetMsgOptions dg;
	jsErrCode	 code = 0;
	natsMsg		*m;
	const char	*v;
	uint64_t	 seq;
	natsStatus	 s;

	if (js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, p->consumer,
	    NULL, &code) != NATS_OK) {
		p->failed = 1;
		return;
	}
	seq = ci->Delivered.Stream + 1;
	jsConsumerInfo_Destroy(ci);
	while (p->n < p->max) {
		jsDirectGetMsgOptions_Init(&dg);
		dg.Sequence = seq;
		dg.NextBySubject = p->filter;
		m = NULL;
		s = js_DirectGetMsg(&m, store_conn.js, STORE_WORK, NULL, &dg);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK) {
			p->failed = p->n == 0;
			break;
		}
		p->msgs[p->n++] = m;
		if (natsMsgHeader_Get(m, "Nats-Sequence", &v) != NATS_OK ||
		    (seq = strtoull(v, NULL, 10)) == 0)
			break;
		seq++;
	}
}

/*
 * When the oldest event the consumer in ci has not had acknowledged was
 * stored (Unix ns), into *ns; 0 when there is none.  It is the first
 * event of its filter after the ack floor, when some are handed out and
 * unacknowledged (but never before the consumer's start sequence: 2.9
 * leaves the floor at 0 until the first acknowledgement), or else after
 * the last one handed out: one direct get from the stream (allow_direct,
 * the peeks' too), no consumer touched.  -1 when JetStream did not answer.
 */
static int
oldest_pending(const struct store_cinfo *ci, int64_t *ns)
{
	jsDirectGetMsgOptions	 dg;
	natsMsg			*m = NULL;
	const char		*v;
	int64_t			 sec;
	long			 nsec;
	natsStatus		 s;

	*ns = 0;
	if (ci->pending == 0 && ci->ack_pending == 0)
		return 0;
	jsDirectGetMsgOptions_Init(&dg);
	dg.Sequence = ci->delivered_stream + 1;
	if (ci->ack_pending > 0) {
		dg.Sequence = ci->ack_floor_stream + 1;
		if (dg.Sequence < ci->opt_start_seq)
			dg.Sequence = ci->opt_start_seq;
	}
	dg.NextBySubject = ci->filter[0] != '\0' ? ci->filter : "evt.>";
	s = js_DirectGetMsg(&m, store_conn.js, STORE_WORK, NULL, &dg);
	if (s == NATS_NOT_FOUND)
		return 0;	/* acknowledged meanwhile */
	if (s != NATS_OK)
		return -1;
	if (natsMsgHeader_Get(m, "Nats-Time-Stamp", &v) == NATS_OK &&
	    treaty_rfc3339_parse(v, &sec, &nsec) == TREATY_OK && sec > 0)
		*ns = sec * NS_PER_S + nsec;
	natsMsg_Destroy(m);
	return 0;
}

/* Worker: one consumer's num_ack_pending (store_consumer_pending). */
void
store_admin_pending(struct bridge_job *job)
{
	struct store_pending_job *pj = BRIDGE_CONTAINER(job,
	    struct store_pending_job, job);
	jsConsumerInfo		*ci = NULL;

	if (js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, pj->name, NULL,
	    NULL) == NATS_OK && ci != NULL && ci->NumAckPending >= 0) {
		pj->n = (uint64_t)ci->NumAckPending;
		pj->ok = 1;
	}
	jsConsumerInfo_Destroy(ci);
}

/* Every consumer's figures from one listing of WORK's (SPEC 15). */
void
store_admin_figures(struct bridge_job *job)
{
	struct store_figures_job *fj = BRIDGE_CONTAINER(job,
	    struct store_figures_job, job);
	const struct store_cinfo *ci;
	struct listing		 l;
	int			 i;

	if (work_consumers(&l) == -1)
		return;			/* none known: every figure null */
	for (i = 0; i < fj->nconsumers; i++) {
		struct store_figures	*f = &fj->figures[i];

		/* Not yet made (or deleted meanwhile): not known. */
		if ((ci = info_find(&l, fj->consumers[i].name)) == NULL)
			continue;
		f->ok = oldest_pending(ci, &f->oldest_ns) == 0;
		f->pending = ci->pending;
		f->in_flight = ci->ack_pending;
		f->redelivered = ci->redelivered;
	}
	store_cinfo_free(l.list, l.n);
}

/* Fetched at once while reading drop records. */
#define DROPS_FETCH		256
/* How long AUDIT keeps the reader's consumer once it is left behind. */
#define DROPS_INACTIVE_NS	(60 * NS_PER_S)

/*
 * One fetched message of the drop subject: a record of the subscriber
 * asked about (its Nats-Msg-Id shows the relay wrote it) goes into the
 * answer while there is room; the first one past it sets where the rest
 * begins.  1 once that is known.
 */
static int
drops_take(void *arg, natsMsg *m, const jsMsgMetaData *meta)
{
	struct store_drops	*d = arg;
	char			 sub[128];	/* a subscriber name is shorter */

	if (store_admin_drop_record(m, sub, sizeof(sub), NULL) == -1 ||
	    strcmp(sub, d->subscriber) != 0)
		return 0;
	if (d->n == d->limit) {
		d->next_ns = meta->Timestamp;
		return 1;
	}
	d->drops[d->n].record = xstrndup(natsMsg_GetData(m),
	    (size_t)natsMsg_GetDataLength(m));
	d->drops[d->n].time_ns = meta->Timestamp;
	d->n++;
	return 0;
}

/* A drop record the relay wrote: its subscriber and sequence; see store-int.h. */
int
store_admin_drop_record(natsMsg *m, char *name, size_t namelen,
    uint64_t *seq)
{
	const char	*id = NULL;

	if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) != NATS_OK ||
	    strncmp(id, STORE_DROP_MSGID_PREFIX,
	    strlen(STORE_DROP_MSGID_PREFIX)) != 0)
		return -1;
	return store_wire_drop_record(natsMsg_GetData(m),
	    (size_t)natsMsg_GetDataLength(m), name, namelen, seq);
}

/*
 * Read the drop subject of AUDIT from a time on; see store-int.h.  An
 * ephemeral pull consumer that starts at that time, deleted at the end.
 */
natsStatus
store_admin_scan(const char *stream, const char *subject, int64_t since_ns,
    int max,
    int (*visit)(void *, natsMsg *, const jsMsgMetaData *), void *arg,
    int64_t *resume_ns, char *err, size_t errlen)
{
	natsSubscription	*sub = NULL;
	jsConsumerInfo		*ci = NULL;
	jsMsgMetaData		*meta;
	jsSubOptions		 so;
	natsMsgList		 list;
	jsErrCode		 code = 0;
	uint64_t		 pending;
	int64_t			 last_ns = 0, start;
	int			 scanned = 0, done = 0, i;
	natsStatus		 s;

	*resume_ns = 0;
	jsSubOptions_Init(&so);
	so.Stream = stream;
	/*
	 * nats.c 3.4 writes a start time's nanoseconds without leading
	 * zeros (.000005 goes out as .5): below a tenth of a second, start at
	 * the whole second instead, and skip what comes before since.  The
	 * epoch's first second is every record (nats.c omits a 0 start).
	 */
	start = since_ns % NS_PER_S < NS_PER_S / 10 ?
	    since_ns - since_ns % NS_PER_S : since_ns;
	if (start > 0) {
		so.Config.DeliverPolicy = js_DeliverByStartTime;
		so.Config.OptStartTime = start;
	} else
		so.Config.DeliverPolicy = js_DeliverAll;
	so.Config.AckPolicy = js_AckNone;
	so.Config.InactiveThreshold = DROPS_INACTIVE_NS;
	if ((s = js_PullSubscribe(&sub, store_conn.js, subject, NULL, NULL,
	    &so, &code)) != NATS_OK ||
	    (s = natsSubscription_GetConsumerInfo(&ci, sub, NULL, &code)) !=
	    NATS_OK)
		goto out;
	pending = ci->NumPending;
	jsConsumerInfo_Destroy(ci);
	while (pending > 0 && !done && scanned < max) {
		memset(&list, 0, sizeof(list));
		s = natsSubscription_Fetch(&list, sub, max - scanned <
		    DROPS_FETCH ? max - scanned : DROPS_FETCH,
		    STORE_API_WAIT_MS, &code);
		if (s != NATS_OK)
			break;
		for (i = 0; i < list.Count && !done; i++) {
			if (natsMsg_GetMetaData(&meta, list.Msgs[i]) != NATS_OK)
				continue;
			pending = meta->NumPending;
			/* Before since (the whole second above): not counted. */
			if (meta->Timestamp >= since_ns) {
				scanned++;
				last_ns = meta->Timestamp;
				done = visit(arg, list.Msgs[i], meta);
			}
			jsMsgMetaData_Destroy(meta);
		}
		natsMsgList_Destroy(&list);
	}
	/* Looked at as many as one reading may: go on after the last. */
	if (!done && s == NATS_OK && pending > 0)
		*resume_ns = last_ns + 1;
out:
	if (s != NATS_OK) {
		const char	*e = nats_GetLastError(NULL);

		snprintf(err, errlen, "%s (code %d)", e != NULL && e[0] !=
		    '\0' ? e : natsStatus_GetText(s), (int)code);
	}
	if (sub != NULL) {
		/* Deletes the consumer the subscription made. */
		natsSubscription_Unsubscribe(sub);
		natsSubscription_Destroy(sub);
	}
	return s;
}

/*
 * The drop records of one subscriber from a time on, oldest first: read
 * until limit + 1 records match (the last one tells where the next page
 * starts), the subject ends, or STORE_DROPS_SCAN_MAX records were looked
 * at.
 */
void
store_admin_drops(struct bridge_job *job)
{
	struct store_drops	*d = BRIDGE_CONTAINER(job, struct store_drops,
				    job);
	int64_t			 resume;

	if (store_admin_scan(STORE_AUDIT, STORE_DROP_SUBJECT, d->since_ns,
	    STORE_DROPS_SCAN_MAX,
	    drops_take, d, &resume, d->err, sizeof(d->err)) != NATS_OK)
		d->failed = 1;
	else if (d->next_ns == 0)
		d->next_ns = resume;
}

/* 1 when name is one of the n names of owned. */
static int
leftover_owned(char *const *owned, int n, const char *name)
{
	int	 i;

	for (i = 0; i < n; i++)
		if (strcmp(owned[i], name) == 0)
			return 1;
	return 0;
}

/* Why a leftover job failed, into its err. */
static void
leftover_fail(struct store_leftover_job *j, natsStatus s, jsErrCode code,
    const char *what)
{
	const char	*e = nats_GetLastError(NULL);

	j->result = STORE_LEFTOVER_FAILED;
	snprintf(j->err, sizeof(j->err), "%s: %s (code %d)", what,
	    e != NULL && e[0] != '\0' ? e : natsStatus_GetText(s), (int)code);
}

/*
 * WORK's consumers named relay-<name> that are none of the job's owned
 * names, with their figures, at most STORE_LEFTOVER_MAX.  The names
 * first, then the info of the leftovers alone, as replays are listed: a
 * listing with every consumer's info has nats-server work out every
 * subscriber's pending count.
 */
void
store_admin_leftover_list(struct bridge_job *job)
{
	struct store_leftover_job *j = BRIDGE_CONTAINER(job,
	    struct store_leftover_job, job);
	const size_t		 plen = strlen(STORE_CONSUMER_PREFIX);
	jsConsumerNamesList	*names = NULL;
	jsConsumerInfo		*ci;
	jsErrCode		 code = 0;
	natsStatus		 s;
	int			 i;

	s = js_ConsumerNames(&names, store_conn.js, STORE_WORK, NULL, &code);
	if (s == NATS_NOT_FOUND)
		return;			/* no consumers at all */
	if (s != NATS_OK) {
		leftover_fail(j, s, code, "consumers listed");
		return;
	}
	j->list = xcalloc(names->Count < STORE_LEFTOVER_MAX ?
	    (size_t)names->Count + 1 : STORE_LEFTOVER_MAX, sizeof(*j->list));
	for (i = 0; i < names->Count; i++) {
		struct store_leftover	*c;

		if (strncmp(names->List[i], STORE_CONSUMER_PREFIX, plen) != 0 ||
		    leftover_owned(j->owned, j->nowned, names->List[i]))
			continue;
		if (j->n == STORE_LEFTOVER_MAX) {
			j->more = 1;
			break;
		}
		c = &j->list[j->n];
		ci = NULL;
		code = 0;
		s = js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK,
		    names->List[i], NULL, &code);
		if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr)
			continue;	/* deleted since the names were read */
		if (s != NATS_OK) {
			leftover_fail(j, s, code, names->List[i]);
			break;
		}
		c->name = xstrdup(names->List[i]);
		c->subscriber = c->name + plen;
		c->push = ci->Config != NULL && ci->Config->DeliverSubject !=
		    NULL && ci->Config->DeliverSubject[0] != '\0';
		c->filter = xstrdup(ci->Config != NULL &&
		    ci->Config->FilterSubject != NULL ?
		    ci->Config->FilterSubject : "");
		c->pending = ci->NumPending;
		c->in_flight = (uint64_t)ci->NumAckPending;
		c->created_ns = ci->Created;
		c->last_ns = ci->Delivered.Last;
		j->n++;
		jsConsumerInfo_Destroy(ci);
	}
	jsConsumerNamesList_Destroy(names);
}

/* Delete the job's consumer from WORK. */
void
store_admin_leftover_delete(struct bridge_job *job)
{
	struct store_leftover_job *j = BRIDGE_CONTAINER(job,
	    struct store_leftover_job, job);
	jsErrCode		 code = 0;
	natsStatus		 s;

	s = js_DeleteConsumer(store_conn.js, STORE_WORK, j->name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr)
		j->result = STORE_LEFTOVER_NONE;
	else if (s != NATS_OK)
		leftover_fail(j, s, code, "delete");
}
