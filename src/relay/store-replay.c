/*
 * store-replay.c: replays in JetStream (SPEC 15; store-replay.h says
 * what they are made of).  The calls that ask are on the loop thread;
 * the work of each (replay_*_work) is a bridge job on the worker thread,
 * since it waits on JetStream, and reads nothing but its job and the
 * JetStream context.
 *
 * A replay's consumer is made with a request of our own rather than
 * js_AddConsumer: nats.c 3.4 writes a start time's nanoseconds without
 * leading zeros (.000005 goes out as .5), and a replay must start exactly
 * at its since.  Its description holds what it will hand out, counted
 * before it is made, and nats-server 2.9 refuses to update a consumer
 * that has a start time: so the count comes from a probe, an ephemeral
 * consumer with the same start and filter that hands nothing out, whose
 * num_pending, read twice alike around a reading of WORK's last sequence,
 * counts the matching events up to that sequence, the replay's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "replay-slots.h"
#include "store-int.h"
#include "util.h"

/* Readings of WORK around the count before giving up on an exact one. */
#define COUNT_TRIES		5
/* Instances whose counts are added up at most. */
#define PROGRESS_MAX		64

struct store_replay_job {
	struct bridge_job	 job;
	/* In. */
	struct store_replay	 r;
	int			 given;		/* start: the client chose r.id */
	int			 max;		/* start: replays at once */
	enum store_replay_state	 state;		/* end */
	char			 instance[STORE_INSTANCE_LEN + 1];
	uint64_t		 delivered, dropped;
	/* Out. */
	struct store_replay_answer a;
	char			 err[160];
	/* Loop thread only. */
	store_replay_cb		 cb;
	void			*arg;
	int			 closed;
};

/* Free what a replay's description holds. */
void
store_replay_free(struct store_replay *r)
{
	if (r == NULL)
		return;
	free(r->subscriber);
	free(r->filter);
	r->subscriber = r->filter = NULL;
}

/* A copy of r's strings into dst (the rest copied as it is). */
static void
replay_copy(struct store_replay *dst, const struct store_replay *r)
{
	*dst = *r;
	dst->subscriber = r->subscriber != NULL ? xstrdup(r->subscriber) :
	    NULL;
	dst->filter = r->filter != NULL ? xstrdup(r->filter) : NULL;
}

/* This instance's progress record for replay id; see store-replay.h. */
char *
store_replay_progress(const char *id, const char *instance,
    uint64_t delivered, uint64_t dropped, char *subj, size_t subjlen)
{
	if (store_wire_replay_subject(subj, subjlen, id, instance) == -1)
		return NULL;
	return store_wire_replay_progress(delivered, dropped);
}

/*
 * Worker thread from here to the loop functions.
 */

/* A failure's text into the job (the first one stays). */
static void
job_fail(struct store_replay_job *j, int result, natsStatus s, jsErrCode code,
    const char *what)
{
	const char	*e = nats_GetLastError(NULL);

	j->a.result = result;
	if (j->err[0] == '\0')
		snprintf(j->err, sizeof(j->err), "%s: %s (code %d)", what,
		    e != NULL && e[0] != '\0' ? e : natsStatus_GetText(s),
		    (int)code);
}

/* A stream's first and last sequences: NATS_OK or the failure. */
static natsStatus
stream_seqs(const char *stream, uint64_t *first, uint64_t *last,
    jsErrCode *code)
{
	jsStreamInfo	*si = NULL;
	natsStatus	 s;

	if ((s = js_GetStreamInfo(&si, store_conn.js, stream, NULL, code)) !=
	    NATS_OK)
		return s;
	if (first != NULL)
		*first = si->State.FirstSeq;
	*last = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	return NATS_OK;
}

/*
 * Create replay r's consumer, started (its description whole), or, with
 * probe not NULL, an ephemeral pull consumer with the same start and
 * filter that hands out nothing, whose name goes to probe (its count is
 * what the replay will hand out).  NATS_OK, or the failure (JetStream's
 * own text in err), *refused set when JetStream answered it: then nothing
 * was made (the name may be another start's, see replay_make); else the
 * consumer may exist all the same.  Worker thread only: the request waits
 * for JetStream's answer (replay_start_work is its one caller).
 */
