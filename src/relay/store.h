/*
 * store.h: the JetStream side of the relay: the NATS connection, the WORK
 * and AUDIT streams, asynchronous publishes, the consumers that deliver
 * (push) or lend (pull) events, and the messages they hand out.
 *
 * Everything declared here is called on the loop thread only; the store
 * itself deals with nats.c's threads (store-int.h says how).
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

struct event_base;
struct config;

/* JetStream API requests (and our own deadline on each), milliseconds. */
#define STORE_API_WAIT_MS	5000

enum store_result {
	STORE_OK,		/* stored (or a duplicate of a stored event) */
	STORE_FAILED,		/* JetStream refused, or NATS failed */
	STORE_TIMEOUT,		/* no acknowledgement in time */
	STORE_NOT_READY,	/* not connected, or streams not ready */
	STORE_OVERLOAD,		/* too many publishes in flight */
	STORE_TOO_LARGE		/* over the server's max_payload */
};

struct store_header {
	const char	*key;
	const char	*value;
};

/* Called once per accepted publish, on the loop thread. */
typedef void (*store_publish_cb)(void *arg, enum store_result result,
    int duplicate);

/*
 * Process-wide set-up of nats.c and of libevent's thread support: before
 * event_base_new.
 */
void		 store_global_init(void);
/*
 * Connect (or start connecting in the background), subscribe the
 * consumers registered so far and arm the timers.
 */
void		 store_init(struct event_base *base, const struct config *cfg);
/*
 * 1 when a message with these headers, Nats-Msg-Id msg_id and len bytes
 * of data fits the NATS server's max_payload (1 before it is known).
 */
int		 store_fits(const struct store_header *h, size_t nh,
		    const char *msg_id, size_t len);
/*
 * Whether n publishes may start now: STORE_OK, STORE_NOT_READY or
 * STORE_OVERLOAD (TREATY_RELAY_MAX_PENDING, or nats.c's unsent bytes);
 * a refusal counts n failed publishes.  store_publish asks it for 1; a
 * batch asks for all its events before it publishes any.
 */
enum store_result store_can_publish(size_t n);
/*
 * Count n publishes refused with res in the publish failure metrics,
 * under its cause (not ready, overload, or NATS).
 */
void		 store_count_refused(enum store_result res, size_t n);
/*
 * Publish data on subject with headers and Nats-Msg-Id msg_id.  Returns
 * STORE_OK when cb will be called later, exactly once; any other value is
 * the answer now and cb is never called.
 */
enum store_result store_publish(const char *subject,
		    const struct store_header *h, size_t nh, const char *msg_id,
		    const void *data, size_t len, store_publish_cb cb, void *arg);
/*
 * The configuration was reloaded (the struct store_init got now holds the
 * new one): the streams are brought up to its settings.
 */
void		 store_reload(void);
/* 1 when connected to NATS and both streams are ready. */
int		 store_ready(void);
/*
 * 1 once nats.c has closed the connection for good (not at our drain):
 * it will not connect again, only a new process does.
 */
int		 store_gone(void);
int		 store_connected(void);
int		 store_streams_ready(void);
/* Publishes waiting for an acknowledgement. */
int		 store_in_flight(void);
/* Fail (STORE_FAILED) every publish still waiting (shutdown, disconnect). */
void		 store_fail_all(void);
/*
 * Shutdown, while the loop runs: drain and close the NATS connection;
 * done() runs on the loop thread when it is closed (or the drain timed
 * out).
 */
void		 store_drain(void (*done)(void));
/*
 * After the loop has stopped: close the connection, stop the worker
 * thread, wait for nats.c's threads and free everything.
 */
void		 store_free(void);

/*
 * Messages.  A JetStream message handed to a callback is a struct
 * store_msg, owned by the callee until it calls one of store_msg_ack,
 * _nak, _term, _give_back (which answer JetStream and free it) or
 * store_msg_free (which frees it unanswered).
 */
struct store_msg;
typedef void (*store_msg_cb)(void *arg, struct store_msg *m);

const char	*store_msg_subject(const struct store_msg *m);
const void	*store_msg_data(const struct store_msg *m, size_t *len);
/* Its stored size: payload and header lines (what a pull's bytes count). */
size_t		 store_msg_size(const struct store_msg *m);
/* First value of header key, or NULL. */
const char	*store_msg_header(const struct store_msg *m, const char *key);
/* Its value percent-decoded, malloc'd; NULL when absent or not valid. */
char		*store_msg_header_decoded(const struct store_msg *m,
		    const char *key);
