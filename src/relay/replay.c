/*
 * replay.c: replays on this instance (replay.h).  Loop thread only.
 *
 * A replay is a source of the delivery pipeline (docs/DESIGN.md, "The
 * delivery pipeline"): its consumer's messages are fed down into
 * deliver.c (deliver_source_msg) or an inbox (inbox_source_add), which
 * treat them like the subscriber's own, and what they come to is counted
 * in the ledger (source.h), below both, which this file reads.  Calls go
 * down only: deliver.c and inbox*.c never call in here.
 *
 * Every REPLAY_LIST_MS the instance lists the replays in JetStream (a
 * worker job) and brings its part in each up to date:
 *
 *   - a push subscriber's replay that this instance has the subscriber
 *     of: join its delivery group (a redrive reads its sequences from
 *     AUDIT first), so every instance shares its work as it shares the
 *     subscriber's; of an ordered subscriber, only the instance holding
 *     it (deliver_takes), whose keys order the replay's events among
 *     themselves;
 *   - a pull subscriber's replay that this instance has the inbox of:
 *     its pull consumer becomes one of the inbox's sources, which GETs
 *     draw from (inbox.h), on every instance that has the inbox; of an
 *     ordered inbox, only on the instance holding it (inbox_takes),
 *     whose hand orders the replay's events among themselves;
 *   - a replay whose subscriber is no longer here: leave its group or
 *     inbox (it stays known, and may still be ended as done here);
 *   - a replay no longer listed (ended, or cancelled by any instance):
 *     close it;
 *   - a replay whose consumer has answered everything up to its end, in
 *     two listings in a row: end it as done, then close it.  Two, so that
 *     every instance has recorded its last counts (every
 *     REPLAY_PROGRESS_MS) by then.
 *
 * replay_close is a replay's one teardown, with a reason that decides
 * what its end does (replay_ends): leave, record the counts once more
 * when they are not in an end record, close its jobs, tell the ledger it
 * ended, log, free.  At shutdown a replay is not closed but stopped
 * (replay_stop): it takes no more messages and its jobs are closed, but
 * it stays to record what its deliveries under way come to, until
 * replay_free closes it.
 *
 * A replay's message past its end (stored after it started), or, for a
 * redrive, of an event without a drop record, is acknowledged without a
 * delivery.  An inbox's lease may be acknowledged through any instance,
 * also one that has not listed the replay yet: the ledger counts it all
 * the same, this file takes its tally on its next turn (rs.counted) and
 * records it (a listing that started after the count and does not have
 * the replay closes it).
 *
 * Each instance records its counts per replay on
 * audit.relay.treaty.replay.<id>.<instance>, the instance being a random
 * name per process, so a restarted relay starts new counts instead of
 * overwriting its predecessor's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "config.h"
#include "deliver.h"
#include "inbox.h"
#include "log.h"
#include "replay.h"
#include "source.h"
#include "store.h"
#include "store-msg.h"
#include "store-pub.h"
#include "store-sub.h"
#include "util.h"

struct replay {
	struct store_replay	 r;		/* as last listed */
	struct source		 src;		/* its consumer, as a source */
	struct source_tally	*t;		/* its counts: the ledger's */
	struct store_consumer	*c;		/* taken up here, or NULL */
	uint64_t		*seqs;		/* a redrive's, sorted */
	size_t			 nseqs;
	int			 loaded;	/* seqs read */
	struct store_replay_job	*seqs_job;
	struct store_replay_job	*end_job;
	uint64_t		 rec_delivered, rec_dropped;	/* recorded */
	struct replay_rec	*rec;		/* a record being stored */
	int			 done_seen;	/* listings in a row */
	int			 listed;
	long long		 counted_ms;	/* made by a count, then */
	TAILQ_ENTRY(replay)	 entry;
};
TAILQ_HEAD(replay_list, replay);

