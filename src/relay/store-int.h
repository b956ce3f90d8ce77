/*
 * store-int.h: the store's private header, shared by src/relay/store*.c
 * alone, and the only header in the relay that includes nats.h.
 *
 * THE THREADING RULE (bridge.h says it whole).  Only the loop thread
 * touches relay state, libevent objects and evhttp requests.  nats.c does
 * the socket I/O on our loop through our own event-loop adapter, but runs
 * the connection callbacks on its own threads; those callbacks only post
 * an item to the bridge.  nats.c calls that wait for a reply (stream and
 * consumer management, JetStream direct gets) cannot run on the loop, which
 * is what reads their reply: they run as bridge jobs on the worker thread.
 * The data path never crosses a thread: publish acknowledgements, consumer
 * messages and request replies land in synchronous subscriptions that the
 * loop polls, with a zero timeout, right after nats.c has read from the
 * socket.
 *
 * One concern and one thread rule per file (the public headers, one per
 * file that has callers outside the store, are listed in store.h):
 *
 *   store.c        lifecycle, connection state, readiness, the stream
 *                  check's schedule, the poll: loop thread (main thread
 *                  before and after the loop)
 *   store-loop.c   nats.c's event-loop adapter and connection callbacks:
 *                  called by nats.c on any thread; they touch only their
 *                  own adapter state, libevent's locked calls and the bridge
 *   store-pub.c    the publish path and its acknowledgements: loop thread
 *   store-msg.c    message ownership, acknowledgement verbs, the batched
 *                  destroy: loop thread
 *   store-sub.c    consumers, their subscriptions, the max-deliveries
 *                  advisory: loop thread
 *   store-req.c    request/reply, pulls, peeks, lease answers: loop thread
 *   store-drops.c  drop records read back from AUDIT: loop thread asks,
 *                  a worker job (store-admin.c) reads
 *   store-leftover.c  consumers no subscriber of this instance owns,
 *                  listed and deleted: loop thread asks, worker jobs
 *                  (store-admin.c) call JetStream
 *   store-replay.c replays in JetStream: consumers made, listed, reported
 *                  and ended, records in AUDIT, a redrive's sequences:
 *                  loop thread asks, its jobs run on the worker thread
 *   store-admin.c  blocking JetStream API calls: worker thread only; reads
 *                  nothing but its job and the JetStream context
 *   store-wire.c   JetStream's wire formats: pure, any thread
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <stdint.h>
#include <sys/queue.h>

#include <event2/event_struct.h>
#include <nats/nats.h>

#include "bridge.h"
#include "store.h"
#include "store-drops.h"
#include "store-kv.h"
#include "store-leftover.h"
#include "store-msg.h"
#include "store-pub.h"
#include "store-replay.h"
#include "store-req.h"
#include "store-sub.h"
#include "store-wire.h"

/* JetStream API requests (and our own deadline on each), milliseconds. */
#define STORE_API_WAIT_MS	5000

/*
 * The connection, read by every store file on the loop thread and written
 * by store.c alone.  js is made before the worker thread can use it and
 * destroyed after the worker has been joined, so store-admin.c may use it.
 */
struct store_conn {
	struct event_base	*base;
	const struct config	*cfg;
	natsOptions		*opts;
	natsConnection		*nc;
	jsCtx			*js;
	natsInbox		*inbox;		/* prefix of our reply subjects */
	size_t			 inbox_len;
	int			 connected;
	int			 streams_ready;
	int			 closing;	/* draining or closed */
	int			 gone;		/* closed by nats.c, for good */
	int			 max_payload;	/* the server's, once connected */
};
extern struct store_conn	 store_conn;

/* A message handed out by the store; see store-msg.h. */
struct store_msg {
	natsMsg			*m;
	uint64_t		 delivered;
	uint64_t		 seq;
};

/*
 * A message of a pull that JetStream kept past our deadline (a stray),
 * held for the consumer's next pull (store-req.c).
 */
struct store_stray {
	natsMsg			*m;
	long long		 renewed;	/* now_ms(): lease started */
	uint64_t		 delivered;	/* JetStream's count, with it */
	int			 last;		/* seen on its last delivery */
	TAILQ_ENTRY(store_stray) entry;
};
TAILQ_HEAD(store_stray_list, store_stray);

/*
 * A consumer.  Its spec is fixed at registration; the stream check job
 * gets a copy of it (store_consumer_spec_copy), never the object.
 */
