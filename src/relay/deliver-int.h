/*
 * deliver-int.h: what the files of push delivery share (deliver.c, the
 * deliveries; deliver-sub.c, the subscribers they belong to), and nothing
 * else includes.  Loop thread only.
 */
#ifndef DELIVER_INT_H
#define DELIVER_INT_H

#include <stdint.h>
#include <sys/queue.h>

#include <event2/event_struct.h>

#include "treaty.h"
#include "gate.h"
#include "log.h"
#include "order.h"
#include "resolve.h"
#include "source.h"
#include "takeover.h"
#include "trace.h"

#define MAX_IDLE_CONNS		1024	/* per subscriber */
/*
 * "delivery failed" lines a second per subscriber (log.h's log_limit, as
 * for refused requests): a dead subscriber's 300 events wrote 610 lines,
 * each retry another; past the limit one line a second counts the rest,
 * and treaty_relay_deliveries_total counts every attempt.
 */
#define FAILED_LOG_PER_S	10

struct audit_drop;
struct outbound_req;
struct outbound_target;
struct resolve_req;
struct store_consumer;
struct store_msg;
struct subscriber;
struct substate_entry;
struct treaty_keys;

enum delivery_state {
	DS_WAITING,		/* queued at a gate (gp.at), for its turn */
	DS_ORDERED,		/* behind its key (oi), or in s->ready */
	DS_RETRYING,		/* retry: an ordered one's next attempt */
	DS_IDLE,		/* nothing pending */
	DS_RESOLVING,		/* op.rr: the address */
	DS_SENDING,		/* op.out: the POST */
	DS_DROPPING		/* op.ad: the drop record, before the term */
};
struct delivery;
TAILQ_HEAD(delivery_list, delivery);

/*
 * A subscriber URL's connection pool.  A reload that changes the URL (or
 * maxInFlight, its size) makes a new one; the old one lives on until the
 * last delivery that uses it ends.
 */
struct dtarget {
	struct outbound_target	*t;
	int			 refs;	/* its deliveries, +1 while current */
};

/*
 * How a subscriber's deliveries are signed, pinned by each like its pool:
 * a reload that changes the url and the secrets together must not have a
 * delivery under way sign for the new endpoint and post to the old.
 */
struct dsign {
	struct treaty_keys	*keys;
	int			 standard_webhooks;
	int			 refs;	/* its deliveries, +1 while current */
};

/*
 * One push subscriber, with its own copy of its settings, which a reload
 * replaces (later attempts use the new ones).  A removed subscriber moves
 * to dl.gone until its last delivery ends.
 */
struct dsub {
	int			 idx;		/* metrics index */
	struct subscriber	*cfg;
	struct store_consumer	*consumer;	/* NULL once removed */
	struct dtarget		*target;
	enum resolve_accept	 accept;	/* which addresses it may reach */
	struct dsign		*sign;
	struct source		 own;		/* its consumer, as a source */
	struct delivery_list	 live;
	struct gate_sub		 gates;		/* its place at each gate */
	struct substate_entry	*state;		/* active, paused, tripped */
	struct log_limit	 failed_log;	/* its "delivery failed" lines */
	struct order		*order;		/* ordered: its keys, else NULL */
	struct delivery_list	 ready;		/* their key freed: to admit */
	/* Ordered, just made holder: its wait for what is out (takeover.h). */
	struct takeover		 tk;
	/* Ordered: its replays' own waits (deliver-order.c). */
	TAILQ_HEAD(, dsrc)	 srcs;
	int			 seen;		/* by the reload under way */
	TAILQ_ENTRY(dsub)	 entry;
};
TAILQ_HEAD(dsub_list, dsub);

struct delivery {
	struct dsub		*s;
	struct dtarget		*t;		/* the pool it uses */
	struct dsign		*sign;		/* and its keys */
	struct store_msg	*m;		/* NULL once JetStream was answered */
	enum delivery_state	 state;
	union {
		struct resolve_req	*rr;
		struct outbound_req	*out;
		struct audit_drop	*ad;
	}			 op;		/* what state is waiting for */
	struct event		 progress;
	char			*id;		/* decoded ce-id */
	char			*source;	/* decoded ce-source */
	char			 subject[TREATY_SUBJECT_MAX + 1];
	struct source		 src;		/* where m came from */
	uint64_t		 attempt;
	struct gate_pass	 gp;		/* its place at the gates */
	int64_t			 started_ns;	/* this attempt, Unix ns */
	struct trace		 trace;		/* the producer's, when traced */
	int			 traced;
	char			*tracestate;	/* the producer's, or NULL */
	struct order_item	 oi;		/* its key (ordered) */
	long long		 order_ms;	/* when it came to its key */
	struct event		 retry;		/* DS_RETRYING's timer */
	int			 ready;		/* in s->ready */
	TAILQ_ENTRY(delivery)	 rentry;	/* ... there */
	struct dsrc		*parked;	/* held for its source's wait */
	TAILQ_ENTRY(delivery)	 pentry;	/* ... there */
	TAILQ_ENTRY(delivery)	 entry;
};

