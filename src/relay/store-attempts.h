/*
 * store-attempts.h: a subscriber's delivery attempts (SPEC 17) read back
 * from ATTEMPTS for the operations API, newest first.  Called on the loop
 * thread; the reading is a job on the worker thread (store-attempts.c).
 */
#ifndef STORE_ATTEMPTS_H
#define STORE_ATTEMPTS_H

#include <stdint.h>

/* Records looked at per request at most (the per-subscriber maximum). */
#define STORE_ATTEMPTS_SCAN_MAX	10000

struct store_attempt {
	char		*record;	/* JSON, as attempts.c wrote it */
	int64_t		 time_ns;	/* when ATTEMPTS stored it */
};
/*
 * The answer: ok 0 when JetStream did not answer; the records, newest
 * first (owned by the store, valid during the call); next_ns, the
 * "before" of the older ones (0: there are none).
 */
typedef void (*store_attempts_cb)(void *arg, int ok,
		    const struct store_attempt *a, int n, int64_t next_ns);
struct store_attempts;
/*
 * The newest limit records of subscriber stored before before_ns (0:
 * any), read on the worker thread; NULL when it cannot ask now.
 */
struct store_attempts *store_attempts(const char *subscriber,
		    int64_t before_ns, int limit, store_attempts_cb cb,
		    void *arg);
/* Forget a read: its callback does not run. */
void		 store_attempts_close(struct store_attempts *a);

#endif
