/*
 * inbox-lease.h: receipts and the memory of leases, for the pull inboxes
 * (SPEC 4).  Pure: no libevent, no NATS, the time passed in; any thread,
 * and unit-tested (test/unit/t-inbox-lease.c).
 *
 * A receipt is "<delivered>.<seq>.<dseq>.<ts>.<mac>": the lease's
 * JetStream numbers (what rebuilds its acknowledgement subject, so any
 * instance can answer it without shared state) and a 128-bit MAC over
 * them, the inbox and the event id, keyed by the inbox's token hash, so a
 * receipt cannot be made up, nor used for another inbox or event.
 *
 * The memory keeps what this instance knows of the leases it handed out
 * or answered, for a lease time and a minute, at most INBOX_LEASE_MAX of
 * them (the oldest forgotten first): enough to answer 404 for a lease it
 * knows is gone (acknowledged, released, or handed out again), which
 * JetStream 2.9 does not say.
 */
#ifndef INBOX_LEASE_H
#define INBOX_LEASE_H

#include <stddef.h>

#include "store.h"

#define INBOX_RECEIPT_MAX	160	/* a receipt, NUL included */
#define INBOX_RECEIPT_MAC_HEX	32
#define INBOX_LEASE_MAX		65536	/* leases remembered */
#define INBOX_LEASE_KEEP_MS	60000	/* remembered past the lease's end */

/*
 * The receipt of event id's lease l in inbox (key: its token hash, 64
 * hex digits) into out.  0, or -1 when it does not fit or cannot be made.
 */
int	inbox_receipt_make(const char *inbox, const char *key, const char *id,
	    const struct store_lease *l, char *out, size_t outsz);
/*
 * Read receipt r for event id of inbox into l: 0, -1 when it is not a
 * receipt, -2 when it is not this inbox's receipt for this event.
 */
int	inbox_receipt_parse(const char *inbox, const char *key, const char *id,
	    const char *r, struct store_lease *l);

enum inbox_lease_state {
	INBOX_LEASE_HELD,	/* handed out, or extended */
	INBOX_LEASE_ACKED,
	INBOX_LEASE_RELEASED
};
struct inbox_leases;
/* A memory keeping each lease keep_ms after it was last noted. */
struct inbox_leases *inbox_leases_new(long long keep_ms);
void	inbox_leases_free(struct inbox_leases *m);
/* Note lease l of inbox (an index) in state st, at time now (ms). */
void	inbox_leases_note(struct inbox_leases *m, int inbox,
	    const struct store_lease *l, enum inbox_lease_state st,
	    long long now);
/*
 * 1 when the memory knows lease l of inbox is no longer held: a later
 * delivery of the event was handed out, or this one was acknowledged or
 * released.  0 when it knows nothing against it.
 */
int	inbox_leases_gone(const struct inbox_leases *m, int inbox,
	    const struct store_lease *l);
/* Leases remembered now. */
int	inbox_leases_count(const struct inbox_leases *m);

#endif
