/*
 * store-kv-admin.c: the JetStream calls of the KV buckets (store-kv.h)
 * that wait for an answer: the buckets made or brought up to date (within
 * the stream check), a write or a delete (for a subscriber's definition
 * with its consumer on WORK), and a watch's consumer made.
 *
 * WORKER THREAD ONLY, as store-admin.c: each function reads nothing but
 * its job and the JetStream context, and writes only its job.
 *
 * The bucket is a KV bucket as nats.c's js_CreateKeyValue makes one (the
 * stream KV_<bucket>, subjects $KV.<bucket>.>, so `nats kv` and kvStore_*
 * read it), but made by the stream check rather than by that call: it
 * refuses any difference from an existing bucket, so a changed
 * TREATY_RELAY_REPLICAS could never reach it.  Writes are publishes with
 * the expectations kvStore_Update sends, made here so that JetStream's
 * error code (10071, wrong last sequence) tells a stale If-Match from any
 * other failure; nats.c 3.4's kvStore_Update keeps only its text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treaty.h"
#include "store-int.h"
#include "util.h"

/*
 * Each bucket: its stream, subjects, history and bounds.  The byte
 * bounds are safety nets, far above 10,000 definitions of a few KiB with
 * their history (5, SPEC 16), or 10,000 states of one revision each
 * (history 1: only the newest state matters), or instances: with
 * discard new, a full
 * bucket refuses every write (updates too) while deletes still pass, so
 * it must never be reached in use.
 */
static const struct {
	const char	*stream;
	const char	*prefix;
	int		 history;
	int64_t		 max_bytes;
	int32_t		 value_max;
	int64_t		 max_age_ns;	/* 0: kept */
} buckets[STORE_KV_NBUCKETS] = {
	[STORE_KV_SUBS] = { "KV_" STORE_KV_BUCKET,
	    "$KV." STORE_KV_BUCKET ".", 5, 256LL * 1024 * 1024,
	    STORE_KV_VALUE_MAX },
	[STORE_KV_STATE] = { "KV_" STORE_KV_STATE_BUCKET,
	    "$KV." STORE_KV_STATE_BUCKET ".", 1, 64LL * 1024 * 1024,
	    STORE_KV_STATE_MAX, 0 },
	/*
	 * A key per running instance, written every few seconds: one that
	 * died goes by itself after a minute (2.9 has no TTL per key).
	 */
	[STORE_KV_INSTANCES] = { "KV_" STORE_KV_INSTANCES_BUCKET,
	    "$KV." STORE_KV_INSTANCES_BUCKET ".", 1, 64LL * 1024 * 1024,
	    STORE_KV_VALUE_MAX, 60LL * NS_PER_S },
	/* An ordered subscriber's holder, written every few seconds. */
	[STORE_KV_HOLDERS] = { "KV_" STORE_KV_HOLDERS_BUCKET,
	    "$KV." STORE_KV_HOLDERS_BUCKET ".", 1, 64LL * 1024 * 1024,
	    STORE_KV_STATE_MAX, 0 }
};
/* JetStream's codes for a stale expectation and a full stream. */
#define KV_WRONG_LAST	10071
#define KV_STORE_FULL	10077
/* Tries of a write without If-Match that another instance's write beat. */
#define KV_WRITE_TRIES	3
/* The watch's heartbeat; store-kv.c restarts it after two are missed. */
#define KV_HEARTBEAT_NS	(5LL * NS_PER_S)

const char *
store_kv_stream(enum store_kv_bucket b)
{
	return buckets[b].stream;
}

const char *
store_kv_prefix(enum store_kv_bucket b)
{
	return buckets[b].prefix;
}

/* Bucket b's stream as a KV bucket has it (nats.c's kv.c). */
static void
bucket_config(jsStreamConfig *sc, enum store_kv_bucket b, const char **subj,
    int replicas)
{
	jsStreamConfig_Init(sc);
	sc->Name = buckets[b].stream;
	sc->Subjects = subj;
	sc->SubjectsLen = 1;
	sc->Storage = js_FileStorage;
	sc->Retention = js_LimitsPolicy;
	sc->MaxMsgsPerSubject = buckets[b].history;
	sc->MaxBytes = buckets[b].max_bytes;
	sc->MaxMsgSize = buckets[b].value_max;
	sc->MaxAge = buckets[b].max_age_ns;
	sc->Replicas = replicas;
	sc->Discard = js_DiscardNew;
	sc->AllowRollup = true;
	sc->DenyDelete = true;
	sc->AllowDirect = true;
}

/*
 * Whether the bucket differs in what we set.  Only those fields: newer
 * servers add their own (metadata, compression), which must not read as
 * a difference.
 */
