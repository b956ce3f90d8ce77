/*
 * inbox-int.h: the pull inboxes' private header, shared by inbox*.c alone.
 * Loop thread only, all of them.
 *
 *   inbox.c        routes, authentication, query checks, the lease
 *                  operations (DELETE, extend, release), set-up and
 *                  shutdown
 *   inbox-fetch.c  GET: the fetch queues and their pump, the replies of the
 *                  pulls, peeks, the envelopes' JSON
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

struct evhttp_request;
struct inbox_leases;

struct fetch;
struct take;
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
	TAILQ_ENTRY(isub)	 entry;
};
TAILQ_HEAD(isub_list, isub);

/* An event a GET got, and the source that lent it (own, or a replay). */
struct fetch_msg {
	struct store_msg	*m;		/* NULL: given back */
	struct source		 from;
};

/* Where a GET is in its round of the inbox's sources (inbox-fetch.c). */
enum fetch_stage {
	FETCH_START,
	FETCH_OWN_FIRST,	/* its own consumer, before the replays */
	FETCH_REPLAYS,		/* at each replay's in turn */
	FETCH_OWN		/* its own consumer, last */
};

/* A GET waiting for JetStream. */
#define FETCH_UNQUEUED	(-1)
struct fetch {
	struct evhttp_request	*req;
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
void	inbox_reject(struct evhttp_request *req, int status, const char *code,
	    const char *detail, const char *inbox);

/* inbox-fetch.c */
/* key: the hash of the request's token, which its receipts are made with. */
void	inbox_fetch(struct evhttp_request *req, struct isub *s, int max,
	    int lease, int peek, long long wait_ms, const char *key);
void	inbox_fetch_pump_init(struct isub *s, struct store_consumer *c);
void	inbox_fetch_source_add(struct isub *s, const struct source *from,
	    struct store_consumer *c, int (*want)(void *, uint64_t),
	    void *arg);
void	inbox_fetch_source_remove(struct isub *s, struct isrc *src);
/* Free the replays' sources of an inbox nothing uses. */
void	inbox_fetch_sources_free(struct isub *s);
void	inbox_fetch_stop(void);
/*
 * A subscriber's state changed (SPEC 17): the long-polls of a paused one
 * are answered now, with nothing and "paused":true.
 */
void	inbox_fetch_states(void);
void	inbox_fetch_close_all(void);
int	inbox_fetch_count(void);

#endif