/* Why a replay ends here (replay_close), and what its end does. */
enum replay_end {
	REPLAY_DONE,		/* ended here: counts in the end record */
	REPLAY_UNLISTED,	/* ended or cancelled by any instance */
	REPLAY_STOPPED		/* the relay stopped: after the loop */
};
static const struct {
	const char	*reason;
	int		 record;	/* its counts recorded one last time */
	int		 ended;		/* an end: told to the ledger */
} replay_ends[] = {
	[REPLAY_DONE] = { "done", 0, 1 },
	[REPLAY_UNLISTED] = { "no longer listed", 1, 1 },
	[REPLAY_STOPPED] = { "relay stopped", 0, 0 }
};

/* A progress record on its way to AUDIT. */
struct replay_rec {
	struct replay		*rp;		/* NULL once it is gone */
	uint64_t		 delivered, dropped;
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	struct event		 tick;
	struct event		 again;		/* stopping: a failed record */
	struct event		 counted;	/* the ledger counted */
	struct replay_list	 list;
	struct store_replay_job	*list_job;
	long long		 listed_ms;	/* the last listing asked */
	long long		 list_ms;	/* the one under way, asked */
	char			 instance[STORE_INSTANCE_LEN + 1];
	int			 stopping;
	unsigned		 recs;		/* Nats-Msg-Id serial */
} rs = { .list = TAILQ_HEAD_INITIALIZER(rs.list) };

static void	replay_list_cb(void *, struct store_replay_answer *);
static void	replay_record(struct replay *, int);

/* The replay called id here, or NULL. */
static struct replay *
replay_find(const char *id)
{
	struct replay	*rp;

	TAILQ_FOREACH(rp, &rs.list, entry)
		if (strcmp(rp->r.id, id) == 0)
			return rp;
	return NULL;
}

/* JetStream's answer to a progress record. */
static void
replay_rec_cb(void *arg, enum store_result res, int dup)
{
	struct replay_rec	*rec = arg;

	(void)dup;
	if (rec->rp != NULL) {
		rec->rp->rec = NULL;
		if (res == STORE_OK) {
			rec->rp->rec_delivered = rec->delivered;
			rec->rp->rec_dropped = rec->dropped;
		}
		/*
		 * Stopping: what changed meanwhile at once, not at a tick.  A
		 * failure is tried again on the loop's next turn, not from
		 * here: store_fail_all fails every publish still waiting, a
		 * successor made here too, and went round until nats.c's
		 * buffer was full (tens of thousands of records in AUDIT).
		 */
		if (rs.stopping && res == STORE_OK)
			replay_record(rec->rp, 0);
		else if (rs.stopping)
			event_active(&rs.again, EV_TIMEOUT, 0);
	}
	free(rec);
}

/*
 * Record this instance's counts for rp in AUDIT when they changed.  Its
 * answer comes back to rp, unless detach (rp is going).
 */
static void
replay_record(struct replay *rp, int detach)
{
	struct store_header	 h[7];
	struct replay_rec	*rec;
	char			 subj[STORE_SUBJECT_BUF], msgid[128], *data;

	if ((rp->rec != NULL && !detach) ||
	    (rp->t->delivered == rp->rec_delivered &&
	    rp->t->dropped == rp->rec_dropped))
		return;
	if ((data = store_replay_progress(rp->r.id, rs.instance,
	    rp->t->delivered, rp->t->dropped, subj, sizeof(subj))) == NULL)
		return;
	rec = xcalloc(1, sizeof(*rec));
	rec->rp = detach ? NULL : rp;
	rec->delivered = rp->t->delivered;
	rec->dropped = rp->t->dropped;
	snprintf(msgid, sizeof(msgid), "%s%s-%s-%u", STORE_REPLAY_MSGID_PREFIX,
	    rp->r.id, rs.instance, ++rs.recs);
	h[0] = (struct store_header){ "ce-specversion", "1.0" };
	h[1] = (struct store_header){ "ce-id", msgid + strlen("relay!") };
	h[2] = (struct store_header){ "ce-source", "/treaty-relay" };
	h[3] = (struct store_header){ "ce-type",
	    "dev.treaty.replay.progress.v1" };
	h[4] = (struct store_header){ "content-type", "application/json" };
	h[5] = (struct store_header){ "Treaty-Producer", "treaty-relay" };
	/* Replaces this instance's earlier records (AUDIT allows it). */
	h[6] = (struct store_header){ "Nats-Rollup", "sub" };
	if (store_publish(subj, h, 7, msgid, data, strlen(data),
	    replay_rec_cb, rec) == STORE_OK) {
		if (!detach)
			rp->rec = rec;
	} else
		free(rec);		/* tried again with the next tick */
	free(data);
}