static natsStatus
consumer_put(const struct store_replay *r, char *probe, size_t probelen,
    char *err, size_t errlen, int *refused)
{
	char		 subj[STORE_SUBJECT_BUF], why[128];
	char		*req;
	natsMsg		*reply = NULL;
	natsStatus	 s;

	*refused = 1;
	if ((req = store_wire_replay_consumer(r, probe != NULL, subj,
	    sizeof(subj))) == NULL) {
		snprintf(err, errlen, "consumer %s%s: name too long",
		    STORE_REPLAY_PREFIX, r->id);
		return NATS_ERR;
	}
	s = natsConnection_Request(&reply, store_conn.nc, subj, req,
	    (int)strlen(req), STORE_API_WAIT_MS);
	free(req);
	if (s != NATS_OK) {
		*refused = 0;
		snprintf(err, errlen, "consumer %s%s: %s", STORE_REPLAY_PREFIX,
		    r->id, natsStatus_GetText(s));
	} else if (store_wire_consumer_created(natsMsg_GetData(reply),
	    (size_t)natsMsg_GetDataLength(reply), probe, probelen, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "consumer %s%s: %.96s", STORE_REPLAY_PREFIX,
		    r->id, why);
		s = NATS_ERR;
	}
	natsMsg_Destroy(reply);
	return s;
}

/*
 * Delete replay id's consumer: NATS_OK also when it was gone already;
 * JetStream's error code into *code.
 */
static natsStatus
consumer_delete(const char *id, jsErrCode *code)
{
	char		 name[64];
	natsStatus	 s;

	snprintf(name, sizeof(name), "%s%s", STORE_REPLAY_PREFIX, id);
	*code = 0;
	s = js_DeleteConsumer(store_conn.js, STORE_WORK, name, NULL, code);
	return s == NATS_NOT_FOUND || *code == JSConsumerNotFoundErr ?
	    NATS_OK : s;
}

/* A redrive's sequences as they are read. */
/*
 * Read the redrive's sequences into j->a.seqs, sorted, each once
 * (store_admin_drop_seqs).
 */
static int
seqs_read(struct store_replay_job *j)
{
	j->a.result = store_admin_drop_seqs(&j->r, &j->a.seqs, &j->a.nseqs,
	    j->err, sizeof(j->err));
	return j->a.result == 0 ? 0 : -1;
}

/* 1 when m's Nats-Msg-Id shows the relay wrote it. */
static int
ours(natsMsg *m)
{
	const char	*id = NULL;

	return natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK &&
	    strncmp(id, STORE_REPLAY_MSGID_PREFIX,
	    strlen(STORE_REPLAY_MSGID_PREFIX)) == 0;
}

/*
 * replay_slots_held's question about a replay's consumer: whether its
 * end record is written (it holds no slot then, its consumer deleted or
 * about to be).  1 or 0; -1, the job failed, when AUDIT did not answer.
 */
static int
slot_ended(void *arg, const char *name)
{
	struct store_replay_job	*j = arg;
	struct store_replay	 r;
	jsErrCode		 code = 0;
	natsMsg			*m = NULL;
	natsStatus		 s;
	char			 subj[STORE_SUBJECT_BUF];
	int			 rc;

	if (store_wire_replay_subject(subj, sizeof(subj), name +
	    strlen(STORE_REPLAY_PREFIX), NULL) == -1)
		return 0;
	s = js_GetLastMsg(&m, store_conn.js, STORE_AUDIT, subj, NULL, &code);
	if (s == NATS_OK) {
		memset(&r, 0, sizeof(r));
		rc = ours(m) && store_wire_replay_parse(natsMsg_GetData(m),
		    (size_t)natsMsg_GetDataLength(m), &r) == 0 &&
		    r.state != STORE_REPLAY_RUNNING;
		store_replay_free(&r);
		natsMsg_Destroy(m);
		return rc;
	}
	if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr)
		return 0;
	job_fail(j, STORE_REPLAY_FAILED, s, code, subj);
	return -1;
}

