/*
 * substatus.h: what each subscriber is owed (SPEC 15), from JetStream's
 * consumer info, fetched on the worker thread every SUBSTATUS_REFRESH_MS
 * and kept here, so that neither GET /v1/admin/subscribers nor /metrics
 * waits on JetStream.  Loop thread only.
 */
#ifndef SUBSTATUS_H
#define SUBSTATUS_H

#include <stdint.h>

struct event_base;

#define SUBSTATUS_REFRESH_MS	2000
#define SUBSTATUS_FRESH_MS	5000	/* older figures are not shown */

struct substatus {
	int		 known;		/* 0: no figures under 5 s old */
	uint64_t	 pending, in_flight, redelivered;
	int64_t		 oldest_ns;	/* the oldest unacknowledged's store
					   time, Unix ns; 0: none */
};

/* Start the refresh timer. */
void	substatus_init(struct event_base *base);
/* The subscriber called name: its figures, if fresh, into *st. */
void	substatus_get(const char *name, struct substatus *st);
/*
 * Take figures older than SUBSTATUS_FRESH_MS out (and their gauges):
 * before /metrics is written, so its gauges are never older either.
 */
void	substatus_age(void);
/* Stop the timer (shutdown). */
void	substatus_free(void);

#endif
