/*
 * substatus.c: each subscriber's figures from JetStream (substatus.h).
 * Loop thread only; the consumer info itself is read on the worker
 * (store_figures).
 *
 * One refresh at a time: a slow JetStream answer is not asked again until
 * it has come back, so the worker never queues more than one.  Figures
 * older than SUBSTATUS_FRESH_MS (JetStream has not answered since) are
 * shown as unknown rather than as they were.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "metrics.h"
#include "store-sub.h"
#include "substatus.h"
#include "util.h"

struct fig {
	char		*name;
	long long	 at_ms;		/* when JetStream answered */
	struct substatus st;
};

static struct {
	struct event	*tick;
	int		 running;	/* a refresh is on the worker */
	struct fig	*figs;
	int		 n;
} ss;

/* Forget entry i's gauges and the entry. */
static void
fig_clear(struct fig *f)
{
	metrics_subscriber_status(f->name, 0, 0, 0, 0);
	free(f->name);
}

/* The worker's answer: the new figures replace the old. */
static void
substatus_done(const struct store_figures *f, int n)
{
	struct fig	*figs = n > 0 ? xcalloc((size_t)n, sizeof(*figs)) : NULL;
	long long	 now = now_ms();
	int		 i, k;

	ss.running = 0;
	for (i = 0; i < n; i++) {
		figs[i].name = xstrdup(f[i].subscriber);
		/* Not answered this time: what was known, while fresh. */
		for (k = 0; !f[i].ok && k < ss.n; k++)
			if (strcmp(ss.figs[k].name, f[i].subscriber) == 0) {
				figs[i].at_ms = ss.figs[k].at_ms;
				figs[i].st = ss.figs[k].st;
			}
		if (f[i].ok) {
			figs[i].at_ms = now;
			figs[i].st.pending = f[i].pending;
			figs[i].st.in_flight = f[i].in_flight;
			figs[i].st.redelivered = f[i].redelivered;
			figs[i].st.oldest_ns = f[i].oldest_ns;
		}
	}
	for (k = 0; k < ss.n; k++)
		fig_clear(&ss.figs[k]);
	free(ss.figs);
	ss.figs = figs;
	ss.n = n;
	for (i = 0; i < n; i++) {
		figs[i].st.known = figs[i].at_ms > 0 &&
		    now - figs[i].at_ms <= SUBSTATUS_FRESH_MS;
		metrics_subscriber_status(figs[i].name, figs[i].st.known,
		    (long long)figs[i].st.pending,
		    (long long)figs[i].st.in_flight, figs[i].st.oldest_ns);
	}
}

/* Figures grown too old are no longer known; see substatus.h. */
void
substatus_age(void)
{
	long long	 now = now_ms();
	int		 i;

	for (i = 0; i < ss.n; i++)
		if (ss.figs[i].st.known &&
		    now - ss.figs[i].at_ms > SUBSTATUS_FRESH_MS) {
			ss.figs[i].st.known = 0;
			metrics_subscriber_status(ss.figs[i].name, 0, 0, 0, 0);
		}
}

/* Every SUBSTATUS_REFRESH_MS: ask again; age what is kept. */
static void
substatus_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	substatus_age();
	if (!ss.running && store_figures(substatus_done) == 0)
		ss.running = 1;
}

void
substatus_init(struct event_base *base)
{
	struct timeval	 tv = { SUBSTATUS_REFRESH_MS / 1000,
	    (SUBSTATUS_REFRESH_MS % 1000) * 1000 };

	ss.tick = event_new(base, -1, EV_PERSIST, substatus_tick, NULL);
	event_add(ss.tick, &tv);
}

void
substatus_get(const char *name, struct substatus *st)
{
	int	 i;

	memset(st, 0, sizeof(*st));
	substatus_age();
	for (i = 0; i < ss.n; i++)
		if (strcmp(ss.figs[i].name, name) == 0 && ss.figs[i].st.known) {
			*st = ss.figs[i].st;
			return;
		}
}

void
substatus_free(void)
{
	int	 i;

	if (ss.tick != NULL)
		event_free(ss.tick);
	for (i = 0; i < ss.n; i++)
		free(ss.figs[i].name);
	free(ss.figs);
	memset(&ss, 0, sizeof(ss));
}