/*
 * Replay consumer name's info into *ci (the caller destroys it): 1, or
 * 0 when it has ended since the names were read, or -1 with j failed
 * (what: the step, for the error).  Worker thread.
 */
static int
replay_info(struct store_replay_job *j, const char *name,
    jsConsumerInfo **ci, const char *what)
{
	jsErrCode	 code = 0;
	natsStatus	 s;

	*ci = NULL;
	s = js_GetConsumerInfo(ci, store_conn.js, STORE_WORK, name, NULL,
	    &code);
	if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr)
		return 0;
	if (s != NATS_OK) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, what);
		return -1;
	}
	return 1;
}

/*
 * Whether replay id (NULL: one not made yet) holds one of the j->max
 * slots (replay-slots.h): 1; 0 with the answer STORE_REPLAY_FULL; -1
 * with the answer failed.  Every replay's consumer on WORK is listed with
 * its creation time, as replay_list_work lists them (the names, then the
 * info of the replays' alone), and end records are read only of those
 * before it.  The worker runs one job at a time, so two starts on this
 * instance never count at once; another instance's may, which is why a
 * start counts again once its consumer is made (replay_keep).
 */
static int
replay_slot(struct store_replay_job *j, const char *id)
{
	jsConsumerNamesList	*names = NULL;
	jsConsumerInfo		*ci;
	struct replay_slot	*sl;
	jsErrCode		 code = 0;
	natsStatus		 s;
	char			 mine[64];
	size_t			 n = 0;
	int			 i, found, rc = -1;

	s = js_ConsumerNames(&names, store_conn.js, STORE_WORK, NULL, &code);
	if (s != NATS_OK && s != NATS_NOT_FOUND) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, "replays counted");
		return -1;
	}
	sl = xcalloc(names != NULL ? (size_t)names->Count + 1 : 1,
	    sizeof(*sl));
	for (i = 0; names != NULL && i < names->Count; i++) {
		if (!store_wire_replay_name(names->List[i]))
			continue;
		if ((found = replay_info(j, names->List[i], &ci,
		    "replays counted")) == 0)
			continue;
		if (found == -1)
			goto out;
		sl[n].name = names->List[i];
		sl[n++].created_ns = ci->Created;
		jsConsumerInfo_Destroy(ci);
	}
	replay_slots_sort(sl, n);
	if (id != NULL)
		snprintf(mine, sizeof(mine), "%s%s", STORE_REPLAY_PREFIX, id);
	if ((rc = replay_slots_held(sl, n, id != NULL ? mine : NULL, j->max,
	    slot_ended, j)) == 0)
		j->a.result = STORE_REPLAY_FULL;
out:
	free(sl);
	jsConsumerNamesList_Destroy(names);
	return rc;
}

/*
 * Every instance's counts for replay id, except skip's (NULL: none),
 * added to *delivered and *dropped.
 */
static natsStatus
progress_sum(const char *id, const char *skip, uint64_t *delivered,
    uint64_t *dropped, jsErrCode *code)
{
	jsStreamInfo	*si = NULL;
	jsOptions	 o;
	natsMsg		*m;
	char		 filter[STORE_SUBJECT_BUF], mine[STORE_SUBJECT_BUF];
	uint64_t	 d, x;
	natsStatus	 s;
	int		 i;

	store_wire_replay_subject(filter, sizeof(filter), id, "*");
	store_wire_replay_subject(mine, sizeof(mine), id,
	    skip != NULL ? skip : "-");
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = filter;
	if ((s = js_GetStreamInfo(&si, store_conn.js, STORE_AUDIT, &o,
	    code)) != NATS_OK)
		return s;
	for (i = 0; si->State.Subjects != NULL &&
	    i < si->State.Subjects->Count && i < PROGRESS_MAX; i++) {
		const char	*subj = si->State.Subjects->List[i].Subject;
		size_t		 n = strlen(subj);

		/* This instance's own, or the end record: not counts. */
		if (strcmp(subj, mine) == 0 || (n > strlen(STORE_REPLAY_END) &&
		    strcmp(subj + n - strlen(STORE_REPLAY_END),
		    STORE_REPLAY_END) == 0))
			continue;
		m = NULL;
		if ((s = js_GetLastMsg(&m, store_conn.js, STORE_AUDIT, subj,
		    NULL, code)) != NATS_OK)
			break;
		if (ours(m) && store_wire_replay_progress_read(
		    natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m),
		    &d, &x) == 0) {
			*delivered += d;
			*dropped += x;
		}
		natsMsg_Destroy(m);
	}
	jsStreamInfo_Destroy(si);
	return s;
}

