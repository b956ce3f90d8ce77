/*
 * replay.h: replays and redrives (SPEC 15) on this instance: starting
 * one, finding the ones any instance started, taking part in their
 * delivery, counting what this instance delivered and dropped for each,
 * and ending one when it is done or cancelled.  The replay itself lives
 * in JetStream (store-replay.h).  Loop thread only.
 */
#ifndef REPLAY_H
#define REPLAY_H

#include <stdint.h>

#include "store-replay.h"

struct event_base;
struct config;
struct subscriber;

/* How often this instance lists the replays and records its counts. */
#define REPLAY_LIST_MS		2000
#define REPLAY_PROGRESS_MS	1000

/* Start the timers (cfg stays in place; a reload refills it). */
void	replay_init(struct event_base *base, const struct config *cfg);
/*
 * Start a replay of subscriber s's events stored at or after since_ns
 * (dropped: only those with a drop record for s from since_ns on), with
 * id (STORE_REPLAY_ID_LEN lowercase hex digits, the client's) or a random
 * one (id NULL): cb gets the started replay (its id and matched), or the
 * failure (store_replay_start).  NULL when JetStream cannot be asked now.
 */
struct store_replay_job *replay_start(const struct subscriber *s,
	    int64_t since_ns, int dropped, const char *id, store_replay_cb cb,
	    void *arg);
/*
 * Cancel replay id: its end record (with this instance's counts) and its
 * consumer deleted, whichever instance runs it; see store_replay_end.
 */
struct store_replay_job *replay_cancel(const char *id, store_replay_cb cb,
	    void *arg);
/* Look for replays now instead of at the next listing. */
void	replay_poke(void);
/*
 * deliver.c, inbox*.c: one of replay id's events was delivered (1) or
 * dropped (0) here (an inbox lease acknowledged here, whichever instance
 * handed it out).
 */
void	replay_counted(const char *id, int delivered);
/*
 * 1 when this instance saw replay id end (it ended it, or its listings
 * stopped having it), among the last REPLAY_ENDED_KEEP it saw end; 0
 * while it runs, or when this instance cannot tell.
 */
#define REPLAY_ENDED_KEEP	64
int	replay_ended(const char *id);
/* Shutdown: take no more replay messages here; record the counts. */
void	replay_stop(void);
/* Free everything (after the loop). */
void	replay_free(void);

#endif
