/*
 * store.h: the JetStream side: connection, streams, asynchronous publish.
 * Loop thread only (store.c itself takes care of nats.c's threads).
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct event_base;
struct config;


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

/* Connect (or start connecting in the background) and arm the timers. */
void		 store_init(struct event_base *base, const struct config *cfg);
/*
 * Publish data on subject with headers and Nats-Msg-Id msg_id.  Returns
 * STORE_OK when cb will be called later, exactly once; any other value is
 * the answer now and cb is never called.
 */
enum store_result store_publish(const char *subject,
		    const struct store_header *h, size_t nh, const char *msg_id,
		    const void *data, size_t len, store_publish_cb cb, void *arg);
/* 1 when connected to NATS and both streams are ready. */
int		 store_ready(void);
int		 store_connected(void);
int		 store_streams_ready(void);
/* Publishes waiting for an acknowledgement. */
int		 store_in_flight(void);
/* Fail (STORE_FAILED) every publish still waiting.  Shutdown only. */
void		 store_fail_all(void);
/*
 * Drain and close the NATS connection; done() runs on the loop thread
 * when it is closed (or the drain timed out).
 */
void		 store_drain(void (*done)(void));
/*
 * Teardown after the loop has stopped, in this order (main.c):
 * store_close, bridge_stop_worker, store_destroy, bridge_free,
 * store_free_tables.
 */
void		 store_close(void);
void		 store_destroy(void);
void		 store_free_tables(void);
/*
 * Consumers (push delivery).  A JetStream message handed to a consumer's
 * callback is a struct store_msg, owned by the callee until it calls one of
 * store_msg_ack, _nak, _term (which free it) or store_msg_free.
 */
struct store_msg;
typedef void (*store_msg_cb)(void *arg, struct store_msg *m);

/*
 * Register a durable push consumer relay-<name> on WORK, shared by every
 * relay instance through a delivery group: created or updated with the
 * streams (and re-checked with them), its messages delivered to cb on the
 * loop thread.  exhausted_cb gets each message JetStream stopped
 * delivering on its own after max_deliver deliveries (the last one was
 * given back or lost with a relay, so no relay terminated it): a copy
 * whose ack, nak and term do nothing, with store_msg_delivered() the
 * number of deliveries.  At start-up only, before the loop runs.
 */
void		 store_consumer_add(const char *name, const char *filter,
		    int max_deliver, int max_ack_pending, int ack_wait_s,
		    store_msg_cb cb, store_msg_cb exhausted_cb, void *arg);
const char	*store_msg_subject(const struct store_msg *m);
const void	*store_msg_data(const struct store_msg *m, size_t *len);
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
	int64_t		 ts;		/* delivery time, ns since the epoch */
};
void		 store_msg_lease(const struct store_msg *m,
		    struct store_lease *l);

/*
 * Register a durable pull consumer relay-<name> on WORK (ack wait =
 * ack_wait_s, the lease), created and checked like the push consumers.
 * exhausted_cb gets each event JetStream stops handing out after
 * max_deliver leases (as for push consumers).  At start-up only.
 */
void		 store_pull_consumer_add(const char *name, const char *filter,
		    int max_deliver, int max_ack_pending, int ack_wait_s,
		    store_msg_cb exhausted_cb, void *arg);

/*
 * Requests answered on the loop thread.  cb gets each reply: a message m
 * (owned by the callee) with status 0, and returns 1 to take more replies
 * or 0 when it is done; or, once, m NULL and status the NATS status of a
 * closing reply (404 no messages, 408 expired, 409 ...) or
 * STORE_REPLY_TIMEOUT, after which the request is gone.  NULL when the
 * request cannot be sent (not connected, shutting down).
 */
#define STORE_REPLY_TIMEOUT	(-1)
struct store_req;
typedef int (*store_reply_cb)(void *arg, struct store_msg *m, int status);
struct store_req *store_request(const char *subject, const char *data,
		    long long timeout_ms, store_reply_cb cb, void *arg);
/* Forget a request (no callback); its late messages are given back. */
void		 store_request_cancel(struct store_req *r);
/*
 * Fetch up to batch messages from pull consumer relay-<name>: what is
 * there now (STORE_PULL_NOW), or waiting up to wait_ms until the batch is
 * full (STORE_PULL_WAIT).  One request of each kind per consumer at a
 * time: NULL while one is outstanding (or when not connected).
 */
enum store_pull_kind {
	STORE_PULL_NOW,
	STORE_PULL_WAIT,
	STORE_PULL_KINDS
};
struct store_req *store_pull(const char *name, enum store_pull_kind kind,
		    int batch, long long wait_ms, store_reply_cb cb, void *arg);
/*
 * Peek: up to max of the events pull consumer relay-<name> has not handed
 * out yet, in order, without touching the consumer (direct gets on WORK,
 * on the worker thread).  cb gets the messages (owned by the callee; not
 * delivered, so their delivery count is 0 and they cannot be answered)
 * and 0, or -1 when JetStream could not be asked.  -1 when not connected.
 */
#define STORE_PEEK_MAX	256
typedef void (*store_peek_cb)(void *arg, struct store_msg **msgs, int n,
    int result);
int		 store_peek(const char *name, int max, store_peek_cb cb,
		    void *arg);
/*
 * Send verb (+ACK, +WPI, -NAK {...}) for a lease of relay-<name>, and
 * call cb with JetStream's (empty) confirmation or a timeout.
 */
struct store_req *store_lease_answer(const char *name,
		    const struct store_lease *l, const char *verb,
		    store_reply_cb cb, void *arg);

/* Process-wide set-up for nats.c and libevent threads: before event_base_new. */
void		 store_global_init(void);

#endif