/*
 * Replay r's end record (its parameters, state and totals) in AUDIT,
 * stored once whoever writes it: the same Nats-Msg-Id from every instance.
 */
static natsStatus
end_record(const struct store_replay *r, enum store_replay_state st,
    jsErrCode *code)
{
	char		*data = store_wire_replay_description(r, 1, st == STORE_REPLAY_DONE ?
			    "done" : "cancelled");
	char		 subj[STORE_SUBJECT_BUF], msgid[96];
	jsPubOptions	 po;
	jsPubAck	*pa = NULL;
	natsMsg		*m = NULL;
	natsStatus	 s;

	store_wire_replay_subject(subj, sizeof(subj), r->id, NULL);
	snprintf(msgid, sizeof(msgid), "%s%s-end", STORE_REPLAY_MSGID_PREFIX,
	    r->id);
	if ((s = natsMsg_Create(&m, subj, NULL, data, (int)strlen(data))) ==
	    NATS_OK) {
		natsMsgHeader_Set(m, "ce-specversion", "1.0");
		natsMsgHeader_Set(m, "ce-id", msgid + strlen("relay!"));
		natsMsgHeader_Set(m, "ce-source", "/treaty-relay");
		natsMsgHeader_Set(m, "ce-type", "dev.treaty.replay.ended.v1");
		natsMsgHeader_Set(m, "content-type", "application/json");
		natsMsgHeader_Set(m, "Treaty-Producer", "treaty-relay");
		jsPubOptions_Init(&po);
		po.MsgId = msgid;
		po.MaxWait = STORE_API_WAIT_MS;
		s = js_PublishMsg(&pa, store_conn.js, m, &po, code);
		jsPubAck_Destroy(pa);
		natsMsg_Destroy(m);
	}
	free(data);
	return s;
}

static int	replay_find(struct store_replay_job *);

/*
 * The first sequence of WORK stored at or after since_ns, as JetStream
 * reads a start time: a probe (see consumer_put) with that start, whose
 * delivered sequence before it hands anything out is the one before its
 * first; WORK's last + 1 when nothing is that recent.  A subscriber's
 * deliverFrom time becomes the consumer's start sequence this way
 * (store-admin.c): nats-server 2.9 refuses every later update of a
 * consumer made with a start time, even to the same time.  Worker thread
 * only; NATS_OK or the failure in err.
 */
natsStatus
store_replay_seq_at(int64_t since_ns, const char *filter, uint64_t *seq,
    char *err, size_t errlen)
{
	struct store_replay	 r;
	jsConsumerInfo		*ci = NULL;
	jsErrCode		 code = 0;
	char			 probe[64];
	natsStatus		 s;
	int			 refused;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "start");
	r.filter = xstrdup(filter);
	r.since_ns = since_ns;
	s = consumer_put(&r, probe, sizeof(probe), err, errlen, &refused);
	free(r.filter);
	if (s != NATS_OK)
		return s;
	if ((s = js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, probe,
	    NULL, &code)) == NATS_OK)
		*seq = ci->Delivered.Stream + 1;
	else
		snprintf(err, errlen, "start time: %s (code %d)",
		    natsStatus_GetText(s), (int)code);
	jsConsumerInfo_Destroy(ci);
	js_DeleteConsumer(store_conn.js, STORE_WORK, probe, NULL, &code);
	return s;
}

