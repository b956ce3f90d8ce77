/*
 * inbox-lease.c: receipts and the memory of leases (inbox-lease.h).  Pure:
 * any thread, no libevent, the time passed in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "treaty.h"
#include "inbox-lease.h"
#include "util.h"

#define LEASE_BUCKETS		4096
/*
 * How long before its end by our clock a held lease counts as run out
 * (inbox_leases_ran_out): JetStream's clock started it first, when it
 * handed the event out or took the extension, some time before this
 * instance noted either.  A fixed part, and a part of the lease, so that
 * a long lease keeps a margin in proportion.
 */
#define LEASE_MARGIN_MS		100
#define LEASE_MARGIN_DIV	50	/* and lease_ms / 50: 2 % */

struct lease {
	int			 inbox;
	char			 replay[STORE_REPLAY_ID_LEN + 1];	/* or "" */
	uint64_t		 seq;
	uint64_t		 dseq;
	enum inbox_lease_state	 state;
	long long		 ends;		/* HELD: when it runs out */
	long long		 forget;	/* time it is dropped */
	struct lease		*hnext;
	TAILQ_ENTRY(lease)	 entry;		/* oldest forget first */
};
TAILQ_HEAD(lease_list, lease);

struct inbox_leases {
	long long		 lease_ms;
	long long		 keep_ms;
	struct lease		*hash[LEASE_BUCKETS];
	struct lease_list	 list;
	int			 n;
};

/*
 * The MAC of a receipt: INBOX_RECEIPT_MAC_HEX hex digits and a NUL.  A
 * replay's lease adds ".replay-<id>" to what it covers: no receipt of the
 * inbox's own consumer ends that way (its last field is a number).
 */
static int
receipt_mac(const char *inbox, const char *key, const char *id,
    const char *replay, const struct store_lease *l,
    char out[INBOX_RECEIPT_MAC_HEX + 1])
{
	char	 body[256], hex[TREATY_SIG_HEX_LEN + 1];
	int	 n;

	n = snprintf(body, sizeof(body), "%s.%llu.%llu.%lld%s%s", inbox,
	    (unsigned long long)l->delivered, (unsigned long long)l->dseq,
	    (long long)l->ts, replay[0] != '\0' ? "." STORE_REPLAY_PREFIX : "",
	    replay);
	if (n < 0 || (size_t)n >= sizeof(body) ||
	    treaty_sig_hmac_hex(key, strlen(key), (int64_t)l->seq, id, body, (size_t)n,
	    hex) != TREATY_OK)
		return -1;
	memcpy(out, hex, INBOX_RECEIPT_MAC_HEX);
	out[INBOX_RECEIPT_MAC_HEX] = '\0';
	return 0;
}