struct store_consumer {
	char			*name;		/* relay-<subscriber> */
	char			*deliver;	/* push: deliver subject */
	char			*filter;
	enum store_consumer_kind kind;
	int			 replay;	/* a replay's (store_replay_start's) */
	int			 max_deliver;
	int			 max_ack_pending;
	int			 ack_wait_s;
	enum sub_from		 from;		/* where it starts when made */
	int64_t			 from_ns;
	int			 wrong_kind;	/* JetStream's: other kind */
	int			 hold_back;	/* joined only when told */
	int			 joined;	/* ... and told */
	store_msg_cb		 cb;
	store_msg_cb		 exhausted_cb;
	void			*arg;
	int			 idx;		/* in pull reply subjects */
	int			 active;	/* polls left before it idles */
	natsSubscription	*sub;		/* push: the delivery group */
	/*
	 * Pull: JetStream sends the messages of a pull request under their
	 * own subjects, so only the subscription tells which request they
	 * answer: one subscription per kind of request, one request of each
	 * kind at a time.
	 */
	natsSubscription	*pull_sub[STORE_PULL_KINDS];
	struct store_req	*pull_req[STORE_PULL_KINDS];
	struct store_stray_list	 strays;
	int			 nstrays;
	struct event		 strays_ev;	/* renews or gives them back */
	TAILQ_ENTRY(store_consumer) entry;
};
TAILQ_HEAD(store_consumer_list, store_consumer);
/* Every registered consumer: written by store-sub.c, polled by store.c. */
extern struct store_consumer_list	 store_consumers;

/*
 * The subscriptions store_poll (store.c) takes messages from, besides the
 * consumers' own: it says in what order, how many at a time and which
 * function takes each message.  Each is subscribed, unsubscribed and
 * destroyed by the file named, which also takes its messages.
 */
struct store_polled {
	natsSubscription	*acks;		/* <inbox>.*: store-pub.c */
	natsSubscription	*replies;	/* <inbox>.r.*: store-req.c */
	natsSubscription	*exhausted;	/* advisories: store-sub.c */
	natsSubscription	*asks;		/* another's: store-ask.c */
	/* The buckets' watches: store-kv.c. */
	natsSubscription	*kv[STORE_KV_NBUCKETS];
};
extern struct store_polled		 store_polled;

/* A consumer's settings as the worker thread gets them (a copy). */
struct store_consumer_copy {
	char			*name;
	char			*deliver;	/* NULL: pull */
	char			*filter;
	int			 max_deliver;
	int			 max_ack_pending;
	int			 ack_wait_s;
	enum sub_from		 from;		/* when it is made */
	int64_t			 from_ns;
	int			 wrong_kind;	/* out: see consumer_ensure */
};

/*
 * Worker jobs (store-admin.c does the work, the file that asked runs the
 * done function on the loop).  Each carries everything its work reads.
 */
#define STORE_CHECK_TRANSIENT	(-2)	/* no answer: neither yes nor no */
/* The streams: WORK and AUDIT as SPEC 2 and the configuration want them. */
struct store_check_job {
	struct bridge_job	 job;
	/* In: the settings of SPEC 2. */
	int64_t			 work_max_age_ns;
	int64_t			 audit_max_age_ns;
	int64_t			 duplicates_ns;
	int			 replicas;
	int			 attempts_keep;	/* per subscriber; 0: none */
	/* Out. */
	int			 result;	/* 0, -1, STORE_CHECK_TRANSIENT */
	char			 detail[256];	/* streams made or changed */
	char			 attempts_err[128];	/* ATTEMPTS not made */
};

/* The consumers, after the streams: never a condition of ingest. */
struct store_consumers_job {
	struct bridge_job	 job;
	struct store_consumer_copy *consumers;	/* in */
	int			 nconsumers;
	int			 failed;	/* out */
	char			 detail[512];	/* made, changed, failed */
};

/* Every consumer's figures (store_figures). */
struct store_figures_job {
	struct bridge_job	 job;
	struct store_consumer_copy *consumers;	/* in */
	int			 nconsumers;
	struct store_figures	*figures;	/* out, one per consumer */
	store_figures_cb	 cb;		/* loop thread */
};

/* A consumer's num_ack_pending (store_consumer_pending). */
struct store_pending_job {
	struct bridge_job	 job;
	char			*name;		/* in: the consumer's */
	store_pending_cb	 cb;		/* loop thread */
	void			*arg;
	int			 ok;		/* out */
	uint64_t		 n;
	int			 closed;
};

/* A read of drop records (store_drops). */
struct store_drops {
	struct bridge_job	 job;
	/* In. */
	char			*subscriber;
	int64_t			 since_ns;
	int			 limit;
	/* Out. */
	struct store_drop	*drops;		/* limit of them */
	int			 n;
	int64_t			 next_ns;
	int			 failed;
	char			 err[128];
	/* Loop thread only. */
	store_drops_cb		 cb;
	void			*arg;
	int			 closed;
};

