/*
 * store-drops.c: reading drop records back from AUDIT (SPEC 15): for the
 * operations API (loop thread; the reading itself is a worker job,
 * store_admin_drops, since it waits on JetStream), and a redrive's
 * sequences (store_admin_drop_seqs, worker thread only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store-int.h"
#include "util.h"

/*
 * A redrive reads at most this many drop records (every subscriber's, on
 * the worker thread, where the other jobs wait behind it: some seconds),
 * and keeps at most SEQS_MAX sequences (8 bytes each).
 */
#define SEQS_SCAN_MAX		1000000
#define SEQS_MAX		SEQS_SCAN_MAX

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

struct seqs_scan {
	const struct store_replay *r;
	uint64_t		*v;
	size_t			 n, cap;
	int			 full;
};

/* One drop record: the sequence, when it is one of the redrive's. */
static int
seqs_take(void *arg, natsMsg *m, const jsMsgMetaData *meta)
{
	struct seqs_scan	*sc = arg;
	char			 sub[128];
	uint64_t		 seq;

	/* Recorded after the redrive started (its own drops among them). */
	if (meta->Sequence.Stream > sc->r->audit_end)
		return 1;
	if (store_admin_drop_record(m, sub, sizeof(sub), &seq) == -1 ||
	    seq == 0 || seq > sc->r->end || strcmp(sub, sc->r->subscriber) != 0)
		return 0;
	if (sc->n == sc->cap) {
		if (sc->cap == SEQS_MAX) {
			sc->full = 1;
			return 1;
		}
		sc->cap = sc->cap == 0 ? 256 : sc->cap * 2;
		sc->v = xrealloc(sc->v, sc->cap * sizeof(*sc->v));
	}
	sc->v[sc->n++] = seq;
	return 0;
}

static int
seq_cmp(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Worker thread: a redrive's sequences, from r's subscriber's drop
 * records between its since and its AUDIT end; see store-int.h.
 */
int
store_admin_drop_seqs(const struct store_replay *r, uint64_t **seqs,
    size_t *nseqs, char *err, size_t errlen)
{
	struct seqs_scan	 sc = { r, NULL, 0, 0, 0 };
	int64_t			 resume;
	size_t			 i, n = 0;

	if (store_admin_scan(STORE_AUDIT, STORE_DROP_SUBJECT, r->since_ns,
	    SEQS_SCAN_MAX, seqs_take, &sc, &resume, err, errlen) != NATS_OK) {
		free(sc.v);
		return STORE_REPLAY_FAILED;
	}
	if (sc.full || resume != 0) {
		snprintf(err, errlen, "more than %d drop records from since on",
		    SEQS_SCAN_MAX);
		free(sc.v);
		return STORE_REPLAY_TOO_MANY;
	}
	if (sc.n > 0)
		qsort(sc.v, sc.n, sizeof(*sc.v), seq_cmp);
	/* Each once: an event dropped, redriven and dropped again has two. */
	for (i = 0; i < sc.n; i++)
		if (n == 0 || sc.v[i] != sc.v[n - 1])
			sc.v[n++] = sc.v[i];
	*seqs = sc.v;
	*nseqs = n;
	return 0;
}

