/*
 * store-kv.c: the TREATY_SUBSCRIBERS bucket on the loop (store-kv.h):
 * its watch, and the writes the operations API asks for.  Loop thread;
 * the calls that wait are worker jobs (store-kv-admin.c).
 *
 * Not nats.c's kvStore_Watch: 3.4 has no asynchronous watcher, and
 * kvWatcher_Next cannot be polled (a zero timeout is refused), so it
 * would need a thread of its own.  And its resumption after an outage
 * goes on from the last sequence seen, so a deletion whose marker was
 * purged meanwhile is never seen.  The watch here is a consumer this
 * instance makes, delivering the newest value per key and then each
 * change to a subscription that store_poll drains like the others.  Each
 * (re)start makes a new consumer (a generation) and reads the whole bucket
 * again (the snapshot): the view is marked, confirmed entry by entry, and
 * what was not confirmed is swept.  Restarts come from a reconnection, a
 * gap in the consumer's sequence, a heartbeat that names a sequence we
 * did not see, or silence longer than two heartbeats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "store-int.h"
#include "util.h"

#define KV_SUBJECT_PREFIX	"$KV." STORE_KV_BUCKET "."
/* Two heartbeats (store-kv-admin.c: 5 s) and some: the consumer is gone. */
#define KV_SILENCE_MS		12000
#define KV_TICK_MS		1000

static struct {
	const struct store_kv_watcher *w;
	struct event		 tick;
	int			 armed;
	int			 gen;		/* the current generation */
	int			 starting;	/* its consumer being made */
	int			 again;		/* restart when that is done */
	char			*consumer;	/* its name; NULL: none */
	uint64_t		 pending;	/* the snapshot's size */
	uint64_t		 got;		/* messages in this generation */
	uint64_t		 cseq;		/* the consumer's last sequence */
	int			 in_snapshot;
	int			 synced;	/* a first snapshot was whole */
	long long		 heard_ms;	/* last message or heartbeat */
} kv;

void
store_kv_watch(const struct store_kv_watcher *w)
{
	kv.w = w;
}

int
store_kv_synced(void)
{
	return kv.synced;
}

static void	kv_tick_cb(evutil_socket_t, short, void *);

/* Loop thread: the watch's consumer is made, or not. */
static void
kv_watch_done(struct bridge_job *job)
{
	struct store_kv_watch_job *wj = BRIDGE_CONTAINER(job,
	    struct store_kv_watch_job, job);

	kv.starting = 0;
	kv.heard_ms = now_ms();
	if (store_conn.closing)
		kv.again = 0;
	else if (wj->gen == kv.gen && !wj->failed) {
		free(kv.consumer);
		kv.consumer = wj->consumer;
		wj->consumer = NULL;
		kv.pending = wj->pending;
		kv.got = 0;
		kv.cseq = 0;
		kv.in_snapshot = 1;
		log_debug("subscribers bucket watched", "generation=%d "
		    "entries=%llu", kv.gen, (unsigned long long)kv.pending);
		kv.w->begin();
		if (kv.pending == 0) {
			kv.in_snapshot = 0;
			if (!kv.synced)
				log_info("subscribers bucket read", "entries=0");
			kv.synced = 1;
			kv.w->end();
			store_kv_read_done();
		}
		/* What arrived while the consumer was being made waits. */
		store_poll();
	} else if (wj->failed)
		log_warnx("subscribers bucket not watched; trying again",
		    "detail=%s", log_q(wj->err));
	free(wj->consumer);
	free(wj->deliver);
	free(wj->old);
	free(wj);
	if (kv.again) {
		kv.again = 0;
		store_kv_restart("changed while starting");
	}
}

/*
 * A new generation: a new subscription, then (worker) a new consumer
 * delivering to it; until that is done its messages wait in nats.c.
 */
