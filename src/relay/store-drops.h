/*
 * store-drops.h: drop records (SPEC 3 and 15) read back from AUDIT for
 * the operations API (store-drops.c; the reading is a job on the worker
 * thread, store-admin.c).  Called on the loop thread only.
 *
 * A drop record's subject in AUDIT, under the relay's own prefix
 * (STORE_OWN_PREFIX, store-pub.h), and the prefix of its Nats-Msg-Id,
 * which no producer's can have ('!' is in no name), so a record is told
 * from an event a producer published on that subject.
 */
#ifndef STORE_DROPS_H
#define STORE_DROPS_H

#include <stdint.h>

#define STORE_DROP_SUBJECT	"audit.relay.treaty.delivery.dropped"
#define STORE_DROP_MSGID_PREFIX	"relay!drop-"
/* Records looked at per request at most, matching or not. */
#define STORE_DROPS_SCAN_MAX	10000
struct store_drop {
	char		*record;	/* the record's data, JSON */
	int64_t		 time_ns;	/* when AUDIT stored it, Unix ns */
};
/*
 * The answer: ok 0 when JetStream did not answer; the records (owned by
 * the store, valid during the call), and next_ns, where the rest begins
 * (0: there is no more).
 */
typedef void (*store_drops_cb)(void *arg, int ok, const struct store_drop *d,
		    int n, int64_t next_ns);
struct store_drops;
/*
 * Read the drop records of subscriber stored at or after since_ns, oldest
 * first, up to limit, on the worker thread (a short-lived consumer on
 * AUDIT): cb gets them on the loop thread.  At most
 * STORE_DROPS_SCAN_MAX records are looked at; past them next_ns says
 * where to go on.  NULL when it cannot ask now (not connected).
 */
struct store_drops *store_drops(const char *subscriber, int64_t since_ns,
		    int limit, store_drops_cb cb, void *arg);
/* Forget a read: its callback does not run. */
void		 store_drops_close(struct store_drops *d);

#endif