static int
bucket_differs(const jsStreamConfig *have, const jsStreamConfig *want)
{
	return have->SubjectsLen != 1 ||
	    strcmp(have->Subjects[0], want->Subjects[0]) != 0 ||
	    have->MaxMsgsPerSubject != want->MaxMsgsPerSubject ||
	    have->MaxBytes != want->MaxBytes ||
	    have->MaxMsgSize != want->MaxMsgSize ||
	    have->MaxAge != want->MaxAge ||
	    have->Replicas != want->Replicas ||
	    have->Discard != want->Discard ||
	    have->AllowRollup != want->AllowRollup ||
	    have->DenyDelete != want->DenyDelete ||
	    have->AllowDirect != want->AllowDirect;
}

/* Make or update bucket b; as store_admin_kv_bucket. */
static int
bucket_ensure(enum store_kv_bucket b, int replicas, char *detail,
    size_t dlen)
{
	jsStreamConfig	 want;
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	char		 all[64];
	const char	*subj[1] = { all };
	const char	*what = "get", *name = buckets[b].stream;

	snprintf(all, sizeof(all), "%s>", buckets[b].prefix);
	bucket_config(&want, b, subj, replicas);
	s = js_GetStreamInfo(&si, store_conn.js, name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
		what = "create";
		s = js_AddStream(&si, store_conn.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", name);
	} else if (s == NATS_OK && bucket_differs(si->Config, &want)) {
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

/* Make or update every bucket; see store-int.h. */
int
store_admin_kv_bucket(int replicas, char *detail, size_t dlen)
{
	char		 d[STORE_KV_NBUCKETS][96];
	int		 b, r = 0;
	size_t		 off = 0;

	detail[0] = '\0';
	for (b = 0; b < STORE_KV_NBUCKETS && r == 0; b++) {
		d[b][0] = '\0';
		r = bucket_ensure(b, replicas, d[b], sizeof(d[b]));
		if (d[b][0] != '\0' && off < dlen)
			off += snprintf(detail + off, dlen - off, "%s%s",
			    off > 0 ? "; " : "", d[b]);
	}
	return r;
}

/* Why a write failed, into the job. */
static void
kv_fail(struct store_kv_job *j, enum store_kv_result r, natsStatus s,
    jsErrCode code, const char *what)
{
	const char	*e = nats_GetLastError(NULL);

	j->result = r;
	snprintf(j->err, sizeof(j->err), "%s %s: %s (code %d)", what, j->name,
	    e != NULL && e[0] != '\0' ? e : natsStatus_GetText(s), (int)code);
}

/*
 * The key's last message: *seq its revision (0: never written, or gone
 * with the stream's limits), *live 1 for a value (not a delete marker).
 */
static natsStatus
kv_last(const char *stream, const char *subject, uint64_t *seq, int *live)
{
	natsMsg		*m = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	const char	*op = NULL;

	*seq = 0;
	*live = 0;
	s = js_GetLastMsg(&m, store_conn.js, stream, subject, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr)
		return NATS_OK;
	if (s != NATS_OK)
		return s;
	*seq = natsMsg_GetSequence(m);
	*live = natsMsgHeader_Get(m, "KV-Operation", &op) != NATS_OK;
	natsMsg_Destroy(m);
	return NATS_OK;
}

/*
 * A deleted subscriber's state goes with it, so that one made again
 * under its name starts active.  Best effort: a state left behind is
 * the old subscriber's last, and a resume clears it.
 */
static void
state_purge(const char *name)
{
	natsMsg		*m = NULL;
	jsPubOptions	 po;
	char		 subject[64 + NAME_MAX_LEN];

	snprintf(subject, sizeof(subject), "%s%s",
	    buckets[STORE_KV_STATE].prefix, name);
	if (natsMsg_Create(&m, subject, NULL, NULL, 0) != NATS_OK)
		return;
	natsMsgHeader_Set(m, "KV-Operation", "PURGE");
	natsMsgHeader_Set(m, "Nats-Rollup", "sub");
	jsPubOptions_Init(&po);
	po.MaxWait = STORE_API_WAIT_MS;
	js_PublishMsg(NULL, store_conn.js, m, &po, NULL);
	natsMsg_Destroy(m);
}

/*
 * A put or a delete.  With If-Match, one publish that expects that
 * revision.  Without, the key's last revision is read and expected, so
 * that the answer can say whether a value was replaced; when another
 * instance's write comes in between, read and try again.
 */
void
store_admin_kv_write(struct bridge_job *job)
{
	struct store_kv_job *j = BRIDGE_CONTAINER(job, struct store_kv_job,
	    job);
	jsPubOptions	 po;
	jsPubAck	*pa = NULL;
	jsErrCode	 code;
	natsMsg		*m = NULL;
	natsStatus	 s = NATS_OK;
	const char	*stream = buckets[j->bucket].stream;
	char		 subject[64 + NAME_MAX_LEN];
	char		 d[192] = "";
	uint64_t	 last, have;
	int		 live = 0, try;

	snprintf(subject, sizeof(subject), "%s%s", buckets[j->bucket].prefix,
	    j->name);
	for (try = 0; try < KV_WRITE_TRIES; try++) {
		jsPubOptions_Init(&po);
		po.MaxWait = STORE_API_WAIT_MS;
		if (j->if_match) {
			/*
			 * Read only to tell 201 from 200 (a definition's): a
			 * hint, not the verdict.
			 */
			if (j->bucket != STORE_KV_SUBS || kv_last(stream,
			    subject, &have, &live) != NATS_OK ||
			    have != j->expect)
				live = 0;
			last = j->expect;
		} else if ((s = kv_last(stream, subject, &last, &live)) !=
		    NATS_OK) {
			kv_fail(j, STORE_KV_FAILED, s, 0, "read");
			return;
		}
		if (last == 0)
			po.ExpectNoMessage = true;
		else
			po.ExpectLastSubjectSeq = last;
		if ((s = natsMsg_Create(&m, subject, NULL, j->val, j->val !=
		    NULL ? (int)j->len : 0)) != NATS_OK) {
			kv_fail(j, STORE_KV_FAILED, s, 0, "write");
			return;
		}
		if (j->val == NULL) {
			/* As kvStore_Purge: a marker that rolls the key up. */
			natsMsgHeader_Set(m, "KV-Operation", "PURGE");
			natsMsgHeader_Set(m, "Nats-Rollup", "sub");
		}
		code = 0;
		s = js_PublishMsg(&pa, store_conn.js, m, &po, &code);
		natsMsg_Destroy(m);
		m = NULL;
		if (s == NATS_OK) {
			j->rev = pa->Sequence;
			j->existed = live;
			jsPubAck_Destroy(pa);
			break;
		}
		if (code == KV_WRONG_LAST && !j->if_match)
			continue;	/* raced: read the new revision */
		kv_fail(j, code == KV_WRONG_LAST ? STORE_KV_STALE :
		    code == KV_STORE_FULL ? STORE_KV_FULL : STORE_KV_FAILED, s,
		    code, j->val != NULL ? "write" : "delete");
		return;
	}
	if (s != NATS_OK) {
		kv_fail(j, STORE_KV_FAILED, s, KV_WRONG_LAST, "write");
		return;
	}
	/*
	 * The consumer: made now for a put, so that deliverFrom new starts
	 * at the answer and not when some instance's check comes round;
	 * deleted for a delete (only here: a lagging instance must not
	 * delete the one a quick new put makes).  A failure here is logged
	 * by the caller; the consumer check makes it again.
	 */
	if (j->consumer.name != NULL) {
		if (j->val != NULL) {
			if (store_admin_consumer_ensure(&j->consumer, d,
			    sizeof(d)) != 0)
				snprintf(j->err, sizeof(j->err), "%s", d);
		} else {
			code = 0;
			s = js_DeleteConsumer(store_conn.js, STORE_WORK,
			    j->consumer.name, NULL, &code);
			if (s != NATS_OK && s != NATS_NOT_FOUND &&
			    code != JSConsumerNotFoundErr)
				kv_fail(j, STORE_KV_OK, s, code,
				    "consumer of");
			state_purge(j->name);
		}
	}
}

/*
 * The watch's consumer: ephemeral, in memory, the newest value of every
 * key first (the snapshot, of pending messages), then each change, to
 * our deliver subject; heartbeats while idle show that it still lives.
 * The last generation's is deleted (the server would after a while).
 */
void
store_admin_kv_watch(struct bridge_job *job)
{
	struct store_kv_watch_job *w = BRIDGE_CONTAINER(job,
	    struct store_kv_watch_job, job);
	jsConsumerConfig cc;
	jsConsumerInfo	*ci = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	char		 desc[64], all[64];
	const char	*stream = buckets[w->bucket].stream;

	snprintf(all, sizeof(all), "%s>", buckets[w->bucket].prefix);
	if (w->old != NULL)
		js_DeleteConsumer(store_conn.js, stream, w->old, NULL, NULL);
	jsConsumerConfig_Init(&cc);
	snprintf(desc, sizeof(desc), "treaty-relay watch %d", w->gen);
	cc.Description = desc;
	cc.DeliverSubject = w->deliver;
	cc.FilterSubject = all;
	cc.DeliverPolicy = js_DeliverLastPerSubject;
	cc.AckPolicy = js_AckNone;
	cc.MaxDeliver = 1;
	cc.Heartbeat = KV_HEARTBEAT_NS;
	cc.MemoryStorage = true;
	cc.Replicas = 1;
	s = js_AddConsumer(&ci, store_conn.js, stream, &cc, NULL, &code);
	if (s != NATS_OK) {
		w->failed = 1;
		store_admin_api_result(s, code, "watch of", stream, w->err,
		    sizeof(w->err));
		return;
	}
	w->consumer = xstrdup(ci->Name);
	w->pending = ci->NumPending;
	jsConsumerInfo_Destroy(ci);
}
