/*
 * inbox-int.h: the pull inboxes' private header, shared by inbox*.c alone.
 * Loop thread only, all of them.
 *
 *   inbox.c        routes, authentication, query checks, the lease
 *                  operations (DELETE, extend, release), set-up and
 *                  shutdown
 *   inbox-fetch.c  GET: the fetch queues and their pump, the replies of the
 *                  pulls, peeks, the envelopes' JSON
 *   inbox-envelope.c  what a GET answers of each event
 *   inbox-order.c  an ordered inbox's hand (SPEC 18)
 *   inbox-forward.c  answers (struct iresp), and an ordered inbox's
 *                  requests forwarded to its holder
 *   inbox-lease.c  receipts and the memory of leases (pure)
 *
 * JetStream's verbs and subjects stay in the store: the inbox asks
 * store_pull, store_peek and store_lease_answer for what it needs.
 */
#ifndef INBOX_INT_H
#define INBOX_INT_H

#include <stdint.h>
#include <sys/queue.h>

#include <event2/event_struct.h>

#include "api.h"
#include "source.h"
#include "store-replay.h"
#include "store-req.h"

struct evbuffer;
struct evhttp_request;
struct inbox_leases;

/*
 * Where an inbox's answer goes (inbox-forward.c): the HTTP request a
 * worker sent to this instance, or the reply subject of one another
 * instance forwarded to this one, the holder of an ordered inbox.  It is
 * answered once; answering frees what it holds.
 */
struct iresp {
	struct evhttp_request	*req;		/* or NULL: forwarded */
	char			*reply;		/* forwarded: where to */
};
#define IRESP(r)	((struct iresp){ (r), NULL })

/* What a worker asked of an inbox. */
enum inbox_verb {
	INBOX_GET,
	INBOX_ACK,		/* DELETE */
	INBOX_EXTEND,
	INBOX_RELEASE
};

struct fetch;
struct take;
struct ohand;
struct audit_drop;
struct isub;
TAILQ_HEAD(fetch_list, fetch);

/*
 * A source of an inbox's events: a JetStream pull consumer, and the GETs
 * queued for its pulls of each kind (one of each kind pending at a time:
 * see store_pull).  The inbox's own consumer, or a replay's that replay.c
 * fed in here (inbox_source_add), which GETs draw from with "now" pulls
 * only.
 */
struct isrc {
	struct isub		*s;
	struct store_consumer	*consumer;
	struct source		 from;		/* which: own, or a replay */
	/* A replay's: 1 when it hands out the event of that sequence. */
	int			(*want)(void *, uint64_t);
	void			*want_arg;
	struct fetch_list	 queue[STORE_PULL_KINDS];
	int			 asked, got;	/* the pending "now" pull's */
	/* A replay's: its pending "now" pull, and how long it may be quiet. */
	struct store_req	*req;
	struct event		 quiet;
	TAILQ_ENTRY(isrc)	 entry;
};
TAILQ_HEAD(isrc_list, isrc);

/*
 * One pull subscriber, with its own copy of its settings, which a reload
 * replaces.  A removed one moves to ib.gone (no longer found by name)
 * until the last fetch and lease operation that use it end (then the loop
 * frees it: see inbox_sub_unref).
 */
struct isub {
	int			 idx;		/* metrics and leases index */
	struct subscriber	*cfg;
	struct isrc		 own;		/* its consumer relay-<name> */
	struct isrc_list	 replays;	/* replays' consumers, fed in */
	unsigned		 turn;		/* GETs since it had replays */
	struct treaty_keys	*keys;
	struct event		 pump;		/* send the next pulls */
	struct event		 reap;		/* free it, once removed */
	int			 refs;		/* fetches and operations */
	int			 removed;
	int			 seen;		/* by the reload under way */
	struct ohand		*hand;		/* ordered: inbox-order.c */
	TAILQ_ENTRY(isub)	 entry;
};
TAILQ_HEAD(isub_list, isub);

/*
 * An event a GET got, the source that lent it (own, or a replay), and
 * the numbers its receipt and deliveryCount show: JetStream's, or the
 * hand's (lent: an ordered inbox's event, whose message the hand keeps).
 */
