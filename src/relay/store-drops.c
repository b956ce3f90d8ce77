/*
 * store-drops.c: reading drop records back from AUDIT (SPEC 15) for the
 * operations API.  Loop thread; the reading itself is a worker job
 * (store_admin_drops), since it waits on JetStream.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store-int.h"
#include "util.h"

/* Loop thread: the records to the one who asked, unless it went away. */
static void
drops_done(struct bridge_job *job)
{
	struct store_drops	*d = BRIDGE_CONTAINER(job, struct store_drops,
				    job);
	int			 i;

	if (!d->closed) {
		if (d->failed)
			log_warnx("drop records not read", "subscriber=%s "
			    "error=%s", log_q(d->subscriber), log_q(d->err));
		d->cb(d->arg, !d->failed, d->drops, d->failed ? 0 : d->n,
		    d->failed ? 0 : d->next_ns);
	}
	for (i = 0; i < d->n; i++)
		free(d->drops[i].record);
	free(d->drops);
	free(d->subscriber);
	free(d);
}

/* Read drop records; see store-drops.h. */
struct store_drops *
store_drops(const char *subscriber, int64_t since_ns, int limit,
    store_drops_cb cb, void *arg)
{
	struct store_drops	*d;

	if (!store_conn.connected || store_conn.closing || limit < 1)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->subscriber = xstrdup(subscriber);
	d->since_ns = since_ns;
	d->limit = limit;
	d->drops = xcalloc((size_t)limit, sizeof(*d->drops));
	d->cb = cb;
	d->arg = arg;
	d->job.work = store_admin_drops;
	d->job.done = drops_done;
	bridge_run(&d->job);
	return d;
}

/* Forget a read; see store-drops.h. */
void
store_drops_close(struct store_drops *d)
{
	d->closed = 1;
}