/*
 * Leave rp's delivery group here (its deliveries under way finish, those
 * waiting at a gate go back), or its inbox (the GETs waiting for its
 * pull go on without it), for reason.  Nothing when it is not taken up.
 */
static void
replay_leave(struct replay *rp, const char *reason)
{
	if (rp->c == NULL)
		return;
	log_debug("replay left", "replay=%s sub=%s reason=%s", rp->r.id,
	    log_q(rp->r.subscriber), log_q(reason));
	if (!rp->r.push)
		inbox_source_remove(rp->c);
	store_consumer_remove(rp->c);
	rp->c = NULL;
	if (rp->r.push)
		deliver_source_left(rp->r.subscriber, rp->r.id);
}

/*
 * Close rp's jobs on the worker: one that finishes once the connection
 * is closing is freed without its callback (store-replay.c), which
 * would leave its pointer here dangling.
 */
static void
replay_jobs_close(struct replay *rp)
{
	store_replay_close(rp->seqs_job);
	rp->seqs_job = NULL;
	store_replay_close(rp->end_job);
	rp->end_job = NULL;
}

/*
 * End rp here, the one way, for why (replay_ends): it leaves its group or
 * inbox, its counts are recorded one last time when no end record has
 * them (the record's answer no longer comes back to rp), its jobs are
 * closed, the ledger forgets it when it ended, and the reason is logged.
 */
static void
replay_close(struct replay *rp, enum replay_end why)
{
	const char	*reason = replay_ends[why].reason;

	replay_leave(rp, reason);
	if (rp->rec != NULL)
		rp->rec->rp = NULL;
	if (replay_ends[why].record)
		replay_record(rp, 1);
	replay_jobs_close(rp);
	TAILQ_REMOVE(&rs.list, rp, entry);
	log_debug("replay closed", "replay=%s sub=%s delivered=%llu "
	    "dropped=%llu reason=%s", rp->r.id, log_q(rp->r.subscriber),
	    (unsigned long long)rp->t->delivered,
	    (unsigned long long)rp->t->dropped, log_q(reason));
	if (replay_ends[why].ended)
		source_end(rp->r.id);	/* frees rp->t */
	store_replay_free(&rp->r);
	free(rp->seqs);
	free(rp);
}