/* Call fn for each header (first value of each key). */
void		 store_msg_headers(const struct store_msg *m,
		    void (*fn)(void *arg, const char *key, const char *value),
		    void *arg);
/* How many times JetStream has delivered it (1 the first time). */
uint64_t	 store_msg_delivered(const struct store_msg *m);
/* Its sequence number in WORK. */
uint64_t	 store_msg_seq(const struct store_msg *m);
void		 store_msg_ack(struct store_msg *m);
/* Negative acknowledgement: JetStream redelivers after delay_ms. */
void		 store_msg_nak(struct store_msg *m, long long delay_ms);
/* Back to JetStream for redelivery at once (a nak without delay). */
void		 store_msg_give_back(struct store_msg *m);
/* No redelivery, ever (a plain +TERM: nats-server 2.9 ignores a reason). */
void		 store_msg_term(struct store_msg *m);
/* "Still working on it": restarts the ack wait; keeps m. */
void		 store_msg_progress(struct store_msg *m);
/* Drop m without answering JetStream (it redelivers after the ack wait). */
void		 store_msg_free(struct store_msg *m);

/* A lease: the numbers of a JetStream acknowledgement subject. */
struct store_lease {
	uint64_t	 delivered;	/* delivery count */
	uint64_t	 seq;		/* stream sequence in WORK */
	uint64_t	 dseq;		/* consumer sequence of this delivery */
	int64_t		 ts;		/* the event's time in WORK, ns */
};
void		 store_msg_lease(const struct store_msg *m,
		    struct store_lease *l);

/*
 * Consumers.  Each subscriber has a durable consumer relay-<name> on WORK,
 * shared by every relay instance: a push consumer delivering to a queue
 * group (one instance gets each message), or a pull consumer whose ack
 * wait is the inbox's lease.  It is created or updated with the streams,
 * and checked again with them.
 */
enum store_consumer_kind {
	STORE_PUSH,
	STORE_PULL
};
struct store_consumer_spec {
	const char		*name;		/* the subscriber's */
	enum store_consumer_kind kind;
	const char		*filter;
	int			 max_deliver;
	int			 max_ack_pending;
	int			 ack_wait_s;
	/*
	 * A replay's id, or NULL: its consumer replay-<id> was made by
	 * store_replay_start, and the stream check leaves it alone.
	 */
	const char		*replay;
};
struct store_consumer;
/*
 * Register a consumer (at start-up, or when a reload adds a subscriber:
 * it is subscribed at once and made in JetStream by a stream check).  A push
 * consumer's messages go to cb on the loop thread; a pull consumer (cb
 * NULL) hands out messages only through store_pull.  exhausted_cb gets
 * each message JetStream stopped handing out on its own after
 * max_deliver deliveries (the last one was given back, or lost with a
 * relay, so no relay terminated it): a copy whose ack, nak and term do
 * nothing, with store_msg_delivered() the number of deliveries.
 */
struct store_consumer *store_consumer_add(
		    const struct store_consumer_spec *spec, store_msg_cb cb,
		    store_msg_cb exhausted_cb, void *arg);
/*
 * A reload changed the subscriber: c's JetStream consumer is updated by a
 * stream check (nothing happens when nothing differs; name and kind are
 * fixed).
 */
void		 store_consumer_update(struct store_consumer *c,
		    const struct store_consumer_spec *spec);
/* c's name in JetStream (relay-<subscriber>), for log lines. */
const char	*store_consumer_name(const struct store_consumer *c);
/*
 * A reload removed the subscriber: this instance takes no more of c's
 * messages (a push consumer's queued ones go to cb first, as in
 * store_consumer_stop) and c is freed.  Its JetStream consumer stays, for
 * the other instances and for a later return.  The caller has closed its
 * pulls, peeks and lease answers.
 */
void		 store_consumer_remove(struct store_consumer *c);
/*
 * A consumer's figures from JetStream's consumer info (SPEC 15), across
 * every instance: stored and not yet handed out, handed out and not
 * acknowledged, handed out more than once.
 */
struct store_figures {
	char		*subscriber;	/* the subscriber's name */
	int		 ok;		/* 0: JetStream did not answer */
	uint64_t	 pending, in_flight, redelivered;
};
typedef void (*store_figures_cb)(const struct store_figures *f, int n);
/*
 * Ask JetStream for every consumer's figures, on the worker thread: cb
 * gets them on the loop thread (not when the store is closing by then).
 * -1 when it cannot ask now (not connected).
 */