/* "<delivered>.<seq>.<dseq>.<ts>[.r<replay>].<mac>" */
int
inbox_receipt_make(const char *inbox, const char *key, const char *id,
    const char *replay, const struct store_lease *l, char *out, size_t outsz)
{
	char	 mac[INBOX_RECEIPT_MAC_HEX + 1];
	int	 n;

	if (replay == NULL)
		replay = "";
	if ((replay[0] != '\0' && !hex_exact(replay, STORE_REPLAY_ID_LEN)) ||
	    receipt_mac(inbox, key, id, replay, l, mac) == -1)
		return -1;
	n = snprintf(out, outsz, "%llu.%llu.%llu.%lld.%s%s%s%s",
	    (unsigned long long)l->delivered, (unsigned long long)l->seq,
	    (unsigned long long)l->dseq, (long long)l->ts,
	    replay[0] != '\0' ? "r" : "", replay, replay[0] != '\0' ? "." : "",
	    mac);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* Read and check a receipt: 0 ok, -1 malformed, -2 not this one's. */
int
inbox_receipt_parse(const char *inbox, const char *key, const char *id,
    const char *r, struct store_lease *l,
    char replay[STORE_REPLAY_ID_LEN + 1])
{
	char		 mac[INBOX_RECEIPT_MAC_HEX + 1];
	const char	*p = r;
	char		*end;
	unsigned long long v[4];
	int		 i;

	for (i = 0; i < 4; i++) {
		if (*p < '0' || *p > '9')
			return -1;
		v[i] = strtoull(p, &end, 10);
		if (*end != '.')
			return -1;
		p = end + 1;
	}
	replay[0] = '\0';
	if (*p == 'r') {
		if (strlen(p) < 1 + STORE_REPLAY_ID_LEN + 1 ||
		    p[1 + STORE_REPLAY_ID_LEN] != '.')
			return -1;
		memcpy(replay, p + 1, STORE_REPLAY_ID_LEN);
		replay[STORE_REPLAY_ID_LEN] = '\0';
		if (!hex_exact(replay, STORE_REPLAY_ID_LEN))
			return -1;
		p += 1 + STORE_REPLAY_ID_LEN + 1;
	}
	if (strlen(p) != INBOX_RECEIPT_MAC_HEX)
		return -1;
	l->delivered = v[0];
	l->seq = v[1];
	l->dseq = v[2];
	l->ts = (int64_t)v[3];
	if (receipt_mac(inbox, key, id, replay, l, mac) == -1)
		return -1;
	return treaty_memeq(mac, p, INBOX_RECEIPT_MAC_HEX) ? 0 : -2;
}

/* A memory of leases. */
struct inbox_leases *
inbox_leases_new(long long lease_ms, long long keep_ms)
{
	struct inbox_leases	*m = xcalloc(1, sizeof(*m));

	m->lease_ms = lease_ms;
	m->keep_ms = keep_ms;
	TAILQ_INIT(&m->list);
	return m;
}

/* Hash of a lease key. */
static size_t
lease_slot(int inbox, uint64_t seq)
{
	return (size_t)((seq * 0x9E3779B97F4A7C15ULL + (uint64_t)inbox) >>
	    20) % LEASE_BUCKETS;
}

/* Unlink and free a remembered lease. */
static void
lease_drop(struct inbox_leases *m, struct lease *l)
{
	struct lease	**pp = &m->hash[lease_slot(l->inbox, l->seq)];

	while (*pp != NULL && *pp != l)
		pp = &(*pp)->hnext;
	if (*pp == l)
		*pp = l->hnext;
	TAILQ_REMOVE(&m->list, l, entry);
	m->n--;
	free(l);
}

/* Free the memory. */
void
inbox_leases_free(struct inbox_leases *m)
{
	struct lease	*l;

	if (m == NULL)
		return;
	while ((l = TAILQ_FIRST(&m->list)) != NULL)
		lease_drop(m, l);
	free(m);
}

/* The remembered lease of an inbox's event from a consumer, or NULL. */
static struct lease *
lease_find(const struct inbox_leases *m, int inbox, const char *replay,
    uint64_t seq)
{
	struct lease	*l;

	for (l = m->hash[lease_slot(inbox, seq)]; l != NULL; l = l->hnext)
		if (l->inbox == inbox && l->seq == seq &&
		    strcmp(l->replay, replay) == 0)
			return l;
	return NULL;
}

/*
 * Remember a lease's state; forget what is past its time or too many.
 * Unless fresh, a later delivery of the event noted before wins.
 */
static void
leases_note(struct inbox_leases *m, int inbox, const char *replay,
    const struct store_lease *sl, enum inbox_lease_state st, long long now,
    int fresh)
{
	struct lease	*l;
	size_t		 slot;

	if (replay == NULL)
		replay = "";
	while ((l = TAILQ_FIRST(&m->list)) != NULL &&
	    (l->forget < now || m->n > INBOX_LEASE_MAX))
		lease_drop(m, l);
	if ((l = lease_find(m, inbox, replay, sl->seq)) == NULL) {
		l = xcalloc(1, sizeof(*l));
		l->inbox = inbox;
		snprintf(l->replay, sizeof(l->replay), "%s", replay);
		l->seq = sl->seq;
		slot = lease_slot(inbox, sl->seq);
		l->hnext = m->hash[slot];
		m->hash[slot] = l;
		m->n++;
	} else {
		if (!fresh && l->dseq > sl->dseq)
			return;		/* we know a newer lease */
		TAILQ_REMOVE(&m->list, l, entry);
	}
	l->dseq = sl->dseq;
	l->state = st;
	l->ends = st == INBOX_LEASE_HELD ? now + m->lease_ms : 0;
	l->forget = now + m->keep_ms;
	TAILQ_INSERT_TAIL(&m->list, l, entry);
}

/* See inbox-lease.h. */
void
inbox_leases_note(struct inbox_leases *m, int inbox, const char *replay,
    const struct store_lease *l, enum inbox_lease_state st, long long now)
{
	leases_note(m, inbox, replay, l, st, now, 0);
}

/* See inbox-lease.h. */
void
inbox_leases_handout(struct inbox_leases *m, int inbox, const char *replay,
    const struct store_lease *l, enum inbox_lease_state st, long long now)
{
	leases_note(m, inbox, replay, l, st, now, 1);
}

/* Whether the memory knows the lease is no longer held. */
int
inbox_leases_gone(const struct inbox_leases *m, int inbox, const char *replay,
    const struct store_lease *l)
{
	const struct lease	*known = lease_find(m, inbox,
				    replay != NULL ? replay : "", l->seq);

	return known != NULL && (known->dseq > l->dseq ||
	    (known->dseq == l->dseq && known->state != INBOX_LEASE_HELD));
}

/* See inbox-lease.h. */
int
inbox_leases_ran_out(const struct inbox_leases *m, int inbox,
    const char *replay, const struct store_lease *l, long long now)
{
	const struct lease	*known = lease_find(m, inbox,
				    replay != NULL ? replay : "", l->seq);

	return known != NULL && known->dseq == l->dseq &&
	    known->state == INBOX_LEASE_HELD &&
	    now >= known->ends - (LEASE_MARGIN_MS +
	    m->lease_ms / LEASE_MARGIN_DIV);
}

/* Leases remembered. */
int
inbox_leases_count(const struct inbox_leases *m)
{
	return m->n;
}