struct fetch_msg {
	struct store_msg	*m;		/* NULL: given back */
	struct source		 from;
	struct store_lease	 l;
	int			 lent;
};

/* Where a GET is in its round of the inbox's sources (inbox-fetch.c). */
enum fetch_stage {
	FETCH_START,
	FETCH_OWN_FIRST,	/* its own consumer, before the replays */
	FETCH_REPLAYS,		/* at each replay's in turn */
	FETCH_OWN		/* its own consumer, last */
};

/* A GET waiting for JetStream, or for an ordered inbox's hand. */
#define FETCH_UNQUEUED	(-1)
#define FETCH_HAND	STORE_PULL_KINDS
struct fetch {
	struct iresp		 r;
	struct isub		*s;
	int			 max;
	int			 lease;		/* lease=true */
	struct isrc		*src;		/* queued at, when q is a kind */
	int			 q;		/* its queue, or FETCH_UNQUEUED */
	enum fetch_stage	 stage;
	int			 own_asked;	/* FETCH_OWN_FIRST was done */
	struct store_peek	*peek;		/* peek=true: pending peek */
	int			 peeking;	/* peek=true */
	struct event		 deadline;	/* end of a long-poll's wait */
	long long		 wait_end;	/* now_ms() */
	char			 key[TOKEN_HASH_HEX + 1];	/* receipts' */
	size_t			 bytes;		/* stored bytes of msgs */
	struct fetch_msg	*msgs;		/* max of them */
	int			 n;
	struct take		*takes;		/* destructive: per message */
	int			 paused;	/* answered "paused":true */
	int			 acks;		/* destructive: unconfirmed */
	TAILQ_ENTRY(fetch)	 entry;		/* all fetches */
	TAILQ_ENTRY(fetch)	 qentry;
};

/* The inboxes' state. */
struct inbox_state {
	struct event_base	*base;
	const struct config	*cfg;
	struct isub_list	 subs;
	struct isub_list	 gone;		/* removed, still in use */
	struct inbox_leases	*leases;
	struct fetch_list	 fetches;
	struct event		 states;	/* a subscriber's state changed */
	int			 stopping;
};
extern struct inbox_state	 ib;

/* inbox.c */
/* A fetch or lease operation ends its use of s (see struct isub). */
void	inbox_sub_unref(struct isub *s);
void	inbox_reject(struct iresp *r, int status, const char *code,
	    const char *detail, const char *inbox);

/*
 * A request another instance forwarded here, the holder of ordered inbox
 * name (inbox-forward.c): served as if a worker had sent it, answered to
 * reply (taken).  Nothing, when this instance does not hold it.
 */
void	inbox_forwarded(const char *name, enum inbox_verb v, const char *id,
	    const char *query, const char *key, char *reply);
/*
 * Record the drop of s's event m after attempts: log line, metric, AUDIT
 * record; cb once stored (m is the caller's until then).
 */
struct audit_drop *inbox_drop_record(struct isub *s,
	    const struct source *from, struct store_msg *m, uint64_t attempts,
	    void (*cb)(void *, int), void *arg);

/* inbox-fetch.c */
/* key: the hash of the request's token, which its receipts are made with. */
void	inbox_fetch(struct iresp *r, struct isub *s, int max,
	    int lease, int peek, long long wait_ms, const char *key);
void	inbox_fetch_pump_init(struct isub *s, struct store_consumer *c);
void	inbox_fetch_source_add(struct isub *s, const struct source *from,
	    struct store_consumer *c, int (*want)(void *, uint64_t),
	    void *arg);
void	inbox_fetch_source_remove(struct isub *s, struct isrc *src);
/*
 * s was made ordered: the GETs waiting for its sources' pulls are
 * answered with what they have, and those pulls closed (what JetStream
 * still sends for them is kept for the hand's pulls).
 */
void	inbox_fetch_ordered(struct isub *s);
/* Free the replays' sources of an inbox nothing uses. */
void	inbox_fetch_sources_free(struct isub *s);
void	inbox_fetch_stop(void);
/*
 * A subscriber's state changed (SPEC 17): the long-polls of a paused one
 * are answered now, with nothing and "paused":true.
 */