/* The probe's num_pending. */
static natsStatus
probe_pending(const char *probe, uint64_t *pending, jsErrCode *code)
{
	jsConsumerInfo	*ci = NULL;
	natsStatus	 s;

	if ((s = js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, probe,
	    NULL, code)) == NATS_OK)
		*pending = ci->NumPending;
	jsConsumerInfo_Destroy(ci);
	return s;
}

/*
 * A start whose id the client chose: the replay of that id, if there is
 * one, is the answer (the same start sent again after a lost answer), or
 * STORE_REPLAY_CONFLICT when it is not the same replay.  0 when there is
 * none, else 1 with the answer set.
 */
static int
replay_again(struct store_replay_job *j)
{
	struct store_replay	*r = &j->r, want;
	int			 rc;

	replay_copy(&want, r);
	if ((rc = replay_find(j)) == 1 &&
	    (strcmp(want.subscriber, r->subscriber) != 0 ||
	    want.since_ns != r->since_ns || want.dropped != r->dropped))
		j->a.result = STORE_REPLAY_CONFLICT;
	store_replay_free(&want);
	return rc != 0;
}

/*
 * A replay whose consumer this start has just made: counted again, now
 * with it among the others.  Instances that start replays at once each
 * count after making their own, and each sees every consumer made before
 * its own (those made after it come later in the order), so they agree
 * on which hold the slots: the first j->max by creation time.  One that
 * holds none, or that could not be counted, is deleted before anyone is
 * told of it.  When that fails too it runs, and the start failed
 * (STORE_REPLAY_FAILED): a client that chose the id finds it again.
 */
static void
replay_keep(struct store_replay_job *j)
{
	jsErrCode	 code = 0;
	natsStatus	 s;

	if (replay_slot(j, j->r.id) == 1)
		return;
	if ((s = consumer_delete(j->r.id, &code)) != NATS_OK) {
		j->err[0] = '\0';
		job_fail(j, STORE_REPLAY_FAILED, s, code, "over the cap or "
		    "not counted, and not deleted");
	} else if (j->a.result == STORE_REPLAY_FULL)
		snprintf(j->err, sizeof(j->err), "consumer %s%s made, then "
		    "deleted: over the cap at its count", STORE_REPLAY_PREFIX,
		    j->r.id);
}

/*
 * The replay's own consumer, the last step of a start.  JetStream refuses
 * it when the name is taken: a start of the same id on another instance
 * (the client's resend after a lost answer) made it between replay_again
 * and now, and that replay is the answer, as if it had been there first.
 * When JetStream did not answer, the consumer may exist without anyone
 * knowing its id: deleted, so that a replay nobody was told of does not
 * run.
 */
static void
replay_make(struct store_replay_job *j)
{
	jsErrCode	 code = 0;
	int		 refused;

	if (consumer_put(&j->r, NULL, 0, j->err, sizeof(j->err), &refused) ==
	    NATS_OK) {
		replay_keep(j);
		return;
	}
	if (refused && j->given && replay_again(j) != 0)
		return;
	j->a.result = STORE_REPLAY_FAILED;
	if (!refused)
		(void)consumer_delete(j->r.id, &code);
}

/*
 * Start a replay: a slot free (else STORE_REPLAY_FULL at once), its end
 * and count, then its consumer (see the top of the file), counted again.
 */
