/*
 * inbox-lease.h: receipts and the memory of leases, for the pull inboxes
 * (SPEC 4).  Pure: no libevent, no NATS, the time passed in; any thread,
 * and unit-tested (test/unit/t-inbox-lease.c).
 *
 * A receipt is "<delivered>.<seq>.<dseq>.<ts>.<mac>" for a lease of the
 * inbox's own consumer, or "<delivered>.<seq>.<dseq>.<ts>.r<replay>.<mac>"
 * for a lease of a replay's (SPEC 15: consumer replay-<replay>, the id's
 * STORE_REPLAY_ID_LEN lowercase hex digits): the lease's JetStream numbers
 * and consumer (what rebuilds its acknowledgement subject, so any
 * instance can answer it without shared state) and a 128-bit MAC over
 * them, the inbox and the event id, keyed by the inbox's token hash, so a
 * receipt cannot be made up, nor used for another inbox, event or
 * consumer.  A receipt without a replay reads and is made as before
 * replays existed.
 *
 * The memory keeps what this instance knows of the leases it handed out
 * or answered, for a lease time and a minute, at most INBOX_LEASE_MAX of
 * them (the oldest forgotten first): enough to answer 404 for a lease it
 * knows is gone (acknowledged, released, or handed out again), which
 * JetStream 2.9 does not say.  A lease is known by its inbox, consumer
 * (the replay's id, or "" for the inbox's own) and event sequence.
 */
#ifndef INBOX_LEASE_H
#define INBOX_LEASE_H

#include <stddef.h>

#include "store-msg.h"
#include "store-replay.h"

#define INBOX_RECEIPT_MAX	160	/* a receipt, NUL included */
#define INBOX_RECEIPT_MAC_HEX	32
#define INBOX_LEASE_MAX		65536	/* leases remembered */
#define INBOX_LEASE_KEEP_MS	60000	/* remembered past the lease's end */

/*
 * The receipt of event id's lease l in inbox (key: its token hash, 64
 * hex digits) into out; replay: the id of the replay whose consumer
 * lent it, or NULL or "" for the inbox's own.  0, or -1 when it does not
 * fit or cannot be made (replay not an id).
 */
int	inbox_receipt_make(const char *inbox, const char *key, const char *id,
	    const char *replay, const struct store_lease *l, char *out,
	    size_t outsz);
/*
 * Read receipt r for event id of inbox into l, and the replay it names
 * into replay ("" for the inbox's own consumer): 0, -1 when it is not a
 * receipt, -2 when it is not this inbox's receipt for this event.
 */
int	inbox_receipt_parse(const char *inbox, const char *key, const char *id,
	    const char *r, struct store_lease *l,
	    char replay[STORE_REPLAY_ID_LEN + 1]);

enum inbox_lease_state {
	INBOX_LEASE_HELD,	/* handed out, or extended */
	INBOX_LEASE_ACKED,
	INBOX_LEASE_RELEASED
};
struct inbox_leases;
/*
 * A memory of leases of lease_ms each, keeping each keep_ms after it was
 * last noted.
 */
struct inbox_leases *inbox_leases_new(long long lease_ms, long long keep_ms);
void	inbox_leases_free(struct inbox_leases *m);
/*
 * Note lease l of inbox (an index) from replay's consumer (NULL or "":
 * the inbox's own) in state st, at time now (ms).
 */
void	inbox_leases_note(struct inbox_leases *m, int inbox,
	    const char *replay, const struct store_lease *l,
	    enum inbox_lease_state st, long long now);
/*
 * The same for a lease JetStream has just handed out (HELD), or just
 * confirmed taken by a destructive fetch (ACKED): the newest there is,
 * noted even over a later delivery sequence noted before (a consumer or
 * stream re-created since counts from 1 again).
 */
void	inbox_leases_handout(struct inbox_leases *m, int inbox,
	    const char *replay, const struct store_lease *l,
	    enum inbox_lease_state st, long long now);
/*
 * 1 when the memory knows lease l of inbox from replay's consumer (NULL
 * or "": its own) is no longer held: a later delivery of the event by
 * that consumer was handed out, or this one was acknowledged or released.
 * 0 when it knows nothing against it.
 */
int	inbox_leases_gone(const struct inbox_leases *m, int inbox,
	    const char *replay, const struct store_lease *l);
/*
 * 1 when the memory knows lease l is still this one, held, and has run
 * out at now (ms), less a margin for the time JetStream's clock started
 * before ours (a lease runs from JetStream's delivery, or from its
 * extension).  JetStream then hands the event out again: an extension
 * that comes later does nothing, and must not be answered 204.
 */
int	inbox_leases_ran_out(const struct inbox_leases *m, int inbox,
	    const char *replay, const struct store_lease *l, long long now);
/* Leases remembered now. */
int	inbox_leases_count(const struct inbox_leases *m);

#endif