void
store_kv_restart(const char *why)
{
	struct store_kv_watch_job *wj;
	char			 subject[STORE_SUBJECT_BUF];

	if (kv.w == NULL || !store_conn.connected || store_conn.closing ||
	    !store_conn.streams_ready)
		return;
	if (!kv.armed) {
		/* From the first start on, the tick watches the watch. */
		struct timeval	 tv = { KV_TICK_MS / 1000, 0 };

		event_assign(&kv.tick, store_conn.base, -1, EV_PERSIST,
		    kv_tick_cb, NULL);
		event_add(&kv.tick, &tv);
		kv.armed = 1;
	}
	if (kv.starting) {
		kv.again = 1;
		return;
	}
	if (kv.gen > 0)
		log_info("subscribers bucket read again", "reason=%s", why);
	kv.gen++;
	if (store_polled.kv != NULL) {
		natsSubscription_Unsubscribe(store_polled.kv);
		natsSubscription_Destroy(store_polled.kv);
		store_polled.kv = NULL;
	}
	/* Two tokens after the inbox: no <inbox>.* nor <inbox>.r.* match. */
	snprintf(subject, sizeof(subject), "%s.kvw.%d", store_conn.inbox,
	    kv.gen);
	store_sub_sync(&store_polled.kv, subject, NULL);
	wj = xcalloc(1, sizeof(*wj));
	wj->deliver = xstrdup(subject);
	wj->old = kv.consumer;
	kv.consumer = NULL;
	wj->gen = kv.gen;
	wj->job.work = store_admin_kv_watch;
	wj->job.done = kv_watch_done;
	kv.starting = 1;
	kv.in_snapshot = 0;
	bridge_run(&wj->job);
}

/* Every KV_TICK_MS: start the watch when it is not running, or silent. */
static void
kv_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (kv.starting || !store_conn.connected || !store_conn.streams_ready)
		return;
	if (kv.consumer == NULL)
		store_kv_restart("not watched yet");
	else if (now_ms() - kv.heard_ms > KV_SILENCE_MS)
		store_kv_restart("no heartbeat");
}

/*
 * One message of the watch (store_poll gives it while no generation is
 * being started).  Ours to destroy.
 */
void
store_kv_take(natsMsg *m)
{
	struct store_lease	 l;
	const char		*subject = natsMsg_GetSubject(m);
	const char		*reply = natsMsg_GetReply(m), *op = NULL, *v;
	const char		*name;
	size_t			 plen = strlen(KV_SUBJECT_PREFIX);

	kv.heard_ms = now_ms();
	if (reply == NULL || !store_wire_is_ack(reply)) {
		/* A heartbeat names the last sequence it sent us. */
		if (natsMsgHeader_Get(m, "Nats-Last-Consumer", &v) ==
		    NATS_OK && strtoull(v, NULL, 10) != kv.cseq) {
			natsMsg_Destroy(m);
			store_kv_restart("a heartbeat shows a gap");
			return;
		}
		natsMsg_Destroy(m);
		return;
	}
	store_wire_ack_parse(reply, &l);
	if (l.dseq != kv.cseq + 1) {
		natsMsg_Destroy(m);
		store_kv_restart("a gap in the watch");
		return;
	}
	kv.cseq = l.dseq;
	kv.got++;
	name = strncmp(subject, KV_SUBJECT_PREFIX, plen) == 0 ?
	    subject + plen : "";
	if (!config_name_valid(name))
		log_warnx("subscribers bucket: a key that is no subscriber's "
		    "name, skipped", "key=%s", log_q(subject));
	else if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK)
		kv.w->entry(name, l.seq, NULL, 0);	/* DEL or PURGE */
	else if (natsMsg_GetDataLength(m) == 0) {
		/* Newer servers' delete markers look like this to 3.4. */
		log_warnx("subscribers bucket: an empty value, read as a "
		    "deletion", "subscriber=%s revision=%llu", name,
		    (unsigned long long)l.seq);
		kv.w->entry(name, l.seq, NULL, 0);
	} else
		kv.w->entry(name, l.seq, natsMsg_GetData(m),
		    (size_t)natsMsg_GetDataLength(m));
	natsMsg_Destroy(m);
	if (kv.in_snapshot && kv.got >= kv.pending && l.pending == 0) {
		kv.in_snapshot = 0;
		if (!kv.synced)
			log_info("subscribers bucket read", "entries=%llu",
			    (unsigned long long)kv.got);
		kv.synced = 1;
		kv.w->end();
		store_kv_read_done();
	}
}