int		 store_figures(store_figures_cb cb);

/*
 * Drop records (SPEC 3 and 15): their subject in AUDIT, and the prefix of
 * their Nats-Msg-Id, which no producer's can have ('!' is in no name), so
 * a record is told from an event a producer published on that subject.
 */
#define STORE_DROP_SUBJECT	"audit.relay.treaty.delivery.dropped"
/*
 * The relay's own subjects (drop records, replays' progress and ends): no
 * producer may publish there.  A record a producer stored there would be
 * told from the relay's (the message id), but would still fill the scans
 * of drop listings and redrives, which are bounded.
 */
#define STORE_OWN_PREFIX	"audit.relay.treaty."
#define STORE_DROP_MSGID_PREFIX	"relay!drop-"
/* Records looked at per request at most, matching or not. */
#define STORE_DROPS_SCAN_MAX	10000
struct store_drop {
	char		*record;	/* the record's data, JSON */
	int64_t		 time_ns;	/* when AUDIT stored it, Unix ns */
};
/*
 * The answer: ok 0 when JetStream did not answer; the records (owned by
 * the store, valid during the call), and next_ns, where the rest begins
 * (0: there is no more).
 */
typedef void (*store_drops_cb)(void *arg, int ok, const struct store_drop *d,
		    int n, int64_t next_ns);
struct store_drops;
/*
 * Read the drop records of subscriber stored at or after since_ns, oldest
 * first, up to limit, on the worker thread (a short-lived consumer on
 * AUDIT): cb gets them on the loop thread.  At most
 * STORE_DROPS_SCAN_MAX records are looked at; past them next_ns says
 * where to go on.  NULL when it cannot ask now (not connected).
 */
struct store_drops *store_drops(const char *subscriber, int64_t since_ns,
		    int limit, store_drops_cb cb, void *arg);
/* Forget a read: its callback does not run. */
void		 store_drops_close(struct store_drops *d);
/*
 * Replays (SPEC 15).  A replay is a durable consumer replay-<id> on WORK,
 * filtered like its subscriber and starting at its since (or, for a
 * redrive, at the first dropped event), whose description holds its
 * parameters: so every instance finds it by listing WORK's consumers, and
 * it outlives the instance that started it.  A push subscriber's replay
 * delivers to treaty.replay.<id>, queue group replay-<id>, which every
 * instance that has the subscriber joins.  In AUDIT, each instance keeps
 * its count of what it delivered and dropped for the replay on
 * audit.relay.treaty.replay.<id>.<instance>, and the replay's end (done or
 * cancelled, with the totals) is recorded on
 * audit.relay.treaty.replay.<id>.end
 * before the consumer is deleted.
 */