static void
replay_start_work(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);
	struct store_replay	*r = &j->r;
	jsErrCode		 code = 0;
	uint64_t		 first, p1, p2;
	natsStatus		 s;
	size_t			 i, n = 0;
	char			 probe[64];
	int			 tries, refused;

	j->a.replays = r;
	j->a.n = 1;
	if (j->given && replay_again(j) != 0)
		return;
	if (replay_slot(j, NULL) != 1)
		return;
	if ((s = stream_seqs(STORE_WORK, &first, &r->end, &code)) != NATS_OK) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, "WORK");
		return;
	}
	if (r->dropped) {
		if ((s = stream_seqs(STORE_AUDIT, NULL, &r->audit_end,
		    &code)) != NATS_OK) {
			job_fail(j, STORE_REPLAY_FAILED, s, code, "AUDIT");
			return;
		}
		if (seqs_read(j) == -1)
			return;
		/* What WORK no longer holds is not handed out. */
		for (i = 0; i < j->a.nseqs; i++)
			if (j->a.seqs[i] >= first && n++ == 0)
				r->start_seq = j->a.seqs[i];
		r->matched = (int64_t)n;
		if (n == 0) {
			/* Nothing to redrive: done as it starts. */
			r->state = STORE_REPLAY_DONE;
			if ((s = end_record(r, STORE_REPLAY_DONE, &code)) !=
			    NATS_OK)
				job_fail(j, STORE_REPLAY_FAILED, s, code,
				    "end record");
			return;
		}
		replay_make(j);
		return;
	}
	if ((s = consumer_put(r, probe, sizeof(probe), j->err,
	    sizeof(j->err), &refused)) != NATS_OK) {
		j->a.result = STORE_REPLAY_FAILED;
		return;
	}
	/*
	 * The probe hands nothing out: its num_pending is the number of
	 * matching events from since to WORK's last.  Read twice with WORK's
	 * last sequence in between: when the two agree, no matching event
	 * came meanwhile, so every matching event up to that sequence, and
	 * no other, was counted; it is the replay's end.  Only events of the
	 * subscriber's filter can spoil a try, not other traffic.
	 */
	r->matched = -1;
	for (tries = 0; tries < COUNT_TRIES; tries++) {
		if ((s = probe_pending(probe, &p1, &code)) != NATS_OK ||
		    (s = stream_seqs(STORE_WORK, NULL, &r->end, &code)) !=
		    NATS_OK || (s = probe_pending(probe, &p2, &code)) !=
		    NATS_OK) {
			js_DeleteConsumer(store_conn.js, STORE_WORK, probe,
			    NULL, &code);
			job_fail(j, STORE_REPLAY_FAILED, s, code, "count");
			return;
		}
		if (p1 == p2) {
			r->matched = (int64_t)p1;
			break;
		}
	}
	js_DeleteConsumer(store_conn.js, STORE_WORK, probe, NULL, &code);
	replay_make(j);
}

/* A listed consumer's settings and state into r. */
static void
replay_from_info(struct store_replay *r, const jsConsumerInfo *ci)
{
	const jsConsumerConfig	*c = ci->Config;

	snprintf(r->id, sizeof(r->id), "%s", ci->Name +
	    strlen(STORE_REPLAY_PREFIX));
	free(r->filter);
	r->filter = xstrdup(c->FilterSubject != NULL ? c->FilterSubject : "");
	r->push = c->DeliverSubject != NULL && c->DeliverSubject[0] != '\0';
	r->max_deliver = (int)c->MaxDeliver;
	r->max_ack_pending = (int)c->MaxAckPending;
	r->ack_wait_s = (int)(c->AckWait / NS_PER_S);
	r->num_pending = ci->NumPending;
	r->num_ack_pending = (uint64_t)ci->NumAckPending;
	r->delivered_seq = ci->Delivered.Stream;
	r->ack_floor_seq = ci->AckFloor.Stream;
	r->state = STORE_REPLAY_RUNNING;
}

/*
 * Every started replay's consumer on WORK.  Their names first, then the
 * info of the replays' alone: a listing with every consumer's info has
 * nats-server work out each subscriber's pending count under its locks,
 * every 2 s on every instance, and held up deliveries measurably
 * (docs/BENCHMARKS.md); the names cost it next to nothing.
 */