/* The streams are ready: watch the bucket, unless that runs. */
void
store_kv_ensure(void)
{
	if (kv.consumer == NULL && !kv.starting)
		store_kv_restart("start");
}

int
store_kv_reading(void)
{
	return kv.w != NULL && (kv.starting || kv.in_snapshot);
}

/* 1 while the watch's messages must wait (its consumer being made). */
int
store_kv_held(void)
{
	return kv.starting;
}

/* Loop thread: a write is done. */
static void
kv_write_done(struct bridge_job *job)
{
	struct store_kv_job *j = BRIDGE_CONTAINER(job, struct store_kv_job,
	    job);

	/* A stale If-Match is the client's; its refusal is logged. */
	if (j->err[0] != '\0' && j->result != STORE_KV_STALE)
		log_warnx(j->result != STORE_KV_OK ? "subscriber not stored" :
		    j->val != NULL ? "subscriber stored; its consumer not made "
		    "yet" : "subscriber deleted; its consumer not deleted",
		    "subscriber=%s detail=%s", j->name, log_q(j->err));
	if (!j->closed)
		j->cb(j->arg, j->result, j->rev, j->existed);
	free(j->name);
	free(j->val);
	free(j->consumer.name);
	free(j->consumer.deliver);
	free(j->consumer.filter);
	free(j);
}

/* A write job, or NULL when JetStream cannot be asked now. */
static struct store_kv_job *
kv_job(const char *name, int if_match, uint64_t expect, store_kv_cb cb,
    void *arg)
{
	struct store_kv_job	*j;

	if (!store_conn.connected || store_conn.closing ||
	    !store_conn.streams_ready)
		return NULL;
	j = xcalloc(1, sizeof(*j));
	j->name = xstrdup(name);
	j->if_match = if_match;
	j->expect = expect;
	j->cb = cb;
	j->arg = arg;
	j->job.work = store_admin_kv_write;
	j->job.done = kv_write_done;
	return j;
}

struct store_kv_job *
store_kv_put(const char *name, const char *val, size_t len, int if_match,
    uint64_t expect, const struct store_consumer_spec *c, store_kv_cb cb,
    void *arg)
{
	struct store_kv_job	*j;

	if ((j = kv_job(name, if_match, expect, cb, arg)) == NULL)
		return NULL;
	j->val = xmalloc(len + 1);
	memcpy(j->val, val, len);
	j->val[len] = '\0';
	j->len = len;
	j->consumer.name = store_wire_consumer(name);
	j->consumer.deliver = c->kind == STORE_PUSH ?
	    store_wire_deliver(name) : NULL;
	j->consumer.filter = xstrdup(c->filter);
	j->consumer.max_deliver = c->max_deliver;
	j->consumer.max_ack_pending = c->max_ack_pending;
	j->consumer.ack_wait_s = c->ack_wait_s;
	j->consumer.from = c->from;
	j->consumer.from_ns = c->from_ns;
	bridge_run(&j->job);
	return j;
}

struct store_kv_job *
store_kv_delete(const char *name, int if_match, uint64_t expect,
    store_kv_cb cb, void *arg)
{
	struct store_kv_job	*j;

	if ((j = kv_job(name, if_match, expect, cb, arg)) == NULL)
		return NULL;
	j->consumer.name = store_wire_consumer(name);
	bridge_run(&j->job);
	return j;
}

void
store_kv_close(struct store_kv_job *j)
{
	if (j != NULL)
		j->closed = 1;
}

/* Shutdown, after the loop: the subscription and the tick. */
void
store_kv_free(void)
{
	if (kv.armed)
		event_del(&kv.tick);
	kv.armed = 0;
	if (store_polled.kv != NULL) {
		natsSubscription_Destroy(store_polled.kv);
		store_polled.kv = NULL;
	}
	free(kv.consumer);
	kv.consumer = NULL;
}
