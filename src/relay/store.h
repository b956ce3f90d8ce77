/*
 * store.h: the JetStream side of the relay, its lifecycle: set-up, the
 * NATS connection's state and readiness, reload, the drain at shutdown
 * and the teardown; what main.c and http.c need.
 *
 * Everything declared in the store's headers is called on the loop
 * thread only; the store itself deals with nats.c's threads (store-int.h
 * says how).  The store's interface is split by what its users need, one
 * header per file that defines it, so a user includes only its part:
 *
 *   store.h         store.c: lifecycle, connection state, readiness (and
 *                   the publishes in flight, from store-pub.c, which the
 *                   shutdown sequence waits for)
 *   store-pub.h     store-pub.c: publishing events and records
 *   store-msg.h     store-msg.c: the messages consumers hand out, their
 *                   acknowledgement verbs and leases
 *   store-sub.h     store-sub.c: consumers and their figures
 *   store-req.h     store-req.c: requests answered on the loop: pulls,
 *                   peeks, lease answers, a replay's consumer asked about
 *   store-drops.h   store-drops.c: drop records read back from AUDIT
 *   store-leftover.h  store-leftover.c: consumers that no subscriber
 *                   owns, listed and deleted
 *   store-replay.h  store-replay.c: replays in JetStream
 *
 * store-int.h is the store's private header, store-wire.h its wire
 * formats; only the store's files include them.
 */
#ifndef STORE_H
#define STORE_H

#include "treaty.h"

struct event_base;
struct config;

/*
 * Room for any NATS subject the relay builds, its NUL included.  A
 * producer's subject has up to TREATY_SUBJECT_MAX bytes, and every one
 * the store makes is shorter: the longest is an acknowledgement subject,
 * $JS.ACK.WORK.<consumer>.<delivered>.<seq>.<dseq>.<ts>.0 (169 bytes
 * with relay-<a 64-byte name> and numbers of 20 digits), then
 * $JS.API.CONSUMER.MSG.NEXT.WORK.<consumer> (101),
 * $JS.API.CONSUMER.DURABLE.CREATE.WORK.replay-<id> (68),
 * audit.relay.treaty.replay.<id>.<instance> (67), the reply subjects
 * under nats.c's 29-byte inbox, <inbox>.p.<index>.<kind>.<id> the
 * longest (65), and treaty.replay.<id> (38).
 */
#define STORE_SUBJECT_BUF	(TREATY_SUBJECT_MAX + 1)

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
/* Publishes waiting for an acknowledgement (store-pub.c). */
int		 store_in_flight(void);
/*
 * Fail (STORE_FAILED) every publish still waiting (shutdown, disconnect;
 * store-pub.c).
 */
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

#endif