static void
replay_list_work(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);
	jsConsumerNamesList	*names = NULL;
	jsConsumerInfo		*ci;
	jsErrCode		 code = 0;
	natsStatus		 s;
	int			 i, found;

	if ((s = js_ConsumerNames(&names, store_conn.js, STORE_WORK, NULL,
	    &code)) != NATS_OK) {
		if (s == NATS_NOT_FOUND)
			return;		/* no consumers at all */
		job_fail(j, STORE_REPLAY_FAILED, s, code, "list");
		return;
	}
	j->a.replays = xcalloc((size_t)names->Count + 1,
	    sizeof(*j->a.replays));
	for (i = 0; i < names->Count; i++) {
		struct store_replay	*r = &j->a.replays[j->a.n];

		if (!store_wire_replay_name(names->List[i]))
			continue;
		if ((found = replay_info(j, names->List[i], &ci, "list")) == 0)
			continue;
		if (found == -1)
			break;
		if (ci->Config == NULL || ci->Config->Description == NULL ||
		    store_wire_replay_parse(ci->Config->Description,
		    strlen(ci->Config->Description), r) == -1)
			store_replay_free(r);
		else {
			replay_from_info(r, ci);
			j->a.n++;
		}
		jsConsumerInfo_Destroy(ci);
	}
	jsConsumerNamesList_Destroy(names);
}

/* A redrive's sequences. */
static void
replay_seqs_work(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);

	seqs_read(j);
}

/*
 * Replay j->r.id as it stands: from its consumer while it runs, else
 * from its end record.  1 when found (in j->r), 0 when neither exists,
 * -1 when JetStream did not answer.
 */
static int
replay_find(struct store_replay_job *j)
{
	struct store_replay	*r = &j->r;
	jsConsumerInfo		*ci = NULL;
	jsErrCode		 code = 0;
	natsMsg			*m = NULL;
	natsStatus		 s;
	char			 name[64], subj[STORE_SUBJECT_BUF];
	int			 rc = 0;

	snprintf(name, sizeof(name), "%s%s", STORE_REPLAY_PREFIX, r->id);
	s = js_GetConsumerInfo(&ci, store_conn.js, STORE_WORK, name, NULL,
	    &code);
	if (s == NATS_OK) {
		rc = ci->Config != NULL && ci->Config->Description != NULL &&
		    store_wire_replay_parse(ci->Config->Description,
		    strlen(ci->Config->Description), r) == 0;
		if (rc)
			replay_from_info(r, ci);
		jsConsumerInfo_Destroy(ci);
		return rc;
	}
	if (s != NATS_NOT_FOUND && code != JSConsumerNotFoundErr) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, name);
		return -1;
	}
	store_wire_replay_subject(subj, sizeof(subj), r->id, NULL);
	code = 0;
	s = js_GetLastMsg(&m, store_conn.js, STORE_AUDIT, subj, NULL, &code);
	if (s == NATS_OK) {
		rc = ours(m) && store_wire_replay_parse(natsMsg_GetData(m),
		    (size_t)natsMsg_GetDataLength(m), r) == 0 &&
		    r->state != STORE_REPLAY_RUNNING;
		natsMsg_Destroy(m);
		return rc;
	}
	if (s != NATS_NOT_FOUND && code != JSNoMessageFoundErr) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, subj);
		return -1;
	}
	return 0;
}

/* replay_find for a report or an end: 1 when found, else the answer set. */
static int
replay_found(struct store_replay_job *j)
{
	int	 rc = replay_find(j);

	if (rc == 0)
		j->a.result = STORE_REPLAY_NONE;
	return rc == 1;
}

/* A replay's report: as found, with every instance's counts if running. */
static void
replay_report_work(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);
	jsErrCode		 code = 0;
	natsStatus		 s;

	if (!replay_found(j))
		return;
	if (j->r.state == STORE_REPLAY_RUNNING && (s = progress_sum(j->r.id,
	    NULL, &j->r.delivered, &j->r.dropped_n, &code)) != NATS_OK) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, "counts");
		return;
	}
	j->a.replays = &j->r;
	j->a.n = 1;
}

