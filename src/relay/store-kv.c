/*
 * store-kv.c: the KV buckets on the loop (store-kv.h): each one's watch,
 * and the writes the operations API and substate.c ask for.  Loop
 * thread; the calls that wait are worker jobs (store-kv-admin.c).
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

/* Two heartbeats (store-kv-admin.c: 5 s) and some: the consumer is gone. */
#define KV_SILENCE_MS		12000
#define KV_TICK_MS		1000

/* Each bucket's name in the log's messages: "<name> bucket read". */
static const char *const bucket_names[STORE_KV_NBUCKETS] = {
	"subscribers", "subscriber states", "instances", "order holders"
};

/* "<b's name> bucket <what>", a log line's message. */
static const char *
kv_msg(enum store_kv_bucket b, const char *what, char *buf, size_t len)
{
	snprintf(buf, len, "%s bucket %s", bucket_names[b], what);
	return buf;
}

/* One bucket's watch. */
struct kv_watch {
	const struct store_kv_watcher *w;
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
};

static struct kv_watch	 kv[STORE_KV_NBUCKETS];
static struct event	 kv_tick;	/* watches the watches */
static int		 kv_armed;

void
store_kv_watch(enum store_kv_bucket b, const struct store_kv_watcher *w)
{
	kv[b].w = w;
}

int
store_kv_synced(enum store_kv_bucket b)
{
	return kv[b].w == NULL || kv[b].synced;
}

static void	kv_restart(enum store_kv_bucket b, const char *why);

static void	kv_tick_cb(evutil_socket_t, short, void *);

/* Bucket b's snapshot is whole. */
static void
kv_synced(enum store_kv_bucket b)
{
	struct kv_watch	*k = &kv[b];
	char		 msg[64];

	k->in_snapshot = 0;
	if (!k->synced)
		log_info(kv_msg(b, "read", msg, sizeof(msg)), "entries=%llu",
		    (unsigned long long)k->got);
	k->synced = 1;
	k->w->end();
	if (b == STORE_KV_SUBS)
		store_kv_read_done();
}

/* Loop thread: a watch's consumer is made, or not. */
static void
kv_watch_done(struct bridge_job *job)
{
	struct store_kv_watch_job *wj = BRIDGE_CONTAINER(job,
	    struct store_kv_watch_job, job);
	enum store_kv_bucket b = wj->bucket;
	struct kv_watch	*k = &kv[b];
	char		 msg[64];

	k->starting = 0;
	k->heard_ms = now_ms();
	if (store_conn.closing)
		k->again = 0;
	else if (wj->gen == k->gen && !wj->failed) {
		free(k->consumer);
		k->consumer = wj->consumer;
		wj->consumer = NULL;
		k->pending = wj->pending;
		k->got = 0;
		k->cseq = 0;
		k->in_snapshot = 1;
		log_debug(kv_msg(b, "watched", msg, sizeof(msg)),
		    "generation=%d entries=%llu", k->gen,
		    (unsigned long long)k->pending);
		k->w->begin();
		if (k->pending == 0)
			kv_synced(b);
		/* What arrived while the consumer was being made waits. */
		store_poll();
	} else if (wj->failed)
		log_warnx(kv_msg(b, "not watched; trying again", msg,
		    sizeof(msg)), "detail=%s", log_q(wj->err));
	free(wj->consumer);
	free(wj->deliver);
	free(wj->old);
	free(wj);
	if (k->again) {
		k->again = 0;
		kv_restart(b, "changed while starting");
	}
}

/*
 * A new generation of b's watch: a new subscription, then (worker) a new
 * consumer delivering to it; until that is done its messages wait in
 * nats.c.
 */
static void
kv_restart(enum store_kv_bucket b, const char *why)
{
	struct kv_watch		*k = &kv[b];
	struct store_kv_watch_job *wj;
	char			 subject[STORE_SUBJECT_BUF], msg[64];

	if (k->w == NULL || !store_conn.connected || store_conn.closing ||
	    !store_conn.streams_ready)
		return;
	if (!kv_armed) {
		/* From the first start on, the tick watches the watches. */
		struct timeval	 tv = { KV_TICK_MS / 1000, 0 };

		event_assign(&kv_tick, store_conn.base, -1, EV_PERSIST,
		    kv_tick_cb, NULL);
		event_add(&kv_tick, &tv);
		kv_armed = 1;
	}
	if (k->starting) {
		k->again = 1;
		return;
	}
	if (k->gen > 0)
		log_info(kv_msg(b, "read again", msg, sizeof(msg)),
		    "reason=%s", why);
	k->gen++;
	if (store_polled.kv[b] != NULL) {
		natsSubscription_Unsubscribe(store_polled.kv[b]);
		natsSubscription_Destroy(store_polled.kv[b]);
		store_polled.kv[b] = NULL;
	}
	/* Two tokens after the inbox: no <inbox>.* nor <inbox>.r.* match. */
	snprintf(subject, sizeof(subject), "%s.kvw%d.%d", store_conn.inbox,
	    (int)b, k->gen);
	store_sub_sync(&store_polled.kv[b], subject, NULL);
	wj = xcalloc(1, sizeof(*wj));
	wj->bucket = b;
	wj->deliver = xstrdup(subject);
	wj->old = k->consumer;
	k->consumer = NULL;
	wj->gen = k->gen;
	wj->job.work = store_admin_kv_watch;
	wj->job.done = kv_watch_done;
	k->starting = 1;
	k->in_snapshot = 0;
	bridge_run(&wj->job);
}

