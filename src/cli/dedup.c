/*
 * dedup.c: the worker's memory of completed deliveries, by (inbox, id):
 * kept for ttl (10 minutes), at most cap entries (16,384); and listen's
 * of signatures (cmd-listen.c), with the same rules.  Entries are
 * added in time order and live equally long, so the oldest is always at
 * the head of one FIFO list.  When full, dedup_add refuses: the worker
 * then takes no new work until entries age out (fail closed) rather than
 * forgetting a delivery it might be handed again.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "cli.h"
#include "util.h"

struct dedup_ent {
	TAILQ_ENTRY(dedup_ent)	 entry;
	int64_t			 at;
	size_t			 len;
	char			 key[];
};

struct dedup {
	TAILQ_HEAD(, dedup_ent)	 fifo;
	struct strset		*set;
	size_t			 cap;
	int64_t			 ttl;
};

/* An empty cache. */
struct dedup *
dedup_new(size_t cap, int64_t ttl_ms)
{
	struct dedup	*d = xcalloc(1, sizeof(*d));

	TAILQ_INIT(&d->fifo);
	d->set = strset_new();
	d->cap = cap;
	d->ttl = ttl_ms;
	return d;
}

/* Free the cache. */
void
dedup_free(struct dedup *d)
{
	struct dedup_ent	*e;

	if (d == NULL)
		return;
	while ((e = TAILQ_FIRST(&d->fifo)) != NULL) {
		TAILQ_REMOVE(&d->fifo, e, entry);
		free(e);
	}
	strset_free(d->set);
	free(d);
}

/* Forget what is older than the ttl. */
static void
dedup_expire(struct dedup *d, int64_t now)
{
	struct dedup_ent	*e;

	while ((e = TAILQ_FIRST(&d->fifo)) != NULL && e->at + d->ttl <= now) {
		TAILQ_REMOVE(&d->fifo, e, entry);
		strset_del(d->set, e->key, e->len);
		free(e);
	}
}

/* Whether (inbox, id) completed within the ttl. */
int
dedup_has(struct dedup *d, const char *inbox, const char *id, int64_t now)
{
	char	 k[KEY_MAX];
	size_t	 n;

	dedup_expire(d, now);
	if ((n = strset_key2(k, sizeof(k), inbox, id)) == 0)
		return 0;
	return strset_has(d->set, k, n);
}

/* Remember (inbox, id); -1 when the cache is full. */
int
dedup_add(struct dedup *d, const char *inbox, const char *id, int64_t now)
{
	struct dedup_ent	*e;
	char			 k[KEY_MAX];
	size_t			 n;

	dedup_expire(d, now);
	if ((n = strset_key2(k, sizeof(k), inbox, id)) == 0)
		return -1;
	if (strset_has(d->set, k, n))
		return 0;
	if (strset_count(d->set) >= d->cap)
		return -1;
	strset_add(d->set, k, n);
	e = xmalloc(sizeof(*e) + n);
	e->at = now;
	e->len = n;
	memcpy(e->key, k, n);
	TAILQ_INSERT_TAIL(&d->fifo, e, entry);
	return 0;
}

/* Entries that may still be added. */
size_t
dedup_room(struct dedup *d, int64_t now)
{
	dedup_expire(d, now);
	return d->cap - strset_count(d->set);
}

/* When the oldest entry leaves, or -1. */
int64_t
dedup_next_expiry(struct dedup *d)
{
	struct dedup_ent	*e = TAILQ_FIRST(&d->fifo);

	return e != NULL ? e->at + d->ttl : -1;
}
