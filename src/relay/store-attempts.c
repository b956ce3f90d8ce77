/*
 * store-attempts.c: reading a subscriber's attempts back from ATTEMPTS
 * (store-attempts.h).  The request is made and answered on the loop
 * thread; store_admin_attempts runs on the worker thread and reads only
 * its job.
 *
 * JetStream 2.9 and 2.10 read a subject only forward (no "last n", no
 * "up to a time" in a direct get): the subject is read whole with a
 * short-lived consumer, which its per-subject limit bounds (at most
 * STORE_ATTEMPTS_SCAN_MAX records, some tens of milliseconds), keeping
 * the newest limit + 1 before the time asked for in a ring.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store-attempts.h"
#include "store-int.h"
#include "util.h"

struct store_attempts {
	struct bridge_job	 job;
	/* In. */
	char			*subject;
	char			*subscriber;
	int64_t			 before_ns;
	int			 limit;
	/* Out: a ring of limit + 1, from first, n of them. */
	struct store_attempt	*ring;
	int			 first, n;
	int			 failed;
	char			 err[128];
	/* Loop thread only. */
	store_attempts_cb	 cb;
	void			*arg;
	int			 closed;
};

/* Worker: one record of the subject; the ring keeps the newest. */
static int
attempts_take(void *arg, natsMsg *m, const jsMsgMetaData *meta)
{
	struct store_attempts	*a = arg;
	struct store_attempt	*slot;
	int			 size = a->limit + 1;

	if (a->before_ns > 0 && meta->Timestamp >= a->before_ns)
		return 1;		/* in stream order: the rest is newer */
	if (a->n == size) {
		slot = &a->ring[a->first];
		free(slot->record);
		a->first = (a->first + 1) % size;
		a->n--;
	}
	slot = &a->ring[(a->first + a->n) % size];
	slot->record = xstrndup(natsMsg_GetData(m),
	    (size_t)natsMsg_GetDataLength(m));
	slot->time_ns = meta->Timestamp;
	a->n++;
	return 0;
}

/* Worker: read the subject. */
static void
store_admin_attempts(struct bridge_job *job)
{
	struct store_attempts	*a = BRIDGE_CONTAINER(job,
				    struct store_attempts, job);
	int64_t			 resume;
	natsStatus		 s;

	s = store_admin_scan(STORE_ATTEMPTS, a->subject, 0,
	    STORE_ATTEMPTS_SCAN_MAX, attempts_take, a, &resume, a->err,
	    sizeof(a->err));
	/* No ATTEMPTS (none kept): nothing recorded, not a failure. */
	if (s != NATS_OK && strstr(a->err, "10059") == NULL)
		a->failed = 1;
}

/* Loop thread: newest first to the one who asked. */
static void
attempts_done(struct bridge_job *job)
{
	struct store_attempts	*a = BRIDGE_CONTAINER(job,
				    struct store_attempts, job);
	struct store_attempt	*out;
	int			 size = a->limit + 1, i, n;
	int64_t			 next = 0;

	/* One more than asked: there are older ones, from the last kept. */
	n = a->n > a->limit ? a->limit : a->n;
	out = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*out));
	for (i = 0; i < n; i++)
		out[i] = a->ring[(a->first + a->n - 1 - i) % size];
	if (a->n > a->limit && n > 0)
		next = out[n - 1].time_ns;
	if (!a->closed) {
		if (a->failed)
			log_warnx("attempts not read", "subscriber=%s error=%s",
			    a->subscriber, log_q(a->err));
		a->cb(a->arg, !a->failed, out, a->failed ? 0 : n,
		    a->failed ? 0 : next);
	}
	for (i = 0; i < a->n; i++)
		free(a->ring[(a->first + i) % size].record);
	free(out);
	free(a->ring);
	free(a->subject);
	free(a->subscriber);
	free(a);
}

struct store_attempts *
store_attempts(const char *subscriber, int64_t before_ns, int limit,
    store_attempts_cb cb, void *arg)
{
	struct store_attempts	*a;

	if (!store_conn.connected || store_conn.closing || limit < 1)
		return NULL;
	a = xcalloc(1, sizeof(*a));
	a->subject = xjoin(STORE_ATTEMPTS_PREFIX, "", subscriber);
	a->subscriber = xstrdup(subscriber);
	a->before_ns = before_ns;
	a->limit = limit;
	a->ring = xcalloc((size_t)limit + 1, sizeof(*a->ring));
	a->cb = cb;
	a->arg = arg;
	a->job.work = store_admin_attempts;
	a->job.done = attempts_done;
	bridge_run(&a->job);
	return a;
}

void
store_attempts_close(struct store_attempts *a)
{
	if (a != NULL)
		a->closed = 1;
}