/* End a running replay: its end record, then its consumer deleted. */
static void
replay_end_work(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);
	jsErrCode		 code = 0;
	natsStatus		 s;

	if (!replay_found(j))
		return;
	j->a.replays = &j->r;
	j->a.n = 1;
	if (j->r.state != STORE_REPLAY_RUNNING)
		return;			/* it had ended: as it was */
	j->r.delivered = j->delivered;
	j->r.dropped_n = j->dropped;
	if ((s = progress_sum(j->r.id, j->instance, &j->r.delivered,
	    &j->r.dropped_n, &code)) != NATS_OK ||
	    (s = end_record(&j->r, j->state, &code)) != NATS_OK) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, "end");
		return;
	}
	/*
	 * Until its consumer is gone the replay still runs everywhere: a
	 * failure here is a failure to end it (the end record is written
	 * again, the same, when asked again).
	 */
	if ((s = consumer_delete(j->r.id, &code)) != NATS_OK) {
		job_fail(j, STORE_REPLAY_FAILED, s, code, "delete");
		return;
	}
	j->r.state = j->state;
}

/*
 * Loop thread from here on.
 */

/* The answer to the one who asked, unless it went away; the job freed. */
static void
replay_job_done(struct bridge_job *job)
{
	struct store_replay_job *j = BRIDGE_CONTAINER(job,
	    struct store_replay_job, job);
	int			 i;

	if (!j->closed && !store_conn.closing) {
		j->a.err = j->err[0] != '\0' ? j->err : NULL;
		j->cb(j->arg, &j->a);
	}
	if (j->a.replays != NULL && j->a.replays != &j->r) {
		for (i = 0; i < j->a.n; i++)
			store_replay_free(&j->a.replays[i]);
		free(j->a.replays);
	}
	store_replay_free(&j->r);
	free(j->a.seqs);
	free(j);
}

/* A job with work, or NULL when JetStream cannot be asked now. */
static struct store_replay_job *
replay_job(void (*work)(struct bridge_job *), const struct store_replay *r,
    store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j;

	if (!store_conn.connected || store_conn.closing)
		return NULL;
	j = xcalloc(1, sizeof(*j));
	if (r != NULL)
		replay_copy(&j->r, r);
	j->cb = cb;
	j->arg = arg;
	j->job.work = work;
	j->job.done = replay_job_done;
	return j;
}

struct store_replay_job *
store_replay_start(const struct store_replay *r, int given, int max,
    store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j = replay_job(replay_start_work, r, cb, arg);

	if (j != NULL) {
		j->given = given;
		j->max = max;
		bridge_run(&j->job);
	}
	return j;
}

struct store_replay_job *
store_replay_list(store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j = replay_job(replay_list_work, NULL, cb,
				    arg);

	if (j != NULL)
		bridge_run(&j->job);
	return j;
}

struct store_replay_job *
store_replay_seqs(const struct store_replay *r, store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j = replay_job(replay_seqs_work, r, cb, arg);

	if (j != NULL)
		bridge_run(&j->job);
	return j;
}

/* A job about replay id alone. */
static struct store_replay_job *
replay_id_job(void (*work)(struct bridge_job *), const char *id,
    store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j;

	if (strlen(id) != STORE_REPLAY_ID_LEN ||
	    (j = replay_job(work, NULL, cb, arg)) == NULL)
		return NULL;
	memcpy(j->r.id, id, STORE_REPLAY_ID_LEN + 1);
	return j;
}

struct store_replay_job *
store_replay_report(const char *id, store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j = replay_id_job(replay_report_work, id,
				    cb, arg);

	if (j != NULL)
		bridge_run(&j->job);
	return j;
}

struct store_replay_job *
store_replay_end(const char *id, enum store_replay_state state,
    const char *instance, uint64_t delivered, uint64_t dropped,
    store_replay_cb cb, void *arg)
{
	struct store_replay_job	*j = replay_id_job(replay_end_work, id, cb,
				    arg);

	if (j == NULL)
		return NULL;
	j->state = state;
	snprintf(j->instance, sizeof(j->instance), "%s", instance);
	j->delivered = delivered;
	j->dropped = dropped;
	bridge_run(&j->job);
	return j;
}

void
store_replay_close(struct store_replay_job *j)
{
	if (j != NULL)
		j->closed = 1;
}