void	inbox_fetch_states(void);
/* Answer f with what it has (its lease, its destructive acknowledgements). */
void	inbox_fetch_done(struct fetch *f);
/* f has no room for more. */
int	inbox_fetch_full(const struct fetch *f);
/* Add the hand's event m from source from to f, shown with numbers l. */
void	inbox_fetch_lend(struct fetch *f, const struct source *from,
	    struct store_msg *m, const struct store_lease *l);
/* f leaves the queue it waits in. */
void	inbox_fetch_unqueue(struct fetch *f);
/* f waits in waiters until something comes, or its wait ends. */
void	inbox_fetch_wait(struct fetch *f, struct fetch_list *waiters);
void	inbox_fetch_close_all(void);
int	inbox_fetch_count(void);

/* inbox-envelope.c */
struct yajl_gen_t;
/*
 * fm's envelope, of GET f, signed at time t, into g; its lease numbers
 * into l: 0, or -1 when the message is not an event (nothing written).
 */
int	inbox_envelope(struct yajl_gen_t *g, struct fetch *f,
	    const struct fetch_msg *fm, int64_t t, struct store_lease *l);

/* inbox-order.c: an ordered inbox's hand (s->hand). */
/* Make or free s's hand, as its settings say (ordered or not). */
void	ohand_set(struct isub *s);
void	ohand_free(struct isub *s);
/* s is no longer ordered here (holder_want 0, once). */
void	ohand_unwant(struct isub *s);
/* Shutting down: the hand's pulls closed before the inbox's all are. */
void	ohand_close_pulls(struct isub *s);
/* This instance began or stopped holding s (holder.h). */
void	ohand_held(struct isub *s, int held);
/* Serve GET f of an ordered inbox held here. */
void	ohand_fetch(struct fetch *f);
/* f no longer waits in its hand. */
void	ohand_fetch_unqueue(struct fetch *f);
/*
 * The hand's event m, lent to a GET, comes back: not handed out after
 * all (taken 0), or acknowledged by a destructive GET, whose message it
 * is from now on (taken 1).  -1 when the hand no longer has it (m is
 * the caller's).
 */
int	ohand_lent_back(struct isub *s, struct store_msg *m, int taken);
/*
 * A lease operation with receipt numbers l on an ordered inbox held
 * here: OHAND_DONE (extend, release: done), OHAND_GONE (404: no lease of
 * the hand's), OHAND_ACK (acknowledge with the hand's numbers *out, then
 * ohand_acked), OHAND_JETSTREAM (DELETE of a lease not in hand: answer
 * JetStream by l, as an unordered inbox does).
 */
enum ohand_answer {
	OHAND_DONE,
	OHAND_GONE,
	OHAND_ACK,
	OHAND_JETSTREAM
};
enum ohand_answer ohand_op(struct isub *s, enum inbox_verb v,
	    const char *replay, const struct store_lease *l, long long delay_ms,
	    struct store_lease *out);
/*
 * JetStream confirmed (ok) or not the acknowledgement of seq from replay's
 * consumer ("": the inbox's own).
 */
void	ohand_acked(struct isub *s, const char *replay, uint64_t seq, int ok);
/* Source src (a replay's) joined s, or leaves it: a part of its hand. */
void	ohand_source_add(struct isub *s, struct isrc *src);
void	ohand_source_remove(struct isub *s, struct isrc *src);
/* Shutting down: every hand let go. */
void	ohand_stop(void);

/* inbox-forward.c */
/* Answer r with a JSON body (consumed; NULL: none), or with an error. */
void	iresp_json(struct iresp *r, int status, struct evbuffer *body);
void	iresp_error(struct iresp *r, int status, const char *code,
	    const char *detail);
/* 1 when r's client is known to have left (a forwarded one: never). */
int	iresp_gone(struct iresp *r);
/* Close r whose client left (499, logged, nothing sent). */
void	iresp_gone_close(struct iresp *r);
/*
 * Forward a worker's request of ordered inbox s, held by another
 * instance, to it (over core NATS), and answer req with its answer.
 */
void	inbox_forward(struct evhttp_request *req, struct isub *s,
	    enum inbox_verb v, const char *id, const char *key);
void	inbox_forward_init(void);
void	inbox_forward_fail_all(void);
int	inbox_forward_count(void);

#endif