/* A listing or a deletion of leftover consumers (store-leftover.h). */
struct store_leftover_job {
	struct bridge_job	 job;
	/* In. */
	char			**owned;	/* a listing: consumer names */
	int			 nowned;
	char			*name;		/* a deletion */
	/* Out. */
	enum store_leftover_result result;
	struct store_leftover	*list;
	int			 n;
	int			 more;
	char			 err[128];
	/* Loop thread only. */
	store_leftover_cb	 cb;
	void			*arg;
	int			 closed;
};

/* A write to a bucket (store-kv.h), and for a subscriber its consumer. */
struct store_kv_job {
	struct bridge_job	 job;
	/* In. */
	enum store_kv_bucket	 bucket;
	char			*name;
	char			*val;		/* NULL: a delete */
	size_t			 len;
	int			 if_match;
	uint64_t		 expect;
	struct store_consumer_copy consumer;	/* name NULL: none */
	/* Out. */
	enum store_kv_result	 result;
	uint64_t		 rev;
	int			 existed;
	char			 err[192];
	/* Loop thread only. */
	store_kv_cb		 cb;
	void			*arg;
	int			 closed;
};

/* A (re)start of the bucket's watch: its consumer made. */
struct store_kv_watch_job {
	struct bridge_job	 job;
	/* In. */
	enum store_kv_bucket	 bucket;
	char			*deliver;	/* where it delivers */
	char			*old;		/* the last one's, to delete */
	int			 gen;
	/* Out. */
	char			*consumer;	/* its name */
	uint64_t		 pending;	/* the snapshot's size */
	int			 failed;
	char			 err[192];
};

struct store_getmsg_job {
	struct bridge_job	 job;
	char			 consumer[128];
	uint64_t		 seq;
	uint64_t		 deliveries;
	natsMsg			*msg;		/* out; NULL: not in WORK */
	char			 err[96];
};

struct store_peek {
	struct bridge_job	 job;
	/* In. */
	char			*consumer;
	char			*filter;
	int			 max;
	/* Out. */
	natsMsg			*msgs[STORE_PEEK_MAX];
	int			 n;
	int			 failed;
	/* Loop thread only. */
	store_peek_cb		 cb;
	void			*arg;
	int			 closed;	/* store_peek_close: no callback */
};

/* store.c */
void	 store_conn_event(struct bridge_item *it);
void	 store_set_state(int connected, int streams);
void	 store_check(void);
void	 store_check_consumers(void);
void	 store_check_one(const struct store_consumer *c);
/*
 * Every polled subscription's messages to their takers, which own the
 * message they are given: store_pub_ack, store_req_reply,
 * store_req_pull_reply, store_sub_advisory, store_sub_deliver.
 */
void	 store_poll(void);
void	 store_nats_check(natsStatus s, const char *what);
void	 store_sub_sync(natsSubscription **sub, const char *subject,
	    const char *queue);

/* store-loop.c */
enum store_conn_what {
	STORE_CONNECTED,
	STORE_DISCONNECTED,
	STORE_RECONNECTED,
	STORE_CLOSED
};
struct store_conn_item {
	struct bridge_item	 item;
	enum store_conn_what	 what;
};
void	 store_loop_options(natsOptions *opts, struct event_base *base);
void	 store_loop_post(enum store_conn_what what);

/* store-pub.c */
void	 store_pub_init(void);
void	 store_pub_ack(natsMsg *m);
void	 store_pub_unsubscribe(void);
void	 store_pub_destroy(void);

/* store-msg.c */
struct store_msg *store_msg_wrap(natsMsg *m);
/* A message's stored size (store_msg_size). */
size_t		 store_natsmsg_size(natsMsg *m);
void	 store_msg_answer(natsMsg *m, enum store_verb v, long long delay_ms);
/* Send the verbs held while NATS was away; closing: free them. */
void	 store_answers_flush(void);
void	 store_grave_add(natsMsg *m);
void	 store_grave_flush(void);
int	 store_next(natsSubscription *sub, natsMsg **m);

/*
 * nats.c's unsent bytes past which nothing more is published without a
 * waiting caller (a stalled server): nats.c would flush in line, on the
 * loop thread.
 */
#define OUT_BUFFER_MAX		(64 * 1024 * 1024)

/*
 * store-pub.c: one core publish (never stored by JetStream unless a
 * stream takes its subject) with reply subject reply (or NULL), headers
 * and data: it only fills nats.c's buffer.
 */
natsStatus store_core_publish(const char *subject, const char *reply,
	    const struct store_header *h, size_t nh, const void *data,
	    size_t len);

/* store-ask.c */
void	 store_ask_init(void);
void	 store_ask_take(natsMsg *m);
void	 store_ask_unsubscribe(void);
void	 store_ask_destroy(void);

