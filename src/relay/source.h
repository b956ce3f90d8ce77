/*
 * source.h: where a delivery's event came from, and the ledger of what
 * replays' events came to on this instance.  Loop thread only.
 *
 * A source is a JetStream consumer that events come from: a subscriber's
 * own, or a replay's (SPEC 15).  Each push delivery and each inbox lease
 * carries a copy of its source, so that its outcome goes to the right
 * place without asking who made it: the ledger below, which deliver.c
 * and inbox*.c add to and replay.c reads.  The ledger sits below all
 * three, so that none of them calls back up (docs/DESIGN.md, "The
 * delivery pipeline").
 */
#ifndef SOURCE_H
#define SOURCE_H

#include <stdint.h>
#include <sys/queue.h>

#include "api.h"

struct event;

#define SOURCE_ID_SIZE	(API_REPLAY_ID_LEN + 1)	/* a replay id and its NUL */

/* The source of an event, carried by its delivery or lease. */
struct source {
	char	 id[SOURCE_ID_SIZE];	/* its replay's, or "" */
	int	 max_deliver;		/* its consumer's */
};

/* Make src the subscriber's own consumer (id NULL) or replay id's. */
void	source_set(struct source *src, const char *id, int max_deliver);
/* src's replay id, or NULL for the subscriber's own consumer. */
const char *source_id(const struct source *src);
/*
 * One of src's events was delivered (1: acknowledged after a 2xx, or an
 * inbox lease acknowledged) or dropped (0) here: a replay's goes to the
 * ledger, the subscriber's own to nobody (its metrics say it).
 */
void	source_outcome(const struct source *src, int delivered);

/*
 * The ledger: per replay, what this instance delivered and dropped of its
 * events.  A tally is made by replay.c when it finds the replay, or by
 * the first count for a replay it has not found yet (an inbox lease may
 * be acknowledged through any instance); replay.c takes those on its
 * next turn, records the counts, and ends the tally with the replay.
 */
struct source_tally {
	char		 id[SOURCE_ID_SIZE];
	uint64_t	 delivered, dropped;	/* by this instance */
	long long	 made_ms;		/* by a count, then; or 0 */
	int		 taken;			/* replay.c has it */
	TAILQ_ENTRY(source_tally) entry;
};

/*
 * replay.c, at start: ev (replay.c's) is made active after each count, so
 * that it takes new tallies and, while stopping, records at once.
 */
void	source_watch(struct event *ev);
/*
 * deliver.c, inbox*.c: one of replay id's events was delivered (1) or
 * dropped (0) here, counted even before replay.c has found the replay.
 */
void	source_counted(const char *id, int delivered);
/* replay.c: replay id's tally, made if there is none; now taken. */
struct source_tally *source_tally_take(const char *id);
/* replay.c: a tally made by a count and not taken yet (now taken), or NULL. */
struct source_tally *source_tally_new(void);
/* The counts of replay id here (0 and 0 when there is no tally). */
void	source_counts(const char *id, uint64_t *delivered, uint64_t *dropped);
/*
 * replay.c: replay id ended (it ended it here, or its listings stopped
 * having it): its tally is freed, and the end remembered.
 */
void	source_end(const char *id);
/*
 * 1 when this instance saw replay id end, among the last
 * SOURCE_ENDED_KEEP it saw end; 0 while it runs, or when this instance
 * cannot tell.
 */
#define SOURCE_ENDED_KEEP	64
int	source_ended(const char *id);
/* Free every tally (after the loop). */
void	source_free(void);

#endif