#define STORE_REPLAY_ID_LEN	API_REPLAY_ID_LEN	/* hex digits */
#define STORE_REPLAY_PREFIX	"replay-"
#define STORE_REPLAY_DELIVER	"treaty.replay."
#define STORE_REPLAY_SUBJECT	"audit.relay.treaty.replay"
#define STORE_REPLAY_END	"end"	/* the end record's last token */
#define STORE_REPLAY_MSGID_PREFIX "relay!replay-"
#define STORE_INSTANCE_LEN	16	/* hex digits */
enum store_replay_state {
	STORE_REPLAY_RUNNING,
	STORE_REPLAY_DONE,
	STORE_REPLAY_CANCELLED
};
struct store_replay {
	char		 id[STORE_REPLAY_ID_LEN + 1];
	char		*subscriber;
	char		*filter;
	int		 push;		/* 0: pull */
	int		 dropped;	/* only events with a drop record */
	int64_t		 since_ns;
	int64_t		 created_ns;
	int		 max_deliver;
	int		 max_ack_pending;
	int		 ack_wait_s;
	/* Set when it starts. */
	uint64_t	 end;		/* WORK's last sequence then */
	uint64_t	 audit_end;	/* AUDIT's (the redrive's records) */
	int64_t		 matched;	/* events it hands out; -1: unknown */
	uint64_t	 start_seq;	/* a redrive's first event */
	/* Its consumer's state, as JetStream last told it. */
	uint64_t	 num_pending;	/* matching, not handed out yet */
	uint64_t	 num_ack_pending;
	uint64_t	 delivered_seq;	/* last stream sequence handed out */
	uint64_t	 ack_floor_seq;	/* all up to it answered */
	/* Reports. */
	enum store_replay_state state;
	uint64_t	 delivered, dropped_n;	/* every instance's counts */
};
/* What a replay job found; see each call. */
struct store_replay_answer {
	int			 result;	/* 0, or one below */
	struct store_replay	*replays;	/* one, or the list's */
	int			 n;
	uint64_t		*seqs;		/* a redrive's, sorted */
	size_t			 nseqs;
	const char		*err;
};
#define STORE_REPLAY_FAILED	(-1)	/* JetStream did not answer */
#define STORE_REPLAY_NONE	(-2)	/* no such replay */
#define STORE_REPLAY_CONFLICT	(-3)	/* the id is another replay's */
#define STORE_REPLAY_TOO_MANY	(-4)	/* a redrive: too many drop records */
#define STORE_REPLAY_FULL	(-5)	/* max replays run already */
/* On the loop thread; the callee may take a->seqs (setting it NULL). */
typedef void (*store_replay_cb)(void *arg, struct store_replay_answer *a);
struct store_replay_job;
/*
 * Start replay r (id, subscriber, filter, kind, dropped, since, settings
 * and created filled in): its end and matched are found and its consumer
 * made; a redrive with nothing to redrive is recorded as done at once,
 * without a consumer.  The answer holds r as started.  given: the client
 * chose the id; when a replay of that id exists, it is the answer (a
 * start sent again), or STORE_REPLAY_CONFLICT when it is another one.
 * STORE_REPLAY_FULL when max replays run already, across all instances
 * (replay-slots.h; its consumer, if made, deleted again).
 */
struct store_replay_job *store_replay_start(const struct store_replay *r,
		    int given, int max, store_replay_cb cb, void *arg);
/* Every replay in JetStream with its consumer's state (the answer's list). */
struct store_replay_job *store_replay_list(store_replay_cb cb, void *arg);
/*
 * A redrive's sequences: those AUDIT's drop records of r's subscriber name,
 * from r's since up to its audit_end, at most r's end (the answer's seqs).
 */
struct store_replay_job *store_replay_seqs(const struct store_replay *r,
		    store_replay_cb cb, void *arg);
/*
 * Replay id as any instance sees it: running (its consumer's state and
 * every instance's counts), or done or cancelled (its end record), or
 * STORE_REPLAY_NONE.
 */
struct store_replay_job *store_replay_report(const char *id,
		    store_replay_cb cb, void *arg);
/*
 * End replay id as state (done or cancelled): its end record with the
 * totals (this instance's from delivered and dropped, which it may not
 * have recorded yet), then its consumer deleted.  STORE_REPLAY_NONE when
 * there is no such replay; one that had already ended stays as it was.
 */
struct store_replay_job *store_replay_end(const char *id,
		    enum store_replay_state state, const char *instance,
		    uint64_t delivered, uint64_t dropped, store_replay_cb cb,
		    void *arg);
/* Forget a job: its callback does not run. */
void		 store_replay_close(struct store_replay_job *j);
void		 store_replay_free(struct store_replay *r);
/*
 * This instance's progress record for replay id: its subject into subj
 * and its data (JSON, malloc'd) returned; NULL when subj is too small.
 */
char		*store_replay_progress(const char *id, const char *instance,
		    uint64_t delivered, uint64_t dropped, char *subj,
		    size_t subjlen);

/*
 * Shutdown: a push consumer takes no more messages here.  What nats.c
 * has queued goes to cb now, then this instance leaves the delivery
 * group, so JetStream hands the rest to the other instances (or keeps it)
 * instead of back to this one.
 */
void		 store_consumer_stop(struct store_consumer *c);

/*
 * Requests answered on the loop thread.  cb gets each reply: a message m
 * (owned by the callee) with status 0, and returns 1 to take more replies
 * or 0 when it is done; or, once, m NULL and status the NATS status of a
 * closing reply (404 no messages, 408 expired, 409 ...) or
 * STORE_REPLY_TIMEOUT, after which the request is gone.
 */
#define STORE_REPLY_TIMEOUT	(-1)
struct store_req;
typedef int (*store_reply_cb)(void *arg, struct store_msg *m, int status);
/* Forget a request (its callback never runs); late messages go back. */
void		 store_req_close(struct store_req *r, const char *reason);