/* store-sub.c */
void	 store_sub_init(void);
void	 store_sub_advisory(natsMsg *m);
void	 store_sub_deliver(struct store_consumer *c, natsMsg *m);
void	 store_sub_unsubscribe(void);
void	 store_sub_destroy(void);
int	 store_consumer_copies(struct store_consumer_copy **out);
/* One consumer's settings, as store_consumer_copies gives each (1). */
int	 store_consumer_copy_one(const struct store_consumer *c,
	    struct store_consumer_copy **out);
void	 store_consumer_copies_free(struct store_consumer_copy *c, int n);
/* The consumer check's verdicts on kinds (loop thread). */
void	 store_consumers_kinds(const struct store_consumer_copy *c, int n);

/* store-req.c */
void	 store_req_init(void);
void	 store_req_reply(natsMsg *m);
void	 store_req_pull_reply(struct store_consumer *c,
	    enum store_pull_kind kind, natsMsg *m);
void	 store_req_fail_all(void);
void	 store_req_strays_free(struct store_consumer *c);
void	 store_req_unsubscribe(void);
void	 store_req_destroy(void);

/* store-replay.c, worker thread: see there. */
natsStatus store_replay_seq_at(int64_t since_ns, const char *filter,
	    uint64_t *seq, char *err, size_t errlen);

/* store-kv.c */
/* Restart every bucket's watch (a reconnection). */
void	 store_kv_restart_all(const char *why);
void	 store_kv_ensure(void);
/* 1 while b's watch's messages must wait (its consumer being made). */
int	 store_kv_held(enum store_kv_bucket b);
/*
 * 1 while the subscribers bucket is being read whole (a generation's
 * snapshot).
 */
int	 store_kv_reading(void);
/* store.c: a reading is whole and applied (the deferred consumer check). */
void	 store_kv_read_done(void);
void	 store_kv_take(enum store_kv_bucket b, natsMsg *m);
void	 store_kv_free(void);

/* store-kv-admin.c, worker thread. */
/*
 * Make or update every bucket (replicas as the streams'); as
 * stream_ensure.
 */
int	 store_admin_kv_bucket(int replicas, char *detail, size_t dlen);
/* Bucket b's stream and its subjects' prefix ("$KV.<bucket>."). */
const char *store_kv_stream(enum store_kv_bucket b);
const char *store_kv_prefix(enum store_kv_bucket b);
void	 store_admin_kv_write(struct bridge_job *job);
void	 store_admin_kv_watch(struct bridge_job *job);

/* store-admin.c: the work of each job, on the worker thread. */
/*
 * A JetStream call's outcome: 0, -1 for a definite failure, or
 * STORE_CHECK_TRANSIENT when there was no answer; detail says which.
 */
int	 store_admin_api_result(natsStatus s, jsErrCode code,
	    const char *what, const char *name, char *detail, size_t dlen);
/* Make or update one consumer of WORK (the consumer check's, one by one). */
int	 store_admin_consumer_ensure(struct store_consumer_copy *c,
	    char *detail, size_t dlen);
void	 store_admin_check(struct bridge_job *job);
void	 store_admin_consumers(struct bridge_job *job);
void	 store_admin_getmsg(struct bridge_job *job);
void	 store_admin_peek(struct bridge_job *job);
void	 store_admin_figures(struct bridge_job *job);
void	 store_admin_pending(struct bridge_job *job);
void	 store_admin_drops(struct bridge_job *job);
void	 store_admin_leftover_list(struct bridge_job *job);
void	 store_admin_leftover_delete(struct bridge_job *job);
/*
 * Read subject of stream (AUDIT's drop subject, ATTEMPTS' subject of a
 * subscriber) from since_ns on, oldest first, calling
 * visit with each message and its metadata until it returns 1, the
 * subject ends, or max records were looked at: then *resume_ns is where
 * the rest begins (else 0).  NATS_OK, or the failure with err written.
 */
natsStatus store_admin_scan(const char *stream, const char *subject,
	    int64_t since_ns, int max,
	    int (*visit)(void *, natsMsg *, const jsMsgMetaData *), void *arg,
	    int64_t *resume_ns, char *err, size_t errlen);
/*
 * m is a drop record the relay wrote (its Nats-Msg-Id says so): its
 * subscriber into name and its WORK sequence into *seq (when not NULL).
 * 0, or -1 when it is not one.
 */
/*
 * store-drops.c, worker thread: the WORK sequences of r's subscriber's
 * drop records from r's since up to its AUDIT end, sorted, each once,
 * into *seqs (malloc'd, *nseqs of them): 0, or STORE_REPLAY_FAILED (no
 * answer) or STORE_REPLAY_TOO_MANY, with err written.
 */
int	 store_admin_drop_seqs(const struct store_replay *r, uint64_t **seqs,
	    size_t *nseqs, char *err, size_t errlen);
int	 store_admin_drop_record(natsMsg *m, char *name, size_t namelen,
	    uint64_t *seq);

#endif