/* The state of push delivery (deliver.c defines it). */
struct deliver_state {
	struct event_base	*base;
	const struct config	*cfg;
	struct dsub_list	 subs;
	struct dsub_list	 gone;		/* removed, deliveries left */
	int			 in_flight;
	int			 stopping;
	int			 progress_s;	/* what the timers run at */
	struct event		 pump;		/* a gate has opened */
};
extern struct deliver_state	 dl;

/* deliver.c */
/* A message of s's own consumer (store_consumer_add's callbacks). */
void	deliver_msg_cb(void *arg, struct store_msg *m);
void	deliver_exhausted_cb(void *arg, struct store_msg *m);
/* Give back what waits at s's gates (of replay id, or all with NULL). */
void	dsub_give_back_waiting(struct dsub *s, const char *id);

/*
 * Through the gates to its POST, or waiting at one (a new delivery, an
 * ordered one whose key came free, an ordered one's next attempt).
 */
void	delivery_admit(struct delivery *d);
void	delivery_set_state(struct delivery *d, enum delivery_state s);
/* End d, the one teardown; a message not answered is let go (reason logged). */
void	delivery_close(struct delivery *d, const char *reason);

/* deliver-order.c: ordered subscribers (SPEC 18, order.h). */
struct dsrc;
/* d arrives: 1 when it goes on to the gates, 0 when it waits its key. */
int	dorder_enter(struct delivery *d);
/* d ends: out of its key; the next of the key is admitted from the loop. */
void	dorder_leave(struct delivery *d);
/* From the pump: admit s's deliveries whose key came free. */
void	dorder_pump(struct dsub *s);
/* s's settings changed: made ordered (what is under way adopted), or not. */
void	dorder_set(struct dsub *s);
/* s goes (removed, or the relay stops): no holder wanted, nothing asked. */
void	dorder_gone(struct dsub *s);
/* s is no longer this instance's: held, out of the group, given back. */
void	dorder_let_go(struct dsub *s);
/* 1 when failed ordered delivery d is this instance's to try again. */
int	dorder_keeps(const struct delivery *d);
/* d's event was answered to JetStream (a new holder counts those). */
void	dorder_answered(const struct delivery *d);
/* s's takeover (takeover_init's callbacks). */
uint64_t dorder_in_hand(void *s);
void	dorder_took_over(void *s);
/*
 * A message of s's own consumer while s is ordered: 0 when it is not
 * this instance's to deliver (let go), 1 to go on; a redelivery of an
 * event in hand while recovering takes that delivery's place (0).
 */
int	dorder_msg(struct dsub *s, struct store_msg *m);
/*
 * A message of a replay of s: as dorder_msg, while that replay's own
 * wait is on (a redelivery of an event in hand takes its place).
 */
int	dorder_source_msg(struct dsub *s, const struct source *src,
	    struct store_msg *m);
/* Replay src of s joined here on its consumer c, or left. */
void	dorder_source_joined(struct dsub *s, const struct source *src,
	    struct store_consumer *c);
void	dorder_source_left(struct dsub *s, const char *id);
/* Free s's replays' waits (no longer ordered, or freed). */
void	dorder_sources_free(struct dsub *s);
/*
 * What of s (of replay id; NULL: all) waits behind its key or for its
 * next attempt, to give back, last attempts too: n of them, in an array
 * the caller frees.
 */
struct delivery **dorder_give_back(struct dsub *s, const char *id, size_t *n);

/* deliver-sub.c */
/* The prober of tripped subscribers (substate_prober's two). */
int	dsub_can_probe(const char *name);
void	dsub_probe(const char *name, int n);
/* Let go of a pool, of signing keys; the last user frees it. */
void	dtarget_release(struct dtarget *t);
void	dsign_release(struct dsign *g);
/* The push subscriber called name, or NULL. */
struct dsub *dsub_find(const char *name);
/* Free a subscriber whose deliveries have all ended. */
void	dsub_free(struct dsub *s);
/*
 * Bring the push subscribers to the configuration: add, change, remove
 * (by name), counting into ch when it is not NULL (a reload).
 */
void	deliver_sync(struct sub_changes *ch);

#endif