/*
 * Fetch up to batch messages from a pull consumer: what is there now
 * (STORE_PULL_NOW), or waiting up to wait_ms until the batch is full
 * (STORE_PULL_WAIT).  JetStream sends a pull's messages under their own
 * subjects, so only one request of each kind per consumer can be told
 * apart at a time: NULL while one is pending (store_pull_pending), or
 * when NATS is not connected.  max_bytes > 0 bounds the bytes of the
 * messages (store_msg_size) past the first: what would pass it stays for
 * a later pull, undelivered.
 */
enum store_pull_kind {
	STORE_PULL_NOW,
	STORE_PULL_WAIT,
	STORE_PULL_KINDS
};
struct store_req *store_pull(struct store_consumer *c,
		    enum store_pull_kind kind, int batch, long long wait_ms,
		    long long max_bytes, store_reply_cb cb, void *arg);
int		 store_pull_pending(const struct store_consumer *c,
		    enum store_pull_kind kind);
/*
 * 1 when JetStream's consumer of c's name is of the other kind (push for a
 * pull subscriber, or the reverse): it cannot serve c, and the consumer
 * check says so in the log until it is deleted or the subscriber renamed.
 */
int		 store_consumer_wrong_kind(const struct store_consumer *c);
/* Close every pull request of c still pending (shutdown). */
void		 store_pull_close_all(struct store_consumer *c,
		    const char *reason);
/*
 * A message c's pull got that no one can take now: given back to
 * JetStream, unless that would drop it (its last delivery); then c keeps
 * it, its lease renewed, for its next pull.  c NULL: given back.
 */
void		 store_pull_return(struct store_consumer *c,
		    struct store_msg *m);

/*
 * Peek: up to max of the events a pull consumer has not handed out yet,
 * in order, without touching the consumer (direct gets on WORK, on the
 * worker thread).  cb gets the messages (owned by the callee; not
 * delivered, so their delivery count is 0 and they cannot be answered)
 * and 0, or -1 when JetStream could not be asked.  NULL when not
 * connected, or when STORE_PEEKS_MAX peeks are already queued or under
 * way (store_peeks_full): each is up to 257 requests on the one worker
 * thread, which the stream checks, replays and drop listings share, so an
 * inbox's token must not be able to queue them without end.
 * store_peek_close forgets one (cb never runs; the count drops when its
 * job is over).
 */
#define STORE_PEEK_MAX	256
#define STORE_PEEKS_MAX	4
int		 store_peeks_full(void);
struct store_peek;
typedef void (*store_peek_cb)(void *arg, struct store_msg **msgs, int n,
    int result);
struct store_peek *store_peek(struct store_consumer *c, int max,
		    store_peek_cb cb, void *arg);
void		 store_peek_close(struct store_peek *p, const char *reason);

/*
 * Answer a lease of pull consumer c by its numbers, with a reply subject:
 * cb gets JetStream's (empty) confirmation or a timeout.  STORE_NAK takes
 * delay_ms (0: hand it out again at once).  NULL when not connected.
 */
enum store_verb {
	STORE_ACK,		/* +ACK: done, never again */
	STORE_PROGRESS,		/* +WPI: restart the ack wait */
	STORE_NAK,		/* -NAK: again, after delay_ms */
	STORE_TERM		/* +TERM: never again, not done */
};
struct store_req *store_lease_answer(struct store_consumer *c,
		    const struct store_lease *l, enum store_verb verb,
		    long long delay_ms, store_reply_cb cb, void *arg);
/*
 * The same for a lease of replay id's consumer (replay-<id>), by its name
 * alone: any instance can answer it, whether it has taken the replay up
 * or not.  A replay that has ended has no consumer, and the request times
 * out: NATS does answer "no responders", but nats.c's
 * natsSubscription_NextMsg swallows that status without saying which
 * reply subject it came to.
 */
struct store_req *store_replay_lease_answer(const char *id,
		    const struct store_lease *l, enum store_verb verb,
		    long long delay_ms, store_reply_cb cb, void *arg);
/*
 * Ask JetStream whether replay id's consumer still exists: cb gets the
 * answer (read it with store_replay_info_found) or a timeout.  NULL when
 * not connected.
 */
struct store_req *store_replay_info(const char *id, store_reply_cb cb,
		    void *arg);
/* 1: the consumer exists; 0: JetStream has no such consumer; -1: unclear. */
int		 store_replay_info_found(const struct store_msg *m);

#endif
