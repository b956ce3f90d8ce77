/*
 * store-req.h: requests whose replies come back to the loop (store-req.c):
 * pulls from a pull consumer, peeks at what it holds, the confirmed
 * answers to a lease (of a subscriber's consumer or a replay's), and
 * whether a replay's consumer still exists.  Loop thread only.
 *
 * cb gets each reply: a message m (owned by the callee) with status 0,
 * and returns 1 to take more replies or 0 when it is done; or, once, m
 * NULL and status the NATS status of a closing reply (404 no messages,
 * 408 expired, 409 ...) or STORE_REPLY_TIMEOUT, after which the request
 * is gone.
 */
#ifndef STORE_REQ_H
#define STORE_REQ_H

#include "store-msg.h"

struct store_consumer;

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