/* 1 when seq is one of rp's (before its end; a redrive's sequences). */
static int
replay_wants(const struct replay *rp, uint64_t seq)
{
	size_t	 lo = 0, hi = rp->nseqs, mid;

	if (seq > rp->r.end)
		return 0;
	if (!rp->r.dropped)
		return 1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rp->seqs[mid] == seq)
			return 1;
		if (rp->seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* A message of rp's consumer. */
static void
replay_msg_cb(void *arg, struct store_msg *m)
{
	struct replay	*rp = arg;

	if (!replay_wants(rp, store_msg_seq(m))) {
		store_msg_ack(m);
		return;
	}
	if (deliver_source_msg(rp->r.subscriber, &rp->src, m, 0) == -1)
		store_msg_give_back(m);
}

/* JetStream gave up on one of rp's messages (the last try was lost). */
static void
replay_exhausted_cb(void *arg, struct store_msg *m)
{
	struct replay	*rp = arg;

	if (!replay_wants(rp, store_msg_seq(m)) ||
	    deliver_source_msg(rp->r.subscriber, &rp->src, m, 1) == -1)
		store_msg_free(m);
}

/* For an inbox: 1 when rp hands out the event of sequence seq. */
static int
replay_want_cb(void *arg, uint64_t seq)
{
	return replay_wants(arg, seq);
}

/* JetStream gave up on one of rp's inbox events (its leases ran out). */
static void
replay_pull_exhausted_cb(void *arg, struct store_msg *m)
{
	struct replay	*rp = arg;

	if (!replay_wants(rp, store_msg_seq(m)))
		store_msg_free(m);
	else
		inbox_source_dropped(rp->r.subscriber, &rp->src, m);
}

/* 1 when rp's subscriber is here: a push subscriber, or an inbox. */
static int
replay_here(const struct replay *rp)
{
	return !rs.stopping && (rp->r.push ? deliver_takes(rp->r.subscriber) :
	    inbox_takes(rp->r.subscriber));
}

/* Join rp's delivery group, or its inbox's sources: feed its source in. */
static void
replay_join(struct replay *rp)
{
	struct store_consumer_spec	 spec;

	source_set(&rp->src, rp->r.id, rp->r.max_deliver);
	memset(&spec, 0, sizeof(spec));
	spec.name = rp->r.subscriber;
	spec.kind = rp->r.push ? STORE_PUSH : STORE_PULL;
	spec.filter = rp->r.filter;
	spec.max_deliver = rp->r.max_deliver;
	spec.max_ack_pending = rp->r.max_ack_pending;
	spec.ack_wait_s = rp->r.ack_wait_s;
	spec.replay = rp->r.id;
	if (rp->r.push) {
		rp->c = store_consumer_add(&spec, replay_msg_cb,
		    replay_exhausted_cb, rp);
		deliver_source_joined(rp->r.subscriber, &rp->src, rp->c);
	} else {
		rp->c = store_consumer_add(&spec, NULL,
		    replay_pull_exhausted_cb, rp);
		if (inbox_source_add(rp->r.subscriber, &rp->src, rp->c,
		    replay_want_cb, rp) == -1) {
			store_consumer_remove(rp->c);
			rp->c = NULL;
			return;
		}
	}
	log_info("replay taken up", "replay=%s sub=%s kind=%s matched=%lld",
	    rp->r.id, rp->r.subscriber, rp->r.push ? "push" : "pull",
	    (long long)rp->r.matched);
}

/* A redrive's sequences were read. */
static void
replay_seqs_cb(void *arg, struct store_replay_answer *a)
{
	struct replay	*rp = arg;

	rp->seqs_job = NULL;
	if (a->result != 0) {
		log_warnx("redrive's drop records not read; trying again",
		    "replay=%s error=%s", rp->r.id, log_q(a->err));
		return;
	}
	rp->seqs = a->seqs;
	rp->nseqs = a->nseqs;
	a->seqs = NULL;
	rp->loaded = 1;
	if (rp->c == NULL && replay_here(rp))
		replay_join(rp);
}

/* The replay was ended (done) by this instance. */
static void
replay_end_cb(void *arg, struct store_replay_answer *a)
{
	struct replay	*rp = arg;

	rp->end_job = NULL;
	if (a->result == STORE_REPLAY_FAILED) {
		log_warnx("replay not ended yet; trying again", "replay=%s "
		    "error=%s", rp->r.id, log_q(a->err));
		return;
	}
	if (a->result == 0 && a->n == 1)
		log_info("replay done", "replay=%s sub=%s matched=%lld "
		    "delivered=%llu dropped=%llu", rp->r.id, rp->r.subscriber,
		    (long long)a->replays[0].matched,
		    (unsigned long long)a->replays[0].delivered,
		    (unsigned long long)a->replays[0].dropped_n);
	replay_close(rp, REPLAY_DONE);
}

/*
 * 1 when everything rp hands out has been answered: the consumer's ack
 * floor reached the end, or nothing is pending or in flight up to it.
 */
static int
replay_finished(const struct store_replay *r)
{
	return r->ack_floor_seq >= r->end || (r->num_ack_pending == 0 &&
	    (r->num_pending == 0 || r->delivered_seq >= r->end));
}

/* Bring this instance's part in rp up to date after a listing. */
static void
replay_update(struct replay *rp)
{
	int	 here = replay_here(rp);

	if (replay_finished(&rp->r)) {
		if (++rp->done_seen >= 2 && rp->end_job == NULL &&
		    !rs.stopping)
			rp->end_job = store_replay_end(rp->r.id,
			    STORE_REPLAY_DONE, rs.instance, rp->t->delivered,
			    rp->t->dropped, replay_end_cb, rp);
	} else
		rp->done_seen = 0;
	/* An inbox a reload removed (and maybe added again) let it go. */
	if (!here) {
		replay_leave(rp, "subscriber not here");
		return;
	}
	if (rp->c != NULL && !rp->r.push && !inbox_source_has(rp->c))
		replay_leave(rp, "inbox removed");
	if (rp->c != NULL)
		return;
	if (rp->r.dropped && !rp->loaded) {
		if (rp->seqs_job == NULL)
			rp->seqs_job = store_replay_seqs(&rp->r,
			    replay_seqs_cb, rp);
		return;
	}
	replay_join(rp);
}

/*
 * Take the tallies the ledger made for replays not known here (a count
 * came first): each becomes a replay known by its id alone until a
 * listing has it, or, when one that started after the count does not,
 * is closed (its counts recorded).
 */
static void
replay_take_counted(void)
{
	struct source_tally	*t;
	struct replay		*rp;

	while ((t = source_tally_new()) != NULL) {
		rp = xcalloc(1, sizeof(*rp));
		memcpy(rp->r.id, t->id, STORE_REPLAY_ID_LEN + 1);
		rp->t = t;
		rp->counted_ms = t->made_ms;
		TAILQ_INSERT_TAIL(&rs.list, rp, entry);
	}
}

/* The replays in JetStream. */
static void
replay_list_cb(void *arg, struct store_replay_answer *a)
{
	struct replay	*rp, *next;
	int		 i;

	(void)arg;
	rs.list_job = NULL;
	if (a->result != 0) {
		log_warnx("replays not listed", "error=%s", log_q(a->err));
		return;
	}
	replay_take_counted();
	TAILQ_FOREACH(rp, &rs.list, entry)
		rp->listed = 0;
	for (i = 0; i < a->n; i++) {
		if ((rp = replay_find(a->replays[i].id)) == NULL) {
			rp = xcalloc(1, sizeof(*rp));
			rp->t = source_tally_take(a->replays[i].id);
			TAILQ_INSERT_TAIL(&rs.list, rp, entry);
		}
		store_replay_free(&rp->r);
		rp->r = a->replays[i];
		/* Taken: the answer's copy must not free them. */
		a->replays[i].subscriber = a->replays[i].filter = NULL;
		rp->listed = 1;
		rp->counted_ms = 0;
	}
	for (rp = TAILQ_FIRST(&rs.list); rp != NULL; rp = next) {
		next = TAILQ_NEXT(rp, entry);
		if (!rp->listed) {
			/* One counted since this listing started may be new. */
			if (rp->end_job == NULL && rp->counted_ms < rs.list_ms)
				replay_close(rp, REPLAY_UNLISTED);
			continue;
		}
		replay_update(rp);
	}
}

/* Stopping: record again what a failed record left out. */
static void
replay_again_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct replay	*rp;

	(void)fd;
	(void)ev;
	(void)arg;
	TAILQ_FOREACH(rp, &rs.list, entry)
		replay_record(rp, 0);
}

