/*
 * order.c: key order (order.h).  Loop thread only.
 *
 * The keys in hand are a chained hash table under SipHash with a random
 * key, grown by doubling: producers choose the keys, and must not be
 * able to make every one of them share a slot.  A key lives while an
 * event of it is held or waits, so the table holds at most what
 * JetStream hands an instance (MaxAckPending).  Each key counts what of
 * it has passed (busy: normally 0 or 1; more only for what was adopted
 * under way, or a redelivery of an event in hand) and keeps what waits
 * behind it sorted by stream sequence; a redelivery of an event in hand
 * goes behind it (a repeat, which SPEC 18 allows), never before.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>

#include "order.h"
#include "siphash.h"
#include "util.h"

#define SLOTS_MIN	64

struct order_key {
	struct order_key	*next;		/* its slot's chain */
	uint64_t		 hash;
	int			 busy;		/* passed, not yet done */
	TAILQ_HEAD(order_item_q, order_item) wait; /* by stream sequence */
	size_t			 len;
	char			 key[];
};

struct order {
	struct order_key	**slots;
	size_t			 nslots;	/* a power of two */
	size_t			 nkeys;
	size_t			 nwaiting;
	int			 hold;
	unsigned char		 sip[16];
};

struct order *
order_new(void)
{
	struct order	*o = xcalloc(1, sizeof(*o));

	o->nslots = SLOTS_MIN;
	o->slots = xcalloc(o->nslots, sizeof(*o->slots));
	evutil_secure_rng_get_bytes(o->sip, sizeof(o->sip));
	return o;
}

void
order_free(struct order *o)
{
	struct order_key	*k, *next;
	size_t			 i;

	if (o == NULL)
		return;
	for (i = 0; i < o->nslots; i++)
		for (k = o->slots[i]; k != NULL; k = next) {
			next = k->next;
			free(k);
		}
	free(o->slots);
	free(o);
}

static uint64_t
key_hash(const struct order *o, const char *key, size_t len)
{
	unsigned char	 out[16];
	uint64_t	 h;

	siphash128(o->sip, key, len, out);
	memcpy(&h, out, sizeof(h));
	return h;
}

/* Twice the slots, every key moved to its new one. */
static void
grow(struct order *o)
{
	struct order_key	**slots, *k, *next;
	size_t			 n = o->nslots * 2, i;

	slots = xcalloc(n, sizeof(*slots));
	for (i = 0; i < o->nslots; i++)
		for (k = o->slots[i]; k != NULL; k = next) {
			next = k->next;
			k->next = slots[k->hash & (n - 1)];
			slots[k->hash & (n - 1)] = k;
		}
	free(o->slots);
	o->slots = slots;
	o->nslots = n;
}

/* key's entry, made when there is none. */
static struct order_key *
key_get(struct order *o, const char *key, size_t len)
{
	uint64_t		 h = key_hash(o, key, len);
	struct order_key	*k;

	for (k = o->slots[h & (o->nslots - 1)]; k != NULL; k = k->next)
		if (k->hash == h && k->len == len &&
		    memcmp(k->key, key, len) == 0)
			return k;
	if (o->nkeys >= o->nslots)
		grow(o);
	k = xcalloc(1, sizeof(*k) + len + 1);
	k->hash = h;
	k->len = len;
	memcpy(k->key, key, len);
	TAILQ_INIT(&k->wait);
	k->next = o->slots[h & (o->nslots - 1)];
	o->slots[h & (o->nslots - 1)] = k;
	o->nkeys++;
	return k;
}

/* k holds nothing and nothing waits: forget it. */
static void
key_put(struct order *o, struct order_key *k)
{
	struct order_key	**pp;

	if (k->busy > 0 || !TAILQ_EMPTY(&k->wait))
		return;
	for (pp = &o->slots[k->hash & (o->nslots - 1)]; *pp != k;
	    pp = &(*pp)->next)
		;
	*pp = k->next;
	o->nkeys--;
	free(k);
}

/* Behind k, after every waiting event of a lower or equal sequence. */
static void
wait_insert(struct order *o, struct order_key *k, struct order_item *it)
{
	struct order_item	*w;

	TAILQ_FOREACH_REVERSE(w, &k->wait, order_item_q, entry)
		if (w->seq <= it->seq)
			break;
	if (w == NULL)
		TAILQ_INSERT_HEAD(&k->wait, it, entry);
	else
		TAILQ_INSERT_AFTER(&k->wait, w, it, entry);
	o->nwaiting++;
}

int
order_admit(struct order *o, struct order_item *it, const char *key,
    size_t len, uint64_t seq)
{
	struct order_key	*k = key_get(o, key, len);

	it->k = k;
	it->seq = seq;
	it->passed = 0;
	if (!o->hold && k->busy == 0 && TAILQ_EMPTY(&k->wait)) {
		it->passed = 1;
		k->busy++;
		return 1;
	}
	wait_insert(o, k, it);
	return 0;
}

void
order_adopt(struct order *o, struct order_item *it, const char *key,
    size_t len, uint64_t seq)
{
	it->k = key_get(o, key, len);
	it->seq = seq;
	it->passed = 1;
	it->k->busy++;
}

/* The first waiting event of k, if k is free: it passes. */
static struct order_item *
key_next(struct order *o, struct order_key *k)
{
	struct order_item	*it;

	if (o->hold || k->busy > 0 || (it = TAILQ_FIRST(&k->wait)) == NULL)
		return NULL;
	TAILQ_REMOVE(&k->wait, it, entry);
	o->nwaiting--;
	it->passed = 1;
	k->busy++;
	return it;
}

struct order_item *
order_done(struct order *o, struct order_item *it)
{
	struct order_key	*k = it->k;
	struct order_item	*next = NULL;

	if (k == NULL)
		return NULL;
	if (it->passed) {
		k->busy--;
		next = key_next(o, k);
	} else {
		TAILQ_REMOVE(&k->wait, it, entry);
		o->nwaiting--;
	}
	it->k = NULL;
	it->passed = 0;
	key_put(o, k);
	return next;
}

void
order_hold(struct order *o, int on, void (*pass)(struct order_item *, void *),
    void *arg)
{
	struct order_key	*k, *next;
	struct order_item	*it;
	size_t			 i;

	o->hold = on;
	if (on)
		return;
	for (i = 0; i < o->nslots; i++)
		for (k = o->slots[i]; k != NULL; k = next) {
			next = k->next;
			if ((it = key_next(o, k)) != NULL)
				pass(it, arg);
		}
}

size_t
order_keys(const struct order *o)
{
	return o->nkeys;
}

size_t
order_waiting(const struct order *o)
{
	return o->nwaiting;
}

char *
order_key(const char *source, const char *pk, const char *subject,
    char buf[ORDER_KEY_STACK], size_t *len, int *heap)
{
	const char	*v = pk != NULL ? pk : subject;
	size_t		 idlen = source != NULL ? strlen(source) : 0;
	size_t		 vlen = strlen(v);
	char		*k = buf;

	*len = idlen + 2 + vlen;
	*heap = *len > ORDER_KEY_STACK;
	if (*heap)
		k = xmalloc(*len);
	memcpy(k, source != NULL ? source : "", idlen);
	k[idlen] = '\0';
	k[idlen + 1] = pk != NULL ? 'k' : 's';
	memcpy(k + idlen + 2, v, vlen);
	return k;
}
