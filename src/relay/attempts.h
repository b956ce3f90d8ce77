/*
 * attempts.h: every push delivery attempt recorded in the ATTEMPTS stream
 * (SPEC 17), on attempts.<subscriber>, published without waiting: the
 * record is for the operator's eyes (GET .../attempts), so a record lost
 * while NATS is away is counted (treaty_relay_attempts_unrecorded_total),
 * never waited for.  Loop thread only.
 */
#ifndef ATTEMPTS_H
#define ATTEMPTS_H

#include <stdint.h>

struct config;

/* One attempt: a POST sent (answered or not), or one that could not be. */
struct attempt {
	const char	*subscriber;
	const char	*event_id;	/* decoded ce-id */
	uint64_t	 sequence;	/* in WORK */
	uint64_t	 attempt;	/* JetStream's delivery count */
	int		 probe;		/* a breaker probe's number, or 0 */
	const char	*replay;	/* its replay's id, or NULL */
	const char	*trace;		/* its trace id, or NULL */
	int64_t		 time_ns;	/* when it started, Unix ns */
	int		 status;	/* HTTP status; 0: none (null) */
	const char	*error;		/* why none; NULL: null */
	long long	 ms;		/* the exchange; -1: not sent (null) */
};

/* cfg: the running configuration (attempts_per_subscriber, 0: none). */
void	attempts_init(const struct config *cfg, const char *instance);
void	attempts_record(const struct attempt *a);
void	attempts_free(void);

#endif