/*
 * The ledger counted an outcome (source_counted made rs.counted active):
 * a new tally is taken, and while stopping the counts are recorded now,
 * so that the relay waits for them with its other publishes before it
 * closes the connection (replay_in_flight until then).
 */
static void
replay_counted_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct replay	*rp;

	(void)fd;
	(void)ev;
	(void)arg;
	replay_take_counted();
	if (!rs.stopping)
		return;
	TAILQ_FOREACH(rp, &rs.list, entry)
		replay_record(rp, 0);
}

/* Timer: counts recorded; the replays listed every REPLAY_LIST_MS. */
static void
replay_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct replay	*rp;
	long long	 now = now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	replay_take_counted();
	TAILQ_FOREACH(rp, &rs.list, entry)
		replay_record(rp, 0);
	if (rs.stopping || rs.list_job != NULL ||
	    now - rs.listed_ms < REPLAY_LIST_MS)
		return;
	rs.listed_ms = rs.list_ms = now;
	log_debug("listing replays", NULL);
	rs.list_job = store_replay_list(replay_list_cb, NULL);
}

/* Start the timers, and watch the ledger's counts. */
/* This instance's name; see replay.h. */
const char *
replay_instance(void)
{
	return rs.instance;
}

void
replay_init(struct event_base *base, const struct config *cfg)
{
	struct timeval	 tv = { REPLAY_PROGRESS_MS / 1000,
			    (REPLAY_PROGRESS_MS % 1000) * 1000 };

	rs.base = base;
	rs.cfg = cfg;
	if (random_hex(rs.instance, STORE_INSTANCE_LEN) == -1)
		fatalx("no random bytes for an instance name", NULL);
	event_assign(&rs.tick, base, -1, EV_PERSIST, replay_tick_cb, NULL);
	event_assign(&rs.again, base, -1, 0, replay_again_cb, NULL);
	event_assign(&rs.counted, base, -1, 0, replay_counted_cb, NULL);
	source_watch(&rs.counted);
	event_add(&rs.tick, &tv);
}

