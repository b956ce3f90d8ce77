/*
 * replay.h: replays and redrives (SPEC 15) on this instance: starting
 * one, finding the ones any instance started, feeding each in as a
 * source of the delivery pipeline (deliver.h, inbox.h), recording what
 * this instance delivered and dropped of it (counted in the ledger,
 * source.h), and ending one when it is done or cancelled.  The replay
 * itself lives in JetStream (store-replay.h).  Loop thread only.
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
 * This instance's name, random at each start (16 hex digits): in replay
 * records, and in substate's writes (SPEC 17's "by" and probe lease).
 */
const char *replay_instance(void);
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
 * Shutdown: take no more replay messages here; record the counts, and
 * what deliveries under way come to as they end.
 */
void	replay_stop(void);
/*
 * 1 while the ledger has counts this instance has not recorded yet (they
 * are, on the loop's next turn): the relay waits before it drains.
 */
int	replay_in_flight(void);
/* Free everything (after the loop). */
void	replay_free(void);

#endif
