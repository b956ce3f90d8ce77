/*
 * store-kv.h: the KV bucket TREATY_SUBSCRIBERS (SPEC 16), where the
 * subscribers managed through the API live (store-kv.c).  Loop thread
 * only; the JetStream calls that wait run as worker jobs
 * (store-kv-admin.c).
 *
 * The bucket is made and kept up to date by the stream check, beside WORK
 * and AUDIT (replicas as theirs, history 5).  Every instance watches it
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
/* A value's bound: a 64 KiB definition whose secrets are sealed. */
#define STORE_KV_VALUE_MAX	(128 * 1024)

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
/* Register the watcher (before store_init); the watch starts with NATS. */
void		 store_kv_watch(const struct store_kv_watcher *w);
/* 1 once the first snapshot is whole (it stays 1). */
int		 store_kv_synced(void);

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
/* Forget a job: its callback does not run. */
void		 store_kv_close(struct store_kv_job *j);

#endif
