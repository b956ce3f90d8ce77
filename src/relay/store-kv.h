/*
 * store-kv.h: the KV buckets: TREATY_SUBSCRIBERS (SPEC 16), where the
 * subscribers managed through the API live, TREATY_SUBSCRIBER_STATE
 * (SPEC 17), every subscriber's state, TREATY_INSTANCES, the instances
 * running and their rate-limited subscribers, and TREATY_ORDER_HOLDERS,
 * which instance delivers each ordered subscriber (SPEC 18; store-kv.c).
 * Loop thread only;
 * the JetStream calls that wait run as worker jobs (store-kv-admin.c).
 *
 * The buckets are made and kept up to date by the stream check, beside
 * WORK and AUDIT (replicas as theirs).  Every instance watches each
 * with a consumer of its own that hands over the newest value of every
 * key, then each change: the watcher's snapshot, then its changes.  On
 * every (re)start of that consumer (a reconnection, a gap in its
 * sequence, a missed heartbeat) the whole bucket is read again and what
 * is no longer there is swept: a change missed while NATS was away, a
 * delete whose marker was purged since, is never missed for good.
 */
#ifndef STORE_KV_H
#define STORE_KV_H

#include <stddef.h>
#include <stdint.h>

#include "store-sub.h"

#define STORE_KV_BUCKET		"TREATY_SUBSCRIBERS"
#define STORE_KV_STATE_BUCKET	"TREATY_SUBSCRIBER_STATE"
#define STORE_KV_INSTANCES_BUCKET "TREATY_INSTANCES"
#define STORE_KV_HOLDERS_BUCKET	"TREATY_ORDER_HOLDERS"
/* A value's bound: a 64 KiB definition whose secrets are sealed. */
#define STORE_KV_VALUE_MAX	(128 * 1024)
/* A state's bound (substate.c writes a few hundred bytes). */
#define STORE_KV_STATE_MAX	4096

/* The buckets, each with its own watch; a key is a subscriber's name. */
enum store_kv_bucket {
	STORE_KV_SUBS,		/* definitions (subkv.c) */
	STORE_KV_STATE,		/* states (substate.c) */
	STORE_KV_INSTANCES,	/* who is running (presence.c) */
	STORE_KV_HOLDERS,	/* who delivers an ordered one (holder.c) */
	STORE_KV_NBUCKETS
};

/* What the watch reports, on the loop thread. */
struct store_kv_watcher {
	/* A snapshot begins: every entry is to be confirmed again. */
	void	(*begin)(void);
	/*
	 * Key name's newest value at revision rev (the bucket's stream
	 * sequence), or its deletion (val NULL).
	 */
	void	(*entry)(const char *name, uint64_t rev, const char *val,
		    size_t len);
	/* The snapshot is whole: entries not confirmed since begin are gone. */
	void	(*end)(void);
};
/*
 * Register bucket b's watcher (before store_init); the watch starts with
 * NATS.
 */
void		 store_kv_watch(enum store_kv_bucket b,
		    const struct store_kv_watcher *w);
/* 1 once b's first snapshot is whole (it stays 1). */
int		 store_kv_synced(enum store_kv_bucket b);

enum store_kv_result {
	STORE_KV_OK,
	STORE_KV_STALE,		/* If-Match: the revision is not that */
	STORE_KV_FULL,		/* the bucket's bytes are used up */
	STORE_KV_FAILED		/* no answer from JetStream */
};
/*
 * The answer to a write: the result, the entry's new revision, and
 * existed, 1 when a live value was replaced (not a new or deleted key).
 */
typedef void (*store_kv_cb)(void *arg, enum store_kv_result r, uint64_t rev,
		    int existed);

struct store_kv_job;
/*
 * Write name's value; with if_match, only over revision expect (0: the
 * key must not exist).  Then make or update its consumer on WORK (c,
 * whose replay is NULL), before the answer.  NULL when JetStream cannot be asked now.
 */
struct store_kv_job *store_kv_put(const char *name, const char *val,
		    size_t len, int if_match, uint64_t expect,
		    const struct store_consumer_spec *c, store_kv_cb cb,
		    void *arg);
/*
 * Delete name (a purge marker: its history goes), with if_match as for
 * a put, then its consumer on WORK.  NULL as for a put.
 */
struct store_kv_job *store_kv_delete(const char *name, int if_match,
		    uint64_t expect, store_kv_cb cb, void *arg);
/*
 * Write (val not NULL) or purge key's value in bucket b (not
 * STORE_KV_SUBS, whose writes are the two above) only over revision
 * expect (0: the key must not exist): STORE_KV_STALE when another
 * write came first.  NULL as for a put.
 */
struct store_kv_job *store_kv_set(enum store_kv_bucket b, const char *key,
		    const char *val, size_t len, uint64_t expect,
		    store_kv_cb cb, void *arg);
/* Forget a job: its callback does not run. */
void		 store_kv_close(struct store_kv_job *j);

#endif