/* Start a replay; see replay.h. */
struct store_replay_job *
replay_start(const struct subscriber *s, int64_t since_ns, int dropped,
    const char *id, store_replay_cb cb, void *arg)
{
	struct store_replay	 r;
	struct store_replay_job	*j;
	struct timespec		 now;

	memset(&r, 0, sizeof(r));
	if (id != NULL)
		snprintf(r.id, sizeof(r.id), "%s", id);
	else if (random_hex(r.id, STORE_REPLAY_ID_LEN) == -1)
		fatalx("no random bytes for a replay", NULL);
	r.subscriber = xstrdup(s->name);
	r.filter = xstrdup(s->filter);
	r.push = s->kind == SUB_PUSH;
	r.dropped = dropped;
	r.since_ns = since_ns;
	clock_gettime(CLOCK_REALTIME, &now);
	r.created_ns = (int64_t)now.tv_sec * NS_PER_S + now.tv_nsec;
	r.max_deliver = s->max_deliver;
	r.max_ack_pending = config_max_ack_pending(s);
	r.ack_wait_s = r.push ? rs.cfg->ack_wait_seconds :
	    rs.cfg->lease_seconds;
	j = store_replay_start(&r, id != NULL, rs.cfg->max_replays, cb, arg);
	store_replay_free(&r);
	return j;
}

/* Cancel a replay; see replay.h. */
struct store_replay_job *
replay_cancel(const char *id, store_replay_cb cb, void *arg)
{
	uint64_t	 delivered, dropped;

	source_counts(id, &delivered, &dropped);
	return store_replay_end(id, STORE_REPLAY_CANCELLED, rs.instance,
	    delivered, dropped, cb, arg);
}

/* List at the next tick. */
void
replay_poke(void)
{
	rs.listed_ms = 0;
}

/* Counts the ledger has that no record has taken yet; see replay.h. */
int
replay_in_flight(void)
{
	return event_pending(&rs.counted, EV_TIMEOUT, NULL) != 0;
}

/*
 * Shutdown: every replay stops (not closed: what its deliveries under
 * way come to is still recorded, until replay_free): it takes no more
 * messages, its jobs on the worker are closed (none starts after this),
 * and its counts are recorded.
 */
void
replay_stop(void)
{
	struct replay	*rp;

	rs.stopping = 1;
	store_replay_close(rs.list_job);
	rs.list_job = NULL;
	replay_take_counted();
	TAILQ_FOREACH(rp, &rs.list, entry) {
		replay_jobs_close(rp);
		if (rp->c != NULL)
			store_consumer_stop(rp->c);
		replay_record(rp, 0);
	}
}

/* Close every replay (after the loop: nothing is recorded any more). */
void
replay_free(void)
{
	struct replay	*rp;

	event_del(&rs.tick);
	event_del(&rs.again);
	event_del(&rs.counted);
	source_watch(NULL);
	store_replay_close(rs.list_job);
	while ((rp = TAILQ_FIRST(&rs.list)) != NULL)
		replay_close(rp, REPLAY_STOPPED);
}