/* Every watch again (a reconnection); see store-int.h. */
void
store_kv_restart_all(const char *why)
{
	int	 b;

	for (b = 0; b < STORE_KV_NBUCKETS; b++)
		kv_restart(b, why);
}

/* Every KV_TICK_MS: start a watch when it is not running, or silent. */
static void
kv_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct kv_watch	*k;
	int		 b;

	(void)fd;
	(void)ev;
	(void)arg;
	if (!store_conn.connected || !store_conn.streams_ready)
		return;
	for (b = 0; b < STORE_KV_NBUCKETS; b++) {
		k = &kv[b];
		if (k->starting)
			continue;
		if (k->consumer == NULL)
			kv_restart(b, "not watched yet");
		else if (now_ms() - k->heard_ms > KV_SILENCE_MS)
			kv_restart(b, "no heartbeat");
	}
}

/*
 * One message of b's watch (store_poll gives it while no generation is
 * being started).  Ours to destroy.
 */
void
store_kv_take(enum store_kv_bucket b, natsMsg *m)
{
	struct kv_watch		*k = &kv[b];
	struct store_lease	 l;
	const char		*subject = natsMsg_GetSubject(m);
	const char		*reply = natsMsg_GetReply(m), *op = NULL, *v;
	const char		*name, *prefix = store_kv_prefix(b);
	size_t			 plen = strlen(prefix);
	char			 msg[80];

	k->heard_ms = now_ms();
	if (reply == NULL || !store_wire_is_ack(reply)) {
		/* A heartbeat names the last sequence it sent us. */
		if (natsMsgHeader_Get(m, "Nats-Last-Consumer", &v) ==
		    NATS_OK && strtoull(v, NULL, 10) != k->cseq) {
			natsMsg_Destroy(m);
			kv_restart(b, "a heartbeat shows a gap");
			return;
		}
		natsMsg_Destroy(m);
		return;
	}
	store_wire_ack_parse(reply, &l);
	if (l.dseq != k->cseq + 1) {
		natsMsg_Destroy(m);
		kv_restart(b, "a gap in the watch");
		return;
	}
	k->cseq = l.dseq;
	k->got++;
	name = strncmp(subject, prefix, plen) == 0 ? subject + plen : "";
	if (!config_name_valid(name))
		log_warnx(kv_msg(b, "has a key that is no subscriber's name, "
		    "skipped", msg, sizeof(msg)), "key=%s", log_q(subject));
	else if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK)
		k->w->entry(name, l.seq, NULL, 0);	/* DEL or PURGE */
	else if (natsMsg_GetDataLength(m) == 0) {
		/* Newer servers' delete markers look like this to 3.4. */
		log_warnx(kv_msg(b, "has an empty value, read as a deletion",
		    msg, sizeof(msg)), "subscriber=%s revision=%llu", name,
		    (unsigned long long)l.seq);
		k->w->entry(name, l.seq, NULL, 0);
	} else
		k->w->entry(name, l.seq, natsMsg_GetData(m),
		    (size_t)natsMsg_GetDataLength(m));
	natsMsg_Destroy(m);
	if (k->in_snapshot && k->got >= k->pending && l.pending == 0)
		kv_synced(b);
}

/* The streams are ready: watch each bucket, unless that runs. */
void
store_kv_ensure(void)
{
	int	 b;

	for (b = 0; b < STORE_KV_NBUCKETS; b++)
		if (kv[b].consumer == NULL && !kv[b].starting)
			kv_restart(b, "start");
}

int
store_kv_reading(void)
{
	struct kv_watch	*k = &kv[STORE_KV_SUBS];

	return k->w != NULL && (k->starting || k->in_snapshot);
}

int
store_kv_held(enum store_kv_bucket b)
{
	return kv[b].starting;
}

/* Loop thread: a write is done. */
static void
kv_write_done(struct bridge_job *job)
{
	struct store_kv_job *j = BRIDGE_CONTAINER(job, struct store_kv_job,
	    job);

	/* A stale If-Match is the client's; its refusal is logged. */
	if (j->err[0] != '\0' && j->result != STORE_KV_STALE)
		log_warnx(j->bucket != STORE_KV_SUBS ? "subscriber state not "
		    "stored" : j->result != STORE_KV_OK ? "subscriber not stored" :
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
	j->bucket = STORE_KV_SUBS;
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

struct store_kv_job *
store_kv_set(enum store_kv_bucket b, const char *key, const char *val,
    size_t len, uint64_t expect, store_kv_cb cb, void *arg)
{
	struct store_kv_job	*j;

	if ((j = kv_job(key, 1, expect, cb, arg)) == NULL)
		return NULL;
	j->bucket = b;
	if (val != NULL) {
		j->val = xstrndup(val, len);
		j->len = len;
	}
	bridge_run(&j->job);
	return j;
}

void
store_kv_close(struct store_kv_job *j)
{
	if (j != NULL)
		j->closed = 1;
}

/* Shutdown, after the loop: the subscriptions and the tick. */
void
store_kv_free(void)
{
	int	 b;

	if (kv_armed)
		event_del(&kv_tick);
	kv_armed = 0;
	for (b = 0; b < STORE_KV_NBUCKETS; b++) {
		if (store_polled.kv[b] != NULL) {
			natsSubscription_Destroy(store_polled.kv[b]);
			store_polled.kv[b] = NULL;
		}
		free(kv[b].consumer);
		kv[b].consumer = NULL;
	}
}
