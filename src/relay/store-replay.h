/*
 * store-replay.h: replays (SPEC 15) in JetStream (store-replay.c): their
 * consumers made, listed, reported and ended, their records in AUDIT,
 * a redrive's sequences.  Called on the loop thread only; the work is
 * done by jobs on the worker thread.  Answering a lease of a replay's
 * consumer, or asking whether it still exists, is a request (store-req.h).
 */
#ifndef STORE_REPLAY_H
#define STORE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

/*
 * A replay is a durable consumer replay-<id> on WORK, filtered like its
 * subscriber and starting at its since (or, for a redrive, at the first
 * dropped event), whose description holds its parameters: so every
 * instance finds it by listing WORK's consumers, and it outlives the
 * instance that started it.  A push subscriber's replay delivers to
 * treaty.replay.<id>, queue group replay-<id>, which every instance that
 * has the subscriber joins.  In AUDIT, each instance keeps its count of
 * what it delivered and dropped for the replay on
 * audit.relay.treaty.replay.<id>.<instance>, and the replay's end (done or
 * cancelled, with the totals) is recorded on
 * audit.relay.treaty.replay.<id>.end before the consumer is deleted.
 * These subjects are under the relay's own prefix (STORE_OWN_PREFIX,
 * store-pub.h).
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
 * and its data (JSON, malloc'd) returned; NULL when subj is too small
 * (STORE_SUBJECT_BUF, store.h, is not).
 */
char		*store_replay_progress(const char *id, const char *instance,
		    uint64_t delivered, uint64_t dropped, char *subj,
		    size_t subjlen);

#endif
